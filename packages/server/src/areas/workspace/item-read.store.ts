import { sql } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import { prepared } from '../../db/prepared.js';
import type { Executor, ItemType } from '../../db/tables.js';
import { containerOf, type StoredItem } from './items.store.js';
import { MAX_FOLDER_DEPTH, treeVersion, type FolderChain, type WorkspaceScope } from './tree.store.js';

/** One item as a GET needs it: its row, the folders above it and whether the caller marked it. */
export interface ItemRead {
  item: StoredItem;
  /** The chain of the item's folder (for a folder, of its parent), keyed by that folder's id. */
  chains: Map<number, FolderChain>;
  favorite: boolean;
  /** The deployment's folder tree version, read with the item (migration 0008). */
  treeVersion: number;
}

const TABLE = { FOLDER: 'folders', WORKBOOK: 'workbooks', REPORT: 'reports' } as const;
const CONTAINER = { FOLDER: 'parent_id', WORKBOOK: 'folder_id', REPORT: 'folder_id' } as const;

/**
 * The item, its favorite mark and its folders up to the top, in one statement: the access check
 * and the view then read the same chain, and a GET costs one round trip whatever the item's depth.
 * The chain comes back as one JSON array of [id, name, created_by, depth], nearest folder first,
 * unless the deployment's folder tree is at `unlessVersion`: the statement reads that version too,
 * and at it skips its walk, for the tree held in memory to answer (areas/workspace/folder-trees.ts).
 */
function readOne(dialect: Dialect, type: ItemType) {
  const table = sql.table(TABLE[type]);
  const container = sql.ref(`item.${CONTAINER[type]}`);
  const chain =
    dialect === 'postgres'
      ? sql`(select coalesce(json_agg(json_build_array(id, name, created_by, depth) order by depth), '[]') from up)`
      : sql`(select json_group_array(json_array(id, name, created_by, depth)) from (select * from up order by depth))`;
  return prepared(5, (_db, tenantId: number, deploymentId: number, id: number, userId: number, unlessVersion: number) => {
    const item = sql`(select * from ${table} where tenant_id = ${tenantId} and deployment_id = ${deploymentId} and id = ${id})`;
    const version = treeVersion(deploymentId);
    return sql<Record<string, unknown> & { chain_json: unknown; is_favorite: unknown; tree_version: unknown }>`
      with recursive item as ${item},
      up(id, parent_id, name, created_by, depth) as (
        select f.id, f.parent_id, f.name, f.created_by, 0 from folders f join item on f.id = ${container}
         where f.deployment_id = ${deploymentId} and ${version} <> ${unlessVersion}
        union
        select f.id, f.parent_id, f.name, f.created_by, up.depth + 1 from folders f join up on f.id = up.parent_id
         where f.deployment_id = ${deploymentId} and up.depth < ${MAX_FOLDER_DEPTH}
      )
      select item.*,
        ${chain} as chain_json,
        ${version} as tree_version,
        exists (select 1 from favorites where tenant_id = ${tenantId} and user_id = ${userId} and item_type = ${type} and item_id = item.id) as is_favorite
      from item`;
  });
}

const READ = {
  sqlite: { FOLDER: readOne('sqlite', 'FOLDER'), WORKBOOK: readOne('sqlite', 'WORKBOOK'), REPORT: readOne('sqlite', 'REPORT') },
  postgres: { FOLDER: readOne('postgres', 'FOLDER'), WORKBOOK: readOne('postgres', 'WORKBOOK'), REPORT: readOne('postgres', 'REPORT') },
};

export async function readItem(
  db: Executor,
  dialect: Dialect,
  scope: WorkspaceScope,
  type: ItemType,
  id: number,
  userId: number,
  unlessVersion = -1,
): Promise<ItemRead | undefined> {
  const { rows } = await READ[dialect][type](db, scope.tenantId, scope.deploymentId, id, userId, unlessVersion);
  const found = rows[0];
  if (!found) return undefined;
  const { chain_json, is_favorite, tree_version, ...row } = found;
  const item = { type, row } as unknown as StoredItem;
  const chains = new Map<number, FolderChain>();
  const from = containerOf(item);
  const links = (typeof chain_json === 'string' ? JSON.parse(chain_json) : chain_json) as Array<[number, string, number | null, number]>;
  // Deepest ancestor first: a path reads from the top-level folder down.
  if (from !== null && links.length > 0) {
    chains.set(from, {
      entries: links.reverse().map(([folderId, name, createdBy]) => ({ id: Number(folderId), name, createdBy: createdBy === null ? null : Number(createdBy) })),
    });
  }
  return { item, chains, favorite: is_favorite === true || Number(is_favorite) === 1, treeVersion: Number(tree_version) };
}
