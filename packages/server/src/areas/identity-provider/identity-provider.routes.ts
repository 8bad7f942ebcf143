import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { PutIdentityProviderBody } from './identity-provider.schemas.js';
import type { IdentityProviderService } from './identity-provider.service.js';

const tags = ['Identity provider'];

/** The tenant's identity provider (extension; admin only). */
export function identityProviderRoutes(service: IdentityProviderService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/tenant/identity-provider',
      {
        schema: {
          operationId: 'getIdentityProvider',
          extension: true,
          tags,
          summary: 'The tenant’s identity provider (extension; admin). Never returns the client secret',
          response: { 200: Type.Ref('IdentityProvider') },
          problems: ['FORBIDDEN', 'IDENTITY_PROVIDER_NOT_FOUND'],
        },
      },
      async (request) => service.get(request.caller),
    );

    app.put(
      '/api/v1/tenant/identity-provider',
      {
        schema: {
          operationId: 'putIdentityProvider',
          extension: true,
          tags,
          summary: 'Set the tenant’s identity provider (extension; admin with an unscoped credential)',
          description:
            'Users then sign in to the authorization server (the device flow’s page, apps’ authorization code flow) through this OpenID provider: authorization code with PKCE, matched to an active user of this tenant by a verified email in one of `allowedEmailDomains`. Register `redirectUri` of the answer with the provider. `clientSecret` is required the first time; left out or null it keeps the stored one. It is stored encrypted and never returned.',
          body: PutIdentityProviderBody,
          response: { 200: Type.Ref('IdentityProvider') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN'],
        },
      },
      async (request) => service.put(request.caller, request.body),
    );

    app.delete(
      '/api/v1/tenant/identity-provider',
      {
        schema: {
          operationId: 'deleteIdentityProvider',
          extension: true,
          tags,
          summary: 'Remove the tenant’s identity provider (extension; admin with an unscoped credential)',
          response: { 204: Type.Null({ description: 'Removed' }) },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'IDENTITY_PROVIDER_NOT_FOUND'],
        },
      },
      async (request, reply) => {
        await service.remove(request.caller);
        return reply.code(204).send(null);
      },
    );
  };
}
