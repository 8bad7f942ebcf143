import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { DeploymentRow, UploadRow } from '../../db/tables.js';
import { blobSha } from '../../git/objects.js';
import { RefMovedError } from '../../git/repository.js';
import { ApiError } from '../../shared/problems.js';
import { timestamp, type Clock } from '../../time.js';
import { authorizeDeployment } from '../deployments/index.js';
import { authorOf } from './authors.js';
import { branchNotFound, isPersonalBranch } from './branch-targets.js';
import { findBranch, recordBranches } from './branches.store.js';
import type { BuildsService } from './builds.service.js';
import { MAX_FILE_BYTES } from './data-model.schemas.js';
import type { DeploymentRepositories } from './deployment-repositories.js';
import { uploadTarget } from './files.service.js';
import { normalizeModelPath } from '../../shared/model-paths.js';
import { UPLOAD_TTL_MS, type FinishUploadInput, type UploadQueryInput } from './uploads.schemas.js';
import { deleteExpiredUploads, dropUploadedFiles, findUpload, finishUpload, insertUpload, recordUploadedFile, uploadedFiles } from './uploads.store.js';
import { randomToken } from '../../shared/tokens.js';

function uploadNotFound(id: string, why = 'unknown, finished, expired, or started by another credential'): ApiError {
  return new ApiError('UPLOAD_NOT_FOUND', `Upload transaction ${JSON.stringify(id)} is not open (${why}); start a new one.`);
}

/**
 * Uploads (reference 2.5-2.8): a client compares its files with `file-hashes`, sends only those
 * that differ, and finishes with the manifest of its whole project. Received files wait in the
 * database until finish writes them, and the deletions, as one commit in one git process,
 * so an upload interrupted anywhere before it changes nothing.
 */
export function uploadsService(store: Store, repositories: DeploymentRepositories, builds: BuildsService, now: Clock) {
  const { db } = store;

  /** The branch an upload writes: named, or the active dev-mode branch, or the deploy branch; checked as finish would. */
  async function writableTarget(caller: Caller, row: DeploymentRow, named: string | undefined): Promise<string> {
    const branch = named ?? (await uploadTarget(store, caller, row));
    if (isPersonalBranch(branch)) {
      const known = await findBranch(db, row.id, branch);
      if (known?.owner_key_id != null && known.owner_key_id !== caller.actor.keyId)
        throw new ApiError('FORBIDDEN', `Branch ${branch} is another credential's dev-mode branch.`);
    }
    if (branch === row.deploy_branch_name && row.deploy_branch_read_only === 1) {
      throw new ApiError('FORBIDDEN', `The deploy branch ${branch} is read-only (deployBranchReadOnly); upload to a dev-mode branch and merge it instead.`);
    }
    return branch;
  }

  async function openUpload(caller: Caller, row: DeploymentRow, id: string): Promise<UploadRow> {
    const upload = await findUpload(db, row.id, id);
    if (!upload || upload.key_id !== caller.actor.keyId || upload.finished_at !== null) throw uploadNotFound(id);
    if (upload.expires_at <= timestamp(now)) throw uploadNotFound(id, `it expired at ${upload.expires_at}`);
    return upload;
  }

  return {
    async mayUpload(caller: Caller, deploymentId: number): Promise<void> {
      await authorizeDeployment(db, caller, deploymentId, 'SchemaUpdate');
    },

    async start(caller: Caller, deploymentId: number, query: UploadQueryInput): Promise<{ transaction: { id: string }; deploymentName: string }> {
      const { row } = await authorizeDeployment(db, caller, deploymentId, 'SchemaUpdate');
      const branch = await writableTarget(caller, row, query.branchName);
      if ((await (await repositories.open(row)).head(branch)) === null) throw branchNotFound(row.id, branch);
      const at = now();
      await deleteExpiredUploads(db, at.toISOString());
      const id = randomToken(18);
      await insertUpload(db, {
        id,
        tenant_id: row.tenant_id,
        deployment_id: row.id,
        key_id: caller.actor.keyId,
        branch_name: branch,
        root: query.useDeployProjectRoot ? row.deploy_project_root : '',
        created_at: at.toISOString(),
        expires_at: new Date(at.getTime() + UPLOAD_TTL_MS).toISOString(),
      });
      return { transaction: { id }, deploymentName: row.name };
    },

    async receive(caller: Caller, deploymentId: number, input: { transaction: string; fileName: string; content: Buffer }): Promise<Record<string, never>> {
      const { row } = await authorizeDeployment(db, caller, deploymentId, 'SchemaUpdate');
      const upload = await openUpload(caller, row, input.transaction);
      const path = normalizeModelPath(input.fileName, '/body/fileName');
      if (input.content.length > MAX_FILE_BYTES)
        throw new ApiError('PAYLOAD_TOO_LARGE', `File ${JSON.stringify(path)} is larger than ${MAX_FILE_BYTES} bytes, the most a data-model file may hold.`);
      // Kept in the database until the finish writes every file in one git process: a git process
      // per file cost the server more than the upload itself.
      await recordUploadedFile(db, upload.id, path, blobSha(input.content), input.content);
      return {};
    },

    async finish(caller: Caller, deploymentId: number, input: FinishUploadInput): Promise<{ lastHash: string | null }> {
      const { row } = await authorizeDeployment(db, caller, deploymentId, 'SchemaUpdate');
      const upload = await openUpload(caller, row, input.transaction.id);
      await writableTarget(caller, row, upload.branch_name);
      const received = await uploadedFiles(db, upload.id);
      const manifest = new Map<string, string>();
      for (const [raw, value] of Object.entries(input.files)) {
        manifest.set(normalizeModelPath(raw, `/body/files/${raw.replaceAll('~', '~0').replaceAll('/', '~1')}`), typeof value === 'string' ? value : value.hash);
      }
      const prefix = upload.root === '' ? '' : `${upload.root}/`;
      const author = await authorOf(db, caller.actor);
      const branch = upload.branch_name;
      const head = await repositories.write(row, async (repo) => {
        const current = await repo.head(branch);
        if (current === null) throw branchNotFound(row.id, branch);
        const tree = new Map((await repo.tree(current)).map((e) => [e.path, e.sha]));
        const changes = new Map<string, Buffer | null>();
        for (const [path, hash] of manifest) {
          const target = prefix + path;
          const sent = received.get(path);
          if (sent !== undefined && sent.sha === hash) {
            if (tree.get(target) !== hash) changes.set(target, sent.content);
          } else if (tree.get(target) !== hash) {
            throw new ApiError(
              'VALIDATION_FAILED',
              `${path} is listed with hash ${hash}, but no file with that content was uploaded in this transaction and the branch does not hold it; upload it first.`,
              {
                errors: [{ pointer: '/body/files', message: `${path}: content ${hash} was not uploaded` }],
              },
            );
          }
        }
        if (input.autoRemoveFiles !== false) {
          for (const path of tree.keys()) if (path.startsWith(prefix) && !manifest.has(path.slice(prefix.length))) changes.set(path, null);
        }
        if (changes.size === 0) return current;
        const count = changes.size;
        const message = input.commitMessage ?? `Upload: ${count} file${count === 1 ? '' : 's'} changed`;
        try {
          return await repo.commit({ ref: `refs/heads/${branch}`, expectedHead: current, changes, author, message });
        } catch (error) {
          if (error instanceof RefMovedError)
            throw new ApiError('BRANCH_MOVED', `${branch} moved while the upload was committed; nothing was changed. Finish the upload again.`);
          throw error;
        }
      });
      if (!(await finishUpload(db, upload.id, head, timestamp(now)))) throw uploadNotFound(upload.id, 'it was finished by another request');
      await dropUploadedFiles(db, upload.id);
      // A branch pushed over git before its row was kept gets it now, before the upload is answered.
      await recordBranches(db, { tenantId: row.tenant_id, deploymentId: row.id }, [branch], timestamp(now));
      // One build for the whole upload, whatever the deploy mode: uploads are how `cli` deployments deploy.
      await builds.enqueue(row, branch, head, 'upload');
      return { lastHash: head };
    },
  };
}
export type UploadsService = ReturnType<typeof uploadsService>;
