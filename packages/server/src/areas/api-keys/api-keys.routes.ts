import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ApiKeysService } from './api-keys.service.js';
import { ApiKeyParams, CreateApiKeyBody, ListApiKeysQuery } from './api-keys.schemas.js';

export function apiKeysRoutes(service: ApiKeysService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/v1/api-keys',
      {
        schema: {
          operationId: 'createApiKey',
          tags: ['API keys'],
          summary: 'Create an API key; the secret is in this response only',
          body: CreateApiKeyBody,
          response: { 201: Type.Ref('CreatedApiKey') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'INVALID_OPERATION', 'USER_NOT_FOUND', 'DEPLOYMENT_NOT_FOUND'],
        },
      },
      async (request, reply) => reply.code(201).send(await service.create(request.caller, request.body)),
    );

    app.get(
      '/api/v1/api-keys',
      {
        schema: {
          operationId: 'listApiKeys',
          tags: ['API keys'],
          summary: 'List API keys (admins: every key; others: their own). Never returns secrets',
          querystring: ListApiKeysQuery,
          response: { 200: Type.Ref('ApiKeyPage') },
          problems: ['FORBIDDEN'],
        },
      },
      async (request) => service.list(request.caller, request.query),
    );

    app.delete(
      '/api/v1/api-keys/:apiKeyId',
      {
        schema: {
          operationId: 'revokeApiKey',
          tags: ['API keys'],
          summary: 'Revoke an API key at once',
          params: ApiKeyParams,
          response: { 204: Type.Null({ description: 'Revoked' }) },
          problems: ['API_KEY_NOT_FOUND'],
        },
      },
      async (request, reply) => {
        await service.revoke(request.caller, request.params.apiKeyId);
        return reply.code(204).send(null);
      },
    );
  };
}
