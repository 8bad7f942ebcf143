import { formatItemRef, type ItemRef } from './items.js';
import type { Lists } from './pagination.js';

export interface SubtreePlan {
  /**
   * For each item of the batch (keyed `folder:3`), the folders of the batch above it, innermost
   * first; empty for an item no batch folder contains. Such an item travels with the first of
   * those folders that moves.
   */
  batchAncestors: Map<string, number[]>;
}

/**
 * keepSubtrees: an item inside a folder that is itself in the batch travels with that folder.
 * Sending it too would pull it out of the folder into the destination, flattening the subtree.
 * Reads happen only when the batch holds a folder.
 */
export async function planSubtrees(lists: Lists, deploymentId: number, refs: ItemRef[], signal?: AbortSignal): Promise<SubtreePlan> {
  const batchFolders = new Set(refs.filter((r) => r.type === 'FOLDER').map((r) => r.id));
  const batchAncestors = new Map<string, number[]>();
  if (batchFolders.size === 0) return { batchAncestors };

  const parentOf = new Map<number, number | null>();
  for await (const folder of lists.folders.list(deploymentId, {}, signal ? { signal } : {})) parentOf.set(folder.id, folder.parentId);
  const above = (start: number | null) => batchFoldersOnChain(start, parentOf, batchFolders);

  const needsContainers = refs.some((r) => r.type !== 'FOLDER');
  const containerOf = needsContainers
    ? await containersInSubtrees(lists, deploymentId, parentOf, (start) => above(start).length > 0, signal)
    : new Map<string, number>();

  for (const ref of refs) {
    const start = ref.type === 'FOLDER' ? (parentOf.get(ref.id) ?? null) : (containerOf.get(formatItemRef(ref)) ?? null);
    batchAncestors.set(formatItemRef(ref), above(start));
  }
  return { batchAncestors };
}

/** The batch folders on the chain from `start` up to the root, `start` included, innermost first. */
function batchFoldersOnChain(start: number | null, parentOf: Map<number, number | null>, batch: Set<number>): number[] {
  const found: number[] = [];
  // Bounded by the number of folders, so a chain read while others reshape the tree cannot loop.
  for (let folder = start, steps = 0; folder !== null && steps <= parentOf.size; steps++) {
    if (batch.has(folder)) found.push(folder);
    folder = parentOf.get(folder) ?? null;
  }
  return found;
}

/**
 * Where each workbook and report inside the batch's subtrees lives, keyed `workbook:7`. Only the
 * folders inside those subtrees are listed: items elsewhere are sent whatever their folder.
 */
async function containersInSubtrees(
  lists: Lists,
  deploymentId: number,
  parentOf: Map<number, number | null>,
  insideBatch: (start: number | null) => boolean,
  signal: AbortSignal | undefined,
): Promise<Map<string, number>> {
  const containerOf = new Map<string, number>();
  for (const folderId of parentOf.keys()) {
    if (!insideBatch(folderId)) continue;
    const entries = lists.workspace.list(deploymentId, { folderId, types: ['WORKBOOK', 'REPORT'] }, signal ? { signal } : {});
    for await (const entry of entries) containerOf.set(formatItemRef(entry), folderId);
  }
  return containerOf;
}
