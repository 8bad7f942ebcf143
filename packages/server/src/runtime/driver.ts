import type { RequestMessage, StartMessage } from '../semantic-layer/protocol.js';

/** A data-API request for a pod, without the channel's bookkeeping. */
export type PodRequest = Omit<RequestMessage, 'type' | 'id'>;

/**
 * The answer to a `call` whose statement ran longer than the limit, when the runtime stopped
 * itself to end it (STATEMENT_TIMEOUT_SIGNAL): the query, not the runtime, is at fault.
 */
export class StatementTimeout extends Error {
  constructor(readonly limitMs: number) {
    super(`The statement ran longer than the ${limitMs} ms a query may take (QUERY_TIMEOUT_MS) and was stopped.`);
  }
}

/**
 * How pods are run. The service (supervisor.ts) decides what runs where and when; a driver only
 * starts one pod and reports what it prints and when it ends. `process` (process-driver.ts) is the
 * one driver: a child process per pod on this host.
 *
 * A Kubernetes driver would map onto the same interface (see docs/api/runtimes.md, "A Kubernetes driver"): `start` creates
 * a Pod (one container, the runtime image of `start.version`, the environment's variables from a
 * Secret, the start message as a mounted file) and resolves with its Service address once the pod
 * is Running; `output` follows the container's log stream; `exited` is a container termination
 * from the watch API; `kill` deletes the pod with grace period 0 and `stop` with the given grace.
 * Restarts and back-off stay in the supervisor (the pod's restartPolicy Never), so pods, logs and
 * leases behave the same on both.
 */
export interface RuntimeDriver {
  readonly name: string;
  start(spec: PodSpec, events: PodEvents): Promise<RunningPod>;
}

export interface PodSpec {
  name: string;
  /** The environment the runtime sees: the deployment's variables, nothing of the server's own. */
  env: Record<string, string>;
  /** The runtime's start message; the driver adds where to listen. */
  start: Omit<StartMessage, 'host'>;
  /** How long the runtime may take to listen before it counts as failed. */
  startTimeoutMs: number;
}

export interface PodEvents {
  /** One line the runtime printed (without its newline). */
  output(stream: 'stdout' | 'stderr', line: string): void;
  /** The runtime ended, after it was started (whether or not it had listened). */
  exited(code: number | null, signal: string | null): void;
}

export interface RunningPod {
  /** `http://host:port`, reachable by every server process that proxies to it. */
  address: string;
  /**
   * Sends a data-API request straight to the pod, past HTTP, where the driver has a channel to it
   * (the process driver: the IPC channel of its child); absent, the request goes to `address`.
   * Only the process that started the pod holds it. Rejects when the pod ends before it answers:
   * with StatementTimeout for the request whose statement the runtime stopped itself for.
   */
  call?(request: PodRequest): Promise<{ status: number; body: string }>;
  /** The operating-system process id, where there is one (tests kill pods with it). */
  pid: number | null;
  kill(signal: 'SIGKILL' | 'SIGSTOP' | 'SIGCONT'): void;
  /** Asks the runtime to stop and kills it after `graceMs`; resolves when it has ended. */
  stop(graceMs: number): Promise<void>;
}
