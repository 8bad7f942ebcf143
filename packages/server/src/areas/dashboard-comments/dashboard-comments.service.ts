import type { Audit } from '../../audit/index.js';
import type { Store } from '../../db/database.js';
import type { DashboardCommentRow, EmbedUserRow, Executor } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { decodeCursor, pageRequest, toPage } from '../../shared/pagination.js';
import { ApiError } from '../../shared/problems.js';
import type { PageInfo } from '../../shared/schemas.js';
import { timestamp, type Clock } from '../../time.js';
import { embedSettings } from '../account/index.js';
import { findEmbedTenant, SYNTHETIC_EMAIL_DOMAIN } from '../embed-tenants/index.js';
import type { EmbedDashboards, EmbedPrincipal } from '../embed-sessions/index.js';
import type {
  Comment,
  CreateCommentInput,
  MentionableInput,
  MentionableUser,
  ResolveThreadInput,
  Thread,
  ThreadsInput,
  UpdateCommentInput,
} from './dashboard-comments.schemas.js';
import {
  embedUsersById,
  embedUsersNamed,
  findComment,
  insertComment,
  listMentionable,
  listRoots,
  removeComments,
  repliesOf,
  updateComment,
  type Partition,
} from './dashboard-comments.store.js';
import { mentionedNames } from './mentions.js';

/** Where the mail of a new mention goes: queued, so that a mail server's failure never fails the comment. */
export type MentionNotifier = (tenantId: number, mention: { commentId: number; userId: number; dashboardTitle: string; author: string }) => Promise<void>;

export interface DashboardCommentsOptions {
  embedDashboards: EmbedDashboards;
  audit: Audit;
  now: Clock;
  /** Null: mentions are recorded but nobody is mailed (no SMTP server configured). */
  notify: MentionNotifier | null;
  onError: (error: unknown, what: string) => void;
}

/** Who writes, on which dashboard, in which partition. */
interface Context {
  principal: EmbedPrincipal;
  partition: Partition;
  publicId: string;
  dashboardTitle: string;
  /** The calling embed user. */
  userId: number;
  /** How mails name the caller. */
  author: string;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** A user provisioned without an address has a placeholder that no mail server accepts; it is never shown or mailed. */
export const realEmail = (email: string): string | null => (EMAIL.test(email) && !email.toLowerCase().endsWith(`.${SYNTHETIC_EMAIL_DOMAIN}`) ? email : null);

function commentNotFound(commentId: number, publicId: string): ApiError {
  return new ApiError('COMMENT_NOT_FOUND', `Dashboard "${publicId}" has no comment ${commentId} in this embed tenant (or it was removed).`);
}

/** The key of a cursor of these lists: a text (a time, a username) and an id. */
function cursorKey(cursor: string): { text: string; id: number } {
  const [text, id] = decodeCursor(cursor, 2);
  if (typeof text !== 'string' || typeof id !== 'number' || !Number.isSafeInteger(id)) {
    throw new ApiError('INVALID_CURSOR', 'The `after` cursor was not issued by this list; pass `pageInfo.endCursor` of the previous page.', {
      errors: [{ pointer: '/query/after', message: 'is not a cursor of this list' }],
    });
  }
  return { text, id };
}

function mentionsOf(row: DashboardCommentRow): number[] {
  return JSON.parse(row.mentions) as number[];
}

/**
 * Comments on embedded dashboards (reference 8.C): threads of one embed tenant on one dashboard,
 * written by its embed users through their sessions. The dashboard must be one the session may
 * open (4.18's rules, `embedDashboards.get`), and the account's `enableDashboardComments` on.
 */
export function dashboardCommentsService(store: Store, options: DashboardCommentsOptions) {
  const { db } = store;
  const { now } = options;

  async function contextOf(principal: EmbedPrincipal, publicId: string): Promise<Context> {
    const tenantName = principal.claims.embed_tenant;
    const embedUserId = principal.claims.embed_user.id;
    if (tenantName === null || embedUserId === null) {
      throw new ApiError(
        'FORBIDDEN',
        'Comments live inside one embed tenant: this takes the embed token of an external user (a session generated with `externalId`), not one for an account user.',
      );
    }
    // Account-wide, checked before the dashboard, so the answer says nothing about which dashboards exist.
    if ((await embedSettings(db, principal.tenantId)).enableDashboardComments !== true) {
      throw new ApiError(
        'DASHBOARD_COMMENTS_DISABLED',
        'Dashboard comments are turned off for this account; an admin turns them on with PUT /api/v1/tenant/embed-settings {"enableDashboardComments": true}.',
      );
    }
    // The token outlives its user when the embed tenant is deleted (and perhaps made again under the name).
    const embedTenant = await findEmbedTenant(db, principal.tenantId, tenantName);
    const [user] = embedTenant ? await embedUsersById(db, principal.tenantId, [embedUserId]) : [];
    if (!embedTenant || user?.embed_tenant_id !== embedTenant.id) {
      throw new ApiError('FORBIDDEN', `The embed user of this session no longer exists in embed tenant "${tenantName}"; generate a new session.`);
    }
    const dashboard = await options.embedDashboards.get(principal, publicId);
    return {
      principal,
      partition: { tenantId: principal.tenantId, dashboardId: dashboard.id, embedTenantId: embedTenant.id },
      publicId,
      dashboardTitle: dashboard.title ?? publicId,
      userId: embedUserId,
      author: principal.claims.embed_user.external_id ?? `user ${embedUserId}`,
    };
  }

  function toComment(context: Context, row: DashboardCommentRow): Comment {
    const removed = row.removed_at !== null;
    return {
      id: row.id,
      dashboardId: context.publicId,
      body: removed ? '' : row.body,
      createdAt: row.created_at,
      isOwn: row.author_id === context.userId,
      editedAt: row.edited_at,
      removedAt: row.removed_at,
      userId: row.author_id,
    };
  }

  function toThread(context: Context, root: DashboardCommentRow, replies: DashboardCommentRow[]): Thread {
    return {
      root: toComment(context, root),
      replies: replies.map((r) => toComment(context, r)),
      resolvedAt: root.resolved_at,
      resolvedBy: root.resolved_by,
      lastActivityAt: root.last_activity_at,
    };
  }

  /** The users a body mentions that the caller may mention: their own embed tenant's. */
  async function mentionedUsers(context: Context, body: string): Promise<EmbedUserRow[]> {
    return embedUsersNamed(db, context.partition.tenantId, context.partition.embedTenantId, mentionedNames(body));
  }

  /** Mails each user newly mentioned (never the author), after the write committed; a failure to queue is logged, never the caller's. */
  async function notifyMentioned(context: Context, commentId: number, users: EmbedUserRow[]): Promise<void> {
    if (options.notify === null) return;
    for (const user of users) {
      if (user.id === context.userId || realEmail(user.email) === null) continue;
      try {
        await options.notify(context.partition.tenantId, { commentId, userId: user.id, dashboardTitle: context.dashboardTitle, author: context.author });
      } catch (error) {
        options.onError(error, 'dashboard-comments: queueing a mention mail');
      }
    }
  }

  /**
   * The thread's last activity, recomputed from its comments: the newest creation or edit of one
   * not removed, else the root's creation. Runs under the thread's lock.
   */
  async function refreshActivity(trx: Executor, root: DashboardCommentRow): Promise<DashboardCommentRow> {
    const all = [root, ...(await repliesOf(trx, [root.id]))];
    const times = all.filter((c) => c.removed_at === null).flatMap((c) => (c.edited_at === null ? [c.created_at] : [c.created_at, c.edited_at]));
    const last = times.reduce((a, b) => (b > a ? b : a), root.created_at);
    return last === root.last_activity_at ? root : updateComment(trx, root.id, { last_activity_at: last });
  }

  async function audit(context: Context, action: string, commentId: number, details: Record<string, string | number | boolean | null> = {}) {
    const { principal } = context;
    await options.audit.recordFor(
      principal.tenantId,
      { userId: principal.claims.embed_user.user_id, email: principal.claims.embed_user.email, credentialKind: 'embed', credentialId: principal.jti },
      {
        action,
        target: { dashboardId: context.publicId, commentId },
        details: { embedTenant: principal.claims.embed_tenant, embedUserId: context.userId, ...details },
      },
    );
  }

  /** A live comment of the partition that the caller wrote: 404 when there is none (removed ones included), 403 when it is another's. */
  async function ownComment(trx: Executor, context: Context, commentId: number): Promise<DashboardCommentRow> {
    const comment = await findComment(trx, context.partition, commentId);
    if (!comment || comment.removed_at !== null) throw commentNotFound(commentId, context.publicId);
    if (comment.author_id !== context.userId)
      throw new ApiError('FORBIDDEN', `Comment ${commentId} is another user's; only its author may change or remove it.`);
    return comment;
  }

  /** The root of a comment's thread (the comment itself for a root). */
  async function rootOf(trx: Executor, context: Context, comment: DashboardCommentRow): Promise<DashboardCommentRow> {
    if (comment.parent_id === null) return comment;
    const root = await findComment(trx, context.partition, comment.parent_id);
    if (!root) throw commentNotFound(comment.id, context.publicId);
    return root;
  }

  return {
    /** 8.C.1: threads newest opened first; open ones unless asked otherwise. */
    async list(principal: EmbedPrincipal, publicId: string, input: ThreadsInput): Promise<{ items: Thread[]; pageInfo: PageInfo }> {
      const context = await contextOf(principal, publicId);
      const page = pageRequest({ first: input.first ?? undefined, after: input.after ?? undefined });
      const key = page.after === undefined ? undefined : cursorKey(page.after);
      const after = key && { createdAt: key.text, id: key.id };
      const filter = input.resolvedOnly === true ? 'resolved' : input.includeResolved === true ? 'all' : 'open';
      const roots = await listRoots(db, context.partition, filter, after, page.first + 1);
      const { items, pageInfo } = toPage(roots, page, (r) => [r.created_at, r.id]);
      const byRoot = new Map<number, DashboardCommentRow[]>();
      const rootIds = items.map((r) => r.id);
      for (const reply of await repliesOf(db, rootIds)) {
        const rootId = reply.parent_id as number;
        const replies = byRoot.get(rootId);
        if (replies) replies.push(reply);
        else byRoot.set(rootId, [reply]);
      }
      return { items: items.map((root) => toThread(context, root, byRoot.get(root.id) ?? [])), pageInfo };
    },

    /** 8.C.2: a new thread, or a reply to a thread's root. */
    async create(principal: EmbedPrincipal, publicId: string, input: CreateCommentInput): Promise<Comment> {
      const context = await contextOf(principal, publicId);
      const mentioned = await mentionedUsers(context, input.body);
      const at = timestamp(now);
      const values = {
        tenant_id: context.partition.tenantId,
        dashboard_id: context.partition.dashboardId,
        embed_tenant_id: context.partition.embedTenantId,
        author_id: context.userId,
        body: input.body,
        mentions: JSON.stringify(mentioned.map((u) => u.id)),
        created_at: at,
        edited_at: null,
        removed_at: null,
        resolved_at: null,
        resolved_by: null,
        last_activity_at: at,
      };
      const parentId = input.parentId ?? null;
      const row =
        parentId === null
          ? await insertComment(db, { ...values, parent_id: null })
          : await serialized(store, lockKey.commentThread(parentId), async (trx) => {
              const parent = await findComment(trx, context.partition, parentId);
              if (!parent || parent.removed_at !== null) throw commentNotFound(parentId, publicId);
              if (parent.parent_id !== null) {
                throw new ApiError(
                  'INVALID_OPERATION',
                  `Comment ${parentId} is a reply; replies go one level deep, so reply to its thread's root, ${parent.parent_id}.`,
                  {
                    errors: [{ pointer: '/body/parentId', message: 'is a reply, not a thread root' }],
                  },
                );
              }
              const reply = await insertComment(trx, { ...values, parent_id: parent.id });
              await refreshActivity(trx, parent);
              return reply;
            });
      await audit(context, 'dashboard-comment.created', row.id, { parentId });
      await notifyMentioned(context, row.id, mentioned);
      return toComment(context, row);
    },

    /** 8.C.3: the embed users of the caller's own tenant, by username. */
    async mentionable(principal: EmbedPrincipal, publicId: string, input: MentionableInput): Promise<{ items: MentionableUser[]; pageInfo: PageInfo }> {
      const context = await contextOf(principal, publicId);
      const page = pageRequest({ first: input.first ?? undefined, after: input.after ?? undefined });
      const key = page.after === undefined ? undefined : cursorKey(page.after);
      const after = key && { username: key.text, id: key.id };
      const search = input.search === null || input.search === undefined || input.search === '' ? undefined : input.search.toLowerCase();
      const rows = await listMentionable(db, context.partition.tenantId, context.partition.embedTenantId, search, after, page.first + 1);
      const { items, pageInfo } = toPage(rows, page, (r) => [r.username, r.id]);
      return { items: items.map((u) => ({ id: u.id, username: u.username, email: realEmail(u.email), firstName: u.display_name })), pageInfo };
    },

    /** 8.C.4: the author changes the body; users it newly mentions are mailed. */
    async update(principal: EmbedPrincipal, publicId: string, commentId: number, input: UpdateCommentInput): Promise<Comment> {
      const context = await contextOf(principal, publicId);
      const mentioned = await mentionedUsers(context, input.body);
      const found = await findComment(db, context.partition, commentId);
      if (!found) throw commentNotFound(commentId, publicId);
      const { row, added } = await serialized(store, lockKey.commentThread(found.parent_id ?? found.id), async (trx) => {
        const comment = await ownComment(trx, context, commentId);
        // Everyone mentioned before stays on the list: an edit that drops and restores a name mails nobody twice.
        const before = new Set(mentionsOf(comment));
        const added = mentioned.filter((u) => !before.has(u.id));
        const at = timestamp(now);
        const row = await updateComment(trx, comment.id, { body: input.body, edited_at: at, mentions: JSON.stringify([...before, ...added.map((u) => u.id)]) });
        await refreshActivity(trx, await rootOf(trx, context, row));
        return { row, added };
      });
      await audit(context, 'dashboard-comment.edited', row.id);
      await notifyMentioned(context, row.id, added);
      return toComment(context, row);
    },

    /** 8.C.5: a soft removal by the author; a root takes its replies with it. */
    async remove(principal: EmbedPrincipal, publicId: string, commentId: number): Promise<Record<string, never>> {
      const context = await contextOf(principal, publicId);
      const found = await findComment(db, context.partition, commentId);
      if (!found) throw commentNotFound(commentId, publicId);
      await serialized(store, lockKey.commentThread(found.parent_id ?? found.id), async (trx) => {
        const comment = await ownComment(trx, context, commentId);
        await removeComments(trx, comment.id, comment.parent_id === null, timestamp(now));
        await refreshActivity(trx, await findCommentOrThrow(trx, context, comment.parent_id ?? comment.id));
      });
      await audit(context, 'dashboard-comment.removed', commentId, { thread: found.parent_id === null });
      return {};
    },

    /** 8.C.6: the thread's starter resolves or reopens it. */
    async resolve(principal: EmbedPrincipal, publicId: string, commentId: number, input: ResolveThreadInput): Promise<Thread> {
      const context = await contextOf(principal, publicId);
      const { root, replies } = await serialized(store, lockKey.commentThread(commentId), async (trx) => {
        const comment = await findComment(trx, context.partition, commentId);
        if (!comment) throw commentNotFound(commentId, publicId);
        if (comment.parent_id !== null) {
          throw new ApiError('INVALID_OPERATION', `Comment ${commentId} is a reply; resolve its thread with the root's id, ${comment.parent_id}.`);
        }
        const replies = await repliesOf(trx, [comment.id]);
        // A removed root is still a thread while replies hang from it; with none, nothing is left to resolve.
        if (comment.removed_at !== null && replies.length === 0) throw commentNotFound(commentId, publicId);
        if (comment.author_id !== context.userId) throw new ApiError('FORBIDDEN', `Only the user who started thread ${commentId} may resolve or reopen it.`);
        const changes = input.resolved
          ? { resolved_at: comment.resolved_at ?? timestamp(now), resolved_by: comment.resolved_by ?? context.userId }
          : { resolved_at: null, resolved_by: null };
        const root =
          changes.resolved_at === comment.resolved_at && changes.resolved_by === comment.resolved_by ? comment : await updateComment(trx, comment.id, changes);
        return { root, replies };
      });
      await audit(context, input.resolved ? 'dashboard-comment.resolved' : 'dashboard-comment.reopened', commentId);
      return toThread(context, root, replies);
    },
  };

  async function findCommentOrThrow(trx: Executor, context: Context, id: number): Promise<DashboardCommentRow> {
    const row = await findComment(trx, context.partition, id);
    if (!row) throw commentNotFound(id, context.publicId);
    return row;
  }
}
export type DashboardCommentsService = ReturnType<typeof dashboardCommentsService>;
