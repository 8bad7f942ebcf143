import type { Executor, GitHostAppRow, GitHostLinkRow, GitHostLinkStateRow } from '../../db/tables.js';
import type { SecretColumn } from '../../secrets/index.js';

/** What each sealed value is bound to: copied to another tenant's or user's row, it does not open. */
export const sealedAs = {
  clientSecret: (tenantId: number) => `git-host-app:${tenantId}:client-secret`,
  privateKey: (tenantId: number) => `git-host-app:${tenantId}:private-key`,
  accessToken: (tenantId: number, userId: number) => `git-host-link:${tenantId}:${userId}`,
  refreshToken: (tenantId: number, userId: number) => `git-host-link:${tenantId}:${userId}:refresh`,
};

/** The columns of sealed values, for the secrets service's start-up check and re-encryption. */
export const gitHostSecretColumns: SecretColumn[] = [
  { table: 'git_host_apps', id: 'id', value: 'client_secret', contextColumns: ['tenant_id'], context: (row) => sealedAs.clientSecret(Number(row.tenant_id)) },
  { table: 'git_host_apps', id: 'id', value: 'private_key', contextColumns: ['tenant_id'], context: (row) => sealedAs.privateKey(Number(row.tenant_id)) },
  {
    table: 'git_host_links',
    id: 'id',
    value: 'access_token',
    contextColumns: ['tenant_id', 'user_id'],
    context: (row) => sealedAs.accessToken(Number(row.tenant_id), Number(row.user_id)),
  },
  {
    table: 'git_host_links',
    id: 'id',
    value: 'refresh_token',
    contextColumns: ['tenant_id', 'user_id'],
    context: (row) => sealedAs.refreshToken(Number(row.tenant_id), Number(row.user_id)),
  },
];

export type AppValues = Pick<GitHostAppRow, 'api_base_url' | 'web_base_url' | 'app_id' | 'app_slug' | 'client_id' | 'client_secret' | 'private_key'>;

export function findApp(db: Executor, tenantId: number): Promise<GitHostAppRow | undefined> {
  return db.selectFrom('git_host_apps').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
}

/** Writes the tenant's app whole (the service merged the kept secrets in). */
export async function saveApp(db: Executor, tenantId: number, values: AppValues, at: string): Promise<void> {
  await db
    .insertInto('git_host_apps')
    .values({ tenant_id: tenantId, ...values, created_at: at, updated_at: at })
    .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ ...values, updated_at: at }))
    .execute();
}

export function findLink(db: Executor, tenantId: number, userId: number): Promise<GitHostLinkRow | undefined> {
  return db.selectFrom('git_host_links').selectAll().where('tenant_id', '=', tenantId).where('user_id', '=', userId).executeTakeFirst();
}

/** Links the user's account, replacing an earlier link. */
export type LinkTokens = Pick<GitHostLinkRow, 'access_token' | 'refresh_token' | 'expires_at'>;

export async function saveLink(db: Executor, tenantId: number, userId: number, values: Pick<GitHostLinkRow, 'login'> & LinkTokens, at: string): Promise<void> {
  await db
    .insertInto('git_host_links')
    .values({ tenant_id: tenantId, user_id: userId, ...values, created_at: at, updated_at: at })
    .onConflict((oc) => oc.columns(['tenant_id', 'user_id']).doUpdateSet({ ...values, updated_at: at }))
    .execute();
}

export async function insertState(db: Executor, row: Omit<GitHostLinkStateRow, 'id'>): Promise<void> {
  await db.insertInto('git_host_link_states').values(row).execute();
}

export function findState(db: Executor, tenantId: number, stateHash: string): Promise<GitHostLinkStateRow | undefined> {
  return db.selectFrom('git_host_link_states').selectAll().where('tenant_id', '=', tenantId).where('state_hash', '=', stateHash).executeTakeFirst();
}

/** Takes the state out; true for exactly one caller however many present it at once (single use). */
export async function consumeState(db: Executor, id: number): Promise<boolean> {
  const result = await db.deleteFrom('git_host_link_states').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Forgets the tenant's link authorizations that can no longer complete. */
export async function deleteExpiredStates(db: Executor, tenantId: number, before: string): Promise<void> {
  await db.deleteFrom('git_host_link_states').where('tenant_id', '=', tenantId).where('expires_at', '<=', before).execute();
}

/**
 * Stores refreshed tokens only if the link still holds the refresh token that was used: of two
 * refreshes at once, one wins and the other reads the winner's tokens. True when this one won.
 */
export async function replaceLinkTokens(db: Executor, linkId: number, usedRefreshToken: string, values: LinkTokens, at: string): Promise<boolean> {
  const result = await db
    .updateTable('git_host_links')
    .set({ ...values, updated_at: at })
    .where('id', '=', linkId)
    .where('refresh_token', '=', usedRefreshToken)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Forgets the user's linked account; false when there was none. */
export async function deleteLink(db: Executor, tenantId: number, userId: number): Promise<boolean> {
  const result = await db.deleteFrom('git_host_links').where('tenant_id', '=', tenantId).where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
