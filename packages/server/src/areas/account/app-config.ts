import type { Caller } from '../../access/caller.js';
import type { TenantSnapshot } from '../../cache/tenant-cache.js';
import type { Store } from '../../db/database.js';
import type { Executor } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { readStoredSettings, writeStoredSettings } from './account.store.js';
import type { AppConfigInput, AppConfigResponse } from './app-config.schemas.js';
import { embedSettings, referenceEmbedSettings } from './embed-settings.js';

/** Where the switch is kept among the account's stored settings (beside the tenant settings, never one of their keys). */
const RESTRICT_DATA_DOWNLOAD = 'restrictDataDownload';
/** The spreadsheet add-ins' switch (5.3), kept the same way: this server runs no add-in, it answers the switch to those that read it. */
const SHEETS_AGENT_CHAT = 'sheetsAgentChatEnabled';

async function readRestrict(db: Executor, tenantId: number): Promise<boolean> {
  return (await readStoredSettings(db, tenantId, 'account_settings'))[RESTRICT_DATA_DOWNLOAD] === true;
}

/**
 * Whether the tenant-wide lock on data downloads is on (reference 5.3 `restrictDataDownload`).
 * With the request's snapshot it is read once per tenant cache version, as the tenant settings are.
 */
export function restrictDataDownload(db: Executor, tenantId: number, snapshot?: TenantSnapshot): Promise<boolean> {
  return snapshot !== undefined && snapshot.tenantId === tenantId
    ? snapshot.memo('restrict-data-download', () => readRestrict(db, tenantId))
    : readRestrict(db, tenantId);
}

/**
 * The app configuration (reference 5.3) for any authenticated caller of the tenant, users and
 * embed sessions alike: it needs only the tenant and the request's cache snapshot, never a user.
 * The fields this server has no setting for answer their documented defaults.
 */
export function appConfigService(store: Store) {
  const service = {
    async get(caller: { actor: { tenantId: number }; snapshot?: TenantSnapshot }): Promise<AppConfigResponse> {
      const embed = await embedSettings(store.db, caller.actor.tenantId, caller.snapshot);
      return {
        applyThemeGlobally: false,
        restrictDataDownload: await restrictDataDownload(store.db, caller.actor.tenantId, caller.snapshot),
        sheetsAgentChatEnabled: (await readStoredSettings(store.db, caller.actor.tenantId, 'account_settings'))[SHEETS_AGENT_CHAT] === true,
        appTheme: null,
        creatorMode: null,
        embedding: referenceEmbedSettings(embed),
        sheetsUi: null,
        timezoneSettings: embed.timezone === null ? null : { enabled: true, allowUserOverride: null, timezone: embed.timezone },
      };
    },

    /** Sets the switches an admin may set (extension); answers the configuration after the change. */
    async update(caller: Caller, input: AppConfigInput): Promise<AppConfigResponse> {
      caller.access.requireAccountAdmin('change the app configuration');
      const tenantId = caller.actor.tenantId;
      await serialized(store, lockKey.accountSettings(tenantId), async (trx) => {
        const stored = await readStoredSettings(trx, tenantId, 'account_settings');
        for (const key of [RESTRICT_DATA_DOWNLOAD, SHEETS_AGENT_CHAT] as const) {
          const value = input[key];
          // Null or false: the default again (off), stored as nothing.
          if (value === null || value === false) delete stored[key];
          else if (value === true) stored[key] = true;
        }
        await writeStoredSettings(trx, tenantId, 'account_settings', stored);
      });
      return service.get({ actor: { tenantId } });
    },
  };
  return service;
}
export type AppConfigService = ReturnType<typeof appConfigService>;
