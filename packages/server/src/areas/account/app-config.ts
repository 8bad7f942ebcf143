import type { TenantSnapshot } from '../../cache/tenant-cache.js';
import type { Store } from '../../db/database.js';
import type { AppConfigResponse } from './app-config.schemas.js';
import { embedSettings, referenceEmbedSettings } from './embed-settings.js';

/**
 * The app configuration (reference 5.3) for any authenticated caller of the tenant, users and
 * embed sessions alike: it needs only the tenant and the request's cache snapshot, never a user.
 * The fields this server has no setting for answer their documented defaults.
 */
export function appConfigService(store: Store) {
  return {
    async get(caller: { actor: { tenantId: number }; snapshot?: TenantSnapshot }): Promise<AppConfigResponse> {
      const embed = await embedSettings(store.db, caller.actor.tenantId, caller.snapshot);
      return {
        applyThemeGlobally: false,
        restrictDataDownload: false,
        sheetsAgentChatEnabled: false,
        appTheme: null,
        creatorMode: null,
        embedding: referenceEmbedSettings(embed),
        sheetsUi: null,
        timezoneSettings: embed.timezone === null ? null : { enabled: true, allowUserOverride: null, timezone: embed.timezone },
      };
    },
  };
}
export type AppConfigService = ReturnType<typeof appConfigService>;
