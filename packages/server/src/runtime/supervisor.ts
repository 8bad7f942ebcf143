import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Store } from '../db/database.js';
import type { Db } from '../db/tables.js';
import type { Secrets } from '../secrets/index.js';
import { STATEMENT_TIMEOUT_SIGNAL, type StartMessage } from '../semantic-layer/protocol.js';
import type { RunningPod, RuntimeDriver } from './driver.js';
import type { OwnCluster } from './own-cluster.js';
import { LogSink, redact, redactionOf, type PodLogTarget, type Redaction } from './log-sink.js';
import { podName, probe, runtimeSecretContext } from './pods.js';
import {
  claimRuntime,
  ensureRuntime,
  leasedElsewhere,
  markTerminated,
  renewLeases,
  unownedLive,
  updateOwned,
  usedSince,
  type EnvironmentKey,
} from './runtimes.store.js';
import { randomToken } from '../shared/tokens.js';

/** One environment that should run now, as the area that plans runtimes sees it. */
export interface DesiredRuntime extends EnvironmentKey {
  buildId: number;
  commit: string;
  version: string;
  /** Changes whenever the environment's variables change; carries no value. */
  envRevision: string;
  /** The build's artifact and the environment's variables, read when a pod starts. */
  load(): Promise<{ artifact: string; env: Record<string, string> }>;
  /** Files the runtime reads (short-lived credentials), written by this process beside the pod. */
  files?: PodFiles;
}

/**
 * Files given to a pod, such as workload-identity tokens: written into a directory of the pod's
 * own before it starts, each replaced atomically, and written again when `refreshAt` comes or
 * `contentRevision` changes, without a restart. The variables naming them join the pod's
 * environment; a change of `revision` (files or variables added, removed, renamed) replaces the pod.
 */
export interface PodFiles {
  revision: string;
  contentRevision: string;
  /** Writes every file into `dir`; answers the variables that name them and when to write them again (ms). */
  write(dir: string): Promise<{ env: Record<string, string>; refreshAt: number }>;
}

/**
 * What should run: every environment that always runs, plus those of `used` (on-demand
 * environments used within the idle time) that can run (they have a successful build).
 */
export type Planner = (used: EnvironmentKey[]) => Promise<DesiredRuntime[]>;

export interface RuntimeOptions {
  /** This process, as the owner of leases. */
  owner: string;
  /** How often this process reconciles what runs with what should (ms). */
  tickMs: number;
  /** How long a lease lasts unless renewed: the time another process waits before taking over (ms). */
  leaseMs: number;
  healthIntervalMs: number;
  healthTimeoutMs: number;
  /** Failed liveness checks in a row before the pod is killed. */
  healthFailures: number;
  /** The first restart's delay; each crash in a row doubles it, up to `backoffMaxMs`. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Crashes in a row from which the pod shows CrashLoopBackOff while it waits. */
  crashLoopAfter: number;
  /** Running this long clears the crash count. */
  stableMs: number;
  startTimeoutMs: number;
  stopGraceMs: number;
  /** On-demand environments stop this long after their last use. */
  idleMs: number;
  logLinesPerDeployment: number;
  logFlushMs: number;
  /** Where runtimes may open SQLite data sources from; null: nowhere. */
  dataSourcesDir: string | null;
  /** DATASOURCES_ALLOW_SOCKETS: a PostgreSQL DB_URL may name a Unix socket or set host= or hostaddr=. */
  allowSocketSources: boolean;
  /** The server's own PostgreSQL cluster, read for each pod start and handed to the runtime, which refuses a data source that is it. */
  ownCluster: OwnCluster;
  /** Where pods' files (PodFiles) are written, a directory per pod; null: a temporary directory of this process. */
  podFilesDir: string | null;
  /** What each runtime allows a query (semantic-layer/protocol.ts). */
  queries: StartMessage['queries'];
}

export const DEFAULT_RUNTIME_OPTIONS: Omit<RuntimeOptions, 'owner'> = {
  tickMs: 2_000,
  leaseMs: 15_000,
  healthIntervalMs: 5_000,
  healthTimeoutMs: 2_000,
  healthFailures: 3,
  backoffBaseMs: 2_000,
  backoffMaxMs: 300_000,
  crashLoopAfter: 2,
  stableMs: 60_000,
  startTimeoutMs: 30_000,
  stopGraceMs: 5_000,
  idleMs: 10 * 60_000,
  logLinesPerDeployment: 10_000,
  logFlushMs: 250,
  dataSourcesDir: null,
  allowSocketSources: false,
  ownCluster: async () => null,
  podFilesDir: null,
  queries: { timeoutMs: 30_000, maxRows: 50_000, maxResultBytes: 50 * 1_048_576, cacheTtlMs: 10_000, continueWaitMs: 5_000 },
};

const keyOf = (k: { deploymentId: number; environmentId: string }) => `${k.deploymentId}/${k.environmentId}`;
const fingerprintOf = (d: DesiredRuntime) => `${d.buildId}|${d.version}|${d.envRevision}|${d.files?.revision ?? ''}`;
const iso = (ms: number) => new Date(ms).toISOString();

/** One start of a pod's runtime; ends once (crash, kill, stop), whichever is reported first. */
interface Attempt {
  over: boolean;
  instance: RunningPod | null;
  killedFor: string | null;
}

/** A pod this process runs. */
class LocalPod {
  attempt: Attempt | null = null;
  env: Record<string, string> = {};
  secret = '';
  restarts = 0;
  crashes = 0;
  healthFailures = 0;
  ready = false;
  liveSince: number | null = null;
  lastError: string | null = null;
  timer: NodeJS.Timeout | null = null;
  stopped = false;
  replacing = false;
  /** When its files are due to be written again, and the content they were written from. */
  filesDueAt: number | null = null;
  filesContent: string | null = null;
  refreshingFiles = false;

  constructor(
    readonly rowId: number,
    readonly name: string,
    public desired: DesiredRuntime,
  ) {}

  get fingerprint(): string {
    return fingerprintOf(this.desired);
  }

  logTarget(): PodLogTarget {
    // Made again only when the variables or the pod's secret change, not per line.
    if (this.#redactionFor?.env !== this.env || this.#redactionFor.secret !== this.secret) {
      this.#redactionFor = { env: this.env, secret: this.secret, redaction: redactionOf(this.env, [this.secret]) };
    }
    return {
      tenantId: this.desired.tenantId,
      deploymentId: this.desired.deploymentId,
      type: this.desired.type,
      pod: this.name,
      redaction: this.#redactionFor.redaction,
    };
  }

  #redactionFor: { env: Record<string, string>; secret: string; redaction: Redaction } | null = null;
}

/**
 * Runs the runtimes this process owns. Every `tickMs` it asks the planner what should run, renews
 * its leases, claims environments nobody holds (a new one, or one whose owner stopped renewing:
 * killed, or cut off), starts their pods, replaces pods whose build, version or variables
 * changed, and stops pods no longer wanted. A pod that exits is restarted after a back-off that
 * doubles with each crash in a row; one that fails its liveness checks is killed, then restarted.
 */
export class Supervisor {
  readonly #pods = new Map<string, LocalPod>();
  readonly #logs: LogSink;
  #interval: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #again = false;
  #closed = false;
  #podFiles: string | null = null;

  private readonly db: Db;

  constructor(
    store: Store,
    private readonly secrets: Secrets,
    private readonly driver: RuntimeDriver,
    private readonly planner: Planner,
    private readonly options: RuntimeOptions,
    private readonly onError: (error: Error, what: string) => void,
  ) {
    this.db = store.db;
    this.#logs = new LogSink(store, {
      flushMs: options.logFlushMs,
      keepPerDeployment: options.logLinesPerDeployment,
      onError: (e) => onError(e, 'writing runtime logs'),
    });
  }

  start(): void {
    if (this.#interval || this.#closed) return;
    this.#interval = setInterval(() => void this.tick(), this.options.tickMs);
    this.#interval.unref();
    void this.tick();
  }

  /** Reconciles now (after a change this process made), or again right after a reconcile in progress. */
  tick(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = (async () => {
      do {
        this.#again = false;
        try {
          await this.#reconcile();
        } catch (error) {
          this.onError(error as Error, 'reconciling runtimes');
        }
      } while (this.#again && !this.#closed);
    })().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  /** The address and secret of a pod this process runs, while it is live, and its direct channel where the driver has one. */
  local(deploymentId: number, environmentId: string): { address: string; secret: string; ready: boolean; call?: RunningPod['call'] } | undefined {
    const pod = this.#pods.get(keyOf({ deploymentId, environmentId }));
    const instance = pod?.attempt?.instance;
    if (!pod || !instance || pod.liveSince === null) return undefined;
    return { address: instance.address, secret: pod.secret, ready: pod.ready, ...(instance.call ? { call: instance.call } : {}) };
  }

  /** Process ids of the pods this process runs (tests kill them). */
  pids(): Map<string, number | null> {
    return new Map([...this.#pods].map(([k, pod]) => [k, pod.attempt?.instance?.pid ?? null]));
  }

  /** Stops every pod and hands the environments back (another process takes them at once), then flushes the logs. */
  /** A pod's own directory of files. */
  #filesDir(podName: string): string {
    if (this.#podFiles === null) {
      this.#podFiles = this.options.podFilesDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-pod-files-'));
      fs.mkdirSync(this.#podFiles, { recursive: true, mode: 0o700 });
    }
    return path.join(this.#podFiles, podName);
  }

  /** Writes the pod's files (before a start, when due, when their content changed); answers the variables naming them. */
  async #writeFiles(podName: string, files: PodFiles | undefined, pod?: LocalPod): Promise<Record<string, string>> {
    if (!files) return {};
    const dir = this.#filesDir(podName);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const written = await files.write(dir);
    if (pod) {
      pod.filesDueAt = written.refreshAt;
      pod.filesContent = files.contentRevision;
    }
    return written.env;
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#interval) clearInterval(this.#interval);
    await this.#running?.catch(() => undefined);
    const pods = [...this.#pods.values()];
    this.#pods.clear();
    await Promise.all(pods.map((pod) => this.#halt(pod, 'the server process is shutting down')));
    try {
      await markTerminated(
        this.db,
        pods.map((p) => p.rowId),
        new Date().toISOString(),
      );
    } catch (error) {
      this.onError(error as Error, 'releasing runtimes');
    }
    await this.#logs.flush();
  }

  /** Writes what is pending in the log (tests read logs right after an event). */
  flushLogs(): Promise<void> {
    return this.#logs.flush();
  }

  #log(pod: LocalPod, message: string): void {
    this.#logs.write(pod.logTarget(), message);
  }

  async #reconcile(): Promise<void> {
    const { db, options } = this;
    const nowMs = Date.now();
    const at = iso(nowMs);
    const leaseUntil = iso(nowMs + options.leaseMs);
    const held = await renewLeases(db, options.owner, leaseUntil);
    for (const [key, pod] of this.#pods) {
      if (held.has(pod.rowId)) continue;
      // Taken over after this process missed its renewals, or deleted with its deployment.
      this.#pods.delete(key);
      await this.#halt(pod, 'this server process no longer holds its lease');
    }
    const used = (await usedSince(db, iso(nowMs - options.idleMs))).map((r) => ({
      tenantId: r.tenant_id,
      deploymentId: r.deployment_id,
      environmentId: r.environment_id,
      type: r.type,
      branch: r.branch_name,
    }));
    const desired = await this.planner(used);
    const wanted = new Map(desired.map((d) => [keyOf(d), d]));
    const stopped: number[] = [];
    for (const [key, pod] of this.#pods) {
      if (wanted.has(key)) continue;
      this.#pods.delete(key);
      const reason =
        pod.desired.type === 'production' ? 'the deployment has no build to run' : `idle for ${Math.round(options.idleMs / 60_000)} minutes, or switched off`;
      this.#log(pod, `Stopping pod ${pod.name}: ${reason}`);
      await this.#halt(pod, reason);
      stopped.push(pod.rowId);
    }
    await markTerminated(db, stopped, at);
    const heldElsewhere = new Set(
      (await leasedElsewhere(db, options.owner, at)).map((r) => keyOf({ deploymentId: r.deployment_id, environmentId: r.environment_id })),
    );
    for (const d of desired) {
      const key = keyOf(d);
      const pod = this.#pods.get(key);
      if (pod) {
        if (pod.fingerprint !== fingerprintOf(d) && !pod.replacing) void this.#replace(pod, d);
        else if (
          d.files &&
          !pod.replacing &&
          !pod.refreshingFiles &&
          ((pod.filesDueAt !== null && pod.filesDueAt <= nowMs) || pod.filesContent !== d.files.contentRevision)
        )
          void this.#refreshFiles(pod, d);
        continue;
      }
      if (heldElsewhere.has(key)) continue;
      await ensureRuntime(db, d, podName(d.environmentId), at);
      const row = await claimRuntime(db, d.deploymentId, d.environmentId, options.owner, leaseUntil, at);
      if (!row) continue;
      const fresh = new LocalPod(row.id, podName(d.environmentId), d);
      this.#pods.set(key, fresh);
      const notes =
        row.status !== 'Terminated' && row.started_at !== null ? [`Pod ${row.pod} stopped with its server process; pod ${fresh.name} takes over`] : [];
      void this.#launch(fresh, notes);
    }
    const orphaned = (await unownedLive(db, at)).filter((r) => !wanted.has(keyOf({ deploymentId: r.deployment_id, environmentId: r.environment_id })));
    await markTerminated(
      db,
      orphaned.map((r) => r.id),
      at,
    );
  }

  /** Starts one attempt of the pod: loads its build and variables, starts the runtime, watches it. */
  async #launch(pod: LocalPod, notes: string[], preloaded?: { artifact: string; env: Record<string, string> }): Promise<void> {
    if (pod.stopped) return;
    const attempt: Attempt = { over: false, instance: null, killedFor: null };
    pod.attempt = attempt;
    pod.healthFailures = 0;
    pod.ready = false;
    pod.liveSince = null;
    const d = pod.desired;
    try {
      const loaded = preloaded ?? (await d.load());
      // The files' variables win over the deployment's own: they name files only this process writes.
      loaded.env = { ...loaded.env, ...(await this.#writeFiles(pod.name, d.files, pod)) };
      pod.env = loaded.env;
      pod.secret = randomToken(32);
      const at = new Date().toISOString();
      const owned = await updateOwned(this.db, pod.rowId, this.options.owner, {
        pod: pod.name,
        type: d.type,
        branch_name: d.branch,
        status: pod.crashes >= this.options.crashLoopAfter ? 'CrashLoopBackOff' : 'Pending',
        ready: 0,
        restart_count: pod.restarts,
        build_id: d.buildId,
        version: d.version,
        address: null,
        secret: this.secrets.seal(pod.secret, runtimeSecretContext(pod.rowId, pod.name)),
        started_at: at,
        updated_at: at,
      });
      if (!owned || pod.stopped) return;
      for (const note of notes) this.#log(pod, note);
      if (pod.restarts === 0) this.#log(pod, `Scheduled pod ${pod.name}: runtime ${d.version}, build ${d.buildId} of ${d.branch} (${d.commit.slice(0, 12)})`);
      // Read for PostgreSQL sources only (a connection each). Unread, the runtime could not tell the
      // server's own cluster from a warehouse, so it does not start.
      const ownCluster =
        loaded.env.DB_TYPE !== 'postgres'
          ? null
          : await this.options.ownCluster().catch((error: Error) => {
              throw new Error(`could not read the identity of this server's own database, which data sources are compared with: ${error.message}`);
            });
      const instance = await this.driver.start(
        {
          name: pod.name,
          env: loaded.env,
          startTimeoutMs: this.options.startTimeoutMs,
          start: {
            type: 'start',
            pod: pod.name,
            secret: pod.secret,
            version: d.version,
            build: { id: d.buildId, branch: d.branch, commit: d.commit },
            artifact: loaded.artifact,
            dataSourcesDir: this.options.dataSourcesDir,
            ownCluster,
            allowSocketSources: this.options.allowSocketSources,
            queries: this.options.queries,
          },
        },
        {
          output: (stream, line) => {
            this.#log(pod, line);
            // Stored with the pod and shown to callers: redacted like the log line.
            if (stream === 'stderr' && line.trim()) pod.lastError = redact(line.trim(), pod.logTarget().redaction).slice(0, 1_000);
          },
          exited: (code, signal) => {
            // It stopped itself to end a statement over QUERY_TIMEOUT_MS (statement-watchdog.ts):
            // the query was at fault, not the runtime, so it starts again at once.
            if (signal === STATEMENT_TIMEOUT_SIGNAL && !attempt.killedFor) {
              void this.#crashed(
                pod,
                attempt,
                `stopped a statement that ran longer than the ${this.options.queries.timeoutMs} ms a query may take (QUERY_TIMEOUT_MS)`,
                false,
              );
              return;
            }
            const why = attempt.killedFor ?? (signal ? `killed by ${signal}` : `exited with code ${code}`);
            void this.#crashed(pod, attempt, pod.lastError && !attempt.killedFor ? `${why}: ${pod.lastError}` : why);
          },
        },
      );
      attempt.instance = instance;
      if (attempt.over || pod.stopped) {
        instance.kill('SIGKILL');
        return;
      }
      await updateOwned(this.db, pod.rowId, this.options.owner, { address: instance.address, updated_at: new Date().toISOString() });
      this.#watch(pod, attempt);
    } catch (error) {
      await this.#crashed(pod, attempt, (error as Error).message);
    }
  }

  /** Liveness and readiness every `healthIntervalMs` (faster until the first answer, so a new pod shows Running soon). */
  #watch(pod: LocalPod, attempt: Attempt): void {
    const { options } = this;
    const check = async () => {
      const instance = attempt.instance;
      if (attempt.over || pod.stopped || !instance) return;
      const live = await probe(`${instance.address}/healthz`, pod.secret, options.healthTimeoutMs);
      if (attempt.over || pod.stopped) return;
      if (!live) {
        pod.healthFailures++;
        const allowed = this.#livenessFailuresAllowed(pod);
        this.#log(pod, `Liveness check failed (${pod.healthFailures} of ${allowed} in a row)`);
        if (pod.healthFailures >= allowed) {
          attempt.killedFor = `killed after failing ${allowed} liveness checks in a row`;
          this.#log(pod, `Killing the runtime: it failed ${allowed} liveness checks in a row`);
          instance.kill('SIGKILL');
          return;
        }
      } else {
        pod.healthFailures = 0;
        const ready = await probe(`${instance.address}/readyz`, pod.secret, options.healthTimeoutMs);
        if (attempt.over || pod.stopped) return;
        const first = pod.liveSince === null;
        if (first) pod.liveSince = Date.now();
        if (pod.crashes > 0 && pod.liveSince !== null && Date.now() - pod.liveSince >= options.stableMs) pod.crashes = 0;
        if (first || ready !== pod.ready) {
          pod.ready = ready;
          await updateOwned(this.db, pod.rowId, this.options.owner, {
            status: 'Running',
            ready: ready ? 1 : 0,
            last_error: null,
            updated_at: new Date().toISOString(),
          });
        }
      }
      pod.timer = setTimeout(() => void check(), pod.ready ? options.healthIntervalMs : Math.min(250, options.healthIntervalMs));
    };
    pod.timer = setTimeout(() => void check(), 0);
  }

  /**
   * Failed liveness checks in a row before the pod is killed. A runtime on SQLite answers no check
   * while a statement runs (one thread, no interrupt), and its watchdog ends a statement at
   * QUERY_TIMEOUT_MS: it is not counted as hung before that, however few checks that takes.
   */
  #livenessFailuresAllowed(pod: LocalPod): number {
    const { healthFailures, healthIntervalMs, queries } = this.options;
    if (pod.env.DB_TYPE === 'postgres') return healthFailures;
    // The watchdog looks at most a second after the limit; checks may fail as fast as one per interval.
    return Math.max(healthFailures, Math.ceil((queries.timeoutMs + 1_000) / healthIntervalMs) + 1);
  }

  /**
   * An attempt ended without being asked to: count it and restart after the back-off. One that
   * `counted` is false for (the runtime stopped itself for a statement over the time limit) starts
   * again at once and leaves the crash count as it was.
   */
  async #crashed(pod: LocalPod, attempt: Attempt, reason: string, counted = true): Promise<void> {
    if (attempt.over) return;
    attempt.over = true;
    if (pod.timer) clearTimeout(pod.timer);
    if (pod.stopped) return;
    attempt.instance?.kill('SIGKILL');
    pod.restarts++;
    if (counted) pod.crashes++;
    pod.ready = false;
    pod.liveSince = null;
    const delay = counted ? Math.min(this.options.backoffBaseMs * 2 ** (pod.crashes - 1), this.options.backoffMaxMs) : 0;
    const looping = counted && pod.crashes >= this.options.crashLoopAfter;
    this.#log(
      pod,
      `The runtime ${reason.replace(/[.\s]+$/, '')}. ${looping ? 'Back-off restarting failed runtime' : 'Restarting'} ${delay === 0 ? 'now' : `in ${formatDelay(delay)}`} (restart ${pod.restarts})`,
    );
    try {
      await updateOwned(this.db, pod.rowId, this.options.owner, {
        status: looping ? 'CrashLoopBackOff' : 'Pending',
        ready: 0,
        address: null,
        restart_count: pod.restarts,
        last_error: reason.slice(0, 2_000),
        updated_at: new Date().toISOString(),
      });
    } catch (error) {
      this.onError(error as Error, 'recording a runtime crash');
    }
    pod.timer = setTimeout(() => void this.#launch(pod, []), delay);
  }

  /** Stops the pod for good (it is no longer this process's to run). */
  async #halt(pod: LocalPod, reason: string): Promise<void> {
    pod.stopped = true;
    if (pod.timer) clearTimeout(pod.timer);
    const attempt = pod.attempt;
    if (attempt && !attempt.over) {
      attempt.over = true;
      const instance = attempt.instance;
      if (instance) {
        this.#log(pod, `Stopping the runtime: ${reason}`);
        await instance.stop(this.options.stopGraceMs);
      }
    }
    // Credentials outlive no pod.
    if (pod.desired.files) fs.rmSync(this.#filesDir(pod.name), { recursive: true, force: true });
  }

  /** Writes a running pod's files again: new tokens before the old ones expire, or changed content. */
  async #refreshFiles(pod: LocalPod, next: DesiredRuntime): Promise<void> {
    pod.refreshingFiles = true;
    try {
      await this.#writeFiles(pod.name, next.files, pod);
      pod.desired = next;
    } catch (error) {
      // Tried again on the next tick; the pod keeps the files it has until they expire.
      pod.filesDueAt = Date.now() + this.options.tickMs;
      this.#log(pod, `Could not renew the pod's files: ${(error as Error).message}`);
    } finally {
      pod.refreshingFiles = false;
    }
  }

  /** A new pod in place of one whose build, version or variables changed; the log says which. */
  async #replace(pod: LocalPod, next: DesiredRuntime): Promise<void> {
    pod.replacing = true;
    const key = keyOf(next);
    try {
      const loaded = await next.load();
      const freshName = podName(next.environmentId);
      loaded.env = { ...loaded.env, ...(await this.#writeFiles(freshName, next.files)) };
      const reasons: string[] = [];
      if (pod.desired.buildId !== next.buildId) reasons.push(`build ${next.buildId} (${next.commit.slice(0, 12)}) replaces build ${pod.desired.buildId}`);
      if (pod.desired.version !== next.version) reasons.push(`runtime version ${pod.desired.version} → ${next.version}`);
      const changed = changedNames(pod.env, loaded.env);
      if (changed.length > 0) reasons.push(`environment variables changed: ${changed.join(', ')}`);
      if (reasons.length === 0) {
        // Variables written again with the values they had: nothing to restart for.
        if (next.files) fs.rmSync(this.#filesDir(freshName), { recursive: true, force: true });
        pod.desired = next;
        pod.replacing = false;
        return;
      }
      const why = reasons.join('; ');
      const fresh = new LocalPod(pod.rowId, freshName, next);
      this.#log(pod, `Replacing pod ${pod.name} with ${fresh.name}: ${why}`);
      await this.#halt(pod, 'replaced');
      if (this.#pods.get(key) !== pod || this.#closed) return;
      this.#pods.set(key, fresh);
      await this.#launch(fresh, [`Replaces pod ${pod.name}: ${why}`], loaded);
    } catch (error) {
      pod.replacing = false;
      this.onError(error as Error, 'replacing a runtime');
    }
  }
}

/** Names added, removed or given another value; never a value. */
export function changedNames(before: Record<string, string>, after: Record<string, string>): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...names]
    .filter((n) => before[n] !== after[n])
    .sort()
    .map((n) => (!(n in before) ? `${n} (added)` : !(n in after) ? `${n} (removed)` : n));
}

function formatDelay(ms: number): string {
  return ms < 1_000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}
