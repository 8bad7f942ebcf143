import { PostgresAdapter, sql } from 'kysely';
import { prepared } from '../../db/prepared.js';
import type { Trailing } from '../../db/transactions.js';
import type { Executor, FolderRow, ItemType, ReportRow, WorkbookRow } from '../../db/tables.js';
import { chainsFromRows, upFromEach, type ChainRow, type FolderChain, type WorkspaceScope } from './tree.store.js';

/** A workspace item as stored: the row of its own table, tagged with its type. */
export type StoredItem = { type: 'FOLDER'; row: FolderRow } | { type: 'WORKBOOK'; row: WorkbookRow } | { type: 'REPORT'; row: ReportRow };

/** The folder holding an item; for a folder, its parent. Null at the root. */
export function containerOf(item: StoredItem): number | null {
  return item.type === 'FOLDER' ? item.row.parent_id : item.row.folder_id;
}

const TABLE = { FOLDER: 'folders', WORKBOOK: 'workbooks', REPORT: 'reports' } as const;

/** By type: the bulk move runs these for every item, so each is compiled once (db/prepared.ts). */
const FIND = {
  FOLDER: prepared(3, (db, tenantId: number, deploymentId: number, id: number) =>
    db.selectFrom('folders').selectAll().where('tenant_id', '=', tenantId).where('deployment_id', '=', deploymentId).where('id', '=', id),
  ),
  WORKBOOK: prepared(3, (db, tenantId: number, deploymentId: number, id: number) =>
    db.selectFrom('workbooks').selectAll().where('tenant_id', '=', tenantId).where('deployment_id', '=', deploymentId).where('id', '=', id),
  ),
  REPORT: prepared(3, (db, tenantId: number, deploymentId: number, id: number) =>
    db.selectFrom('reports').selectAll().where('tenant_id', '=', tenantId).where('deployment_id', '=', deploymentId).where('id', '=', id),
  ),
};

const SET_CONTAINER = {
  FOLDER: prepared(
    4,
    (db, folderId: number | null, at: string, deploymentId: number, id: number) =>
      db.updateTable('folders').set({ parent_id: folderId, updated_at: at }).where('deployment_id', '=', deploymentId).where('id', '=', id),
    { name: 'set_folder_parent' },
  ),
  WORKBOOK: prepared(
    4,
    (db, folderId: number | null, at: string, deploymentId: number, id: number) =>
      db.updateTable('workbooks').set({ folder_id: folderId, updated_at: at }).where('deployment_id', '=', deploymentId).where('id', '=', id),
    { name: 'set_workbook_folder' },
  ),
  REPORT: prepared(
    4,
    (db, folderId: number | null, at: string, deploymentId: number, id: number) =>
      db.updateTable('reports').set({ folder_id: folderId, updated_at: at }).where('deployment_id', '=', deploymentId).where('id', '=', id),
    { name: 'set_report_folder' },
  ),
};

export async function findItem(db: Executor, scope: WorkspaceScope, type: ItemType, id: number): Promise<StoredItem | undefined> {
  const { rows } = await FIND[type](db, scope.tenantId, scope.deploymentId, id);
  const row = rows[0];
  return row === undefined ? undefined : ({ type, row } as StoredItem);
}

/** What a move reads before it decides, in one statement (see `readForMove`). */
export interface MoveSubject {
  item: StoredItem;
  /** The chains of the item's folder and of the destination, each present if that folder exists. */
  chains: Map<number, FolderChain>;
  /** A folder only: another folder of its name is already in the destination. */
  nameTakenThere: boolean;
}

/** The item's own folder, read inside the statement, so the walk up needs no second round trip. */
const CONTAINER = { FOLDER: 'parent_id', WORKBOOK: 'folder_id', REPORT: 'folder_id' } as const;

/**
 * The item's row with, in the same statement, the walks up from its folder and from the
 * destination, and for a folder whether the destination already holds another folder of its name
 * (on the unique index `folders_sibling_name`: ids start at 1, so 0 stands for the root). The
 * chains come as one JSON array, so the row stays one row whatever the depth. The sibling check
 * names no tenant: the deployment is one tenant's, and with the tenant as well PostgreSQL's generic
 * plan for a table without statistics read the deployment's every folder from `folders_list`
 * (1 ms on 10,000 folders) instead of probing the sibling index (test/list-plans.test.ts).
 */
function moveRead(type: ItemType) {
  const table = TABLE[type];
  const read = (db: Executor, tenantId: number, deploymentId: number, id: number, folderId: number | null) => {
    const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
    const container = sql`(select ${sql.ref(CONTAINER[type])} from ${sql.table(table)} where tenant_id = ${tenantId} and deployment_id = ${deploymentId} and id = ${id})`;
    const chainRows = postgres
      ? sql`(select json_agg(json_build_array(origin, id, name, created_by, depth)) from up)`
      : sql`(select json_group_array(json_array(origin, id, name, created_by, depth)) from up)`;
    const nameTaken =
      type === 'FOLDER'
        ? sql`exists (select 1 from folders s where s.deployment_id = ${deploymentId} and coalesce(s.parent_id, 0) = coalesce(cast(${folderId} as bigint), 0)
                        and s.name = i.name and s.id <> i.id)`
        : sql`0`;
    return sql<Record<string, unknown> & { move_chains: unknown; move_name_taken: unknown }>`
      ${upFromEach({ tenantId, deploymentId }, [container, folderId])}
      select i.*, ${chainRows} as move_chains, ${nameTaken} as move_name_taken
        from ${sql.table(table)} i
       where i.tenant_id = ${tenantId} and i.deployment_id = ${deploymentId} and i.id = ${id}`;
  };
  // Planning the walk took longer than running it: PostgreSQL plans it once per connection.
  return prepared(4, read, { name: `move_read_${table}` });
}

const MOVE_READ = { FOLDER: moveRead('FOLDER'), WORKBOOK: moveRead('WORKBOOK'), REPORT: moveRead('REPORT') };

/**
 * Everything a move's checks need, in one round trip (DESIGN.md, "Moves"): undefined when the
 * item is not in this deployment. Must run under the deployment's tree lock, like the checks.
 */
export async function readForMove(db: Executor, scope: WorkspaceScope, type: ItemType, id: number, folderId: number | null): Promise<MoveSubject | undefined> {
  const { rows } = await MOVE_READ[type](db, scope.tenantId, scope.deploymentId, id, folderId);
  const found = rows[0];
  if (found === undefined) return undefined;
  const { move_chains: chainRows, move_name_taken: nameTaken, ...row } = found;
  // PostgreSQL parses json itself and aggregates nothing to null; SQLite returns text.
  const entries = (typeof chainRows === 'string' ? JSON.parse(chainRows) : (chainRows ?? [])) as Array<[number, number, string, number | null, number]>;
  const chains = chainsFromRows(
    entries.map(([origin, folder, name, createdBy, depth]): ChainRow => ({ origin, id: folder, name, created_by: createdBy, depth })),
  );
  return { item: { type, row } as unknown as StoredItem, chains, nameTakenThere: nameTaken === true || nameTaken === 1 };
}

/**
 * Puts an item in `folderId` (null = root): one row written, whatever the item holds. The row was
 * read in the same locked transaction, so the moved row is known without reading it back.
 */
export async function setContainer(
  db: Executor,
  scope: WorkspaceScope,
  item: StoredItem,
  folderId: number | null,
  at: string,
  /** When the move is its transaction's last statement: the COMMIT need not wait for it (db/transactions.ts). */
  trailing?: Trailing,
): Promise<StoredItem> {
  const write = SET_CONTAINER[item.type](db, folderId, at, scope.deploymentId, item.row.id);
  if (trailing) trailing(write);
  else await write;
  if (item.type === 'FOLDER') return { type: 'FOLDER', row: { ...item.row, parent_id: folderId, updated_at: at } };
  return { type: item.type, row: { ...item.row, folder_id: folderId, updated_at: at } } as StoredItem;
}

/**
 * Deletes one item with what hangs off it (its grants and favorites). A folder's workbooks and
 * reports go to the root first, so deleting a folder loses no content (DESIGN.md, "Deleting folders").
 */
export async function deleteItem(db: Executor, scope: WorkspaceScope, item: StoredItem, at: string): Promise<void> {
  const { tenantId, deploymentId } = scope;
  if (item.type === 'FOLDER') {
    for (const table of ['workbooks', 'reports'] as const) {
      await db
        .updateTable(table)
        .set({ folder_id: null, updated_at: at })
        .where('deployment_id', '=', deploymentId)
        .where('folder_id', '=', item.row.id)
        .execute();
    }
  }
  await db.deleteFrom('policies').where('tenant_id', '=', tenantId).where('resource_type', '=', item.type).where('resource_id', '=', item.row.id).execute();
  await db.deleteFrom('favorites').where('tenant_id', '=', tenantId).where('item_type', '=', item.type).where('item_id', '=', item.row.id).execute();
  await db.deleteFrom(TABLE[item.type]).where('deployment_id', '=', deploymentId).where('id', '=', item.row.id).execute();
}

/** Owners of many items in one query, by user id. */
export async function ownersById(db: Executor, tenantId: number, userIds: Iterable<number | null>) {
  const ids = [...new Set([...userIds].filter((id): id is number => id !== null))];
  if (ids.length === 0) return new Map<number, { id: number; email: string; first_name: string | null }>();
  const rows = await db.selectFrom('users').select(['id', 'email', 'first_name']).where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

/** Which of `items` the user has marked as favorite, as `TYPE:id` keys. One query. */
export async function favoritesOf(db: Executor, tenantId: number, userId: number, items: Array<{ type: ItemType; id: number }>): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  const rows = await db
    .selectFrom('favorites')
    .select(['item_type', 'item_id'])
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('item_id', 'in', [...new Set(items.map((i) => i.id))])
    .execute();
  return new Set(rows.map((r) => `${r.item_type}:${r.item_id}`));
}

/** The deployment an item of this tenant lives in, or undefined when there is no such item. */
export async function deploymentOfItem(db: Executor, tenantId: number, type: ItemType, id: number): Promise<number | undefined> {
  const row = await db.selectFrom(TABLE[type]).select('deployment_id').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return row?.deployment_id;
}

/** Grants on the folders, workbooks and reports of a deployment, removed with the deployment. */
export async function deleteItemPoliciesOf(db: Executor, tenantId: number, deploymentId: number): Promise<void> {
  for (const [type, table] of Object.entries(TABLE) as Array<[ItemType, (typeof TABLE)[ItemType]]>) {
    const ids = db.selectFrom(table).select('id').where('tenant_id', '=', tenantId).where('deployment_id', '=', deploymentId);
    await db.deleteFrom('policies').where('tenant_id', '=', tenantId).where('resource_type', '=', type).where('resource_id', 'in', ids).execute();
    await db.deleteFrom('favorites').where('tenant_id', '=', tenantId).where('item_type', '=', type).where('item_id', 'in', ids).execute();
  }
}

export async function setFavorite(db: Executor, tenantId: number, userId: number, type: ItemType, id: number, on: boolean, at: string): Promise<void> {
  if (on) {
    await db
      .insertInto('favorites')
      .values({ tenant_id: tenantId, user_id: userId, item_type: type, item_id: id, created_at: at })
      .onConflict((oc) => oc.columns(['user_id', 'item_type', 'item_id']).doNothing())
      .execute();
  } else {
    await db
      .deleteFrom('favorites')
      .where('tenant_id', '=', tenantId)
      .where('user_id', '=', userId)
      .where('item_type', '=', type)
      .where('item_id', '=', id)
      .execute();
  }
}
