import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { EmbedTenantsService } from './embed-tenants.service.js';
import { EmbedSearchQuery, EmbedTenantParams, ProvisionEmbedUserBody, ProvisionEmbedUsersBody } from './embed-tenants.schemas.js';

const tags = ['Embedding'];

/** Reference 4.1-4.5: embed tenants and their users. */
export function embedTenantsRoutes(service: EmbedTenantsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/embed-tenants',
      {
        config: { apiKeyScheme: true },
        schema: {
          operationId: 'listEmbedTenants',
          tags,
          summary: 'List embed tenants (admin only), by name; `search` matches part of the name, ignoring case',
          querystring: EmbedSearchQuery,
          response: { 200: Type.Ref('EmbedTenantPage') },
          problems: ['FORBIDDEN'],
        },
      },
      async (request) => service.listTenants(request.caller, request.query),
    );

    app.delete(
      '/api/v1/embed-tenants/:embedTenantName',
      {
        config: { apiKeyScheme: true },
        schema: {
          operationId: 'deleteEmbedTenant',
          tags,
          summary:
            'Delete an embed tenant with its users, groups, memberships, attribute values and shares (admin only); idempotent; the name must be in canonical lowercase form',
          params: EmbedTenantParams,
          response: { 204: Type.Null({ description: 'Deleted, or did not exist' }) },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN'],
        },
      },
      async (request, reply) => {
        await service.deleteTenant(request.caller, request.params.embedTenantName);
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/api/v1/embed-tenants/:embedTenantName/users',
      {
        config: { apiKeyScheme: true },
        schema: {
          operationId: 'listEmbedUsers',
          tags,
          summary: 'List the users of an embed tenant (admin only), by email; `search` matches part of the email or external id',
          params: EmbedTenantParams,
          querystring: EmbedSearchQuery,
          response: { 200: Type.Ref('EmbedUserPage') },
          problems: ['FORBIDDEN', 'EMBED_TENANT_NOT_FOUND'],
        },
      },
      async (request) => service.listUsers(request.caller, request.params.embedTenantName, request.query),
    );

    app.post(
      '/api/v1/embed-tenants/:embedTenantName/user',
      {
        config: { apiKeyScheme: true },
        schema: {
          operationId: 'provisionEmbedUser',
          tags,
          summary: 'Create or update one embed user to the state the body describes (admin only); creates the embed tenant on demand',
          params: EmbedTenantParams,
          body: ProvisionEmbedUserBody,
          response: { 200: Type.Ref('EmbedUser') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'GROUPS_NOT_FOUND', 'EMBED_USER_LIMIT'],
        },
      },
      async (request) => service.provision(request.caller, request.params.embedTenantName, request.body),
    );

    app.post(
      '/api/v1/embed-tenants/:embedTenantName/users',
      {
        config: { apiKeyScheme: true },
        schema: {
          operationId: 'provisionEmbedUsers',
          tags,
          summary: 'Create or update 1-100 embed users, one at a time in order (admin only); failures are listed per entry',
          params: EmbedTenantParams,
          body: ProvisionEmbedUsersBody,
          response: { 200: Type.Ref('ProvisionEmbedUsersResponse') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN'],
        },
      },
      async (request) => service.provisionBulk(request.caller, request.params.embedTenantName, request.body.users),
    );
  };
}
