import { unwrap } from './errors.js';
import { DEFAULT_PAGE_SIZE, paginate, type ListOptions, type RawClient } from './pagination.js';
import { sleep } from './retry.js';
import type { DeploymentLogLine, DeploymentPod, QueryOf } from './types.js';

/** Which pods' lines: `production`, or `dev` (staging branches and developers in dev mode); all of them when absent. */
export type LogSource = NonNullable<QueryOf<'listRuntimeLogs'>['source']>;

/** Which lines of a deployment's runtime logs to read. */
export interface LogFilter {
  source?: LogSource;
  /** One pod's lines, by its name (as `pods.list` shows it). */
  pod?: string;
}

export interface TailOptions extends LogFilter {
  /** How many of the newest lines; default 200, the most the server answers in one page. */
  first?: number;
  signal?: AbortSignal;
}

export interface FollowOptions extends LogFilter {
  /** How many of the newest lines to yield before the new ones; default 200, the most the server answers. */
  first?: number;
  /** The wait after a poll that found no more lines; default 1,000 ms. */
  intervalMs?: number;
  /** Ends the iteration: the pending request or wait is cancelled and the loop finishes without an error. */
  signal?: AbortSignal;
}

/** The default wait between polls of `logs.follow` that found nothing more. */
export const DEFAULT_FOLLOW_INTERVAL_MS = 1000;

export interface Pods {
  /** Every pod of the deployment: one per environment that runs or ran (reference 1.10). */
  list(deploymentId: number, options?: ListOptions): Promise<DeploymentPod[]>;
}

export interface Logs {
  /** The newest lines of the runtime logs, oldest first (reference 1.9). */
  tail(deploymentId: number, options?: TailOptions): Promise<DeploymentLogLine[]>;
  /**
   * The tail, then each line as it is written, by polling with the last page's `endCursor`: asks
   * again at once while the server has more, and waits `intervalMs` once it has none. Runs until
   * `signal` is aborted (or the caller stops iterating); a request that fails after the client's
   * retries ends it with that error.
   */
  follow(deploymentId: number, options?: FollowOptions): AsyncIterable<DeploymentLogLine>;
}

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});
const filterQuery = ({ source, pod }: LogFilter) => ({ ...(source !== undefined ? { source } : {}), ...(pod !== undefined ? { pod } : {}) });

async function logsPage(api: RawClient, deploymentId: number, filter: LogFilter, first: number, after: string | undefined, signal: AbortSignal | undefined) {
  const query = { ...filterQuery(filter), first, ...(after !== undefined ? { after } : {}) };
  return unwrap(await api.GET('/api/v1/deployments/{deploymentId}/logs', { params: { path: { deploymentId }, query }, ...withSignal(signal) }));
}

async function* followLogs(api: RawClient, deploymentId: number, options: FollowOptions): AsyncGenerator<DeploymentLogLine, void, undefined> {
  const { signal } = options;
  const intervalMs = options.intervalMs ?? DEFAULT_FOLLOW_INTERVAL_MS;
  // Unset until some line has been read: the server has no cursor to give for an empty log, so
  // until then each poll asks for the tail again, and every line it answers is new.
  let cursor: string | undefined;
  let first = options.first ?? DEFAULT_PAGE_SIZE;
  try {
    for (;;) {
      if (signal?.aborted) return;
      const page = await logsPage(api, deploymentId, options, first, cursor, signal);
      yield* page.items;
      if (page.pageInfo.endCursor !== null) cursor = page.pageInfo.endCursor;
      first = DEFAULT_PAGE_SIZE;
      // An empty page that claims more would otherwise be asked for again at once, forever.
      if (!page.pageInfo.hasNextPage || page.items.length === 0) await sleep(intervalMs, signal);
    }
  } catch (error) {
    // Aborting is how a follow ends; whatever the abort cut short is not an error.
    if (signal?.aborted) return;
    throw error;
  }
}

export function createPods(api: RawClient): { pods: Pods; logs: Logs } {
  return {
    pods: {
      list: async (deploymentId, { signal } = {}) => {
        const pods: DeploymentPod[] = [];
        const pages = paginate(async (after) =>
          unwrap(
            await api.GET('/api/v1/deployments/{deploymentId}/pods', {
              params: { path: { deploymentId }, query: { first: DEFAULT_PAGE_SIZE, after } },
              ...withSignal(signal),
            }),
          ),
        );
        for await (const pod of pages) pods.push(pod);
        return pods;
      },
    },
    logs: {
      tail: async (deploymentId, options = {}) =>
        (await logsPage(api, deploymentId, options, options.first ?? DEFAULT_PAGE_SIZE, undefined, options.signal)).items,
      follow: (deploymentId, options = {}) => followLogs(api, deploymentId, options),
    },
  };
}
