import { unwrap } from './errors.js';
import { DEFAULT_PAGE_SIZE, paginate, type ListOptions, type RawClient } from './pagination.js';
import { abortReason, sleep } from './retry.js';
import type { Build, BuildLogLine, Commit, QueryOf } from './types.js';

export type BuildListQuery = Omit<QueryOf<'listBuilds'>, 'after'>;
export type CommitListQuery = Omit<QueryOf<'listCommits'>, 'after'>;

/** A build is over once it has succeeded or failed. */
export const isFinished = (build: { status: string }): boolean => build.status === 'success' || build.status === 'failed';

export interface WaitForBuildOptions {
  /** The branch the commit is on, when known: narrows the search for its build. */
  branchName?: string;
  /** The first wait between two reads; default 100 ms, then half as long again each time, up to maxIntervalMs. */
  intervalMs?: number;
  /** Default 2,000 ms. */
  maxIntervalMs?: number;
  /** Default 15 minutes (the server stops a build after 10). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Called with the build each time it is read, while it is queued or building too. */
  onUpdate?: (build: Build) => void;
}

/** The wait ran out before the build finished; `build` is the last state read (undefined when no build of the commit appeared). */
export class BuildWaitTimeoutError extends Error {
  override readonly name = 'BuildWaitTimeoutError';
  constructor(
    readonly commit: string,
    readonly build: Build | undefined,
    timeoutMs: number,
  ) {
    super(
      build === undefined
        ? `No build of commit ${commit} appeared within ${Math.round(timeoutMs / 1000)} s.`
        : `Build ${build.id} of commit ${commit} was still ${build.status} after ${Math.round(timeoutMs / 1000)} s.`,
    );
  }
}

export interface Builds {
  /** Builds of a deployment, newest first. */
  list(deploymentId: number, query?: BuildListQuery, options?: ListOptions): AsyncIterable<Build>;
  /** The log lines of one build, oldest first. */
  logs(deploymentId: number, buildId: number, options?: ListOptions): AsyncIterable<BuildLogLine>;
  /**
   * Waits until the newest build of `commit` (an upload's `lastHash`) has succeeded or failed and
   * returns it. The build is found by its commit, so a later commit on the branch does not
   * change which build is waited for.
   */
  waitFor(deploymentId: number, commit: string, options?: WaitForBuildOptions): Promise<Build>;
}

export interface Commits {
  /** A branch's commits, newest first (default: the deploy branch). */
  list(deploymentId: number, query?: CommitListQuery, options?: ListOptions): AsyncIterable<Commit>;
}

const sized = <Q extends { first?: number }>(query: Q | undefined) => ({ ...query, first: query?.first ?? DEFAULT_PAGE_SIZE });
const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});

async function findBuild(
  api: RawClient,
  deploymentId: number,
  commit: string,
  branchName: string | undefined,
  signal: AbortSignal | undefined,
): Promise<Build | undefined> {
  // The build is queued before the upload's answer, so it is among the newest few.
  const page = unwrap(
    await api.GET('/api/v1/deployments/{deploymentId}/builds', {
      params: { path: { deploymentId }, query: { first: 20, ...(branchName !== undefined ? { branchName } : {}) } },
      ...withSignal(signal),
    }),
  );
  return page.items.find((build) => build.commit === commit);
}

async function waitForBuild(api: RawClient, deploymentId: number, commit: string, options: WaitForBuildOptions = {}): Promise<Build> {
  const { signal } = options;
  const timeoutMs = options.timeoutMs ?? 15 * 60_000;
  const maxInterval = options.maxIntervalMs ?? 2000;
  const deadline = Date.now() + timeoutMs;
  let interval = options.intervalMs ?? 100;
  let build: Build | undefined;
  for (;;) {
    if (signal?.aborted) throw abortReason(signal);
    build =
      build === undefined
        ? await findBuild(api, deploymentId, commit, options.branchName, signal)
        : unwrap(
            await api.GET('/api/v1/deployments/{deploymentId}/builds/{buildId}', {
              params: { path: { deploymentId, buildId: build.id } },
              ...withSignal(signal),
            }),
          );
    if (build !== undefined) {
      options.onUpdate?.(build);
      if (isFinished(build)) return build;
    }
    if (Date.now() + interval > deadline) throw new BuildWaitTimeoutError(commit, build, timeoutMs);
    await sleep(interval, signal);
    interval = Math.min(maxInterval, Math.round(interval * 1.5));
  }
}

export function createBuilds(api: RawClient): { builds: Builds; commits: Commits } {
  return {
    builds: {
      list: (deploymentId, query, { signal } = {}) =>
        paginate(async (after) =>
          unwrap(
            await api.GET('/api/v1/deployments/{deploymentId}/builds', {
              params: { path: { deploymentId }, query: { ...sized(query), after } },
              ...withSignal(signal),
            }),
          ),
        ),
      logs: (deploymentId, buildId, { signal } = {}) =>
        paginate(async (after) =>
          unwrap(
            await api.GET('/api/v1/deployments/{deploymentId}/builds/{buildId}/logs', {
              params: { path: { deploymentId, buildId }, query: { first: DEFAULT_PAGE_SIZE, after } },
              ...withSignal(signal),
            }),
          ),
        ),
      waitFor: (deploymentId, commit, options) => waitForBuild(api, deploymentId, commit, options),
    },
    commits: {
      list: (deploymentId, query, { signal } = {}) =>
        paginate(async (after) =>
          unwrap(
            await api.GET('/build/api/v1/deployments/{deploymentId}/commits', {
              params: { path: { deploymentId }, query: { ...sized(query), after } },
              ...withSignal(signal),
            }),
          ),
        ),
    },
  };
}
