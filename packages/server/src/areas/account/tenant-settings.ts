import type { Caller } from '../../access/caller.js';
import type { TenantSnapshot } from '../../cache/tenant-cache.js';
import type { Store } from '../../db/database.js';
import type { Executor } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { readStoredSettingsOf, writeStoredSettings } from './account.store.js';
import type { TenantSettings, TenantSettingsInput } from './tenant-settings.schemas.js';

/** What a tenant that never set anything has. */
export const TENANT_SETTINGS_DEFAULTS = Object.freeze({
  auditLogEnabled: false,
  hasSupportAccess: false,
  useAIBIUserInterface: false,
  maintenanceWindowEnabled: false,
  maintenanceWindowDay: 'SUNDAY',
  maintenanceWindowTime: '02:00',
  oidcEnabled: false,
});

/** Where the time of the last switch of the audit log is kept in the stored object (not an input key). */
const AUDIT_SWITCHED_AT = 'auditLogSwitchedAt';

function withDefaults(stored: Record<string, unknown>, createdAt: string): TenantSettings {
  const settings: Record<string, unknown> = { ...TENANT_SETTINGS_DEFAULTS };
  for (const key of Object.keys(TENANT_SETTINGS_DEFAULTS)) if (stored[key] !== undefined && stored[key] !== null) settings[key] = stored[key];
  const switchedAt = typeof stored[AUDIT_SWITCHED_AT] === 'number' ? stored[AUDIT_SWITCHED_AT] : Date.parse(createdAt);
  return {
    ...(settings as Omit<TenantSettings, 'auditLogEnabledCurrent' | 'auditLogEnabledTimestamp'>),
    auditLogEnabledCurrent: settings.auditLogEnabled as boolean,
    auditLogEnabledTimestamp: switchedAt,
  };
}

/** The settings as stored in the tenant row's `account_settings` column, with defaults: for a query that read the row itself. */
export function tenantSettingsFromColumn(text: string | null, createdAt: string): TenantSettings {
  return withDefaults(text === null ? {} : (JSON.parse(text) as Record<string, unknown>), createdAt);
}

async function load(db: Executor, tenantId: number): Promise<TenantSettings> {
  const { stored, createdAt } = await readStoredSettingsOf(db, tenantId, 'account_settings');
  return withDefaults(stored, createdAt);
}

/**
 * The tenant's settings with defaults applied, for other areas and the audit hook. With the
 * request's `snapshot` it reads the store once per tenant cache version (a write bumps the
 * version, so every process sees it on its next request). Shared: read it, never change it.
 */
export function tenantSettings(db: Executor, tenantId: number, snapshot?: TenantSnapshot): Promise<Readonly<TenantSettings>> {
  return snapshot !== undefined && snapshot.tenantId === tenantId ? snapshot.memo('tenant-settings', () => load(db, tenantId)) : load(db, tenantId);
}

/** Called after the audit log was switched, in the writer's transaction (the audit log records the switch itself). */
export type AuditSwitched = (trx: Executor, caller: Caller, enabled: boolean) => Promise<void>;

/** The reference's tenant settings (5.1-5.2), admin only. */
export function tenantSettingsService(store: Store, auditSwitched: AuditSwitched) {
  return {
    async get(caller: Caller): Promise<TenantSettings> {
      caller.access.requireAdmin('read the tenant settings');
      return load(store.db, caller.actor.tenantId);
    },

    /** A merge: the keys given replace their values, null puts one back to its default. */
    async update(caller: Caller, input: TenantSettingsInput): Promise<TenantSettings> {
      caller.access.requireAccountAdmin('change the tenant settings');
      const tenantId = caller.actor.tenantId;
      return serialized(store, lockKey.accountSettings(tenantId), async (trx) => {
        const { stored, createdAt } = await readStoredSettingsOf(trx, tenantId, 'account_settings');
        const wasOn = withDefaults(stored, createdAt).auditLogEnabled;
        for (const [key, value] of Object.entries(input)) {
          if (value === null) delete stored[key];
          else if (value !== undefined) stored[key] = value;
        }
        const isOn = withDefaults(stored, createdAt).auditLogEnabled;
        if (isOn !== wasOn) stored[AUDIT_SWITCHED_AT] = Date.now();
        await writeStoredSettings(trx, tenantId, 'account_settings', stored);
        if (isOn !== wasOn) await auditSwitched(trx, caller, isOn);
        return withDefaults(stored, createdAt);
      });
    },
  };
}
export type TenantSettingsService = ReturnType<typeof tenantSettingsService>;
