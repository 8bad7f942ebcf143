import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AiSettingsService } from './ai-settings.service.js';
import { AiSettingsInput, AiUsageQuery } from './ai-settings.schemas.js';

const tags = ['AI'];

/** The account's AI settings and usage (extensions: the reference names "AI settings" and no shape). */
export function aiSettingsRoutes(settings: AiSettingsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/ai/settings',
      {
        schema: {
          operationId: 'getAiSettings',
          extension: true,
          tags,
          summary: 'The account’s AI settings, defaults applied (extension; admin)',
          description:
            '`provider` is the one AI features call: the account’s own (`source: account`), else the server’s default (`source: server`, AI_PROVIDER_URL), else null. Its key is never answered, only whether one is set.',
          response: { 200: Type.Ref('AiSettings') },
          problems: ['FORBIDDEN'],
        },
      },
      async (request) => settings.get(request.caller),
    );

    app.put(
      '/api/v1/ai/settings',
      {
        schema: {
          operationId: 'updateAiSettings',
          extension: true,
          tags,
          summary: 'Change some of the account’s AI settings (extension; admin with an unscoped key)',
          description:
            'A merge: the keys sent replace their values, the others keep theirs (within `limits` too). `provider` sets the account’s own provider: `apiKey` omitted keeps the stored key (only while the provider stays on the same origin), null stores none; `provider: null` drops it, and the server’s default applies again. A `baseUrl` that is not an http(s) API root (no credentials, query or fragment, not the `/chat/completions` URL itself) answers 400 and changes nothing. The account’s provider is called through the outbound guard: a private address is refused when used. Each kind of change is recorded in the audit log (`ai.enabled`, `ai.disabled`, `ai.provider.set`, `ai.provider.removed`, `ai.limits.changed`). Answers every setting after the change.',
          body: AiSettingsInput,
          response: { 200: Type.Ref('AiSettings') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN'],
        },
      },
      async (request) => settings.update(request.caller, request.body),
    );

    app.get(
      '/api/v1/ai/usage',
      {
        schema: {
          operationId: 'getAiUsage',
          extension: true,
          tags,
          summary: 'Tokens spent on AI answers per user and embed user in a month (extension; admin)',
          description:
            'One item per user (`userId`) or embed user (`embedUserId`) who spent tokens in `month` (`YYYY-MM`, UTC; default the current month), with prompt and completion tokens and the number of answers, most tokens first. `limit` is the budget per user a month now in force (`tokensPerUserPerMonth`).',
          querystring: AiUsageQuery,
          response: { 200: Type.Ref('AiUsage') },
          problems: ['FORBIDDEN'],
        },
      },
      async (request) => settings.usage(request.caller, request.query),
    );
  };
}
