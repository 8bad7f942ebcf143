import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { EmbedSettingsService } from './embed-settings.js';
import { TenantEmbedSettingsInput } from './embed-settings.schemas.js';

const tags = ['Account'];

/** The account's settings: tenant settings (reference 5.1-5.2), embed settings (extension), app configuration (5.3). */
export function accountRoutes(services: { embedSettings: EmbedSettingsService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/tenant/embed-settings',
      {
        schema: {
          operationId: 'getTenantEmbedSettings',
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
