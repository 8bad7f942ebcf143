import type { Client } from 'openapi-fetch';
import { unwrap } from './errors.js';
import type { paths } from './generated/api.js';
import type { ItemType } from './items.js';
import type { ApiKey, AuditEvent, Deployment, Folder, Group, PageInfo, Policy, QueryOf, Report, User, WorkspaceEntry } from './types.js';

export type RawClient = Client<paths>;

/** Page size when the caller gives none: the most the server serves, so fewest round trips. */
export const DEFAULT_PAGE_SIZE = 200;

export interface ListOptions {
  /** Stops the iteration: the pending page request is aborted and the iterator rejects. */
  signal?: AbortSignal;
}

/** A folder id, or `'root'` for the workspace root. */
export type FolderFilter = number | 'root';

export type DeploymentListQuery = Omit<QueryOf<'listDeployments'>, 'after'>;
export type FolderListQuery = Omit<QueryOf<'listFolders'>, 'after' | 'parentId'> & { parentId?: FolderFilter };
export type WorkspaceListQuery = Omit<QueryOf<'listWorkspace'>, 'after' | 'folderId' | 'types'> & {
  folderId?: FolderFilter;
  /** Item types to include: an array, or the server's comma-separated form. */
  types?: ItemType[] | string;
};
/** `offset` sets where offset paging starts; it is how the server pages `sortBy: 'lastViewedAt'`. */
export type ReportListQuery = Omit<QueryOf<'listReports'>, 'after' | 'folderId'> & { folderId?: FolderFilter };
export type UserListQuery = Omit<QueryOf<'listUsers'>, 'after'>;
export type GroupListQuery = Omit<QueryOf<'listGroups'>, 'after'>;
export type ApiKeyListQuery = Omit<QueryOf<'listApiKeys'>, 'after'>;
export type PolicyListQuery = Omit<QueryOf<'listPolicies'>, 'after'>;
/** Filters of the audit log: `actorUserId`, `action`, `route`, `method`, `since`, `until` (ISO 8601). */
export type AuditEventListQuery = Omit<QueryOf<'listAuditEvents'>, 'after'>;

interface Page<T> {
  items: T[];
  pageInfo: PageInfo;
}

/** Follows `pageInfo.endCursor` while `hasNextPage`; the next page is only asked for once this one is consumed. */
export async function* paginate<T>(fetchPage: (after: string | undefined) => Promise<Page<T>>): AsyncGenerator<T, void, undefined> {
  let after: string | undefined;
  for (;;) {
    const page = await fetchPage(after);
    yield* page.items;
    if (!page.pageInfo.hasNextPage || page.pageInfo.endCursor === null) return;
    after = page.pageInfo.endCursor;
  }
}

/** Offset paging, for the one ordering whose rows move under a cursor. */
async function* paginateByOffset<T>(start: number, fetchPage: (offset: number) => Promise<Page<T>>): AsyncGenerator<T, void, undefined> {
  for (let offset = start; ;) {
    const page = await fetchPage(offset);
    yield* page.items;
    if (!page.pageInfo.hasNextPage || page.items.length === 0) return;
    offset += page.items.length;
  }
}

/** A folder filter as the query string spells it; absent when not filtering. */
const folderParam = (f: FolderFilter | undefined): string | undefined => (f === undefined ? undefined : String(f));

/** The page size defaults to the largest the server serves, so a full listing takes fewest round trips. */
const sized = <Q extends { first?: number }>(query: Q | undefined) => ({ ...query, first: query?.first ?? DEFAULT_PAGE_SIZE });

/** One page's data, or the ApiError of a failed request. Undefined filters never reach the URL: openapi-fetch leaves them out. */
async function data<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  return unwrap(await call) as T;
}

export interface Lists {
  deployments: { list(query?: DeploymentListQuery, options?: ListOptions): AsyncIterable<Deployment> };
  folders: {
    list(deploymentId: number, query?: FolderListQuery, options?: ListOptions): AsyncIterable<Folder>;
    /**
     * The folder's path as folders: the top-level folder first, the folder itself last (a
     * breadcrumb). Folders above it the caller may not view are left out; 403 without VIEW on it.
     */
    ancestors(deploymentId: number, folderId: number, options?: ListOptions): Promise<Folder[]>;
  };
  workspace: { list(deploymentId: number, query?: WorkspaceListQuery, options?: ListOptions): AsyncIterable<WorkspaceEntry> };
  reports: { list(deploymentId: number, query?: ReportListQuery, options?: ListOptions): AsyncIterable<Report> };
  users: { list(query?: UserListQuery, options?: ListOptions): AsyncIterable<User> };
  groups: { list(query?: GroupListQuery, options?: ListOptions): AsyncIterable<Group> };
  apiKeys: { list(query?: ApiKeyListQuery, options?: ListOptions): AsyncIterable<ApiKey> };
  policies: { list(query?: PolicyListQuery, options?: ListOptions): AsyncIterable<Policy> };
  /** The account's audit log, newest first (admin key needed). */
  auditEvents: { list(query?: AuditEventListQuery, options?: ListOptions): AsyncIterable<AuditEvent> };
}

export function createLists(api: RawClient): Lists {
  return {
    deployments: {
      list: (query, { signal } = {}) => paginate((after) => data(api.GET('/api/v1/deployments', { params: { query: { ...sized(query), after } }, signal }))),
    },
    folders: {
      list(deploymentId, { parentId, ...query } = {}, { signal } = {}) {
        const filter = { parentId: folderParam(parentId) };
        const path = { deploymentId };
        return paginate((after) =>
          data(api.GET('/api/v1/deployments/{deploymentId}/folders', { params: { path, query: { ...sized(query), ...filter, after } }, signal })),
        );
      },
      ancestors: (deploymentId, folderId, { signal } = {}) =>
        data(api.GET('/api/v1/deployments/{deploymentId}/folders/{folderId}/ancestors', { params: { path: { deploymentId, folderId } }, signal })),
    },
    workspace: {
      list(deploymentId, { folderId, types, ...query } = {}, { signal } = {}) {
        const filter = { folderId: folderParam(folderId), types: Array.isArray(types) ? types.join(',') : types };
        const path = { deploymentId };
        return paginate((after) =>
          data(api.GET('/api/v1/deployments/{deploymentId}/workspace', { params: { path, query: { ...sized(query), ...filter, after } }, signal })),
        );
      },
    },
    reports: { list: (deploymentId, query, options) => listReports(api, deploymentId, sized(query), options) },
    users: { list: (query, { signal } = {}) => paginate((after) => data(api.GET('/api/v1/users', { params: { query: { ...sized(query), after } }, signal }))) },
    groups: {
      list: (query, { signal } = {}) => paginate((after) => data(api.GET('/api/v1/groups', { params: { query: { ...sized(query), after } }, signal }))),
    },
    apiKeys: {
      list: (query, { signal } = {}) => paginate((after) => data(api.GET('/api/v1/api-keys', { params: { query: { ...sized(query), after } }, signal }))),
    },
    policies: {
      list: (query, { signal } = {}) => paginate((after) => data(api.GET('/api/v1/policies', { params: { query: { ...sized(query), after } }, signal }))),
    },
    auditEvents: {
      list: (query, { signal } = {}) =>
        paginate((after) => data(api.GET('/api/v1/tenant/audit-events', { params: { query: { ...sized(query), after } }, signal }))),
    },
  };
}

/**
 * Reports sorted by `lastViewedAt` refuse cursors (reading a report moves it in that order),
 * so they, and a caller who asked for an `offset`, page by offset instead.
 */
function listReports(api: RawClient, deploymentId: number, query: ReportListQuery, { signal }: ListOptions = {}): AsyncIterable<Report> {
  const { folderId, offset, ...rest } = query;
  const base = { ...rest, folderId: folderParam(folderId) };
  const fetchPage = (page: { after?: string; offset?: number }) =>
    data(api.GET('/api/v1/deployments/{deploymentId}/reports', { params: { path: { deploymentId }, query: { ...base, ...page } }, signal }));
  if (offset !== undefined || rest.sortBy === 'lastViewedAt') return paginateByOffset(offset ?? 0, (o) => fetchPage({ offset: o }));
  return paginate((after) => fetchPage(after === undefined ? {} : { after }));
}
