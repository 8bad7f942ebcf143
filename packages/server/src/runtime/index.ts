/**
 * Runtimes: each environment of a deployment that should run (the planner, given by the area that
 * knows deployments, says which) runs as a pod, the runtime program of src/semantic-layer/, on
 * the configured driver (`process`: a child process per pod). This service owns its tables
 * (`runtimes`, `runtime_logs`), knows no area, and answers what the pods and logs routes and the
 * data API's proxy need.
 *
 * One process runs each environment: a lease in its row, renewed every `tickMs`, taken over by
 * another process once it lapses (`leaseMs` after the owner's last renewal, so within about
 * `leaseMs + tickMs`: 17 s by default). On SQLite there is one process, which owns everything.
 *
 * @example
 * const runtime = new Runtime(store, secrets, processDriver({ entry, host: '127.0.0.1' }), planner, { owner: 'host:pid' });
 * runtime.start();
 * const pods = await runtime.pods(tenantId, deploymentId);
 * await runtime.close(); // stops the pods, before store.close()
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Store } from '../db/database.js';
import type { RuntimeRow } from '../db/tables.js';
import type { Secrets, SecretColumn } from '../secrets/index.js';
import type { RunningPod, RuntimeDriver } from './driver.js';
import { podName, runtimeSecretContext } from './pods.js';
import { StatementTimeout } from './driver.js';
import { sendToPod, type PodAnswer, type PodCall } from './pod-transport.js';
import {
  findRuntime,
  forgetBranchRuntimes,
  hasLogsBefore,
  listRuntimes,
  logsAfter,
  newestLogId,
  tailLogs,
  touchRuntime,
  type EnvironmentKey,
  type LogFilter,
} from './runtimes.store.js';
import { DEFAULT_RUNTIME_OPTIONS, Supervisor, type Planner, type RuntimeOptions } from './supervisor.js';

export type { DesiredRuntime, Planner, PodFiles, RuntimeOptions } from './supervisor.js';
export type { RuntimeDriver } from './driver.js';
export type { EnvironmentKey, LogFilter } from './runtimes.store.js';
export { processDriver } from './process-driver.js';
export type { PodAnswer, PodCall } from './pod-transport.js';

/** Why a request could not reach its pod, for the caller to word (it knows what the environment is to its users). */
export type PodUnavailable =
  /** The pod restarts again and again (CrashLoopBackOff). */
  | { reason: 'crashing'; pod: RuntimeRow }
  /** The pod did not come up within the wait. */
  | { reason: 'not-running'; pod: RuntimeRow | undefined }
  /** The pod was up but ended or failed before it answered. */
  | { reason: 'stopped-answering'; error: unknown };

export interface PodRequestOptions {
  /** How long the request waits for the pod to come up (a woken environment, a new deployment); POD_WAIT_MS by default. */
  waitMs?: number;
  /** Run when this request woke an on-demand environment (its first use in a while), before waiting for its pod. */
  woken?: () => Promise<void>;
  /** Run on each pass while the pod is not up, after the crash check: it throws to give up before the wait is over. */
  waiting?: (pod: RuntimeRow | undefined) => Promise<void>;
  /** The error a request that cannot reach its pod fails with. */
  unavailable: (why: PodUnavailable) => Error;
}

/** How long a request waits for its environment's pod to come up, by default. */
export const POD_WAIT_MS = 20_000;
const POD_POLL_MS = 100;

/** The column of sealed pod secrets, for the secrets service's start-up check and re-encryption. */
export const runtimeSecretColumn: SecretColumn = {
  table: 'runtimes',
  id: 'id',
  value: 'secret',
  contextColumns: ['pod'],
  context: (row) => runtimeSecretContext(Number(row.id), String(row.pod)),
};

/** A use is recorded at most this often per environment and process (each is a write), and well within the idle time. */
const USE_RECORD_MS = 15_000;

export interface PodTarget {
  address: string;
  secret: string;
  /** A pod of this process: its direct channel (RunningPod.call), where requests go past HTTP. */
  call?: RunningPod['call'];
}

export class Runtime {
  readonly #supervisor: Supervisor | null;
  readonly #recorded = new Map<string, number>();
  readonly options: RuntimeOptions;

  /** `driver` null: this process runs no pods (it still records uses and reads pods and logs). */
  constructor(
    private readonly store: Store,
    private readonly secrets: Secrets,
    driver: RuntimeDriver | null,
    planner: Planner,
    options: Partial<RuntimeOptions> = {},
    onError: (error: Error, what: string) => void = () => undefined,
  ) {
    this.options = { ...DEFAULT_RUNTIME_OPTIONS, owner: `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`, ...options };
    this.#supervisor = driver === null ? null : new Supervisor(store, secrets, driver, planner, this.options, onError);
  }

  get enabled(): boolean {
    return this.#supervisor !== null;
  }

  start(): void {
    this.#supervisor?.start();
  }

  /** Reconciles now: after a change that starts, stops or replaces pods. */
  async reconcile(): Promise<void> {
    await this.#supervisor?.tick();
  }

  async close(): Promise<void> {
    await this.#supervisor?.close();
  }

  /** The deployment's pods (reference 1.10), in the order their environments first ran. */
  pods(tenantId: number, deploymentId: number): Promise<RuntimeRow[]> {
    return listRuntimes(this.store.db, tenantId, deploymentId);
  }

  /**
   * A page of log lines, oldest first. Without `afterId`, the newest `limit` lines (the tail);
   * with it, the lines written since that one (a client following the log).
   */
  async logs(filter: LogFilter, page: { afterId?: number; limit: number }) {
    await this.#supervisor?.flushLogs();
    const { db } = this.store;
    if (page.afterId === undefined) {
      const rows = (await tailLogs(db, filter, page.limit)).reverse();
      const first = rows[0];
      // Where to follow from when nothing matched yet: the deployment's newest line, whatever it is.
      const lastId = rows[rows.length - 1]?.id ?? (await newestLogId(db, filter.deploymentId));
      return { rows, lastId, hasOlder: first !== undefined && (await hasLogsBefore(db, filter, first.id)), hasNewer: false };
    }
    const rows = await logsAfter(db, filter, page.afterId, page.limit + 1);
    const hasNewer = rows.length > page.limit;
    const kept = rows.slice(0, page.limit);
    return { rows: kept, lastId: kept[kept.length - 1]?.id ?? page.afterId, hasOlder: true, hasNewer };
  }

  /** Records that an on-demand environment is in use, so it runs (or keeps running) for the idle time; false when recorded moments ago. */
  async use(key: EnvironmentKey): Promise<boolean> {
    const id = `${key.deploymentId}/${key.environmentId}`;
    const last = this.#recorded.get(id) ?? 0;
    if (Date.now() - last < Math.min(USE_RECORD_MS, this.options.idleMs / 10)) return false;
    this.#recorded.set(id, Date.now());
    if (this.#recorded.size > 10_000) this.#recorded.delete(this.#recorded.keys().next().value as string);
    await touchRuntime(this.store.db, key, podName(key.environmentId), new Date().toISOString());
    void this.#supervisor?.tick();
    return true;
  }

  /**
   * A branch's environments are gone (the branch was deleted): their rows go, so their pods are
   * no longer listed, and the process running one stops it at its next lease renewal (this one now).
   */
  async forget(deploymentId: number, branch: string): Promise<void> {
    await forgetBranchRuntimes(this.store.db, deploymentId, branch);
    await this.reconcile();
  }

  /**
   * The environment's row and, while its pod is live, where it listens, on whichever process runs
   * it (one read of the row; none for a pod of this process).
   */
  async state(deploymentId: number, environmentId: string): Promise<{ target: PodTarget | undefined; pod: RuntimeRow | undefined }> {
    const local = this.#supervisor?.local(deploymentId, environmentId);
    if (local) return { target: local, pod: undefined };
    const pod = await findRuntime(this.store.db, deploymentId, environmentId);
    const live = pod !== undefined && pod.status === 'Running' && pod.address !== null && pod.secret !== null;
    return { target: live ? { address: pod.address!, secret: this.secrets.open(pod.secret!, runtimeSecretContext(pod.id, pod.pod)) } : undefined, pod };
  }

  /**
   * Sends a request to the environment's pod, on whichever process runs it, and answers what the
   * pod answers. An on-demand environment is used (woken when it sleeps); the request waits up to
   * `waitMs` for its pod to come up. `call` may be a function, run once the pod is up, so that a
   * request that never reaches it reads nothing for it. A query the pod stopped for running too
   * long rejects with StatementTimeout; every other failure with `options.unavailable`'s error.
   */
  async request(key: EnvironmentKey, call: PodCall | (() => Promise<PodCall>), options: PodRequestOptions): Promise<PodAnswer> {
    if (key.type !== 'production' && (await this.use(key))) await options.woken?.();
    const target = await this.#waitForPod(key, options);
    const request = typeof call === 'function' ? await call() : call;
    try {
      return await sendToPod(target, request);
    } catch (error) {
      // The query ran too long and was stopped: the query, not the pod, is at fault.
      if (error instanceof StatementTimeout) throw error;
      throw options.unavailable({ reason: 'stopped-answering', error });
    }
  }

  async #waitForPod(key: EnvironmentKey, options: PodRequestOptions): Promise<PodTarget> {
    const deadline = Date.now() + (options.waitMs ?? POD_WAIT_MS);
    for (;;) {
      const { target, pod } = await this.state(key.deploymentId, key.environmentId);
      if (target) return target;
      // A request waiting for an on-demand environment keeps using it: a build and a start slower
      // than the idle time must not see the pod stopped as idle before it answers.
      if (key.type !== 'production') await this.use(key);
      if (pod?.status === 'CrashLoopBackOff') throw options.unavailable({ reason: 'crashing', pod });
      await options.waiting?.(pod);
      if (Date.now() >= deadline) throw options.unavailable({ reason: 'not-running', pod });
      await new Promise((resolve) => setTimeout(resolve, POD_POLL_MS));
    }
  }

  /** Process ids of the pods this process runs, by `deploymentId/environmentId` (tests kill them). */
  localPids(): Map<string, number | null> {
    return this.#supervisor?.pids() ?? new Map();
  }
}
