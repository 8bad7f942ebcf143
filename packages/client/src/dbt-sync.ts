import { unwrap } from './errors.js';
import { DEFAULT_PAGE_SIZE, paginate, type ListOptions, type RawClient } from './pagination.js';
import { abortReason, sleep } from './retry.js';
import type { DbtSyncLogEntry, DbtSyncResult, DbtSyncRun, DbtSyncStatus, QueryOf, StartDbtSyncInput, StartDbtSyncResponse } from './types.js';

export type DbtSyncHistoryQuery = Omit<QueryOf<'listDbtSyncs'>, 'after'>;

/** Reference 7.3: only COMPLETED and FAILED end a sync (a cancelled one is FAILED with error "cancelled"). */
export const isSyncFinished = (status: { status: string }): boolean => status.status === 'COMPLETED' || status.status === 'FAILED';

export interface FollowSyncOptions {
  /** The first wait between two polls; default 250 ms, then half as long again each time, up to maxIntervalMs. */
  intervalMs?: number;
  /** Default 2,000 ms. */
  maxIntervalMs?: number;
  /** Default 20 minutes (the server stops a sync after 15). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Called with each status read, the final one included. */
  onUpdate?: (status: DbtSyncStatus) => void;
}

/** The wait ran out while the sync was still running; `status` is the last one read. */
export class SyncWaitTimeoutError extends Error {
  override readonly name = 'SyncWaitTimeoutError';
  constructor(
    readonly status: DbtSyncStatus,
    timeoutMs: number,
  ) {
    super(`Sync ${status.syncJobId} was still ${status.status} after ${Math.round(timeoutMs / 1000)} s.`);
  }
}

/** Transformation-project syncs (reference 7.1-7.7). */
export interface DbtSync {
  /** Starts a sync; every field is optional (defaults: source `git`, output `branch`). */
  start(deploymentId: number, input?: StartDbtSyncInput, options?: { signal?: AbortSignal }): Promise<StartDbtSyncResponse>;
  status(deploymentId: number, syncJobId: string, options?: { signal?: AbortSignal }): Promise<DbtSyncStatus>;
  /** Polls the status until COMPLETED or FAILED and returns the last one. */
  waitFor(deploymentId: number, syncJobId: string, options?: FollowSyncOptions): Promise<DbtSyncStatus>;
  cancel(deploymentId: number, syncJobId: string, options?: { signal?: AbortSignal }): Promise<{ message: string }>;
  result(deploymentId: number, syncJobId: string, options?: { signal?: AbortSignal }): Promise<DbtSyncResult>;
  /** Runs, newest first. */
  history(deploymentId: number, query?: DbtSyncHistoryQuery, options?: ListOptions): AsyncIterable<DbtSyncRun>;
  /** A sync's log, oldest first. */
  logs(deploymentId: number, syncJobId: string, options?: ListOptions): AsyncIterable<DbtSyncLogEntry>;
  /** The files of an `output: files` sync (kept one hour after it completed). */
  generatedFiles(deploymentId: number, syncJobId: string, options?: ListOptions): AsyncIterable<{ path: string; content: string }>;
}

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});
const BASE = '/api/v1/deployments/{deploymentId}/dbt-sync/{syncJobId}' as const;

export function createDbtSync(api: RawClient): DbtSync {
  const status = async (deploymentId: number, syncJobId: string, { signal }: { signal?: AbortSignal } = {}) =>
    unwrap(await api.GET(BASE, { params: { path: { deploymentId, syncJobId } }, ...withSignal(signal) }));
  return {
    start: async (deploymentId, input = {}, { signal } = {}) =>
      unwrap(await api.POST('/api/v1/deployments/{deploymentId}/dbt-sync', { params: { path: { deploymentId } }, body: input, ...withSignal(signal) })),
    status,
    async waitFor(deploymentId, syncJobId, options = {}) {
      const { signal } = options;
      const timeoutMs = options.timeoutMs ?? 20 * 60_000;
      const maxInterval = options.maxIntervalMs ?? 2000;
      const deadline = Date.now() + timeoutMs;
      let interval = options.intervalMs ?? 250;
      for (;;) {
        if (signal?.aborted) throw abortReason(signal);
        const current = await status(deploymentId, syncJobId, { ...withSignal(signal) });
        options.onUpdate?.(current);
        if (isSyncFinished(current)) return current;
        if (Date.now() + interval > deadline) throw new SyncWaitTimeoutError(current, timeoutMs);
        await sleep(interval, signal);
        interval = Math.min(maxInterval, Math.round(interval * 1.5));
      }
    },
    cancel: async (deploymentId, syncJobId, { signal } = {}) =>
      unwrap(await api.DELETE(BASE, { params: { path: { deploymentId, syncJobId } }, ...withSignal(signal) })),
    result: async (deploymentId, syncJobId, { signal } = {}) =>
      unwrap(await api.GET(`${BASE}/result`, { params: { path: { deploymentId, syncJobId } }, ...withSignal(signal) })),
    history: (deploymentId, query, { signal } = {}) =>
      paginate(async (after) =>
        unwrap(
          await api.GET('/api/v1/deployments/{deploymentId}/dbt-sync', {
            params: { path: { deploymentId }, query: { ...query, first: query?.first ?? DEFAULT_PAGE_SIZE, after } },
            ...withSignal(signal),
          }),
        ),
      ),
    logs: (deploymentId, syncJobId, { signal } = {}) =>
      paginate(async (after) =>
        unwrap(
          await api.GET(`${BASE}/logs`, { params: { path: { deploymentId, syncJobId }, query: { first: DEFAULT_PAGE_SIZE, after } }, ...withSignal(signal) }),
        ),
      ),
    generatedFiles: (deploymentId, syncJobId, { signal } = {}) =>
      paginate(async (after) =>
        unwrap(
          await api.GET(`${BASE}/generated-files`, {
            params: { path: { deploymentId, syncJobId }, query: { first: DEFAULT_PAGE_SIZE, after } },
            ...withSignal(signal),
          }),
        ),
      ),
  };
}
