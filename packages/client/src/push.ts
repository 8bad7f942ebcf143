import {
  blobHash,
  bytesOf,
  MAX_MODEL_FILE_BYTES,
  modelFileHashes,
  modelPathProblem,
  targetQuery,
  uploadModelFile,
  type ModelFile,
  type ModelTarget,
} from './data-model.js';
import { unwrap } from './errors.js';
import type { RawClient } from './pagination.js';
import { abortReason, backoff, retryAfterMs, sleep } from './retry.js';

export interface PushProgress {
  /** Files to send: those the branch lacks or holds with other content. */
  total: number;
  /** Files sent so far. */
  done: number;
  bytesTotal: number;
  bytesSent: number;
  /** The file just sent; absent from the first call, made before anything is sent. */
  path?: string;
}

export interface PushOptions extends ModelTarget {
  /** Default true: files of the branch that are not among the pushed files are deleted by the commit. */
  autoRemoveFiles?: boolean;
  /** The commit's message; the server's default names how many files changed. */
  commitMessage?: string;
  /** Called once before the first file is sent (done 0), then after each file. */
  onProgress?: (progress: PushProgress) => void;
  /** Stops sending files; nothing is committed then. Once the finish request is sent it completes. */
  signal?: AbortSignal;
  /** Files in flight at once; default 4, 1 to 16. */
  concurrency?: number;
}

export interface PushResult {
  transactionId: string;
  deploymentName: string;
  /** The branch's head after the push's one commit (its head as it was when nothing changed). */
  lastHash: string | null;
  /** How many files the push holds: the whole project, sent or not. */
  files: number;
  /** Paths sent, in the order they were sent. */
  sent: string[];
  bytesSent: number;
  /** Files the branch already held with the same content, so not sent. */
  unchanged: number;
  /** Files of the branch missing from the push, deleted by its commit (none with autoRemoveFiles false). */
  removed: string[];
}

const DEFAULT_CONCURRENCY = 4;
const MAX_CONCURRENCY = 16;
/** Finish is sent again only after an answer that says nothing happened; this many times at most. */
const FINISH_ATTEMPTS = 4;

interface Prepared {
  path: string;
  bytes: Uint8Array;
  hash: string;
}

/** Every file checked as the server would check it, before any request, so a push fails whole or not at all. */
async function prepare(files: Iterable<ModelFile>): Promise<Prepared[]> {
  const list = [...files];
  const seen = new Set<string>();
  const tooLarge: string[] = [];
  for (const file of list) {
    const problem = modelPathProblem(file.path);
    if (problem !== null) throw new TypeError(`Cannot push ${JSON.stringify(file.path)}: ${problem}.`);
    if (seen.has(file.path)) throw new TypeError(`${JSON.stringify(file.path)} is listed twice.`);
    seen.add(file.path);
  }
  const prepared = await Promise.all(
    list.map(async (file) => {
      const bytes = bytesOf(file.content);
      if (bytes.byteLength > MAX_MODEL_FILE_BYTES) tooLarge.push(`${file.path} (${bytes.byteLength} bytes)`);
      return { path: file.path, bytes, hash: await blobHash(bytes) };
    }),
  );
  if (tooLarge.length > 0) {
    throw new RangeError(
      `${tooLarge.length === 1 ? 'A file is' : `${tooLarge.length} files are`} larger than ${MAX_MODEL_FILE_BYTES} bytes, the most a data-model file may hold: ${tooLarge.slice(0, 5).join(', ')}${tooLarge.length > 5 ? ', …' : ''}.`,
    );
  }
  return prepared.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function concurrencyOf(value: number | undefined): number {
  if (value === undefined) return DEFAULT_CONCURRENCY;
  if (!Number.isInteger(value) || value < 1 || value > MAX_CONCURRENCY)
    throw new RangeError(`concurrency must be an integer from 1 to ${MAX_CONCURRENCY}, got ${value}.`);
  return value;
}

/**
 * Runs `send` over `items`, `concurrency` at a time. The first failure cancels the requests in
 * flight and starts no more; it is thrown once every started one has settled, so nothing runs on
 * after the caller has its answer.
 */
async function sendAll<T>(
  items: readonly T[],
  concurrency: number,
  signal: AbortSignal | undefined,
  send: (item: T, signal: AbortSignal) => Promise<void>,
): Promise<void> {
  const stop = new AbortController();
  const combined = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (failure === undefined && next < items.length) {
      if (combined.aborted) {
        failure ??= { error: abortReason(signal?.aborted ? signal : combined) };
        return;
      }
      const item = items[next++] as T;
      try {
        await send(item, combined);
      } catch (error) {
        failure ??= { error: signal?.aborted ? abortReason(signal) : error };
        stop.abort();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  if (failure !== undefined) throw failure.error;
}

async function finishUpload(
  api: RawClient,
  deploymentId: number,
  target: ModelTarget,
  body: { transaction: { id: string }; files: Record<string, string>; autoRemoveFiles?: boolean; commitMessage?: string },
  signal: AbortSignal | undefined,
): Promise<string | null> {
  for (let attempt = 0; ; attempt++) {
    if (signal?.aborted) throw abortReason(signal);
    // No signal on the request itself: once sent it must be answered, or nobody could tell whether it committed.
    const answer = await api.POST('/build/api/v1/deployments/{deploymentId}/data-model/upload/finish', {
      params: { path: { deploymentId }, query: targetQuery(target) },
      body,
    });
    if (answer.response.ok) return unwrap(answer).lastHash;
    const code = (answer.error as { code?: string } | undefined)?.code;
    // A 429 is refused before any work; BRANCH_MOVED says the commit was not written and the transaction stays open.
    const nothingHappened = answer.response.status === 429 || code === 'BRANCH_MOVED';
    if (!nothingHappened || attempt + 1 >= FINISH_ATTEMPTS) unwrap(answer);
    await answer.response.body?.cancel().catch(() => undefined);
    await sleep(retryAfterMs(answer.response.headers.get('retry-after')) ?? backoff({ baseDelayMs: 250, maxDelayMs: 4000 }, attempt), signal);
  }
}

/**
 * Pushes a whole project to a branch the way the reference's CLI does (reference 2.5-2.8): reads
 * the branch's file hashes, starts an upload, sends only the files whose content differs, and
 * finishes with the hash of every file, which the server turns into one commit (deleting the
 * branch's files missing here, unless `autoRemoveFiles` is false) and one build of it.
 *
 * Sending a file is safe to repeat and is retried like a GET; the finish is sent again only when
 * the server says nothing happened (429, or 409 BRANCH_MOVED). A push stopped before the finish
 * changes nothing: the received files wait in an upload that expires.
 *
 * @example
 * const result = await mapi.dataModel.push(1, [{ path: 'model/cubes/orders.yml', content: yaml }], {
 *   onProgress: (p) => console.log(`${p.done}/${p.total} files`),
 * });
 * const build = await mapi.builds.waitFor(1, result.lastHash!);
 */
export async function pushModel(api: RawClient, deploymentId: number, files: Iterable<ModelFile>, options: PushOptions = {}): Promise<PushResult> {
  const concurrency = concurrencyOf(options.concurrency);
  const { signal } = options;
  const local = await prepare(files);
  const target: ModelTarget = {
    ...(options.branchName !== undefined ? { branchName: options.branchName } : {}),
    ...(options.useDeployProjectRoot ? { useDeployProjectRoot: true } : {}),
  };
  const remote = await modelFileHashes(api, deploymentId, target, signal);
  const changed = local.filter((file) => remote.get(file.path) !== file.hash);
  const localPaths = new Set(local.map((f) => f.path));
  const removed = options.autoRemoveFiles === false ? [] : [...remote.keys()].filter((path) => !localPaths.has(path)).sort();

  if (signal?.aborted) throw abortReason(signal);
  const started = unwrap(
    await api.POST('/build/api/v1/deployments/{deploymentId}/data-model/upload/start', {
      params: { path: { deploymentId }, query: targetQuery(target) },
      ...(signal ? { signal } : {}),
    }),
  );
  const transactionId = started.transaction.id;

  const progress: PushProgress = { total: changed.length, done: 0, bytesTotal: changed.reduce((sum, f) => sum + f.bytes.byteLength, 0), bytesSent: 0 };
  options.onProgress?.({ ...progress });
  const sent: string[] = [];
  await sendAll(changed, concurrency, signal, async (file, fileSignal) => {
    await uploadModelFile(api, deploymentId, { transaction: transactionId, path: file.path, content: file.bytes }, target, fileSignal);
    sent.push(file.path);
    progress.done++;
    progress.bytesSent += file.bytes.byteLength;
    options.onProgress?.({ ...progress, path: file.path });
  });

  const manifest: Record<string, string> = {};
  // defineProperty: a path such as "__proto__" must be an entry, not the object's prototype.
  for (const file of local) Object.defineProperty(manifest, file.path, { value: file.hash, enumerable: true, writable: true, configurable: true });
  const lastHash = await finishUpload(
    api,
    deploymentId,
    target,
    {
      transaction: { id: transactionId },
      files: manifest,
      ...(options.autoRemoveFiles === false ? { autoRemoveFiles: false } : {}),
      ...(options.commitMessage !== undefined ? { commitMessage: options.commitMessage } : {}),
    },
    signal,
  );
  return {
    transactionId,
    deploymentName: started.deploymentName,
    lastHash,
    files: local.length,
    sent,
    bytesSent: progress.bytesSent,
    unchanged: local.length - changed.length,
    removed,
  };
}
