import { RawNode, sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import { prepared } from '../../db/prepared.js';
import type { Executor, FolderRow } from '../../db/tables.js';

/** Folders nest at most this many levels: a top-level folder is level 1 (DESIGN.md, "Moves"). */
export const MAX_FOLDER_DEPTH = 10;

/** The deployment a workspace query runs in; every query filters by both ids. */
export interface WorkspaceScope {
  tenantId: number;
  deploymentId: number;
}

export interface PathEntry {
  id: number;
  name: string;
}

/** A folder's chain from its top-level ancestor down to itself, each with its creator (for access). */
export interface FolderChain {
  entries: Array<PathEntry & { createdBy: number | null }>;
}

export async function findFolder(db: Executor, scope: WorkspaceScope, id: number): Promise<FolderRow | undefined> {
  return db
    .selectFrom('folders')
    .selectAll()
    .where('tenant_id', '=', scope.tenantId)
    .where('deployment_id', '=', scope.deploymentId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * The ancestor chains of many folders in one query: for each folder id, its path from the top
 * down to itself. Walking up costs the folders' depth, not the workspace's size. The depth
 * bound keeps a cycle in bad data from looping.
 */
export async function chainsOf(db: Executor, scope: WorkspaceScope, folderIds: Iterable<number>): Promise<Map<number, FolderChain>> {
  const ids = [...new Set(folderIds)];
  const chains = new Map<number, FolderChain>();
  if (ids.length === 0) return chains;
  // A move walks up from one or two folders: those two shapes are compiled once.
  const { rows } =
    ids.length === 1
      ? await CHAIN_OF_ONE(db, scope.tenantId, scope.deploymentId, ids[0]!)
      : ids.length === 2
        ? await CHAIN_OF_TWO(db, scope.tenantId, scope.deploymentId, ids[0]!, ids[1]!)
        : await walkUp(scope, ids).execute(db);
  return chainsFromRows(rows, chains);
}

/**
 * The deployment's folder tree version (migration 0008) as an expression, 0 for a deployment
 * without a row; every statement that reads it with its data reads this one.
 */
export function treeVersion(deploymentId: unknown): RawBuilder<number | string> {
  return sql<number | string>`coalesce((select version from folder_tree_versions where deployment_id = ${deploymentId}), 0)`;
}

/**
 * The deployment's folder tree version (migration 0008) and, unless it is `unlessVersion`, the
 * chains of `folderIds`, in one statement, so from one snapshot: at that version the walk finds no
 * folder to start from and costs nothing (folder-trees.ts then answers from memory).
 */
export async function chainsUnlessAt(
  db: Executor,
  scope: WorkspaceScope,
  folderIds: number[],
  unlessVersion: number,
): Promise<{ version: number; chains: Map<number, FolderChain> | undefined }> {
  const version = treeVersion(scope.deploymentId);
  const starts = [start(scope, sql`id in (${sql.join(folderIds)}) and ${version} <> ${unlessVersion}`)];
  const { rows } = await sql<ChainRow & { version: number | string | null }>`${up(scope, starts)}
    select origin, id, name, created_by, depth, null as version from up
    union all
    select null, null, null, null, null, ${version}`.execute(db);
  const at = Number(rows.find((r) => r.origin === null)?.version ?? 0);
  if (at === unlessVersion) return { version: at, chains: undefined };
  return { version: at, chains: chainsFromRows(rows.filter((r) => r.origin !== null)) };
}

/** One folder of a walk up: the folder the walk started from, the folder reached, and how far up it is. */
export interface ChainRow {
  origin: number;
  id: number;
  name: string;
  created_by: number | null;
  depth: number;
}

/**
 * The rows of walks up, as each starting folder's chain (added to `into`). Two walks from the same
 * folder (an item moved to where it is) give the same rows twice: each depth is kept once.
 */
export function chainsFromRows(rows: ChainRow[], into = new Map<number, FolderChain>()): Map<number, FolderChain> {
  // Deepest ancestor first: a path reads from the top-level folder down.
  rows.sort((a, b) => Number(a.origin) - Number(b.origin) || Number(b.depth) - Number(a.depth));
  let last: ChainRow | undefined;
  for (const row of rows) {
    if (last !== undefined && Number(last.origin) === Number(row.origin) && Number(last.depth) === Number(row.depth)) continue;
    last = row;
    const origin = Number(row.origin);
    let chain = into.get(origin);
    if (!chain) into.set(origin, (chain = { entries: [] }));
    chain.entries.push({ id: Number(row.id), name: row.name, createdBy: row.created_by === null ? null : Number(row.created_by) });
  }
  return into;
}

/**
 * The recursive CTE `up`: the folders that `starts` select (at depth 0), and every folder above
 * them. The depth bound alone ends every walk, even round a cycle in bad data, so rows need no
 * comparing (UNION ALL): a walk's rows differ by depth anyway.
 */
function up(scope: { tenantId: unknown; deploymentId: unknown }, starts: RawBuilder<unknown>[]) {
  return sql`
    with recursive up(origin, id, parent_id, name, created_by, depth) as (
      ${sql.join(starts, sql` union all `)}
      union all
      select up.origin, f.id, f.parent_id, f.name, f.created_by, up.depth + 1
        from folders f join up on f.id = up.parent_id
       where f.deployment_id = ${scope.deploymentId} and up.depth < ${MAX_FOLDER_DEPTH}
    )`;
}

const start = (scope: { tenantId: unknown; deploymentId: unknown }, where: RawBuilder<unknown>) =>
  sql`select id, id, parent_id, name, created_by, 0 from folders where tenant_id = ${scope.tenantId} and deployment_id = ${scope.deploymentId} and ${where}`;

/** `up` from each of `ids`, tagged with the folder the walk started from. */
export function upFrom(scope: { tenantId: unknown; deploymentId: unknown }, ids: unknown[]) {
  return up(scope, [start(scope, sql`id in (${sql.join(ids)})`)]);
}

/**
 * `up` from each of `expressions` (a subquery for an item's folder, a parameter), one equality on
 * the primary key each, so the planner looks each one up whatever its statistics say; an `in`
 * list holding a subquery was planned, on tables not yet analyzed, as a scan of the deployment.
 */
export function upFromEach(scope: { tenantId: unknown; deploymentId: unknown }, expressions: unknown[]) {
  return up(
    scope,
    expressions.map((e) => start(scope, sql`id = ${e}`)),
  );
}

/** Every folder from each of `ids` up to the top, tagged with the folder the walk started from. */
function walkUp(scope: { tenantId: unknown; deploymentId: unknown }, ids: unknown[]) {
  return sql<ChainRow>`${upFrom(scope, ids)} select origin, id, name, created_by, depth from up`;
}

const CHAIN_OF_ONE = prepared(3, (_db, tenantId: number, deploymentId: number, id: number) => walkUp({ tenantId, deploymentId }, [id]));
const CHAIN_OF_TWO = prepared(4, (_db, tenantId: number, deploymentId: number, a: number, b: number) => walkUp({ tenantId, deploymentId }, [a, b]));

/**
 * A folder and every folder above it, the top-level folder first and the folder itself last, in
 * one recursive query (the walk `up`, joined back to the rows); empty when the folder is not in
 * the deployment. A folder met twice (a cycle in bad data) is kept once, at its nearest depth.
 */
export async function folderAndAncestors(db: Executor, scope: WorkspaceScope, folderId: number): Promise<FolderRow[]> {
  const { rows } = await sql<FolderRow & { depth: number | string }>`${upFrom(scope, [folderId])}
    select f.id, f.tenant_id, f.deployment_id, f.parent_id, f.name, f.created_by, f.created_at, f.updated_at, up.depth
      from up join folders f on f.id = up.id
     order by up.depth`.execute(db);
  const seen = new Set<number>();
  const kept: FolderRow[] = [];
  for (const { depth: _depth, ...row } of rows) {
    if (seen.has(Number(row.id))) continue;
    seen.add(Number(row.id));
    kept.push(row);
  }
  return kept.reverse();
}

/**
 * Whether the subtree under `folderId` (the folder itself is level 1) reaches deeper than
 * `levels`. The walk down stops one level past the limit, so it never reads more than the part of
 * the subtree the answer depends on.
 */
export async function subtreeDeeperThan(db: Executor, scope: WorkspaceScope, folderId: number, levels: number): Promise<boolean> {
  const { rows } = await sql<{ deepest: number | null }>`
    with recursive down(id, level) as (
      select id, 1 from folders where deployment_id = ${scope.deploymentId} and id = ${folderId}
      union
      select f.id, down.level + 1 from folders f join down on f.parent_id = down.id
       where down.level <= ${levels}
    )
    select max(level) as deepest from down`.execute(db);
  return Number(rows[0]?.deepest ?? 0) > levels;
}

/** A folder in `parentId` (null = root) named `name`, other than `exceptId`. */
export async function siblingNamed(
  db: Executor,
  scope: WorkspaceScope,
  parentId: number | null,
  name: string,
  exceptId?: number,
): Promise<FolderRow | undefined> {
  let query = db
    .selectFrom('folders')
    .selectAll()
    .where('tenant_id', '=', scope.tenantId)
    .where('deployment_id', '=', scope.deploymentId)
    .where('name', '=', name)
    .where('parent_id', parentId === null ? 'is' : '=', parentId);
  if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
  return query.executeTakeFirst();
}

export async function hasSubfolders(db: Executor, scope: WorkspaceScope, folderId: number): Promise<boolean> {
  const row = await db
    .selectFrom('folders')
    .select('id')
    .where('deployment_id', '=', scope.deploymentId)
    .where('parent_id', '=', folderId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertFolder(db: Executor, values: Omit<FolderRow, 'id'>): Promise<FolderRow> {
  return db.insertInto('folders').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function renameFolder(db: Executor, scope: WorkspaceScope, id: number, name: string, at: string): Promise<FolderRow | undefined> {
  return db
    .updateTable('folders')
    .set({ name, updated_at: at })
    .where('tenant_id', '=', scope.tenantId)
    .where('deployment_id', '=', scope.deploymentId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export interface FolderListFilter {
  /** undefined: every folder; null: top-level folders only. */
  parentId?: number | null | undefined;
  /** Which rows the caller may see (visibility.ts). */
  visible: Expression<SqlBool>;
}

function listedFolders(db: Executor, scope: WorkspaceScope, filter: FolderListFilter) {
  let query = db.selectFrom('folders').where('tenant_id', '=', scope.tenantId).where('deployment_id', '=', scope.deploymentId).where(filter.visible);
  if (filter.parentId !== undefined) query = query.where('parent_id', filter.parentId === null ? 'is' : '=', filter.parentId);
  return query;
}

export async function listFolders(
  db: Executor,
  scope: WorkspaceScope,
  filter: FolderListFilter & { afterId?: number | undefined; limit: number },
): Promise<FolderRow[]> {
  let query = listedFolders(db, scope, filter).selectAll();
  if (filter.afterId !== undefined) query = query.where('id', '>', filter.afterId);
  // One folder's subfolders: the parent first in the order, one value for every row, so that
  // PostgreSQL, which takes `is null` for no equality, reads folders_children in order for the root too.
  if (filter.parentId !== undefined) query = query.orderBy('parent_id');
  return query.orderBy('id').limit(filter.limit).execute();
}

/**
 * How many folders the list holds, ignoring pagination: the deployment's kept total when the list
 * is every folder of it (migration 0007), else a count of the rows.
 */
export async function countFolders(db: Executor, scope: WorkspaceScope, filter: FolderListFilter): Promise<number> {
  if (filter.parentId === undefined && seesEveryRow(filter.visible)) {
    const { rows } = await sql<{ total: number | string }>`select ${deploymentTotal(scope, 'FOLDER')} as total`.execute(db);
    return Number(rows[0]?.total ?? 0);
  }
  const row = await listedFolders(db, scope, filter)
    .select((eb) => eb.fn.countAll<number | string>().as('total'))
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

/**
 * Whether `visible` lets the caller see every row: visibility.ts's condition for them is `1 = 1`.
 * Any other condition, or another spelling of this one, makes a list count its rows: always
 * right, only slower.
 */
export function seesEveryRow(visible: Expression<SqlBool>): boolean {
  const node = visible.toOperationNode();
  return RawNode.is(node) && node.parameters.length === 0 && node.sqlFragments.join('').trim() === '1 = 1';
}

/** How many folders or reports the deployment holds, as kept by the triggers of migration 0007. */
export function deploymentTotal(scope: WorkspaceScope, type: 'FOLDER' | 'REPORT'): RawBuilder<number | string> {
  return sql<
    number | string
  >`coalesce((select total from item_totals where tenant_id = ${scope.tenantId} and deployment_id = ${scope.deploymentId} and item_type = ${type}), 0)`;
}
