import { formatItemRef, type ItemRef } from './items.js';
import type { Lists } from './pagination.js';
import type { SkippedItem } from './bulk.js';

export interface SubtreePlan {
  /** What to send, in the batch's order. */
  send: ItemRef[];
  skipped: SkippedItem[];
}

/**
 * keepSubtrees: an item inside a folder that is itself in the batch travels with that folder.
 * Sending it too would pull it out of the folder into the destination, flattening the subtree.
 * Reads happen only when the batch holds a folder.
 */
export async function planSubtrees(lists: Lists, deploymentId: number, refs: ItemRef[], signal?: AbortSignal): Promise<SubtreePlan> {
  const batchFolders = new Set(refs.filter((r) => r.type === 'FOLDER').map((r) => r.id));
  if (batchFolders.size === 0) return { send: refs, skipped: [] };

  const parentOf = new Map<number, number | null>();
  for await (const folder of lists.folders.list(deploymentId, {}, signal ? { signal } : {})) parentOf.set(folder.id, folder.parentId);
  const outermost = (start: number | null) => outermostBatchFolder(start, parentOf, batchFolders);

  const needsContainers = refs.some((r) => r.type !== 'FOLDER');
  const containerOf = needsContainers ? await containersInSubtrees(lists, deploymentId, parentOf, outermost, signal) : new Map<string, number>();

  const send: ItemRef[] = [];
  const skipped: SkippedItem[] = [];
  for (const ref of refs) {
    const start = ref.type === 'FOLDER' ? (parentOf.get(ref.id) ?? null) : (containerOf.get(formatItemRef(ref)) ?? null);
    const carrier = outermost(start);
    if (carrier === undefined) send.push(ref);
    else skipped.push({ type: ref.type, id: ref.id, ancestorFolderId: carrier });
  }
  return { send, skipped };
}

/** The outermost batch folder on the chain from `start` up to the root, `start` included. */
function outermostBatchFolder(start: number | null, parentOf: Map<number, number | null>, batch: Set<number>): number | undefined {
  let found: number | undefined;
  // Bounded by the number of folders, so a chain read while others reshape the tree cannot loop.
  for (let folder = start, steps = 0; folder !== null && steps <= parentOf.size; steps++) {
    if (batch.has(folder)) found = folder;
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
  outermost: (start: number | null) => number | undefined,
  signal: AbortSignal | undefined,
): Promise<Map<string, number>> {
  const containerOf = new Map<string, number>();
  for (const folderId of parentOf.keys()) {
    if (outermost(folderId) === undefined) continue;
    const entries = lists.workspace.list(deploymentId, { folderId, types: ['WORKBOOK', 'REPORT'] }, signal ? { signal } : {});
    for await (const entry of entries) containerOf.set(formatItemRef(entry), folderId);
  }
  return containerOf;
}
