import { defineArea } from '../../platform/index.js';
import { accountRoutes } from './account.routes.js';
import { appConfigService } from './app-config.js';
import { appConfigSchemas } from './app-config.schemas.js';
import { auditEventsService } from './audit-events.js';
import { auditEventSchemas } from './audit-events.schemas.js';
import { embedSettingsService } from './embed-settings.js';
import { embedSettingsSchemas } from './embed-settings.schemas.js';
import { tenantSettingsService } from './tenant-settings.js';
import { tenantSettingsSchemas } from './tenant-settings.schemas.js';
import { userSettingsService } from './user-settings.js';

/** The account's settings: embedding, the tenant's own, the audit log's reading, the app's configuration and each user's. */
export const accountArea = defineArea('account', ({ platform: { store, audit, now } }) => {
  const services = {
    embedSettings: embedSettingsService(store),
    // Switching the audit log on or off is itself recorded, whatever the setting says.
    tenantSettings: tenantSettingsService(store, (trx, caller, enabled) =>
      audit.recordAlways(caller, { action: enabled ? 'audit-log.enabled' : 'audit-log.disabled' }, trx),
    ),
    auditEvents: auditEventsService(audit),
    appConfig: appConfigService(store),
    userSettings: userSettingsService(store, now),
  };
  return {
    services,
    schemas: [...embedSettingsSchemas, ...tenantSettingsSchemas, ...auditEventSchemas, ...appConfigSchemas],
    routes: () => [accountRoutes(services)],
  };
});
