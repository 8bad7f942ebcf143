import { prepared } from '../../db/prepared.js';
import type { Executor, FolderRow, ItemType, ReportRow, WorkbookRow } from '../../db/tables.js';
import type { WorkspaceScope } from './tree.store.js';

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
  FOLDER: prepared(4, (db, folderId: number | null, at: string, deploymentId: number, id: number) =>
    db.updateTable('folders').set({ parent_id: folderId, updated_at: at }).where('deployment_id', '=', deploymentId).where('id', '=', id),
  ),
  WORKBOOK: prepared(4, (db, folderId: number | null, at: string, deploymentId: number, id: number) =>
    db.updateTable('workbooks').set({ folder_id: folderId, updated_at: at }).where('deployment_id', '=', deploymentId).where('id', '=', id),
  ),
  REPORT: prepared(4, (db, folderId: number | null, at: string, deploymentId: number, id: number) =>
    db.updateTable('reports').set({ folder_id: folderId, updated_at: at }).where('deployment_id', '=', deploymentId).where('id', '=', id),
  ),
};

export async function findItem(db: Executor, scope: WorkspaceScope, type: ItemType, id: number): Promise<StoredItem | undefined> {
  const { rows } = await FIND[type](db, scope.tenantId, scope.deploymentId, id);
  const row = rows[0];
  return row === undefined ? undefined : ({ type, row } as StoredItem);
}

/**
 * Puts an item in `folderId` (null = root): one row written, whatever the item holds. The row was
 * read in the same locked transaction, so the moved row is known without reading it back.
 */
export async function setContainer(db: Executor, scope: WorkspaceScope, item: StoredItem, folderId: number | null, at: string): Promise<StoredItem> {
  await SET_CONTAINER[item.type](db, folderId, at, scope.deploymentId, item.row.id);
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
    await db.deleteFrom('favorites').where('tenant_id', '=', tenantId).where('user_id', '=', userId).where('item_type', '=', type).where('item_id', '=', id).execute();
  }
}
