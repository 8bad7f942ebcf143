import { unwrap } from './errors.js';
import { DEFAULT_PAGE_SIZE, paginate, type ListOptions, type RawClient } from './pagination.js';
import type { QueryOf, Workbook, WorkspaceEntry } from './types.js';

/** What `sharedWorkspace.list` filters and orders by (reference 8.F; `first` and `after` are the helper's). */
export type SharedWorkspaceQuery = Omit<QueryOf<'listSharedWorkspace'>, 'first' | 'after'>;

/**
 * The shared workspace of a creator-mode embed session (reference 8.F, 8.G.1 `shared: true`), for a
 * client made with the session's embed token (`createClient({ baseUrl, token: embedToken })`): an
 * API key or a view-only session is refused with 403.
 */
export interface SharedWorkspace {
  /** One folder (the root by default) of what is shared with the session's embed tenant and all embed users, folders first, following the pages. */
  list(deploymentId: number, query?: SharedWorkspaceQuery, options?: ListOptions): AsyncIterable<WorkspaceEntry>;
  /** A copy of a shared workbook, built from its published dashboard, at the root and owned by the embed user. */
  copy(deploymentId: number, workbookId: number, options?: { name?: string; signal?: AbortSignal }): Promise<Workbook>;
}

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});

export function createSharedWorkspace(api: RawClient): SharedWorkspace {
  return {
    list: (deploymentId, query = {}, { signal } = {}) =>
      paginate(async (after) =>
        unwrap(
          await api.GET('/api/v1/deployments/{deploymentId}/shared-workspace', {
            params: { path: { deploymentId }, query: { ...query, first: DEFAULT_PAGE_SIZE, ...(after ? { after } : {}) } },
            ...withSignal(signal),
          }),
        ),
      ),
    copy: async (deploymentId, workbookId, { name, signal } = {}) =>
      unwrap(
        await api.POST('/api/v1/deployments/{deploymentId}/workbooks/{workbookId}/duplicate', {
          params: { path: { deploymentId, workbookId } },
          body: { shared: true, ...(name === undefined ? {} : { name }) },
          ...withSignal(signal),
        }),
      ),
  };
}
