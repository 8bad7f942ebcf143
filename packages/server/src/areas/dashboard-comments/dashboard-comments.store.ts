import { sql } from 'kysely';
import type { DashboardCommentRow, DashboardCommentTable, EmbedUserRow, Executor } from '../../db/tables.js';

/** A partition of comments: one dashboard, one embed tenant of one account. */
export interface Partition {
  tenantId: number;
  dashboardId: number;
  embedTenantId: number;
}

export async function insertComment(db: Executor, values: Omit<DashboardCommentTable, 'id'>): Promise<DashboardCommentRow> {
  return db.insertInto('dashboard_comments').values(values).returningAll().executeTakeFirstOrThrow();
}

/** A comment of the partition, removed or not; undefined for another dashboard's or another embed tenant's. */
export async function findComment(db: Executor, partition: Partition, id: number): Promise<DashboardCommentRow | undefined> {
  return db
    .selectFrom('dashboard_comments')
    .selectAll()
    .where('id', '=', id)
    .where('tenant_id', '=', partition.tenantId)
    .where('dashboard_id', '=', partition.dashboardId)
    .where('embed_tenant_id', '=', partition.embedTenantId)
    .executeTakeFirst();
}

export type ResolvedFilter = 'open' | 'resolved' | 'all';

/** Thread roots of the partition, newest opened first (`created_at`, then id), after the cursor's key. */
export async function listRoots(
  db: Executor,
  partition: Partition,
  filter: ResolvedFilter,
  after: { createdAt: string; id: number } | undefined,
  limit: number,
): Promise<DashboardCommentRow[]> {
  let query = db
    .selectFrom('dashboard_comments')
    .selectAll()
    .where('tenant_id', '=', partition.tenantId)
    .where('dashboard_id', '=', partition.dashboardId)
    .where('embed_tenant_id', '=', partition.embedTenantId)
    .where('parent_id', 'is', null);
  if (filter === 'open') query = query.where('resolved_at', 'is', null);
  if (filter === 'resolved') query = query.where('resolved_at', 'is not', null);
  if (after !== undefined)
    query = query.where((eb) => eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]));
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/** The replies of these roots, oldest first. */
export async function repliesOf(db: Executor, rootIds: number[]): Promise<DashboardCommentRow[]> {
  if (rootIds.length === 0) return [];
  return db.selectFrom('dashboard_comments').selectAll().where('parent_id', 'in', rootIds).orderBy('created_at').orderBy('id').execute();
}

export type CommentChanges = Partial<Pick<DashboardCommentRow, 'body' | 'mentions' | 'edited_at' | 'resolved_at' | 'resolved_by' | 'last_activity_at'>>;

export async function updateComment(db: Executor, id: number, changes: CommentChanges): Promise<DashboardCommentRow> {
  return db.updateTable('dashboard_comments').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** Soft-removes a comment, and with a root every reply of its thread; rows already removed keep their time. */
export async function removeComments(db: Executor, id: number, withReplies: boolean, at: string): Promise<void> {
  await db
    .updateTable('dashboard_comments')
    .set({ removed_at: at })
    .where((eb) => (withReplies ? eb.or([eb('id', '=', id), eb('parent_id', '=', id)]) : eb('id', '=', id)))
    .where('removed_at', 'is', null)
    .execute();
}

/** The embed tenant's users, by username then id; `search` (lowercased) matches part of the username or the email. */
export async function listMentionable(
  db: Executor,
  tenantId: number,
  embedTenantId: number,
  search: string | undefined,
  after: { username: string; id: number } | undefined,
  limit: number,
): Promise<EmbedUserRow[]> {
  let query = db.selectFrom('embed_users').selectAll().where('tenant_id', '=', tenantId).where('embed_tenant_id', '=', embedTenantId);
  if (search !== undefined) {
    const pattern = `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where((eb) => eb.or([sql<boolean>`lower(username) like ${pattern} escape '\\'`, sql<boolean>`lower(email) like ${pattern} escape '\\'`]));
  }
  if (after !== undefined)
    query = query.where((eb) => eb.or([eb('username', '>', after.username), eb.and([eb('username', '=', after.username), eb('id', '>', after.id)])]));
  return query.orderBy('username').orderBy('id').limit(limit).execute();
}

/** Users of the embed tenant by username (usernames are stored lowercase). */
export async function embedUsersNamed(db: Executor, tenantId: number, embedTenantId: number, usernames: string[]): Promise<EmbedUserRow[]> {
  if (usernames.length === 0) return [];
  return db
    .selectFrom('embed_users')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('embed_tenant_id', '=', embedTenantId)
    .where('username', 'in', usernames)
    .execute();
}

export async function embedUsersById(db: Executor, tenantId: number, ids: number[]): Promise<EmbedUserRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('embed_users').selectAll().where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
}
