import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { OAuthService } from './oauth.service.js';
import { ApproveDeviceBody } from './oauth.schemas.js';
import type { OAuthClientsService } from './oauth-clients.service.js';
import { CreateOAuthClientBody, OAuthClientParams } from './oauth-clients.schemas.js';

/** Extension routes of the authorization server that take a credential (docs/api/oauth.md). */
export function oauthRoutes(service: OAuthService, clients: OAuthClientsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/v1/oauth/device-approvals',
      {
        schema: {
          operationId: 'approveDeviceSignIn',
          extension: true,
          tags: ['OAuth'],
          summary: 'Approve a device sign-in by its user code (extension; admin only)',
          description:
            'For tenants without an identity provider: the device that showed `userCode` receives tokens acting as `userId` (default: the caller) within the deployments it asked for.',
          body: ApproveDeviceBody,
          response: { 200: Type.Ref('DeviceApproval') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'USER_NOT_FOUND', 'DEVICE_CODE_NOT_FOUND'],
        },
      },
      async (request) => service.approveDevice(request.caller, request.body),
    );

    app.post(
      '/api/v1/oauth-clients',
      {
        schema: {
          operationId: 'createOAuthClient',
          extension: true,
          tags: ['OAuth'],
          summary:
            'Register a machine client (client credentials) or an app (authorization code with PKCE) (extension; admin only); the secret is in this response only',
          description:
            'A machine client (`type` `machine`, the default): its access tokens act as `userId` (default: the caller) within `deploymentIds` (null or absent: every deployment), exactly as an API key of that user with that scope. An app (`type` `app`, with `redirectUris`; `public` for one without a secret): users sign in through the tenant’s identity provider at `/oauth/auth` (PKCE with S256 required, `scope` including `openid`, plus `deployments:<id>` values to limit it) and consent; its tokens act as that user within the deployments consented to.',
          body: CreateOAuthClientBody,
          response: { 201: Type.Ref('CreatedOAuthClient') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'USER_NOT_FOUND', 'DEPLOYMENT_NOT_FOUND', 'INVALID_OPERATION'],
        },
      },
      async (request, reply) => reply.code(201).send(await clients.create(request.caller, request.body)),
    );

    app.get(
      '/api/v1/oauth-clients',
      {
        schema: {
          operationId: 'listOAuthClients',
          extension: true,
          tags: ['OAuth'],
          summary: 'List machine clients (extension; admin only). Never returns secrets',
          response: { 200: Type.Ref('OAuthClientList') },
          problems: ['FORBIDDEN'],
        },
      },
      async (request) => clients.list(request.caller),
    );

    app.delete(
      '/api/v1/oauth-clients/:oauthClientId',
      {
        schema: {
          operationId: 'deleteOAuthClient',
          extension: true,
          tags: ['OAuth'],
          summary: 'Delete a machine client; its tokens stop working at once (extension; admin only)',
          params: OAuthClientParams,
          response: { 204: Type.Null({ description: 'Deleted' }) },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'OAUTH_CLIENT_NOT_FOUND'],
        },
      },
      async (request, reply) => {
        await clients.remove(request.caller, request.params.oauthClientId);
        return reply.code(204).send(null);
      },
    );
  };
}
