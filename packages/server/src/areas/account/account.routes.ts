import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppConfigService } from './app-config.js';
import { AppConfigInput, UserSettingsInput } from './app-config.schemas.js';
import type { AuditEventsService } from './audit-events.js';
import { AuditEventsQuery } from './audit-events.schemas.js';
import type { EmbedSettingsService } from './embed-settings.js';
import { TenantEmbedSettingsInput } from './embed-settings.schemas.js';
import type { TenantSettingsService } from './tenant-settings.js';
import { TenantSettingsInput } from './tenant-settings.schemas.js';
import type { UserSettingsService } from './user-settings.js';

const tags = ['Account'];

/** The account's settings: tenant settings (reference 5.1-5.2), embed settings (extension), app configuration (5.3). */
export function accountRoutes(services: {
  embedSettings: EmbedSettingsService;
  tenantSettings: TenantSettingsService;
  auditEvents: AuditEventsService;
  appConfig: AppConfigService;
  userSettings: UserSettingsService;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/app-config',
      {
        // An embed token opens it too (reference 4.16): embedded pages read their configuration.
        config: { credential: 'embed' },
        schema: {
          operationId: 'getAppConfig',
          tags,
          summary: 'The app configuration (reference 5.3; any authenticated caller)',
          description:
            '`embedding` is the reference part of the account’s embed settings; `appTheme` is the theme an admin set (null: none); `creatorMode` is answered to creator-mode embed sessions only (null for every other caller). The fields this server has no setting for answer their defaults (false or null).',
          response: { 200: Type.Ref('AppConfigResponse') },
        },
      },
      async (request) => {
        if (request.embed === null) return services.appConfig.get(request.caller);
        const config = await services.appConfig.get(
          { actor: { tenantId: request.embed.tenantId } },
          { creatorMode: request.embed.claims.creator_mode === true },
        );
        // The switches the session pinned (4.15 settings) outrank the account's.
        const pinned = request.embed.claims.settings;
        const base = (config.embedding ?? {}) as Record<string, unknown>;
        const embedding = { ...base, ...Object.fromEntries(Object.entries(pinned).filter(([name]) => name in base)) } as typeof config.embedding;
        return { ...config, embedding };
      },
    );

    app.put(
      '/api/v1/tenant/app-config',
      {
        schema: {
          operationId: 'updateAppConfig',
          extension: true,
          tags,
          summary:
            'Set the app configuration: `restrictDataDownload`, `sheetsAgentChatEnabled`, `appTheme`, `creatorMode` (extension; admin with an unscoped key)',
          description:
            'A merge: the keys sent replace their values, null puts one back to its default. While `restrictDataDownload` is on, dashboard exports (`POST …/dashboard-exports`) answer 403 for everyone, renders on behalf of another user included; scheduled notifications are exempt. `appTheme` is replaced whole (null clears it); a colour that is not hex or `rgb()`/`hsl()`, a number out of range, a URL that is neither `https://` nor a path on this host, or an unknown key answers 400 and changes nothing. Answers the app configuration after the change.',
          body: AppConfigInput,
          response: { 200: Type.Ref('AppConfigResponse') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN'],
        },
      },
      async (request) => services.appConfig.update(request.caller, request.body),
    );

    app.get(
      '/api/v1/users/me/settings',
      {
        schema: {
          operationId: 'getMySettings',
          extension: true,
          tags,
          summary: 'The caller’s own settings (extension beside the reference’s PATCH)',
          response: { 200: Type.Ref('UserSettings') },
        },
      },
      async (request) => services.userSettings.get(request.caller),
    );

    app.patch(
      '/api/v1/users/me/settings',
      {
        schema: {
          operationId: 'updateMySettings',
          tags,
          summary: 'Change the caller’s own settings: the default deployment (spec 0.5.0)',
          description:
            'A merge: keys not sent keep their values. `defaultDeploymentId` must name a deployment the caller can see (404 unknown, 403 without access or outside the key’s scope); null clears it. A deleted deployment stops being anyone’s default.',
          body: UserSettingsInput,
          response: { 200: Type.Ref('UserSettings') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'DEPLOYMENT_NOT_FOUND'],
        },
      },
      async (request) => services.userSettings.update(request.caller, request.body),
    );

    app.get(
      '/api/v1/tenant/settings',
      {
        schema: {
          operationId: 'getTenantSettings',
          tags,
          summary: 'The tenant’s settings (reference 5.1; admin)',
          response: { 200: Type.Ref('TenantSettings') },
          problems: ['FORBIDDEN'],
        },
      },
      async (request) => services.tenantSettings.get(request.caller),
    );

    app.put(
      '/api/v1/tenant/settings',
      {
        schema: {
          operationId: 'updateTenantSettings',
          tags,
          summary: 'Change some of the tenant’s settings (reference 5.2; admin with an unscoped key)',
          description:
            'A merge: the keys sent replace their values, the others keep theirs; `null` puts a key back to its default. Only the keys of TenantSettingsInput are writable: any other key (the read-only `auditLogEnabledCurrent` and `auditLogEnabledTimestamp` included), a `maintenanceWindowDay` other than `MONDAY` … `SUNDAY` or a `maintenanceWindowTime` other than `HH:MM` answers 400 and changes nothing.',
          body: TenantSettingsInput,
          response: { 200: Type.Ref('TenantSettings') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN'],
        },
      },
      async (request) => services.tenantSettings.update(request.caller, request.body),
    );

    app.get(
      '/api/v1/tenant/audit-events',
      {
        schema: {
          operationId: 'listAuditEvents',
          extension: true,
          tags,
          summary: 'The tenant’s audit log, newest first (extension; admin)',
          description:
            'Recorded while `auditLogEnabled` is on: every mutating request that reached an authenticated caller (`action` `request`, with its route pattern, path parameters and answer status) and explicit events (`env-vars.read`, `token.issued`, `sign-in`, `audit-log.enabled`, `audit-log.disabled`). Never bodies or secrets.',
          querystring: AuditEventsQuery,
          response: { 200: Type.Ref('AuditEventPage') },
          problems: ['FORBIDDEN', 'INVALID_CURSOR'],
        },
      },
      async (request) => services.auditEvents.list(request.caller, request.query),
    );

    app.get(
      '/api/v1/tenant/embed-settings',
      {
        schema: {
          operationId: 'getTenantEmbedSettings',
          extension: true,
          tags,
          summary: 'The account’s embed settings, defaults applied (extension; admin)',
          description: 'The reference’s EmbedSettings fields (4.0; null: not set) plus `enabled`, `allowedOrigins` and `pythonAnalysisEnabled`.',
          response: { 200: Type.Ref('TenantEmbedSettings') },
          problems: ['FORBIDDEN'],
        },
      },
      async (request) => services.embedSettings.get(request.caller),
    );

    app.put(
      '/api/v1/tenant/embed-settings',
      {
        schema: {
          operationId: 'updateTenantEmbedSettings',
          extension: true,
          tags,
          summary: 'Change some of the account’s embed settings (extension; admin with an unscoped key)',
          description:
            'A merge: the keys sent replace their values, the others keep theirs; `null` puts a key back to its default. Unknown keys, a `locale` that is not a BCP 47 tag, a `timezone` that is not an IANA name, or an `allowedOrigins` entry that is not exactly `scheme://host[:port]` answer 400 and change nothing. Answers every setting after the change.',
          body: TenantEmbedSettingsInput,
          response: { 200: Type.Ref('TenantEmbedSettings') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN'],
        },
      },
      async (request) => services.embedSettings.update(request.caller, request.body),
    );
  };
}
