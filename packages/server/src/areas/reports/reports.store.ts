import { sql, type Expression, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Database, Executor, ReportRow } from '../../db/tables.js';
import { nameSearch, type NameSearch } from '../workspace/index.js';
import { deploymentTotal, seesEveryRow, type WorkspaceScope } from '../workspace/index.js';

/** A copy (dashboards' duplicate) may carry the version over, and a creator-mode copy names its embed owner; a new report starts at 1, owned by no embed user. */
export type NewReport = Omit<ReportRow, 'id' | 'version' | 'embed_owner_id'> & { version?: number; embed_owner_id?: number | null };
export type ReportColumns = Omit<
  ReportRow,
  'id' | 'tenant_id' | 'deployment_id' | 'folder_id' | 'public_id' | 'placements' | 'last_viewed_at' | 'created_by' | 'created_at' | 'updated_at' | 'version'
>;

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

export async function updateReport(
  db: Executor,
  scope: WorkspaceScope,
  id: number,
  changes: Partial<ReportColumns> & { updated_at: string },
): Promise<ReportRow> {
  return db
    .updateTable('reports')
    .set({ ...changes, version: sql<number>`version + 1` })
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
 * The reports of a list, unordered. A name search reads its candidates from a trigram index first
 * and joins each to its report by id (see nameSearch).
 */
function listed(db: Executor, dialect: Dialect, scope: WorkspaceScope, filter: ReportFilter) {
  const search = filter.search === undefined ? undefined : nameSearch(dialect, 'reports', filter.search);
  let query = search?.candidates ? matching(db, search.candidates) : db.selectFrom('reports');
  query = query.where('reports.tenant_id', '=', scope.tenantId).where('reports.deployment_id', '=', scope.deploymentId).where(filter.visible);
  if (filter.folderId !== undefined) query = query.where('reports.folder_id', filter.folderId === null ? 'is' : '=', filter.folderId);
  if (filter.kind !== undefined) query = query.where('reports.kind', '=', filter.kind);
  if (filter.createdBy !== undefined) query = query.where('reports.created_by', '=', filter.createdBy);
  if (search) query = query.where(search.condition);
  return query;
}

/** The reports among a search's candidates (see nameSearch), as a query over `reports`: only its columns are read. */
function matching(db: Executor, candidates: NonNullable<NameSearch['candidates']>): SelectQueryBuilder<Database, 'reports', object> {
  if ('rows' in candidates) return db.selectFrom(candidates.rows.as('reports')) as unknown as SelectQueryBuilder<Database, 'reports', object>;
  const { joined, match } = candidates;
  return db
    .selectFrom(sql.table(joined).as(joined))
    .crossJoin('reports')
    .where(sql<SqlBool>`reports.id = ${sql.ref(`${joined}.rowid`)}`)
    .where(match) as unknown as SelectQueryBuilder<Database, 'reports', object>;
}

/**
 * The rows strictly after the keyset position `after` in the list's order (`beyond`), or the
 * others (`upTo`): a range of the sort key, which an index of the list's order serves, narrowed
 * at its bound by id.
 */
function side(
  dialect: Dialect,
  { sort, direction, after }: ReportPosition & { after: { value: string; id: number } },
  which: 'beyond' | 'upTo',
): Expression<SqlBool> {
  const key = sortExpression(dialect, sort);
  const up = (direction === 'asc') === (which === 'beyond');
  const [cmp, cmpOrEqual] = up ? [sql.raw('>'), sql.raw('>=')] : [sql.raw('<'), sql.raw('<=')];
  const atBound = which === 'beyond' ? sql`reports.id ${cmp} ${after.id}` : sql`reports.id ${cmpOrEqual} ${after.id}`;
  return sql<SqlBool>`(${key} ${cmpOrEqual} ${after.value} and (${key} ${cmp} ${after.value} or ${atBound}))`;
}

/**
 * How many reports the list holds, ignoring pagination, and how many of them come before
 * `position.after` (the offset of a cursor page), in one query. The list of every report of the
 * deployment takes its total from the kept one (migration 0007) and counts only the rows up to
 * the cursor; any other list counts its rows.
 */
export async function countReports(
  db: Executor,
  dialect: Dialect,
  scope: WorkspaceScope,
  filter: ReportFilter,
  position?: ReportPosition,
): Promise<{ total: number; before: number }> {
  const after = position?.after;
  const everyReport =
    filter.folderId === undefined && filter.kind === undefined && filter.createdBy === undefined && filter.search === undefined && seesEveryRow(filter.visible);
  if (everyReport) {
    const before = after
      ? listed(db, dialect, scope, filter)
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where(side(dialect, { ...position!, after }, 'upTo'))
      : sql<number>`0`;
    const row = await db.selectNoFrom([deploymentTotal(scope, 'REPORT').as('total'), before.as('before')]).executeTakeFirstOrThrow();
    return { total: Number(row.total), before: Number(row.before ?? 0) };
  }
  const row = await listed(db, dialect, scope, filter)
    .select((eb) => eb.fn.countAll<number | string>().as('total'))
    .select(
      after
        ? sql<number | string>`sum(case when ${side(dialect, { ...position!, after }, 'beyond')} then 1 else 0 end)`.as('beyond')
        : sql<number>`0`.as('beyond'),
    )
    .executeTakeFirstOrThrow();
  const total = Number(row.total);
  return { total, before: after ? total - Number(row.beyond ?? 0) : 0 };
}

/**
 * One page of reports in a total order: the sort key, then id in the same direction, read in the
 * order of an index of migration 0007. Keyset pages continue strictly after the last row served,
 * so rows inserted meanwhile cause no repeats or gaps. Never-viewed reports (null
 * `last_viewed_at`) come last in both directions on both dialects, which disagree about where
 * nulls sort by default.
 */
export async function listReports(db: Executor, dialect: Dialect, scope: WorkspaceScope, filter: ReportListFilter): Promise<ListedReport[]> {
  const { sort, direction, after } = filter;
  const key = sortExpression(dialect, sort);
  let query = listed(db, dialect, scope, filter)
    .selectAll('reports')
    .select(sql<string | null>`${key}`.as('sort_key'));
  if (after !== undefined) query = query.where(side(dialect, { sort, direction, after }, 'beyond'));
  // One folder's reports: the folder first in the order, one value for every row, so that
  // PostgreSQL, which takes `is null` for no equality, sees the index's order for the root too.
  if (filter.folderId !== undefined) query = query.orderBy('reports.folder_id', direction);
  // Only last_viewed_at holds nulls; NULLS LAST on the others would keep PostgreSQL from reading their indexes backwards.
  query = sort === 'last_viewed_at' ? query.orderBy(key, (o) => (direction === 'asc' ? o.asc() : o.desc()).nullsLast()) : query.orderBy(key, direction);
  query = query.orderBy('reports.id', direction).limit(filter.limit);
  if (filter.offset !== undefined && filter.offset > 0) query = query.offset(filter.offset);
  return query.execute();
}
