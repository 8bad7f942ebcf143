import type { EmbedSessionRow, Executor } from '../../db/tables.js';

export async function insertSession(
  db: Executor,
  row: Omit<EmbedSessionRow, 'id' | 'exchanged_at' | 'jti' | 'token_expires_at' | 'revoked_at'>,
): Promise<void> {
  await db.insertInto('embed_sessions').values(row).execute();
}

/**
 * Redeems a session: one conditional UPDATE, so of any number of racing exchanges, on any process,
 * exactly one finds the row unused and the others find nothing.
 */
export async function redeemSession(
  db: Executor,
  tenantId: number,
  hash: string,
  at: string,
  jti: string,
  tokenExpiresAt: string,
): Promise<Pick<EmbedSessionRow, 'deployment_id' | 'claims'> | undefined> {
  return db
    .updateTable('embed_sessions')
    .set({ exchanged_at: at, jti, token_expires_at: tokenExpiresAt })
    .where('tenant_id', '=', tenantId)
    .where('session_hash', '=', hash)
    .where('exchanged_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', at)
    .returning(['deployment_id', 'claims'])
    .executeTakeFirst();
}

/** Marks a session revoked (a trigger bumps the tenant's auth_version: every process re-checks its tokens). */
export async function revokeSession(db: Executor, tenantId: number, hash: string, at: string, scope: number[] | null): Promise<void> {
  let update = db
    .updateTable('embed_sessions')
    .set({ revoked_at: at })
    .where('tenant_id', '=', tenantId)
    .where('session_hash', '=', hash)
    .where('revoked_at', 'is', null);
  if (scope !== null) update = scope.length === 0 ? update.where('deployment_id', '=', -1) : update.where('deployment_id', 'in', scope);
  await update.execute();
}

/** Whether the token with this `jti` is still good: its session exists and is not revoked. */
export async function tokenSession(db: Executor, tenantId: number, jti: string): Promise<{ revoked: boolean } | undefined> {
  const row = await db.selectFrom('embed_sessions').select('revoked_at').where('tenant_id', '=', tenantId).where('jti', '=', jti).executeTakeFirst();
  return row === undefined ? undefined : { revoked: row.revoked_at !== null };
}

/** Drops sessions nobody can use any more: never exchanged and past their 5 minutes, or whose token has expired. */
export async function sweepSessions(db: Executor, tenantId: number, at: string): Promise<void> {
  await db
    .deleteFrom('embed_sessions')
    .where('tenant_id', '=', tenantId)
    .where((eb) => eb.or([eb.and([eb('exchanged_at', 'is', null), eb('expires_at', '<=', at)]), eb('token_expires_at', '<=', at)]))
    .execute();
}

/** A branch of the deployment by name: whose dev-mode branch it is, and its staging flag. */
export async function findBranch(
  db: Executor,
  deploymentId: number,
  name: string,
): Promise<{ id: number; owner_key_id: number | null; staging_enabled: number } | undefined> {
  return db
    .selectFrom('branches')
    .select(['id', 'owner_key_id', 'staging_enabled'])
    .where('deployment_id', '=', deploymentId)
    .where('name', '=', name)
    .executeTakeFirst();
}

/** Whether a dev-mode session is open on the branch. */
export async function findDevSessionOn(db: Executor, deploymentId: number, branch: string): Promise<{ key_id: number } | undefined> {
  return db.selectFrom('dev_sessions').select('key_id').where('deployment_id', '=', deploymentId).where('branch_name', '=', branch).executeTakeFirst();
}
