import type { Executor, UploadRow } from '../../db/tables.js';

export async function insertUpload(db: Executor, upload: Omit<UploadRow, 'finished_at' | 'last_hash'>): Promise<void> {
  await db
    .insertInto('uploads')
    .values({ ...upload, finished_at: null, last_hash: null })
    .execute();
}

export async function findUpload(db: Executor, deploymentId: number, id: string): Promise<UploadRow | undefined> {
  return db.selectFrom('uploads').selectAll().where('deployment_id', '=', deploymentId).where('id', '=', id).executeTakeFirst();
}

/** Records a received file; the same path sent again replaces the earlier one. */
export async function recordUploadedFile(db: Executor, uploadId: string, path: string, blobSha: string, content: Buffer): Promise<void> {
  await db
    .insertInto('upload_files')
    .values({ upload_id: uploadId, path, blob_sha: blobSha, content })
    .onConflict((oc) => oc.columns(['upload_id', 'path']).doUpdateSet({ blob_sha: blobSha, content }))
    .execute();
}

export async function uploadedFiles(db: Executor, uploadId: string): Promise<Map<string, { sha: string; content: Buffer }>> {
  const rows = await db.selectFrom('upload_files').select(['path', 'blob_sha', 'content']).where('upload_id', '=', uploadId).execute();
  return new Map(rows.map((r) => [r.path, { sha: r.blob_sha, content: Buffer.from(r.content) }]));
}

/** A finished upload's files are in its commit; their copies here go. */
export async function dropUploadedFiles(db: Executor, uploadId: string): Promise<void> {
  await db.deleteFrom('upload_files').where('upload_id', '=', uploadId).execute();
}

/** Closes an upload once; false when another finish closed it first. */
export async function finishUpload(db: Executor, id: string, lastHash: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('uploads')
    .set({ finished_at: at, last_hash: lastHash })
    .where('id', '=', id)
    .where('finished_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The commit the deployment's last finished upload made (the tree's `showLastCLIUpload`). */
export async function lastUploadCommit(db: Executor, deploymentId: number): Promise<string | null> {
  const row = await db
    .selectFrom('uploads')
    .select('last_hash')
    .where('deployment_id', '=', deploymentId)
    .where('finished_at', 'is not', null)
    .orderBy('finished_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.last_hash ?? null;
}

/** Forgets uploads that expired unfinished, with the files they received. */
export async function deleteExpiredUploads(db: Executor, now: string): Promise<void> {
  await db.deleteFrom('uploads').where('finished_at', 'is', null).where('expires_at', '<', now).execute();
}
