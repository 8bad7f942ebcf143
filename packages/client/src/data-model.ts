import { unwrap } from './errors.js';
import type { RawClient } from './pagination.js';

/** The largest data-model file the server accepts (413 beyond it). */
export const MAX_MODEL_FILE_BYTES = 1024 * 1024;

/** Where an upload, a hash listing or a push lands: a branch, and whether paths are relative to `deployProjectRoot`. */
export interface ModelTarget {
  /** Default: the caller's active dev-mode branch, else the deploy branch. */
  branchName?: string;
  /** Paths are relative to the deployment's `deployProjectRoot`; only files below it are compared and pruned. */
  useDeployProjectRoot?: boolean;
}

/** A local file to push: its project-relative path with forward slashes, and its bytes (a string is sent as UTF-8). */
export interface ModelFile {
  path: string;
  content: Uint8Array | string;
}

/** A file of a branch as the tree lists it; `content` (UTF-8 text) only when asked for. */
export interface RemoteModelFile {
  path: string;
  size: number;
  /** Git's blob SHA-1 of the content. */
  hash: string;
  content?: string;
}

export interface ModelFilesQuery {
  /** Default: the caller's active branch (its dev-mode branch, with pending changes), else the deploy branch. */
  branchName?: string;
  withContent?: boolean;
}

const encoder = new TextEncoder();

export function bytesOf(content: Uint8Array | string): Uint8Array {
  return typeof content === 'string' ? encoder.encode(content) : content;
}

/**
 * Git's blob id of `content`: the SHA-1 of `blob <byte length>\0` followed by the bytes, which is
 * what `git hash-object` prints and what the server's `file-hashes` lists. WebCrypto, so the same
 * function runs in Node 20+ and in browsers (secure contexts).
 *
 * @example
 * await blobHash('hello\n'); // 'ce013625030ba8dba906f756967f9e9ca394464a'
 */
export async function blobHash(content: Uint8Array | string): Promise<string> {
  const bytes = bytesOf(content);
  const header = encoder.encode(`blob ${bytes.byteLength}\0`);
  const object = new Uint8Array(header.byteLength + bytes.byteLength);
  object.set(header, 0);
  object.set(bytes, header.byteLength);
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-1', object));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** The query every upload call carries, without the keys left unset. */
export function targetQuery(target: ModelTarget): { branchName?: string; useDeployProjectRoot?: boolean } {
  return {
    ...(target.branchName !== undefined ? { branchName: target.branchName } : {}),
    ...(target.useDeployProjectRoot ? { useDeployProjectRoot: true } : {}),
  };
}

/** Path → blob hash of every file of the target branch (reference 2.5), as a Map so no path can clash with an object's own keys. */
export async function modelFileHashes(api: RawClient, deploymentId: number, target: ModelTarget = {}, signal?: AbortSignal): Promise<Map<string, string>> {
  const hashes = unwrap(
    await api.GET('/build/api/v1/deployments/{deploymentId}/data-model/file-hashes', {
      params: { path: { deploymentId }, query: targetQuery(target) },
      ...(signal ? { signal } : {}),
    }),
  );
  return new Map(Object.entries(hashes).map(([path, { hash }]) => [path, hash]));
}

interface TreeNodeShape {
  type: string;
  path: string;
  children?: unknown;
  size?: unknown;
  hash?: unknown;
  content?: unknown;
}

function* filesOf(nodes: readonly TreeNodeShape[]): Generator<RemoteModelFile> {
  for (const node of nodes) {
    if (node.type === 'directory' && Array.isArray(node.children)) yield* filesOf(node.children as TreeNodeShape[]);
    else if (node.type === 'file') {
      yield {
        path: node.path,
        size: typeof node.size === 'number' ? node.size : 0,
        hash: typeof node.hash === 'string' ? node.hash : '',
        ...(typeof node.content === 'string' ? { content: node.content } : {}),
      };
    }
  }
}

/** Every file of a branch, flattened from the tree (reference 2.1) in one request, directories' files first as the tree orders them. */
export async function listModelFiles(api: RawClient, deploymentId: number, query: ModelFilesQuery = {}, signal?: AbortSignal): Promise<RemoteModelFile[]> {
  // No `first`: the server then answers with the whole tree at once.
  const tree = unwrap(
    await api.GET('/build/api/v1/deployments/{deploymentId}/data-model/files', {
      params: {
        path: { deploymentId },
        query: { ...(query.branchName !== undefined ? { branchName: query.branchName } : {}), ...(query.withContent ? { withContent: true } : {}) },
      },
      ...(signal ? { signal } : {}),
    }),
  );
  return [...filesOf(tree.items)];
}

export interface UploadFileInput {
  /** The upload transaction's id, from `upload/start`. */
  transaction: string;
  /** Project-relative path with forward slashes. */
  path: string;
  content: Uint8Array | string;
}

/**
 * Sends one file into an open upload transaction (reference 2.7) as multipart/form-data, the
 * fields `transaction` and `fileName` before the `file` part. Safe to repeat (the same path sent
 * again replaces the earlier one), so the client retries it like a GET.
 */
export async function uploadModelFile(
  api: RawClient,
  deploymentId: number,
  input: UploadFileInput,
  target: ModelTarget = {},
  signal?: AbortSignal,
): Promise<void> {
  const form = new FormData();
  form.append('transaction', input.transaction);
  form.append('fileName', input.path);
  const bytes = bytesOf(input.content);
  // A copy into a plain ArrayBuffer: a view over a SharedArrayBuffer is not a valid Blob part.
  form.append('file', new Blob([bytes.slice().buffer as ArrayBuffer]), input.path.slice(input.path.lastIndexOf('/') + 1));
  unwrap(
    await api.POST('/build/api/v1/deployments/{deploymentId}/data-model/upload/file', {
      params: { path: { deploymentId }, query: targetQuery(target) },
      // The document declares the multipart fields (reference 2.7); openapi-fetch sends FormData as is, with its boundary.
      body: form as never,
      ...(signal ? { signal } : {}),
    }),
  );
}

/** Why a path cannot be pushed, as the server would refuse it; null when it is fine. */
export function modelPathProblem(path: string): string | null {
  if (path === '') return 'it is empty';
  if (path.includes('\\')) return 'it holds a backslash; use / between directories';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'it holds a control character';
  if (path.startsWith('/')) return 'it is absolute';
  const segments = path.split('/');
  if (segments.some((s) => s === '')) return 'it has an empty segment';
  if (segments.some((s) => s === '.' || s === '..')) return 'it has a . or .. segment';
  if (segments.some((s) => s.toLowerCase() === '.git')) return 'it points into .git';
  return null;
}
