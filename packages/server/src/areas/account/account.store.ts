import { sql } from 'kysely';
import type { Executor } from '../../db/tables.js';

/** The user's default deployment, when they have settings. */
export async function findUserSettings(db: Executor, tenantId: number, userId: number): Promise<{ default_deployment_id: number | null } | undefined> {
  return db.selectFrom('user_settings').select('default_deployment_id').where('tenant_id', '=', tenantId).where('user_id', '=', userId).executeTakeFirst();
}

export async function upsertUserSettings(db: Executor, tenantId: number, userId: number, defaultDeploymentId: number | null, at: string): Promise<void> {
  await db
    .insertInto('user_settings')
    .values({ user_id: userId, tenant_id: tenantId, default_deployment_id: defaultDeploymentId, updated_at: at })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ default_deployment_id: defaultDeploymentId, updated_at: at }))
    .execute();
}

export type SettingsColumn = 'embed_settings' | 'account_settings';

/** The JSON object an admin stored in `column` (only the keys they set), or an empty object. */
export async function readStoredSettings(db: Executor, tenantId: number, column: SettingsColumn): Promise<Record<string, unknown>> {
  return (await readStoredSettingsOf(db, tenantId, column)).stored;
}

/** The same, with the tenant's creation time (the start of settings never changed). */
export async function readStoredSettingsOf(
  db: Executor,
  tenantId: number,
  column: SettingsColumn,
): Promise<{ stored: Record<string, unknown>; createdAt: string }> {
  const row = await db.selectFrom('tenants').select([column, 'created_at']).where('id', '=', tenantId).executeTakeFirst();
  const text = row?.[column] ?? null;
  return { stored: text === null ? {} : (JSON.parse(text) as Record<string, unknown>), createdAt: row?.created_at ?? new Date(0).toISOString() };
}

/**
 * Replaces the stored object and bumps the tenant's `auth_version` in the same statement: every
 * server process reads the version before serving a request, so none serves the old settings from
 * its cache after this commits (cache/tenant-cache.ts).
 */
export async function writeStoredSettings(db: Executor, tenantId: number, column: SettingsColumn, values: Record<string, unknown>): Promise<void> {
  await db
    .updateTable('tenants')
    .set({ [column]: Object.keys(values).length === 0 ? null : JSON.stringify(values), auth_version: sql`auth_version + 1` } as never)
    .where('id', '=', tenantId)
    .execute();
}
