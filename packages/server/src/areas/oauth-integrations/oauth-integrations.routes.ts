import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Tenant } from '../../http/tenant.js';
import { CallbackQuery, CreateOAuthIntegrationBody, OAuthIntegrationParams, UpdateOAuthIntegrationBody } from './oauth-integrations.schemas.js';
import type { OAuthIntegrationsService } from './oauth-integrations.service.js';
import type { UserOAuthTokensService } from './user-oauth-tokens.service.js';

const tags = ['OAuth integrations'];
/** Callbacks a minute per client address: a browser completes one per authorization. */
export const CALLBACK_RATE_LIMIT = 30;

export interface CallbackDeps {
  resolveTenant: (request: FastifyRequest) => Promise<Tenant>;
  /** The user a request's credential names (401 when it is not valid), or null when it carries none. */
  identify: (request: FastifyRequest, tenant: Tenant) => Promise<number | null>;
}

/** Third-party OAuth apps (reference 5.5-5.9) and the callback their providers redirect users to. */
export function oauthIntegrationsRoutes(service: OAuthIntegrationsService, tokens: UserOAuthTokensService, deps: CallbackDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/oauth-integrations',
      {
        schema: {
          operationId: 'listOAuthIntegrations',
          tags,
          summary: 'The tenant’s OAuth integrations, a bare array (reference 5.5; any key)',
          response: { 200: Type.Array(Type.Ref('OAuthIntegration')) },
        },
      },
      async (request) => service.list(request.caller),
    );

    app.post(
      '/api/v1/oauth-integrations',
      {
        schema: {
          operationId: 'createOAuthIntegration',
          tags,
          summary: 'Register a third-party OAuth app (reference 5.6; admin)',
          description:
            'The client secret is stored encrypted and never returned. Register this server’s `/api/v1/oauth-integrations/callback` with the provider as `redirectUri`.',
          body: CreateOAuthIntegrationBody,
          response: { 200: Type.Ref('OAuthIntegration') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN'],
        },
      },
      async (request) => service.create(request.caller, request.body),
    );

    // The provider's redirect: no credential (the `state` names the user), a per-address budget.
    app.get(
      '/api/v1/oauth-integrations/callback',
      {
        // A HEAD (a link checker's) must not spend the state.
        exposeHeadRoute: false,
        config: { public: true, rateLimit: { max: CALLBACK_RATE_LIMIT }, secretQuery: true },
        schema: {
          operationId: 'oauthCallback',
          extension: true,
          tags,
          summary: 'Where the provider sends the user back after authorizing (extension; no credential)',
          description:
            'Completes an authorization started with `initiate`: the `state` must be one this server issued, unused, at most 10 minutes old; it names the user and the integration. The code is exchanged at the integration’s `tokenUrl` with the PKCE verifier and the tokens are stored encrypted. A request that carries a credential must be the initiating user’s.',
          security: [],
          querystring: CallbackQuery,
          response: { 200: Type.Ref('OAuthCallbackResult') },
          problems: ['OAUTH_STATE_INVALID', 'OAUTH_AUTHORIZATION_FAILED', 'OAUTH_PROVIDER_UNAVAILABLE'],
        },
      },
      async (request) => {
        const tenant = await deps.resolveTenant(request);
        const userId = await deps.identify(request, tenant);
        return tokens.callback(tenant.id, request.query, userId);
      },
    );

    app.get(
      '/api/v1/oauth-integrations/:id',
      {
        schema: {
          operationId: 'getOAuthIntegration',
          tags,
          summary: 'One OAuth integration (reference 5.7; any key)',
          params: OAuthIntegrationParams,
          response: { 200: Type.Ref('OAuthIntegration') },
          problems: ['OAUTH_INTEGRATION_NOT_FOUND'],
        },
      },
      async (request) => service.get(request.caller, request.params.id),
    );

    app.put(
      '/api/v1/oauth-integrations/:id',
      {
        schema: {
          operationId: 'updateOAuthIntegration',
          tags,
          summary: 'Replace an OAuth integration (reference 5.8; admin)',
          description: 'A full replace: `scopes` and `config` left out become null. `clientSecret` left out or null keeps the stored secret.',
          params: OAuthIntegrationParams,
          body: UpdateOAuthIntegrationBody,
          response: { 200: Type.Ref('OAuthIntegration') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'OAUTH_INTEGRATION_NOT_FOUND'],
        },
      },
      async (request) => service.update(request.caller, request.params.id, request.body),
    );

    app.delete(
      '/api/v1/oauth-integrations/:id',
      {
        schema: {
          operationId: 'deleteOAuthIntegration',
          tags,
          summary: 'Delete an OAuth integration and every user’s token for it (reference 5.9; admin)',
          params: OAuthIntegrationParams,
          response: { 200: Type.Ref('OAuthDeleted') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'OAUTH_INTEGRATION_NOT_FOUND'],
        },
      },
      async (request) => service.remove(request.caller, request.params.id),
    );
  };
}
