import type { Executor, SigningKeyRow } from '../db/tables.js';
import type { SecretColumn } from '../secrets/index.js';

/** The context a private key is sealed with: a key copied to another tenant or kid does not open. */
export function signingKeyContext(tenantId: number, kid: string): string {
  return `signing-key:${tenantId}:${kid}`;
}

/** The sealed column, for the start-up key check and `secrets re-encrypt` (stored-secrets.ts). */
export const signingKeySecretColumn: SecretColumn = {
  table: 'signing_keys',
  id: 'id',
  value: 'private_key',
  contextColumns: ['tenant_id', 'kid'],
  context: (row) => signingKeyContext(Number(row.tenant_id), String(row.kid)),
};

/** The tenant's keys of one purpose that may still verify (unexpired at `at`), the signing one first. */
export async function liveKeys(db: Executor, tenantId: number, purpose: string, at: string): Promise<SigningKeyRow[]> {
  const rows = await db
    .selectFrom('signing_keys')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('purpose', '=', purpose)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', at)]))
    .orderBy('id', 'desc')
    .execute();
  return rows.sort((a, b) => Number(a.retired_at !== null) - Number(b.retired_at !== null));
}

/** Deletes the tenant's keys of `purpose` that expired by `at`. */
export async function deleteExpiredKeys(db: Executor, tenantId: number, purpose: string, at: string): Promise<void> {
  await db.deleteFrom('signing_keys').where('tenant_id', '=', tenantId).where('purpose', '=', purpose).where('expires_at', '<=', at).execute();
}

export async function insertKey(db: Executor, row: Omit<SigningKeyRow, 'id'>): Promise<void> {
  await db.insertInto('signing_keys').values(row).execute();
}

/** Retires the tenant's signing key: it verifies until `expiresAt`, then leaves the key set. */
export async function retireKey(db: Executor, tenantId: number, purpose: string, at: string, expiresAt: string): Promise<string | undefined> {
  const row = await db
    .updateTable('signing_keys')
    .set({ retired_at: at, expires_at: expiresAt })
    .where('tenant_id', '=', tenantId)
    .where('purpose', '=', purpose)
    .where('retired_at', 'is', null)
    .returning('kid')
    .executeTakeFirst();
  return row?.kid;
}
