import type { EnvironmentTokenRow, Executor } from '../../db/tables.js';
import type { SecretColumn } from '../../secrets/index.js';

/** At most this many live tokens of an environment are listed (reference 1.18, later revision). */
export const LISTED_TOKENS_MAX = 1_000;

/** The context a stored token is sealed with: bound to its deployment and its id (`jti`). */
export function environmentTokenContext(deploymentId: number, jti: string): string {
  return `environment-token:${deploymentId}:${jti}`;
}

export const environmentTokenSecretColumn: SecretColumn = {
  table: 'environment_tokens',
  id: 'id',
  value: 'token',
  contextColumns: ['deployment_id', 'jti'],
  context: (row) => environmentTokenContext(Number(row.deployment_id), String(row.jti)),
};

export async function insertEnvironmentToken(db: Executor, row: Omit<EnvironmentTokenRow, 'id'>): Promise<void> {
  await db.insertInto('environment_tokens').values(row).execute();
}

/** The environment's newest live tokens (at most LISTED_TOKENS_MAX), of which `userId`'s, newest first. */
function ownAmongNewest(db: Executor, where: { tenantId: number; deploymentId: number; environmentId: string; userId: number; now: string }) {
  const newest = db
    .selectFrom('environment_tokens')
    .select('id')
    .where('tenant_id', '=', where.tenantId)
    .where('deployment_id', '=', where.deploymentId)
    .where('environment_id', '=', where.environmentId)
    .where('expires_at', '>', where.now)
    .orderBy('id', 'desc')
    .limit(LISTED_TOKENS_MAX);
  // PostgreSQL and SQLite both take a LIMIT inside IN (…) when it is wrapped in a derived table.
  return db
    .selectFrom('environment_tokens')
    .where('id', 'in', db.selectFrom(newest.as('n')).select('n.id'))
    .where('created_by_user_id', '=', where.userId);
}

export async function listOwnTokens(
  db: Executor,
  where: Parameters<typeof ownAmongNewest>[1],
  offset: number,
  limit: number,
): Promise<{ rows: EnvironmentTokenRow[]; total: number }> {
  const rows = await ownAmongNewest(db, where).selectAll().orderBy('id', 'desc').limit(limit).offset(offset).execute();
  const counted = await ownAmongNewest(db, where)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return { rows, total: Number(counted?.n ?? 0) };
}

/** Forgets the environment's expired tokens: the list never shows them again. */
export async function deleteExpiredTokens(db: Executor, deploymentId: number, environmentId: string, now: string): Promise<void> {
  await db
    .deleteFrom('environment_tokens')
    .where('deployment_id', '=', deploymentId)
    .where('environment_id', '=', environmentId)
    .where('expires_at', '<=', now)
    .execute();
}
