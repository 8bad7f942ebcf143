import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { DeploymentRow } from '../../db/tables.js';
import { blobSha } from '../../git/objects.js';
import { RefMovedError, type Repository, type TreeEntry } from '../../git/repository.js';
import { decodeCursor, encodeCursor, pageRequest } from '../../shared/pagination.js';
import { ApiError } from '../../shared/problems.js';
import type { PageInfo } from '../../shared/schemas.js';
import { authorizeDeployment } from '../deployments/index.js';
import { authorOf } from './authors.js';
import { branchFiles, draftRef, isPersonalBranch, writableBranch } from './branch-targets.js';
import { findSession } from './branches.store.js';
import type { HashesInput, RemoveFilesInput, RenameFilesInput, TreeInput, UpdateFilesInput } from './data-model.schemas.js';
import { MAX_FILE_BYTES } from './data-model.schemas.js';
import type { DeploymentRepositories } from './deployment-repositories.js';
import { compareNodes, filesIn, nest, type TreeNode } from './file-tree.js';
import { normalizeModelPath } from '../../shared/model-paths.js';
import { lastUploadCommit } from './uploads.store.js';

/** A change to the pending files of a dev branch: new content, or null to delete. */
type Edits = Map<string, string | Buffer | null>;

/**
 * The branch a read targets when none is named: the credential's active branch (its dev-mode
 * branch, with pending changes), else the deploy branch.
 */
async function readTarget(store: Store, caller: Caller, row: DeploymentRow, named: string | undefined): Promise<string> {
  if (named !== undefined) return named;
  return (await findSession(store.db, row.id, caller.actor.keyId))?.branch_name ?? row.deploy_branch_name;
}

function tooLarge(path: string, bytes: number): ApiError {
  return new ApiError('PAYLOAD_TOO_LARGE', `File ${JSON.stringify(path)} is ${bytes} bytes; a data-model file may hold at most ${MAX_FILE_BYTES} bytes.`);
}

/** Refuses a request naming one path twice, as one write could not say which edit wins. */
function once(paths: readonly string[], field: string): void {
  const seen = new Set<string>();
  paths.forEach((path, i) => {
    if (seen.has(path))
      throw new ApiError('VALIDATION_FAILED', `Path ${JSON.stringify(path)} appears twice in the request.`, {
        errors: [{ pointer: `/body/files/${i}/${field}`, message: 'appears twice' }],
      });
    seen.add(path);
  });
}

/** A file cannot sit where a directory is, nor below a file: git's tree would have to lose one. */
function checkPlacement(files: ReadonlyMap<string, TreeEntry>, edits: Edits): void {
  const after = new Set([...files.keys()].filter((p) => edits.get(p) !== null));
  for (const [path, content] of edits) if (content !== null) after.add(path);
  const directories = new Set<string>();
  for (const path of after) for (let at = path.indexOf('/'); at !== -1; at = path.indexOf('/', at + 1)) directories.add(path.slice(0, at));
  for (const [path, content] of edits) {
    if (content === null) continue;
    if (directories.has(path)) throw new ApiError('VALIDATION_FAILED', `${JSON.stringify(path)} is a directory on the branch; a file cannot take its place.`);
    for (const dir of directories)
      if (dir.length < path.length && after.has(dir) && path.startsWith(`${dir}/`))
        throw new ApiError('VALIDATION_FAILED', `${JSON.stringify(dir)} is a file on the branch, so ${JSON.stringify(path)} cannot be below it.`);
  }
}

export function filesService(store: Store, repositories: DeploymentRepositories) {
  /**
   * Applies edits to the pending changes of the caller's dev-mode branch, as one more commit on
   * its draft ref; they become a commit of the branch with POST …/commit. `plan` sees the files
   * as they are with the pending changes, inside the repository's lock.
   */
  async function edit(
    caller: Caller,
    deploymentId: number,
    target: { branchId?: number | null; branchName?: string | null },
    plan: (files: Map<string, TreeEntry>, repo: Repository) => Edits | Promise<Edits>,
  ): Promise<{ success: boolean }> {
    const { row } = await authorizeDeployment(store.db, caller, deploymentId, 'SchemaUpdate');
    const branch = await writableBranch(store.db, caller, row, target);
    const author = await authorOf(store.db, caller.actor);
    await repositories.write(row, async (repo) => {
      const head = await repo.head(branch.name);
      if (head === null) throw new ApiError('BRANCH_NOT_FOUND', `Branch ${JSON.stringify(branch.name)} no longer exists.`);
      const draft = await repo.resolve(draftRef(branch.name));
      const files = new Map((await repo.tree(draft ?? head)).map((e) => [e.path, e]));
      const edits = await plan(files, repo);
      // Writing what is already there changes nothing.
      for (const [path, content] of edits) if (content !== null && files.get(path)?.sha === blobSha(content)) edits.delete(path);
      if (edits.size === 0) return;
      checkPlacement(files, edits);
      try {
        await repo.commit({
          ref: draftRef(branch.name),
          expectedHead: draft,
          parent: draft ?? head,
          changes: edits,
          author,
          message: 'Pending dev-mode changes',
        });
      } catch (error) {
        if (error instanceof RefMovedError)
          throw new ApiError(
            'BRANCH_MOVED',
            `The pending changes of ${branch.name} changed while this request was written; nothing was changed. Send it again.`,
          );
        throw error;
      }
    });
    return { success: true };
  }

  return {
    /** Reference 2.1: the tree of a branch; `first`/`after` page through the top-level nodes only. */
    async tree(caller: Caller, deploymentId: number, input: TreeInput): Promise<{ items: TreeNode[]; data: TreeNode[]; pageInfo: PageInfo }> {
      const { row } = await authorizeDeployment(store.db, caller, deploymentId, 'SchemaRead');
      const repo = await repositories.open(row);
      let files: TreeEntry[];
      if (input.showLastCLIUpload) {
        const uploaded = await lastUploadCommit(store.db, row.id);
        files = uploaded === null ? [] : await repo.tree(uploaded);
      } else {
        const branch = await readTarget(store, caller, row, input.branchName);
        files = (await branchFiles(repo, row.id, branch, isPersonalBranch(branch))).files;
      }
      const all = nest(files);
      const whole = input.first === undefined && input.after === undefined;
      const page = pageRequest(input);
      let start = 0;
      if (page.after !== undefined) {
        const [type, name] = decodeCursor(page.after, 2);
        if ((type !== 'directory' && type !== 'file') || typeof name !== 'string')
          throw new ApiError('INVALID_CURSOR', 'The `after` cursor was not issued by this tree.');
        start = all.findIndex((node) => compareNodes(node, { type, name }) > 0);
        if (start === -1) start = all.length;
      }
      const items = whole ? all : all.slice(start, start + page.first);
      if (input.withContent) await withContent(repo, items);
      const first = items[0];
      const last = items[items.length - 1];
      return {
        items,
        data: items,
        pageInfo: {
          startCursor: first ? encodeCursor([first.type, first.name]) : null,
          endCursor: last ? encodeCursor([last.type, last.name]) : null,
          hasNextPage: !whole && start + items.length < all.length,
          hasPreviousPage: start > 0,
        },
      };
    },

    /** Reference 2.5: git's blob SHA-1 of every committed file of the branch (with `live`, of its pending state). */
    async hashes(caller: Caller, deploymentId: number, input: HashesInput): Promise<Record<string, { hash: string }>> {
      const { row } = await authorizeDeployment(store.db, caller, deploymentId, 'SchemaRead');
      const repo = await repositories.open(row);
      const branch = input.branchName ?? (await uploadTarget(store, caller, row));
      const { files } = await branchFiles(repo, row.id, branch, input.live === true);
      const root = input.useDeployProjectRoot && row.deploy_project_root !== '' ? `${row.deploy_project_root}/` : '';
      const result: Record<string, { hash: string }> = {};
      for (const file of files) {
        if (!file.path.startsWith(root)) continue;
        Object.defineProperty(result, file.path.slice(root.length), { value: { hash: file.sha }, enumerable: true });
      }
      return result;
    },

    async write(caller: Caller, deploymentId: number, input: UpdateFilesInput) {
      const paths = input.files.map((f, i) => normalizeModelPath(f.path, `/body/files/${i}/path`));
      once(paths, 'path');
      input.files.forEach((f, i) => {
        const bytes = Buffer.byteLength(f.content, 'utf8');
        if (bytes > MAX_FILE_BYTES) throw tooLarge(paths[i] ?? '', bytes);
      });
      return edit(caller, deploymentId, input, () => new Map(input.files.map((f, i) => [paths[i] ?? '', f.content])));
    },

    async remove(caller: Caller, deploymentId: number, input: RemoveFilesInput) {
      const paths = input.files.map((f, i) => normalizeModelPath(f.path, `/body/files/${i}/path`));
      once(paths, 'path');
      return edit(caller, deploymentId, input, (files) => {
        const missing = paths.find((p) => !files.has(p));
        if (missing !== undefined) throw new ApiError('FILE_NOT_FOUND', `There is no file ${JSON.stringify(missing)} on the branch; nothing was deleted.`);
        return new Map(paths.map((p) => [p, null]));
      });
    },

    async rename(caller: Caller, deploymentId: number, input: RenameFilesInput) {
      const from = input.files.map((f, i) => normalizeModelPath(f.path, `/body/files/${i}/path`));
      const to = input.files.map((f, i) => normalizeModelPath(f.newPath, `/body/files/${i}/newPath`));
      once(from, 'path');
      once(to, 'newPath');
      return edit(caller, deploymentId, input, async (files, repo) => {
        const moving = new Set(from);
        const sources = from.map((path) => {
          const file = files.get(path);
          if (!file) throw new ApiError('FILE_NOT_FOUND', `There is no file ${JSON.stringify(path)} on the branch; nothing was renamed.`);
          return file;
        });
        for (const target of to) {
          if (files.has(target) && !moving.has(target))
            throw new ApiError('FILE_EXISTS', `${JSON.stringify(target)} already exists on the branch; nothing was renamed.`);
        }
        const blobs = await repo.blobs(sources.map((f) => f.sha));
        const edits: Edits = new Map(from.map((path) => [path, null]));
        // Targets last: a swap (a -> b, b -> a) keeps both files.
        sources.forEach((file, i) => edits.set(to[i] ?? '', blobs.get(file.sha) ?? Buffer.alloc(0)));
        return edits;
      });
    },
  };
}
export type FilesService = ReturnType<typeof filesService>;

/** Where an upload lands, and so whose hashes a client compares against (reference 2.8): the active dev branch, else the deploy branch. */
export async function uploadTarget(store: Store, caller: Caller, row: DeploymentRow): Promise<string> {
  const active = (await findSession(store.db, row.id, caller.actor.keyId))?.branch_name;
  return active !== undefined && isPersonalBranch(active) ? active : row.deploy_branch_name;
}

async function withContent(repo: Repository, nodes: TreeNode[]): Promise<void> {
  const files = [...filesIn(nodes)];
  const blobs = await repo.blobs(files.map((f) => f.hash));
  for (const file of files) file.content = blobs.get(file.hash)?.toString('utf8') ?? '';
}
