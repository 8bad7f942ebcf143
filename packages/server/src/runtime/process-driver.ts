import { fork, type ChildProcess } from 'node:child_process';
import { STATEMENT_TIMEOUT_SIGNAL, type ListeningMessage, type ResponseMessage } from '../semantic-layer/protocol.js';
import { StatementTimeout, type PodEvents, type PodRequest, type PodSpec, type RunningPod, type RuntimeDriver } from './driver.js';

/** Longest line kept from a runtime's output; the rest is cut, so one line cannot fill the log. */
const MAX_LINE = 4_096;
/** How long a request over the IPC channel may wait for its answer, as over HTTP (the data API's proxy). */
const CALL_TIMEOUT_MS = 120_000;

/**
 * Variables a deployment may not set for its runtime: they change what the Node.js process loads
 * or links (NODE_OPTIONS could preload any file on this host), which no data-source setting needs.
 */
export const RESERVED_ENV = /^(NODE_|LD_|DYLD_)/i;

function lines(stream: NodeJS.ReadableStream | null, each: (line: string) => void): void {
  if (!stream) return;
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    pending += chunk;
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    // A line longer than the cap is cut now rather than held until its newline comes.
    if (pending.length > MAX_LINE) {
      parts.push(pending);
      pending = '';
    }
    for (const line of parts) each(line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}…` : line);
  });
  stream.on('end', () => {
    if (pending) each(pending.slice(0, MAX_LINE));
  });
}

/**
 * Pods as child processes of this server process (`fork`, with an IPC channel). `entry` is the
 * runtime's program: compiled JavaScript, or TypeScript run through tsx (tests run the sources).
 * The child gets only the deployment's variables as its environment, never the server's (its
 * database URL, its secret key), and exits by itself when this process goes away.
 */
export function processDriver(options: { entry: string; host: string }): RuntimeDriver {
  const execArgv = options.entry.endsWith('.ts') ? ['--import', 'tsx'] : [];
  return {
    name: 'process',
    start(spec: PodSpec, events: PodEvents): Promise<RunningPod> {
      const env = Object.fromEntries(Object.entries(spec.env).filter(([name]) => !RESERVED_ENV.test(name)));
      // Structured clone rather than JSON on the IPC channel: an answer's JSON text crosses it as it is,
      // where JSON would escape every quote in it and parse it back (6 ms against 1.5 ms for 700 KiB).
      const child: ChildProcess = fork(options.entry, [], { env, execArgv, stdio: ['ignore', 'pipe', 'pipe', 'ipc'], serialization: 'advanced' });
      lines(child.stdout, (line) => events.output('stdout', line));
      lines(child.stderr, (line) => events.output('stderr', line));
      let ended = false;
      // Requests sent over the IPC channel (`call`), by id, until their answer comes.
      const calls = new Map<number, { resolve: (answer: { status: number; body: string }) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
      let lastId = 0;
      const settle = (id: number) => {
        const call = calls.get(id);
        if (call) {
          calls.delete(id);
          clearTimeout(call.timer);
        }
        return call;
      };
      const exit = new Promise<void>((resolve) => {
        child.once('exit', (code, signal) => {
          ended = true;
          // The runtime runs one statement at a time, in the order the requests came: the one it
          // stopped itself for is the oldest still waiting. The others may be sent again.
          const waiting = [...calls.keys()];
          if (signal === STATEMENT_TIMEOUT_SIGNAL && waiting.length > 0) settle(waiting.shift()!)?.reject(new StatementTimeout(spec.start.queries.timeoutMs));
          for (const id of waiting) settle(id)?.reject(new Error('The runtime exited before it answered'));
          events.exited(code, signal);
          resolve();
        });
      });
      child.on('message', (message: ResponseMessage) => {
        if (message?.type !== 'response') return;
        settle(message.id)?.resolve({ status: message.status, body: message.body });
        // The request's log line, as if the runtime had printed it; after the answer is on its way.
        const { log } = message;
        if (typeof log === 'string') setImmediate(() => events.output('stdout', log.length > MAX_LINE ? `${log.slice(0, MAX_LINE)}…` : log));
      });
      // An IPC write to a runtime that just died must not throw in this process.
      child.on('error', () => undefined);
      const pod: Omit<RunningPod, 'address'> = {
        pid: child.pid ?? null,
        call(request: PodRequest) {
          return new Promise((resolve, reject) => {
            if (ended || !child.connected) return reject(new Error('The runtime is not running'));
            const id = ++lastId;
            const timer = setTimeout(() => settle(id)?.reject(new Error('The runtime did not answer in time')), CALL_TIMEOUT_MS);
            calls.set(id, { resolve, reject, timer });
            child.send({ type: 'request', id, ...request }, (error) => {
              if (error) settle(id)?.reject(error);
            });
          });
        },
        kill(signal) {
          if (!ended) child.kill(signal);
        },
        async stop(graceMs) {
          if (ended) return;
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
          await exit;
          clearTimeout(timer);
        },
      };
      return new Promise<RunningPod>((resolve, reject) => {
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`The runtime did not listen within ${spec.startTimeoutMs} ms`));
        }, spec.startTimeoutMs);
        child.on('message', (message: ListeningMessage) => {
          if (message?.type !== 'listening') return;
          clearTimeout(timer);
          resolve({ ...pod, address: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${message.port}` });
        });
        void exit.then(() => {
          clearTimeout(timer);
          reject(new Error('The runtime exited before it listened'));
        });
        child.send({ ...spec.start, host: options.host });
      });
    },
  };
}
