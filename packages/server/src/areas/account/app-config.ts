import type { Caller } from '../../access/caller.js';
import type { TenantSnapshot } from '../../cache/tenant-cache.js';
import type { Store } from '../../db/database.js';
import type { Executor } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { readStoredSettings, writeStoredSettings } from './account.store.js';
import type { AppConfigInput, AppConfigResponse, CreatorModeConfig } from './app-config.schemas.js';
import { storedAppTheme, themeErrors, toAppTheme } from './app-theme.js';
import { embedSettings, referenceEmbedSettings } from './embed-settings.js';
import { invalid } from './settings-values.js';

/** Where the switch is kept among the account's stored settings (beside the tenant settings, never one of their keys). */
const RESTRICT_DATA_DOWNLOAD = 'restrictDataDownload';
/** The spreadsheet add-ins' switch (5.3), kept the same way: this server runs no add-in, it answers the switch to those that read it. */
const SHEETS_AGENT_CHAT = 'sheetsAgentChatEnabled';
/** The account's theme (5.3 AppTheme), kept in the reference's shape as `toAppTheme` makes it. */
const APP_THEME = 'appTheme';
/** What creator-mode sessions are shown (5.3 CreatorMode), as an admin set it. */
const CREATOR_MODE = 'creatorMode';

/** The stored creator-mode configuration in the reference's shape: every member, null where not set. */
function creatorModeOf(stored: unknown): CreatorModeConfig {
  const set = stored !== null && typeof stored === 'object' ? (stored as Record<string, unknown>) : {};
  const pick = <T>(name: string) => (set[name] ?? null) as T | null;
  return {
    localizedTitles: pick('localizedTitles'),
    showGeneratedSql: pick('showGeneratedSql'),
    showSemanticSql: pick('showSemanticSql'),
    showWorkspaceTitle: pick('showWorkspaceTitle'),
    workspaceTitle: pick('workspaceTitle'),
  };
}

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
    /** `creatorMode`: the caller is a creator-mode embed session, which alone is answered the CreatorMode configuration. */
    async get(caller: { actor: { tenantId: number }; snapshot?: TenantSnapshot }, { creatorMode = false } = {}): Promise<AppConfigResponse> {
      const tenantId = caller.actor.tenantId;
      const embed = await embedSettings(store.db, tenantId, caller.snapshot);
      const read = () => readStoredSettings(store.db, tenantId, 'account_settings');
      // Read once per tenant cache version, as the tenant settings are.
      const stored =
        caller.snapshot !== undefined && caller.snapshot.tenantId === tenantId ? await caller.snapshot.memo('account-settings', read) : await read();
      return {
        applyThemeGlobally: false,
        restrictDataDownload: stored[RESTRICT_DATA_DOWNLOAD] === true,
        sheetsAgentChatEnabled: stored[SHEETS_AGENT_CHAT] === true,
        appTheme: storedAppTheme(stored[APP_THEME]),
        creatorMode: creatorMode ? creatorModeOf(stored[CREATOR_MODE]) : null,
        embedding: referenceEmbedSettings(embed),
        sheetsUi: null,
        timezoneSettings: embed.timezone === null ? null : { enabled: true, allowUserOverride: null, timezone: embed.timezone },
      };
    },

    /** Sets the switches an admin may set (extension); answers the configuration after the change. */
    async update(caller: Caller, input: AppConfigInput): Promise<AppConfigResponse> {
      caller.access.requireAccountAdmin('change the app configuration');
      const tenantId = caller.actor.tenantId;
      const theme = input.appTheme;
      if (theme != null) {
        const errors = themeErrors(theme);
        if (errors.length > 0) throw invalid(errors);
      }
      await serialized(store, lockKey.accountSettings(tenantId), async (trx) => {
        const stored = await readStoredSettings(trx, tenantId, 'account_settings');
        for (const key of [RESTRICT_DATA_DOWNLOAD, SHEETS_AGENT_CHAT] as const) {
          const value = input[key];
          // Null or false: the default again (off), stored as nothing.
          if (value === null || value === false) delete stored[key];
          else if (value === true) stored[key] = true;
        }
        if (input.creatorMode === null) delete stored[CREATOR_MODE];
        else if (input.creatorMode !== undefined) stored[CREATOR_MODE] = input.creatorMode;
        if (theme === null) delete stored[APP_THEME];
        else if (theme !== undefined) stored[APP_THEME] = toAppTheme(theme);
        await writeStoredSettings(trx, tenantId, 'account_settings', stored);
      });
      return service.get({ actor: { tenantId } });
    },
  };
  return service;
}
export type AppConfigService = ReturnType<typeof appConfigService>;
