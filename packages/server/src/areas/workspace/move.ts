import type { Access, Executor, ItemType } from '../../db/tables.js';
import type { Trailing } from '../../db/transactions.js';
import { ApiError } from '../../shared/problems.js';
import { containerOf, readForMove, setContainer, type StoredItem } from './items.store.js';
import { MAX_FOLDER_DEPTH, subtreeDeeperThan, type FolderChain } from './tree.store.js';
import { atLeast, describeItem, haveText, itemNotFound, itemTarget, levelOn, placeTarget, type WorkspaceContext } from './workspace-context.js';

/** What moving needs on the item: a folder or workbook is restructured, a report only edited (DESIGN.md, "Moves"). */
const NEEDED_TO_MOVE: Record<ItemType, Access> = { FOLDER: 'MANAGE', WORKBOOK: 'MANAGE', REPORT: 'EDIT' };

export interface Moved {
  item: StoredItem;
  /** Chains read inside the move's transaction: the destination's path as it was when it applied. */
  chains: Map<number, FolderChain>;
}

/**
 * One move of one item, inside the caller's transaction, which holds the deployment's tree lock.
 * The checks and their order are DESIGN.md's "Moves": the item exists (404), the destination
 * exists (404), the caller may move the item and place into the destination (403), the move is
 * valid (400). The single move and every bulk-move item run exactly this, so a bulk failure
 * carries the status and message the single move returns. What the checks read comes in one
 * statement (`readForMove`); a folder moved deeper than it is reads its subtree as well.
 */
export async function moveOne(
  trx: Executor,
  context: WorkspaceContext,
  type: ItemType,
  id: number,
  folderId: number | null,
  /** When the move happens, from the caller's clock. */
  at: string,
  /** The move is the transaction's last statement: see `Trailing`. */
  trailing?: Trailing,
): Promise<Moved> {
  const { scope } = context;
  const subject = await readForMove(trx, scope, type, id, folderId);
  if (!subject) throw itemNotFound(context, type, id);
  const { item, chains } = subject;
  const from = containerOf(item);
  const destination = folderId === null ? undefined : chains.get(folderId);
  if (folderId !== null && !destination) {
    // Access is not known yet, so the item is named by type and id only.
    throw new ApiError(
      'DESTINATION_NOT_FOUND',
      `Cannot move ${describeItem(item, null)}: destination folder ${folderId} does not exist in deployment ${scope.deploymentId}.`,
    );
  }

  const itemLevel = levelOn(context, itemTarget(context, item, chains));
  const need = NEEDED_TO_MOVE[type];
  if (!atLeast(itemLevel, need)) {
    throw new ApiError('FORBIDDEN', `You need ${need} access to move ${describeItem(item, itemLevel)}; you have ${haveText(itemLevel)}.`);
  }
  const placeLevel = levelOn(context, placeTarget(context, folderId, chains));
  if (!atLeast(placeLevel, 'EDIT')) {
    const where = destination ? `folder ${folderId}` : `deployment ${scope.deploymentId} (the workspace root)`;
    throw new ApiError('FORBIDDEN', `You need EDIT access on ${where} to move ${describeItem(item, itemLevel)} there; you have ${haveText(placeLevel)}.`);
  }

  // Already there: valid by definition; nothing is written and the item is returned as it is.
  if (from === folderId) return { item, chains };
  if (item.type === 'FOLDER') {
    const depth = from === null ? 1 : (chains.get(from)?.entries.length ?? 0) + 1;
    await checkFolderPlacement(trx, context, item, folderId, destination, depth, subject.nameTakenThere);
  }
  const moved = await setContainer(trx, scope, item, folderId, at, trailing);
  return { item: moved, chains };
}

/** The 400s of a folder move: not into itself or below, within the depth limit, no sibling of the same name. */
async function checkFolderPlacement(
  trx: Executor,
  context: WorkspaceContext,
  item: StoredItem & { type: 'FOLDER' },
  folderId: number | null,
  destination: FolderChain | undefined,
  /** Where the folder is now: a top-level folder is at depth 1. */
  depth: number,
  /** Another folder in `folderId` has this folder's name (read with the item). */
  nameTaken: boolean,
): Promise<void> {
  const { scope } = context;
  const name = describeItem(item, 'VIEW');
  const into = folderId === null ? 'the workspace root' : `folder ${folderId}`;
  if (destination) {
    if (folderId === item.row.id) throw new ApiError('INVALID_MOVE', `Cannot move ${name} into itself.`);
    if (destination.entries.some((e) => e.id === item.row.id)) {
      throw new ApiError('INVALID_MOVE', `Cannot move ${name} into ${into}, which is inside it.`);
    }
    // The subtree keeps its shape, so it fits if its height fits below the destination. It fits
    // where it is, so a move that takes it no deeper needs no look inside it; a deeper one reads
    // its subfolders down to the limit, and still writes only the folder's own row.
    const room = MAX_FOLDER_DEPTH - destination.entries.length;
    if (destination.entries.length + 1 > depth && (await subtreeDeeperThan(trx, scope, item.row.id, room))) {
      throw new ApiError('FOLDER_TOO_DEEP', `Cannot move ${name} into ${into}: its folders would nest deeper than ${MAX_FOLDER_DEPTH} levels.`);
    }
  }
  if (nameTaken) {
    throw new ApiError('FOLDER_NAME_CONFLICT', `Cannot move ${name} into ${into}: it already holds a folder named "${item.row.name}".`);
  }
}
