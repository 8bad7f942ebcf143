import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { exited, spawnTs } from './server-env.js';

/** A real `main.ts` process listening over HTTPS, and a keep-alive client that trusts its certificate. */
export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** Log lines at level error or above, for a failure message. */
  errors(): string[];
  /** Everything the process wrote to stdout so far (log lines and what it prints, such as the first admin key). */
  output(): string;
  get(pathname: string, key: string): Promise<HttpAnswer>;
  post(pathname: string, body: unknown, key: string): Promise<HttpAnswer>;
  put(pathname: string, body: unknown, key: string): Promise<HttpAnswer>;
  patch(pathname: string, body: unknown, key: string): Promise<HttpAnswer>;
  del(pathname: string, key: string): Promise<HttpAnswer>;
  stop(): Promise<void>;
}

export interface HttpAnswer {
  status: number;
  contentType: string;
  body: any;
  text: string;
}

const LISTENING = '"mapi listening on ';

/**
 * Starts `packages/server/src/main.ts` with `env` and resolves once it logs where it listens.
 * The certificate is read after that, from DATA_DIR/tls, because the first start writes it.
 */
export async function startServerProcess(env: Record<string, string>, dataDir: string): Promise<ServerProcess> {
  // Info level is the lowest that logs the listening line; request lines are drained and dropped.
  const child = spawnTs('packages/server/src/main.ts', [], { PORT: '0', LOG_LEVEL: 'info', ...env });
  // A worker that exits without running afterAll (interrupted run) must not leave servers behind.
  const orphaned = () => child.kill('SIGKILL');
  process.once('exit', orphaned);
  child.once('exit', () => process.off('exit', orphaned));
  const errors: string[] = [];
  let pending = '';
  let stdout = '';
  let url: string;
  try {
    url = await new Promise<string>((resolve, reject) => {
      let stderr = '';
      child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.stdout?.setEncoding('utf8').on('data', (d: string) => {
        stdout += d;
        pending += d;
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) {
          if (line.includes(LISTENING)) resolve((JSON.parse(line) as { msg: string }).msg.slice(LISTENING.length - 1));
          if (/"level":(50|60)/.test(line)) errors.push(line);
        }
      });
      child.once('exit', (code) => reject(new Error(`main.ts exited (${code}) before listening:\n${stderr}`)));
    });
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const ca = fs.readFileSync(path.join(dataDir, 'tls', 'localhost.crt'), 'utf8');
  // One pool of warm connections per process, so concurrent requests really overlap on the server.
  const agent = new https.Agent({ keepAlive: true, maxSockets: 32, ca, servername: 'localhost' });
  const target = new URL(url);

  function send(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', pathname: string, body: unknown, key: string): Promise<HttpAnswer> {
    const payload = body === undefined ? '' : JSON.stringify(body);
    const bodyHeaders = body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) };
    return new Promise((resolve, reject) => {
      const req = https.request(
        {
          hostname: target.hostname,
          port: target.port,
          path: pathname,
          method,
          agent,
          headers: { authorization: `Bearer ${key}`, ...bodyHeaders },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.once('error', reject);
          res.once('end', () => {
            let parsed: unknown = undefined;
            try {
              parsed = JSON.parse(text);
            } catch {
              // Left undefined: the caller's status and shape checks report the raw text.
            }
            resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: parsed, text });
          });
        },
      );
      req.once('error', reject);
      req.end(payload);
    });
  }

  async function stop(): Promise<void> {
    agent.destroy();
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    // A graceful stop that hangs must not hang the suite: the process is killed after a grace period.
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    try {
      await exited(child);
    } finally {
      clearTimeout(timer);
    }
  }

  const get = (pathname: string, key: string) => send('GET', pathname, undefined, key);
  const post = (pathname: string, body: unknown, key: string) => send('POST', pathname, body, key);
  const put = (pathname: string, body: unknown, key: string) => send('PUT', pathname, body, key);
  const patch = (pathname: string, body: unknown, key: string) => send('PATCH', pathname, body, key);
  const del = (pathname: string, key: string) => send('DELETE', pathname, undefined, key);
  return { url, child, errors: () => [...errors], output: () => stdout, get, post, put, patch, del, stop };
}
