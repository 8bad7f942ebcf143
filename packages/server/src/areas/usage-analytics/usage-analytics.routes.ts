import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { UsageAnalyticsService } from './usage-analytics.service.js';
import { UsageAnalyticsSettingsInput } from './usage-analytics.schemas.js';

const tags = ['Account'];

/** Usage analytics: the token (reference 5.4) and the account's switch (extension). */
export function usageAnalyticsRoutes(service: UsageAnalyticsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/v1/usage-analytics/token',
      {
        config: { optionalBody: true },
        schema: {
          operationId: 'createUsageAnalyticsToken',
          tags,
          summary: 'A one-hour token for the account’s usage data API (admin)',
          description:
            'Reference 5.4. Admins only (403 to anyone else, checked first); 404 `USAGE_ANALYTICS_DISABLED` while the account’s usage analytics is off (`PUT /api/v1/tenant/usage-analytics`). The first token makes the account’s system usage deployment, whose data source holds the account’s audit events (cube `audit_events`: `count`, `actors`; by `action`, `route`, `method`, `status`, `credential_kind`, `actor_email`, `occurred_at`), brought up to date on each token. Send the token as `Authorization: Bearer` to `apiUrl` (`/load`, `/meta`, `/sql`); it carries the account as its security context and is valid for one hour.',
          response: { 200: Type.Ref('UsageAnalyticsToken') },
          problems: ['FORBIDDEN', 'USAGE_ANALYTICS_DISABLED', 'UNAVAILABLE'],
        },
      },
      async (request) => service.token(request.caller),
    );

    app.get(
      '/api/v1/tenant/usage-analytics',
      {
        schema: {
          operationId: 'getTenantUsageAnalytics',
          extension: true,
          tags,
          summary: 'Whether usage analytics is on, and its deployment (extension; admin)',
          response: { 200: Type.Ref('UsageAnalyticsSettings') },
          problems: ['FORBIDDEN'],
        },
      },
      async (request) => service.settings(request.caller),
    );

    app.put(
      '/api/v1/tenant/usage-analytics',
      {
        schema: {
          operationId: 'updateTenantUsageAnalytics',
          extension: true,
          tags,
          summary: 'Turn usage analytics on or off (extension; admin with an unscoped key)',
          description:
            '`enabled: true` lets admins mint usage-analytics tokens; `false` or `null` (the default, off) makes the token route 404. The usage deployment, once made, stays.',
          body: UsageAnalyticsSettingsInput,
          response: { 200: Type.Ref('UsageAnalyticsSettings') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN'],
        },
      },
      async (request) => service.update(request.caller, request.body),
    );
  };
}
