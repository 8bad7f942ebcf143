import { unwrap } from './errors.js';
import { DEFAULT_PAGE_SIZE, paginate, type ListOptions, type RawClient } from './pagination.js';
import type { ConnectGitHostInput, Deployment, GitHostBranch, GitHostInstallation, GitHostRepository, GitHostStatus, PullResult } from './types.js';

/**
 * The caller's linked git-host account (a GitHub-App-style app the account's admin set up), what it
 * reaches, and deployments connected to its repositories (reference 2.16, 2.20, 5.19-5.22).
 */
export interface GitHost {
  /**
   * Whether the caller has linked their account, the URL to link it (single use, 10 minutes), and where the app is installed.
   * While the account has no git-host app: `connected: false` and both URLs empty.
   */
  status(options?: { signal?: AbortSignal }): Promise<GitHostStatus>;
  /** Forgets the caller's link (and revokes the token at the host when it can); connected deployments stay connected. */
  unlink(options?: { signal?: AbortSignal }): Promise<void>;
  /** The app's installations the caller's linked account reaches. */
  installations(options?: ListOptions): AsyncIterable<GitHostInstallation>;
  /** An installation's repositories the linked account reaches. */
  repositories(installationId: number, options?: ListOptions): AsyncIterable<GitHostRepository>;
  /** A repository's branches, the default one marked `isDefault`. */
  branches(owner: string, repo: string, installationId: number, options?: ListOptions): AsyncIterable<GitHostBranch>;
  /**
   * Connects the deployment to a repository of an installation and builds it: the repository's
   * branch (`deployBranchName`, default its default branch) becomes the deploy branch. With
   * `isNewRepo` the repository is created and receives the deployment's model.
   */
  connect(deploymentId: number, input: ConnectGitHostInput, options?: { signal?: AbortSignal }): Promise<Deployment>;
  /** Fetches a branch from the connected repository; `buildTriggered` only when it moved and a build started. */
  pull(deploymentId: number, branchName: string, options?: { signal?: AbortSignal }): Promise<PullResult>;
}

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});

export function createGitHost(api: RawClient): GitHost {
  return {
    status: async ({ signal } = {}) => unwrap(await api.GET('/api/v1/git-host/status', { ...withSignal(signal) })),
    async unlink({ signal } = {}) {
      unwrap(await api.DELETE('/api/v1/git-host/link', { ...withSignal(signal) }));
    },
    installations: ({ signal } = {}) =>
      paginate(async (after) =>
        unwrap(await api.GET('/api/v1/git-host/installations', { params: { query: { first: DEFAULT_PAGE_SIZE, after } }, ...withSignal(signal) })),
      ),
    repositories: (installationId, { signal } = {}) =>
      paginate(async (after) =>
        unwrap(
          await api.GET('/api/v1/git-host/installations/{installationId}/repositories', {
            params: { path: { installationId }, query: { first: DEFAULT_PAGE_SIZE, after } },
            ...withSignal(signal),
          }),
        ),
      ),
    branches: (owner, repo, installationId, { signal } = {}) =>
      paginate(async (after) =>
        unwrap(
          await api.GET('/api/v1/git-host/repositories/{owner}/{repo}/branches', {
            params: { path: { owner, repo }, query: { installationId, first: DEFAULT_PAGE_SIZE, after } },
            ...withSignal(signal),
          }),
        ),
      ),
    connect: async (deploymentId, input, { signal } = {}) =>
      unwrap(
        await api.POST('/build/api/v1/deployments/{deploymentId}/git-host/connect', { params: { path: { deploymentId } }, body: input, ...withSignal(signal) }),
      ),
    pull: async (deploymentId, branchName, { signal } = {}) =>
      unwrap(
        await api.POST('/build/api/v1/deployments/{deploymentId}/pull', { params: { path: { deploymentId } }, body: { branchName }, ...withSignal(signal) }),
      ),
  };
}
