import type { Executor, ItemType } from '../../db/tables.js';
import { ApiError } from '../../shared/problems.js';
import { deleteItem, findItem } from './items.store.js';
import { hasSubfolders } from './tree.store.js';
import { describeItem, itemNotFound, requireItemAccess, type WorkspaceContext } from './workspace-context.js';

/**
 * Deletes one item inside the caller's transaction (which holds the tree lock): it exists (404),
 * the caller has MANAGE on it (403), and a folder has no subfolders (400). A folder's workbooks
 * and reports move to the root rather than being lost (DESIGN.md, "Deleting folders").
 */
export async function deleteOne(trx: Executor, context: WorkspaceContext, type: ItemType, id: number, at: string): Promise<void> {
  const item = await findItem(trx, context.scope, type, id);
  if (!item) throw itemNotFound(context, type, id);
  const level = await requireItemAccess(trx, context, item, 'MANAGE', 'delete');
  if (item.type === 'FOLDER' && (await hasSubfolders(trx, context.scope, id))) {
    throw new ApiError(
      'FOLDER_HAS_SUBFOLDERS',
      `Cannot delete ${describeItem(item, level)} while it has subfolders; delete or move them first (list them before it in a bulk delete).`,
    );
  }
  await deleteItem(trx, context.scope, item, at);
}
