import { sql, type Expression, type SqlBool } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Executor, ReportRow } from '../../db/tables.js';
import type { WorkspaceScope } from '../workspace/tree.store.js';

export type NewReport = Omit<ReportRow, 'id'>;
export type ReportColumns = Omit<ReportRow, 'id' | 'tenant_id' | 'deployment_id' | 'folder_id' | 'public_id' | 'last_viewed_at' | 'created_by' | 'created_at' | 'updated_at'>;

export async function findReportByPublicId(db: Executor, scope: WorkspaceScope, publicId: string): Promise<ReportRow | undefined> {
  return db
    .selectFrom('reports')
    .selectAll()
    .where('tenant_id', '=', scope.tenantId)
    .where('deployment_id', '=', scope.deploymentId)
    .where('public_id', '=', publicId)
    .executeTakeFirst();
}

export async function insertReport(db: Executor, values: NewReport): Promise<ReportRow> {
  return db.insertInto('reports').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function updateReport(db: Executor, scope: WorkspaceScope, id: number, changes: Partial<ReportColumns> & { updated_at: string }): Promise<ReportRow> {
  return db
    .updateTable('reports')
    .set(changes)
    .where('tenant_id', '=', scope.tenantId)
    .where('deployment_id', '=', scope.deploymentId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Undefined when the report was deleted since it was read. */
export async function recordView(db: Executor, scope: WorkspaceScope, id: number, at: string): Promise<ReportRow | undefined> {
  return db
    .updateTable('reports')
    .set({ last_viewed_at: at })
    .where('tenant_id', '=', scope.tenantId)
    .where('deployment_id', '=', scope.deploymentId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export type ReportSortColumn = 'created_at' | 'updated_at' | 'last_viewed_at' | 'name';

/** Which reports are listed. */
export interface ReportFilter {
  /** undefined: any folder; null: the workspace root only. */
  folderId?: number | null | undefined;
  kind?: string | undefined;
  createdBy?: number | undefined;
  /** Case-insensitive substring of the name. */
  search?: string | undefined;
  /** Which rows the caller may see (visibility.ts). */
  visible: Expression<SqlBool>;
}

/** Where a page of the list starts, in which order. */
export interface ReportPosition {
  sort: ReportSortColumn;
  direction: 'asc' | 'desc';
  /** Keyset: the sort value and id of the last row already served (not for `last_viewed_at`). */
  after?: { value: string; id: number } | undefined;
}

export interface ReportListFilter extends ReportFilter, ReportPosition {
  offset?: number | undefined;
  limit: number;
}

/** `text` as a LIKE pattern matching itself literally, anywhere in the value. */
function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** A listed report with the value it is ordered by, which its cursor carries. */
export type ListedReport = ReportRow & { sort_key: string | null };

/**
 * The expression a listing orders by. Names order case-insensitively, and by byte order on both
 * dialects ("C" collation on PostgreSQL, whose default collation would order differently from
 * SQLite), so a list reads the same on either store.
 */
function sortExpression(dialect: Dialect, sort: ReportSortColumn): Expression<string | null> {
  if (sort !== 'name') return sql.ref(`reports.${sort}`);
  return dialect === 'postgres' ? sql<string>`lower(reports.name) collate "C"` : sql<string>`lower(reports.name)`;
}

/**
 * One page of reports in a total order: the sort key, then id in the same direction. Keyset
 * pages continue strictly after the last row served, so rows inserted meanwhile cause no repeats
 * or gaps. Never-viewed reports (null `last_viewed_at`) come last in both directions on both
 * dialects, which disagree about where nulls sort by default.
 */
function listed(db: Executor, scope: WorkspaceScope, filter: ReportFilter) {
  let query = db.selectFrom('reports').where('tenant_id', '=', scope.tenantId).where('deployment_id', '=', scope.deploymentId).where(filter.visible);
  if (filter.folderId !== undefined) query = query.where('folder_id', filter.folderId === null ? 'is' : '=', filter.folderId);
  if (filter.kind !== undefined) query = query.where('kind', '=', filter.kind);
  if (filter.createdBy !== undefined) query = query.where('created_by', '=', filter.createdBy);
  if (filter.search !== undefined) query = query.where(sql<SqlBool>`lower(name) like ${containsPattern(filter.search)} escape '\\'`);
  return query;
}

/** The rows strictly after the keyset position `after`, in the list's order. */
function beyond(dialect: Dialect, { sort, direction, after }: ReportPosition & { after: { value: string; id: number } }): Expression<SqlBool> {
  const key = sortExpression(dialect, sort);
  const cmp = sql.raw(direction === 'asc' ? '>' : '<');
  return sql<SqlBool>`(${key} ${cmp} ${after.value} or (${key} = ${after.value} and reports.id ${cmp} ${after.id}))`;
}

/**
 * How many reports the list holds, ignoring pagination, and how many of them come before
 * `position.after` (the offset of a cursor page), in one query.
 */
export async function countReports(db: Executor, dialect: Dialect, scope: WorkspaceScope, filter: ReportFilter, position?: ReportPosition): Promise<{ total: number; before: number }> {
  const after = position?.after;
  const row = await listed(db, scope, filter)
    .select((eb) => eb.fn.countAll<number | string>().as('total'))
    .select(after ? sql<number | string>`sum(case when ${beyond(dialect, { ...position!, after })} then 1 else 0 end)`.as('beyond') : sql<number>`0`.as('beyond'))
    .executeTakeFirstOrThrow();
  const total = Number(row.total);
  return { total, before: after ? total - Number(row.beyond ?? 0) : 0 };
}

export async function listReports(db: Executor, dialect: Dialect, scope: WorkspaceScope, filter: ReportListFilter): Promise<ListedReport[]> {
  const { sort, direction, after } = filter;
  const key = sortExpression(dialect, sort);
  let query = listed(db, scope, filter).selectAll().select(sql<string | null>`${key}`.as('sort_key'));
  if (after !== undefined) query = query.where(beyond(dialect, { sort, direction, after }));
  if (sort === 'last_viewed_at') query = query.orderBy(sql`case when last_viewed_at is null then 1 else 0 end`);
  query = query.orderBy(key, direction).orderBy('id', direction).limit(filter.limit);
  if (filter.offset !== undefined && filter.offset > 0) query = query.offset(filter.offset);
  return query.execute();
}
