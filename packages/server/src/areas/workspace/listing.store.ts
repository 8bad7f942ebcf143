import { PostgresAdapter, sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Executor, ItemType } from '../../db/tables.js';
import type { WorkspaceScope } from './tree.store.js';
import { visibleRows, type Visibility } from './visibility.js';

export interface ListingRow {
  grp: number;
  type_rank: number;
  type: ItemType;
  id: number;
  name: string;
  sort_key: string;
  created_at: string;
  updated_at: string;
  folder_id: number | null;
  created_by: number | null;
  slug: string | null;
  public_id: string | null;
  kind: string | null;
}

export type SortBy = 'name' | 'createdAt' | 'updatedAt';

/** Where a page starts: the sort key of the last entry served (see pagination.ts). */
export type ListingKey = [grp: number, sortKey: string, typeRank: number, id: number];

/** What is listed: one folder's contents, or search results. */
export interface ListingFilter {
  /** null: the root. Ignored when searching. */
  folderId: number | null;
  types: ItemType[];
  search: string | undefined;
  sortBy: SortBy;
}

export interface ListingQuery extends ListingFilter {
  descending: boolean;
  after: ListingKey | undefined;
  limit: number;
}

const SORT_COLUMN: Record<SortBy, string> = { name: 'name', createdAt: 'created_at', updatedAt: 'updated_at' };

type ItemTable = 'folders' | 'workbooks' | 'reports';

/** `text` (folded already) as a LIKE pattern matching itself literally, anywhere in the value. */
function containsPattern(folded: string): string {
  return `%${folded.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * How a name search finds its rows: a case-insensitive substring of the name, the name and the
 * text both folded by lower() (on SQLite the Unicode-aware one of openStore, the same as
 * JavaScript's toLowerCase()). `condition` is that exact test, which decides. `candidates`, where
 * present, are the rows a trigram index finds, read before anything else, so that a search costs
 * what it matches rather than what the deployment holds:
 *
 * - SQLite (`joined`): `<table>_name_search` (migration 0007), an FTS5 table of the trigrams of
 *   each folded name, cross-joined to the table by id (CROSS JOIN keeps it the outer loop). The
 *   text is one quoted phrase: its trigrams in a row, which is the substring itself.
 * - PostgreSQL (`rows`): a subquery standing for the table, of the rows whose lower(name) is LIKE
 *   the text, which the pg_trgm GIN index serves. `offset 0` keeps it whole: planned on its own,
 *   it is not merged into the query around it and turned into a walk over the deployment's rows
 *   tested one by one, which a plan without statistics takes for the cheapest (it guesses that a
 *   deployment holds a handful of rows).
 *
 * A text under 3 characters has no trigram to look up (on PostgreSQL, no 3 letters or digits in a
 * row: pg_trgm keeps only those), and is matched by a scan of the deployment's rows.
 */
export interface NameSearch {
  candidates?: { joined: string; match: RawBuilder<SqlBool> } | { rows: RawBuilder<unknown> };
  condition: RawBuilder<SqlBool>;
}

export function nameSearch(dialect: Dialect, table: ItemTable, search: string): NameSearch {
  const folded = search.toLowerCase();
  const like = (name: RawBuilder<unknown>) => sql<SqlBool>`lower(${name}) like ${containsPattern(folded)} escape '\\'`;
  const name = sql.ref(`${table}.name`);
  if (dialect === 'postgres') {
    if (!/[\p{L}\p{N}]{3}/u.test(folded)) return { condition: sql<SqlBool>`strpos(lower(${name}), ${folded}) > 0` };
    const rows = sql`(select * from ${sql.table(table)} where ${like(sql.ref('name'))} offset 0)`;
    return { candidates: { rows }, condition: like(name) };
  }
  if ([...folded].length < 3) return { condition: like(name) };
  const fts = `${table}_name_search`;
  const phrase = `"${folded.replace(/"/g, '""')}"`;
  return { candidates: { joined: fts, match: sql<SqlBool>`${sql.ref(fts)} match ${phrase}` }, condition: like(name) };
}

/** The rows a listing reads from `table`: the table, or a search's candidates in its place. */
function source(table: ItemTable, search: NameSearch | undefined): { from: RawBuilder<unknown>; where: Expression<unknown>[] } {
  const candidates = search?.candidates;
  if (!candidates) return { from: sql.table(table), where: search ? [search.condition] : [] };
  if ('rows' in candidates) return { from: sql`${candidates.rows} as ${sql.id(table)}`, where: [search.condition] };
  const { joined, match } = candidates;
  return {
    from: sql`${sql.table(joined)} cross join ${sql.table(table)}`,
    where: [sql`${sql.ref(`${table}.id`)} = ${sql.ref(`${joined}.rowid`)}`, match, search.condition],
  };
}

interface Arm {
  type: ItemType;
  table: ItemTable;
  grp: number;
  rank: number;
  container: string;
  extra: RawBuilder<unknown>;
}

const ARMS: Arm[] = [
  { type: 'FOLDER', table: 'folders', grp: 0, rank: 1, container: 'parent_id', extra: sql`null as slug, null as public_id, null as kind` },
  { type: 'WORKBOOK', table: 'workbooks', grp: 1, rank: 2, container: 'folder_id', extra: sql`workbooks.slug as slug, null as public_id, null as kind` },
  { type: 'REPORT', table: 'reports', grp: 1, rank: 3, container: 'folder_id', extra: sql`null as slug, reports.public_id as public_id, reports.kind as kind` },
];

/**
 * What one table contributes to a listing, before ordering: its rows of the listing (one folder's
 * content, or the search's matches) that the caller may see.
 */
function armOf(dialect: Dialect, scope: WorkspaceScope, visibility: Visibility, q: ListingFilter, t: Arm) {
  const col = (column: string) => sql.ref(`${t.table}.${column}`);
  const search = q.search === undefined ? undefined : nameSearch(dialect, t.table, q.search);
  const { from, where } = source(t.table, search);
  where.unshift(sql`${col('tenant_id')} = ${scope.tenantId}`, sql`${col('deployment_id')} = ${scope.deploymentId}`, visibleRows(visibility, t.table));
  if (!search) where.push(q.folderId === null ? sql`${col(t.container)} is null` : sql`${col(t.container)} = ${q.folderId}`);
  // The expression the indexes of migration 0007 hold: names lower-cased, byte-wise on PostgreSQL.
  const key = q.sortBy !== 'name' ? col(SORT_COLUMN[q.sortBy]) : dialect === 'postgres' ? sql`lower(${col('name')}) collate "C"` : sql`lower(${col('name')})`;
  const select = sql`select ${sql.lit(t.grp)} as grp, ${sql.lit(t.rank)} as type_rank, ${sql.lit(t.type)} as type, ${col('id')} as id, ${col('name')} as name,
      ${q.sortBy === 'name' ? sql`lower(${col('name')})` : key} as sort_key, ${col('created_at')} as created_at, ${col('updated_at')} as updated_at,
      ${col(t.container)} as folder_id, ${col('created_by')} as created_by, ${t.extra}
      from ${from}`;
  return { select, where, key, id: col('id'), search };
}

/** Every listed entry of the types asked for, as one union (undefined when no type is asked for). */
function entries(dialect: Dialect, scope: WorkspaceScope, visibility: Visibility, q: ListingFilter): RawBuilder<unknown> | undefined {
  const parts = ARMS.filter((t) => q.types.includes(t.type)).map((t) => {
    const { select, where } = armOf(dialect, scope, visibility, q, t);
    return sql`${select} where ${sql.join(where, sql` and `)}`;
  });
  return parts.length === 0 ? undefined : sql`${sql.join(parts, sql` union all `)}`;
}

/** The store's dialect, from the executor's adapter. */
function dialectOf(db: Executor): Dialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/** How many entries the listing holds, ignoring pagination. */
export async function countEntries(db: Executor, scope: WorkspaceScope, visibility: Visibility, q: ListingFilter): Promise<number> {
  const union = entries(dialectOf(db), scope, visibility, q);
  if (!union) return 0;
  const { rows } = await sql<{ total: number | string }>`select count(*) as total from (${union}) entries`.execute(db);
  return Number(rows[0]?.total ?? 0);
}

/**
 * Folders first, then workbooks and reports together, ordered by the chosen key with type and id
 * as tie-breakers so the order is total and a cursor resumes exactly. Names sort case-insensitively
 * and byte-wise in both dialects (PostgreSQL's locale collation would order differently from
 * SQLite).
 *
 * Each table is read on its own, in the order of an index of migration 0007 (its sort key, then
 * id), from where the cursor stands and for no more than a page; the page is then the first rows
 * of those at most three short runs. A search reads its matches from the name index instead, and
 * sorts them. Within one table the group and type are constants, so the cursor's position becomes
 * a range of the index: after the cursor's key, or at it with a later id, or at it at all when
 * this type comes after the cursor's.
 */
export async function listEntries(db: Executor, dialect: Dialect, scope: WorkspaceScope, visibility: Visibility, q: ListingQuery): Promise<ListingRow[]> {
  const collate = dialect === 'postgres' ? sql` collate "C"` : sql``;
  const dir = q.descending ? sql`desc` : sql`asc`;
  const [cmp, cmpOrEqual] = q.descending ? [sql`<`, sql`<=`] : [sql`>`, sql`>=`];
  const later = (a: number, b: number) => (q.descending ? a < b : a > b);
  const parts: RawBuilder<unknown>[] = [];
  for (const t of ARMS.filter((arm) => q.types.includes(arm.type))) {
    const { select, where, key, id, search } = armOf(dialect, scope, visibility, q, t);
    if (q.after) {
      const [grp, value, rank, afterId] = q.after;
      // Groups always go up (folders first, whatever the direction).
      if (t.grp < grp) continue;
      if (t.grp === grp) {
        if (later(t.rank, rank)) where.push(sql`${key} ${cmpOrEqual} ${value}`);
        else if (t.rank === rank) where.push(sql`${key} ${cmpOrEqual} ${value}`, sql`(${key} ${cmp} ${value} or ${id} ${cmp} ${afterId})`);
        else where.push(sql`${key} ${cmp} ${value}`);
      }
    }
    // One folder's content: its container first in the order, one value for every row, so that
    // PostgreSQL, which takes `is null` for no equality, sees the index's order for the root too.
    const order = search ? [key, id] : [sql.ref(`${t.table}.${t.container}`), key, id];
    parts.push(
      sql`select * from (${select} where ${sql.join(where, sql` and `)} order by ${sql.join(order.map((o) => sql`${o} ${dir}`))} limit ${q.limit}) ${sql.id(`${t.table}_page`)}`,
    );
  }
  if (parts.length === 0) return [];
  const { rows } = await sql<ListingRow>`select * from (${sql.join(parts, sql` union all `)}) entries
    order by grp asc, sort_key${collate} ${dir}, type_rank ${dir}, id ${dir}
    limit ${q.limit}`.execute(db);
  return rows;
}
