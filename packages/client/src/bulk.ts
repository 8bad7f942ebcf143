import { unwrap } from './errors.js';
import { distinctRefs, type ItemRef, type ItemType } from './items.js';
import type { Lists, RawClient } from './pagination.js';
import { abortReason } from './retry.js';
import { planSubtrees } from './subtrees.js';
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
  /** Items left out by keepSubtrees; fixed before the first request. */
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
 * and reported; `pending` was never sent; `unconfirmed` is the chunk whose request failed, which
 * the server may or may not have applied in part (empty when aborted).
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

/**
 * Sends `refs` in order, `size` at a time, one request after another: the server applies items
 * in order, so a later chunk may depend on an earlier one (a folder moved before its contents).
 * `send` folds the server's answer into `result` and returns how many items it applied.
 */
async function runChunks<R extends Tally>(refs: ItemRef[], options: BulkOptions, result: R, skipped: number, send: (chunk: ItemRef[]) => Promise<number>, isDelete: boolean): Promise<R> {
  const size = chunkSizeOf(options.chunkSize);
  let done = 0;
  let applied = 0;
  const report = () => {
    const p: BulkProgress = { total: refs.length, done, moved: applied, failed: result.failed.length, skipped, requests: result.requests };
    options.onProgress?.(isDelete ? { ...p, deleted: applied } : p);
  };
  report();
  for (let start = 0; start < refs.length; start += size) {
    const { signal } = options;
    if (signal?.aborted) throw new BulkInterruptedError(result, refs.slice(start), [], abortReason(signal), true);
    const chunk = refs.slice(start, start + size);
    try {
      applied += await send(chunk);
    } catch (error) {
      throw new BulkInterruptedError(result, refs.slice(start + size), chunk, error, false);
    }
    done += chunk.length;
    result.requests++;
    report();
  }
  return result;
}

export async function bulkMove(api: RawClient, lists: Lists, deploymentId: number, items: Iterable<ItemRef>, folderId: number | null, options: BulkMoveOptions = {}): Promise<BulkMoveResult> {
  chunkSizeOf(options.chunkSize);
  const refs = distinctRefs(items);
  const result: BulkMoveResult = { moved: [], failed: [], skipped: [], requests: 0 };
  let toSend = refs;
  if (options.keepSubtrees) {
    try {
      const plan = await planSubtrees(lists, deploymentId, refs, options.signal);
      toSend = plan.send;
      result.skipped = plan.skipped;
    } catch (error) {
      const aborted = options.signal?.aborted === true;
      throw new BulkInterruptedError(result, refs, [], aborted ? abortReason(options.signal as AbortSignal) : error, aborted);
    }
  }
  return runChunks(toSend, options, result, result.skipped.length, async (chunk) => {
    // The signal is not passed on: a request in flight must complete, or we could not say what it applied.
    const data = unwrap(await api.POST('/api/v1/deployments/{deploymentId}/workspace/bulk-move', { params: { path: { deploymentId } }, body: { items: chunk, folderId } }));
    result.moved.push(...data.moved);
    result.failed.push(...data.failed);
    return data.moved.length;
  }, false);
}

export async function bulkDelete(api: RawClient, deploymentId: number, items: Iterable<ItemRef>, options: BulkOptions = {}): Promise<BulkDeleteResult> {
  chunkSizeOf(options.chunkSize);
  const refs = distinctRefs(items);
  const result: BulkDeleteResult = { deleted: [], failed: [], requests: 0 };
  return runChunks(refs, options, result, 0, async (chunk) => {
    const data = unwrap(await api.POST('/api/v1/deployments/{deploymentId}/workspace/bulk-delete', { params: { path: { deploymentId } }, body: { items: chunk } }));
    result.deleted.push(...data.deleted);
    result.failed.push(...data.failed);
    return data.deleted.length;
  }, true);
}
