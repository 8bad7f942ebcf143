import { ApiError, unwrap } from './errors.js';
import { distinctRefs, formatItemRef, type ItemRef, type ItemType } from './items.js';
import type { Lists, RawClient } from './pagination.js';
import { abortReason, followsUncertainAttempt } from './retry.js';
import { planSubtrees, type SubtreePlan } from './subtrees.js';
import type { DeletedItem, Workbook, WorkspaceBulkFailure } from './types.js';

/** The server's limit per bulk request. */
export const MAX_CHUNK_SIZE = 100;

export interface BulkProgress {
  /** Items that will be sent: distinct, less those skipped. */
  total: number;
  /** Items the server has answered for so far (applied or failed). */
  done: number;
  /** Items applied so far: moved by bulkMove, deleted by bulkDelete (which reports them as `deleted` too). */
  moved: number;
  deleted?: number;
  failed: number;
  /** Items held back by keepSubtrees: travelled with a moved folder, or waiting for theirs to be sent. */
  skipped: number;
  requests: number;
}

export interface BulkOptions {
  /** Items per request; default and maximum 100. */
  chunkSize?: number;
  /** Called once before the first request (done 0) and after every request. */
  onProgress?: (progress: BulkProgress) => void;
  /** Checked between requests: a request in flight completes, so the record stays exact. */
  signal?: AbortSignal;
}

export interface BulkMoveOptions extends BulkOptions {
  /** Leave out items whose ancestor folder is also in the batch: they travel with it, and are reported in `skipped`. */
  keepSubtrees?: boolean;
}

export interface SkippedItem {
  type: ItemType;
  id: number;
  /** The outermost folder of the batch that contains the item, the one that is moved. */
  ancestorFolderId: number;
}

export interface BulkMoveResult {
  moved: Workbook[];
  failed: WorkspaceBulkFailure[];
  skipped: SkippedItem[];
  requests: number;
}

export interface BulkDeleteResult {
  deleted: DeletedItem[];
  failed: WorkspaceBulkFailure[];
  requests: number;
}

/**
 * A bulk job that stopped before the end: aborted through its signal (name `AbortError`), or a
 * request failed after its retries (`cause` is that error). `result` is what the server applied
 * and reported; `pending` was never applied (not sent, or refused whole with a 4xx);
 * `unconfirmed` is the chunk of a request that failed with a 5xx or at the network level, which
 * the server may have applied in part (empty when aborted). Moving is safe to repeat, so a
 * caller may send `unconfirmed` and `pending` again (with keepSubtrees again when the job used it:
 * `pending` may hold the contents of a folder in `unconfirmed`).
 */
export class BulkInterruptedError<R = BulkMoveResult | BulkDeleteResult> extends Error {
  override name: string;
  constructor(
    readonly result: R,
    readonly pending: ItemRef[],
    readonly unconfirmed: ItemRef[],
    override readonly cause: unknown,
    aborted: boolean,
  ) {
    super(interruptionMessage(pending, unconfirmed, cause, aborted), { cause });
    this.name = aborted ? 'AbortError' : 'BulkInterruptedError';
  }
}

function interruptionMessage(pending: ItemRef[], unconfirmed: ItemRef[], cause: unknown, aborted: boolean): string {
  const left = `${pending.length} item(s) not sent`;
  if (aborted) return `Bulk operation aborted; ${left}.`;
  const why = cause instanceof Error ? cause.message : String(cause);
  return `Bulk operation stopped by a failed request (${why}); ${unconfirmed.length} item(s) in that request unconfirmed, ${left}.`;
}

function chunkSizeOf(size: number | undefined): number {
  if (size === undefined) return MAX_CHUNK_SIZE;
  if (!Number.isInteger(size) || size < 1 || size > MAX_CHUNK_SIZE) {
    throw new RangeError(`chunkSize must be an integer from 1 to ${MAX_CHUNK_SIZE}, got ${size}.`);
  }
  return size;
}

interface Tally {
  failed: WorkspaceBulkFailure[];
  requests: number;
}

/** Counters a job reports through onProgress; shared by the rounds of a keepSubtrees move. */
interface Counters {
  total: number;
  done: number;
  applied: number;
  skipped: number;
}

/**
 * Request-level refusals (4xx, 429 included) are decided before any item is applied, so their
 * chunk is simply not sent; after a 5xx or a network failure the server may have applied part of it.
 */
function refusedWhole(error: unknown): boolean {
  return error instanceof ApiError && error.status < 500 && !afterUncertainAttempt.has(error);
}

/** Errors whose request was retried after an attempt that may have been applied (see retry.ts). */
const afterUncertainAttempt = new WeakSet<object>();

/** unwrap, remembering when a refusal followed an attempt the server may have applied. */
function unwrapBulk<R extends { data?: unknown; error?: unknown; response: Response }>(answer: R): ReturnType<typeof unwrap<R>> {
  try {
    return unwrap(answer);
  } catch (error) {
    if (typeof error === 'object' && error !== null && followsUncertainAttempt(answer.response)) afterUncertainAttempt.add(error);
    throw error;
  }
}

/**
 * Sends `refs` in order, `size` at a time, one request after another: the server applies items
 * in order, so a later chunk may depend on an earlier one (a folder moved before its contents).
 * `send` folds the server's answer into `result` and returns how many items it applied; `later`
 * names items not in `refs` that would still have been sent, for the record of an interruption.
 */
async function runChunks<R extends Tally>(
  refs: ItemRef[],
  options: BulkOptions,
  result: R,
  counters: Counters,
  send: (chunk: ItemRef[]) => Promise<number>,
  isDelete: boolean,
  later: () => ItemRef[] = () => [],
): Promise<void> {
  const size = chunkSizeOf(options.chunkSize);
  const report = () => {
    const p: BulkProgress = {
      total: counters.total,
      done: counters.done,
      moved: counters.applied,
      failed: result.failed.length,
      skipped: counters.skipped,
      requests: result.requests,
    };
    options.onProgress?.(isDelete ? { ...p, deleted: counters.applied } : p);
  };
  if (counters.done === 0 && result.requests === 0) report();
  for (let start = 0; start < refs.length; start += size) {
    const { signal } = options;
    if (signal?.aborted) throw new BulkInterruptedError(result, [...refs.slice(start), ...later()], [], abortReason(signal), true);
    const chunk = refs.slice(start, start + size);
    try {
      counters.applied += await send(chunk);
    } catch (error) {
      const rest = [...refs.slice(start + size), ...later()];
      if (refusedWhole(error)) throw new BulkInterruptedError(result, [...chunk, ...rest], [], error, false);
      throw new BulkInterruptedError(result, rest, chunk, error, false);
    }
    counters.done += chunk.length;
    result.requests++;
    report();
  }
}

export async function bulkMove(
  api: RawClient,
  lists: Lists,
  deploymentId: number,
  items: Iterable<ItemRef>,
  folderId: number | null,
  options: BulkMoveOptions = {},
): Promise<BulkMoveResult> {
  chunkSizeOf(options.chunkSize);
  const refs = distinctRefs(items);
  const result: BulkMoveResult = { moved: [], failed: [], skipped: [], requests: 0 };
  const movedFolders = new Set<number>();
  const send = async (chunk: ItemRef[]) => {
    // The signal is not passed on: a request in flight must complete, or we could not say what it applied.
    const data = unwrapBulk(
      await api.POST('/api/v1/deployments/{deploymentId}/workspace/bulk-move', { params: { path: { deploymentId } }, body: { items: chunk, folderId } }),
    );
    result.moved.push(...data.moved);
    result.failed.push(...data.failed);
    for (const item of data.moved) if (item.type === 'FOLDER') movedFolders.add(item.id);
    return data.moved.length;
  };
  if (!options.keepSubtrees) {
    await runChunks(refs, options, result, { total: refs.length, done: 0, applied: 0, skipped: 0 }, send, false);
    return result;
  }
  let plan: SubtreePlan;
  try {
    plan = await planSubtrees(lists, deploymentId, refs, options.signal);
  } catch (error) {
    const aborted = options.signal?.aborted === true;
    throw new BulkInterruptedError(result, refs, [], aborted ? abortReason(options.signal as AbortSignal) : error, aborted);
  }
  await moveKeepingSubtrees(refs, plan, movedFolders, result, options, send);
  return result;
}

/**
 * keepSubtrees in rounds. First the items no batch folder contains; the others wait for their
 * folders. An item whose folder moved travelled with it and is reported in `skipped`. An item
 * whose batch folders were all sent and none moved (refused, say) is sent itself in the next
 * round, as it would have been without the option, so nothing the caller listed is silently left
 * behind. Each round is in the batch's order; `total` grows when a round is added.
 */
async function moveKeepingSubtrees(
  refs: ItemRef[],
  plan: SubtreePlan,
  movedFolders: Set<number>,
  result: BulkMoveResult,
  options: BulkMoveOptions,
  send: (chunk: ItemRef[]) => Promise<number>,
): Promise<void> {
  const ancestorsOf = (ref: ItemRef) => plan.batchAncestors.get(formatItemRef(ref)) ?? [];
  const sentFolders = new Set<number>();
  let round = refs.filter((r) => ancestorsOf(r).length === 0);
  let waiting = refs.filter((r) => ancestorsOf(r).length > 0);
  // Only a folder list read while others reshaped the tree (a cycle in the snapshot) can leave
  // items waiting on folders that will never be sent: they are sent rather than lost.
  const unlessStuck = (next: ItemRef[], still: ItemRef[]): [ItemRef[], ItemRef[]] => (next.length === 0 && still.length > 0 ? [still, []] : [next, still]);
  [round, waiting] = unlessStuck(round, waiting);
  const counters: Counters = { total: round.length, done: 0, applied: 0, skipped: waiting.length };

  /** Moves items whose folder has moved into `skipped`; returns those still to be decided. */
  const settle = (): ItemRef[] => {
    const undecided: ItemRef[] = [];
    for (const ref of waiting) {
      // Outermost first: the folder actually moved into the destination is the one to name.
      const carrier = [...ancestorsOf(ref)].reverse().find((id) => movedFolders.has(id));
      if (carrier === undefined) undecided.push(ref);
      else result.skipped.push({ type: ref.type, id: ref.id, ancestorFolderId: carrier });
    }
    waiting = undecided;
    return undecided;
  };

  try {
    while (round.length > 0) {
      await runChunks(round, options, result, counters, send, false, settle);
      for (const ref of round) if (ref.type === 'FOLDER') sentFolders.add(ref.id);
      const ready: ItemRef[] = [];
      const blocked: ItemRef[] = [];
      for (const ref of settle()) (ancestorsOf(ref).every((id) => sentFolders.has(id)) ? ready : blocked).push(ref);
      [round, waiting] = unlessStuck(ready, blocked);
      counters.total += round.length;
      counters.skipped = result.skipped.length + waiting.length;
    }
  } finally {
    // Keeps `skipped` in the batch's order whatever round settled each item, interrupted or not.
    const position = new Map(refs.map((r, i) => [formatItemRef(r), i]));
    result.skipped.sort((a, b) => (position.get(formatItemRef(a)) ?? 0) - (position.get(formatItemRef(b)) ?? 0));
  }
}

export async function bulkDelete(api: RawClient, deploymentId: number, items: Iterable<ItemRef>, options: BulkOptions = {}): Promise<BulkDeleteResult> {
  chunkSizeOf(options.chunkSize);
  const refs = distinctRefs(items);
  const result: BulkDeleteResult = { deleted: [], failed: [], requests: 0 };
  await runChunks(
    refs,
    options,
    result,
    { total: refs.length, done: 0, applied: 0, skipped: 0 },
    async (chunk) => {
      const data = unwrapBulk(
        await api.POST('/api/v1/deployments/{deploymentId}/workspace/bulk-delete', { params: { path: { deploymentId } }, body: { items: chunk } }),
      );
      result.deleted.push(...data.deleted);
      result.failed.push(...data.failed);
      return data.deleted.length;
    },
    true,
  );
  return result;
}
