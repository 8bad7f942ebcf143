import { unwrap } from './errors.js';
import { DEFAULT_PAGE_SIZE, paginate, type ListOptions, type RawClient } from './pagination.js';
import type { DashboardComment, DashboardThread, MentionableUser, QueryOf } from './types.js';

type Signal = { signal?: AbortSignal };

/** Which threads `threads` lists: open ones by default. */
export type DashboardThreadsQuery = Pick<QueryOf<'listDashboardComments'>, 'includeResolved' | 'resolvedOnly'>;

/**
 * Comments on an embedded dashboard (reference 8.C), for a client made with an embed token
 * (`createClient({ baseUrl, token: embedToken })`): an API key is refused with 403. The account's
 * embed settings must have `enableDashboardComments` on. `@username` in a body mentions a user of
 * the caller's embed tenant, who is mailed.
 */
export interface DashboardComments {
  /** The dashboard's threads in the caller's embed tenant, newest opened first, following the pages. */
  threads(publicId: string, query?: DashboardThreadsQuery, options?: ListOptions): AsyncIterable<DashboardThread>;
  /** A new thread, or (with `parentId`, a thread's root) a reply. */
  create(publicId: string, body: string, options?: Signal & { parentId?: number }): Promise<DashboardComment>;
  /** The caller's own comment, with a new body. */
  update(publicId: string, commentId: number, body: string, options?: Signal): Promise<DashboardComment>;
  /** Removes the caller's own comment (a thread's root takes its replies with it). */
  delete(publicId: string, commentId: number, options?: Signal): Promise<void>;
  /** Resolves (or, with false, reopens) a thread the caller started. */
  resolve(publicId: string, threadId: number, resolved: boolean, options?: Signal): Promise<DashboardThread>;
  /** The users of the caller's embed tenant, by username; `search` matches part of the username or email. */
  mentionableUsers(publicId: string, query?: { search?: string }, options?: ListOptions): AsyncIterable<MentionableUser>;
}

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});
const COMMENTS = '/api/v1/embed/dashboard/{publicId}/comments' as const;
const COMMENT = '/api/v1/embed/dashboard/{publicId}/comments/{commentId}' as const;

export function createDashboardComments(api: RawClient): DashboardComments {
  return {
    threads: (publicId, query = {}, { signal } = {}) =>
      paginate(async (after) =>
        unwrap(
          await api.GET(COMMENTS, {
            params: { path: { publicId }, query: { ...query, first: DEFAULT_PAGE_SIZE, ...(after ? { after } : {}) } },
            ...withSignal(signal),
          }),
        ),
      ),
    create: async (publicId, body, { signal, parentId } = {}) =>
      unwrap(
        await api.POST(COMMENTS, { params: { path: { publicId } }, body: { body, ...(parentId !== undefined ? { parentId } : {}) }, ...withSignal(signal) }),
      ),
    update: async (publicId, commentId, body, { signal } = {}) =>
      unwrap(await api.PATCH(COMMENT, { params: { path: { publicId, commentId } }, body: { body }, ...withSignal(signal) })),
    delete: async (publicId, commentId, { signal } = {}) => {
      unwrap(await api.DELETE(COMMENT, { params: { path: { publicId, commentId } }, ...withSignal(signal) }));
    },
    resolve: async (publicId, threadId, resolved, { signal } = {}) =>
      unwrap(
        await api.POST('/api/v1/embed/dashboard/{publicId}/comments/{commentId}/resolve', {
          params: { path: { publicId, commentId: threadId } },
          body: { resolved },
          ...withSignal(signal),
        }),
      ),
    mentionableUsers: (publicId, query = {}, { signal } = {}) =>
      paginate(async (after) =>
        unwrap(
          await api.GET(`${COMMENTS}/mentionable-users`, {
            params: { path: { publicId }, query: { ...query, first: DEFAULT_PAGE_SIZE, ...(after ? { after } : {}) } },
            ...withSignal(signal),
          }),
        ),
      ),
  };
}
