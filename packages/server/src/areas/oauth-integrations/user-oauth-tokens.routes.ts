import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { IntegrationIdParams } from './oauth-integrations.schemas.js';
import type { UserOAuthTokensService } from './user-oauth-tokens.service.js';

const tags = ['OAuth integrations'];

/** The caller's own tokens for third-party OAuth apps (reference 5.10-5.13). */
export function userOAuthTokensRoutes(service: UserOAuthTokensService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/user-oauth-tokens',
      {
        schema: {
          operationId: 'listUserOAuthTokens',
          tags,
          summary: 'The caller’s OAuth tokens, a bare array; never the token values (reference 5.10; any key)',
          response: { 200: Type.Array(Type.Ref('UserOAuthToken')) },
        },
      },
      async (request) => service.list(request.caller),
    );

    app.get(
      '/api/v1/user-oauth-tokens/:integrationId',
      {
        schema: {
          operationId: 'getUserOAuthToken',
          tags,
          summary: 'The caller’s token for one integration (reference 5.11; any key)',
          params: IntegrationIdParams,
          response: { 200: Type.Ref('UserOAuthToken') },
          problems: ['USER_OAUTH_TOKEN_NOT_FOUND'],
        },
      },
      async (request) => service.get(request.caller, request.params.integrationId),
    );

    app.delete(
      '/api/v1/user-oauth-tokens/:integrationId',
      {
        schema: {
          operationId: 'deleteUserOAuthToken',
          tags,
          summary: 'Forget the caller’s token, revoking it at the provider when the integration has `config.revocationUrl` (reference 5.12; any key)',
          params: IntegrationIdParams,
          response: { 200: Type.Ref('OAuthDeleted') },
          problems: ['USER_OAUTH_TOKEN_NOT_FOUND'],
        },
      },
      async (request) => service.remove(request.caller, request.params.integrationId, request.log),
    );

    app.post(
      '/api/v1/user-oauth-tokens/:integrationId/initiate',
      {
        schema: {
          operationId: 'initiateUserOAuthToken',
          tags,
          summary: 'Start authorizing an integration: the URL to send the user to (reference 5.13; any key)',
          description:
            'The URL carries a single-use `state` (valid 10 minutes, bound to the caller and the integration) and a PKCE S256 challenge. The provider sends the user back to the integration’s `redirectUri`, this server’s `/api/v1/oauth-integrations/callback`.',
          params: IntegrationIdParams,
          response: { 200: Type.Ref('OAuthAuthorizationStart') },
          problems: ['OAUTH_INTEGRATION_NOT_FOUND'],
        },
      },
      async (request) => service.initiate(request.caller, request.params.integrationId),
    );
  };
}
