import { sql, type RawBuilder } from 'kysely';
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

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Every listed entry of the types asked for, as one union (undefined when no type is asked for). */
function entries(scope: WorkspaceScope, visibility: Visibility, q: ListingFilter): RawBuilder<unknown> | undefined {
  const parts: RawBuilder<unknown>[] = [];
  const tables = [
    { type: 'FOLDER' as const, table: 'folders' as const, grp: 0, rank: 1, container: 'parent_id', extra: sql`null as slug, null as public_id, null as kind` },
    { type: 'WORKBOOK' as const, table: 'workbooks' as const, grp: 1, rank: 2, container: 'folder_id', extra: sql`slug as slug, null as public_id, null as kind` },
    { type: 'REPORT' as const, table: 'reports' as const, grp: 1, rank: 3, container: 'folder_id', extra: sql`null as slug, public_id as public_id, kind as kind` },
  ];
  const column = SORT_COLUMN[q.sortBy];
  for (const t of tables.filter((t) => q.types.includes(t.type))) {
    const sortKey = q.sortBy === 'name' ? sql`lower(${sql.ref(`${t.table}.name`)})` : sql.ref(`${t.table}.${column}`);
    const where = [sql`${sql.ref(`${t.table}.tenant_id`)} = ${scope.tenantId}`, sql`${sql.ref(`${t.table}.deployment_id`)} = ${scope.deploymentId}`, visibleRows(visibility, t.table)];
    if (q.search !== undefined) where.push(sql`lower(${sql.ref(`${t.table}.name`)}) like ${`%${escapeLike(q.search.toLowerCase())}%`} escape '\\'`);
    else where.push(q.folderId === null ? sql`${sql.ref(`${t.table}.${t.container}`)} is null` : sql`${sql.ref(`${t.table}.${t.container}`)} = ${q.folderId}`);
    parts.push(sql`select ${sql.lit(t.grp)} as grp, ${sql.lit(t.rank)} as type_rank, ${sql.lit(t.type)} as type, id, name, ${sortKey} as sort_key,
      created_at, updated_at, ${sql.ref(t.container)} as folder_id, created_by, ${t.extra}
      from ${sql.table(t.table)} where ${sql.join(where, sql` and `)}`);
  }
  return parts.length === 0 ? undefined : sql`${sql.join(parts, sql` union all `)}`;
}

/** How many entries the listing holds, ignoring pagination. */
export async function countEntries(db: Executor, scope: WorkspaceScope, visibility: Visibility, q: ListingFilter): Promise<number> {
  const union = entries(scope, visibility, q);
  if (!union) return 0;
  const { rows } = await sql<{ total: number | string }>`select count(*) as total from (${union}) entries`.execute(db);
  return Number(rows[0]?.total ?? 0);
}

/**
 * Folders first, then workbooks and reports together, ordered by the chosen key with type and id
 * as tie-breakers so the order is total and a cursor resumes exactly. Names sort case-insensitively
 * and byte-wise in both dialects (PostgreSQL's locale collation would order differently from SQLite).
 */
export async function listEntries(db: Executor, dialect: Dialect, scope: WorkspaceScope, visibility: Visibility, q: ListingQuery): Promise<ListingRow[]> {
  const union = entries(scope, visibility, q);
  if (!union) return [];
  const collate = dialect === 'postgres' ? sql` collate "C"` : sql``;
  const cmp = q.descending ? sql`<` : sql`>`;
  const dir = q.descending ? sql`desc` : sql`asc`;
  let keyset = sql`1 = 1`;
  if (q.after) {
    const [grp, key, rank, id] = q.after;
    keyset = sql`(grp > ${grp} or (grp = ${grp} and (sort_key${collate} ${cmp} ${key} or (sort_key = ${key} and (type_rank ${cmp} ${rank} or (type_rank = ${rank} and id ${cmp} ${id}))))))`;
  }
  const { rows } = await sql<ListingRow>`select * from (${union}) entries
    where ${keyset}
    order by grp asc, sort_key${collate} ${dir}, type_rank ${dir}, id ${dir}
    limit ${q.limit}`.execute(db);
  return rows;
}
