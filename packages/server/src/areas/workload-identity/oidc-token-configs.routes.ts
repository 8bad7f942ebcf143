import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ref } from '../../shared/schemas.js';
import { CreateOidcTokenConfigBody, OidcTokenConfigParams, UpdateOidcTokenConfigBody } from './oidc-token-configs.schemas.js';
import type { OidcTokenConfigsService } from './oidc-token-configs.service.js';

const tags = ['Workload identity'];
const WRITE = ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN'] as const;

/** The tenant's OIDC token configs: workload identity for its deployments (reference 5.14-5.18). */
export function oidcTokenConfigsRoutes(service: OidcTokenConfigsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/oidc-token-configs',
      {
        schema: {
          operationId: 'listOidcTokenConfigs',
          tags,
          summary: 'List the OIDC token configs (reference 5.14; admin only)',
          description: 'A bare array, oldest first, not paginated.',
          response: { 200: Type.Array(Type.Ref('OidcTokenConfig')) },
          problems: ['FORBIDDEN'],
        },
      },
      async (request) => service.list(request.caller),
    );
    app.post(
      '/api/v1/oidc-token-configs',
      {
        schema: {
          operationId: 'createOidcTokenConfig',
          tags,
          summary: 'Create an OIDC token config (reference 5.15; admin only)',
          description:
            'One config per cloud (`AWS`, `GCP`, `Azure`), any number of `Custom`. AWS gets the audience `sts.amazonaws.com`, Azure `api://AzureADTokenExchange`; GCP takes its workload-identity provider and Custom its audience as `customAudience`. Every running deployment environment receives the token as a file, renewed before its hour ends (see docs/api/workload-identity.md).',
          body: ref(CreateOidcTokenConfigBody),
          response: { 200: Type.Ref('OidcTokenConfig') },
          problems: [...WRITE, 'OIDC_TOKEN_CONFIG_EXISTS'],
        },
      },
      async (request) => service.create(request.caller, request.body),
    );
    app.get(
      '/api/v1/oidc-token-configs/:configId',
      {
        schema: {
          operationId: 'getOidcTokenConfig',
          tags,
          summary: 'Get an OIDC token config (reference 5.16; admin only)',
          params: OidcTokenConfigParams,
          response: { 200: Type.Ref('OidcTokenConfig') },
          problems: ['FORBIDDEN', 'OIDC_TOKEN_CONFIG_NOT_FOUND'],
        },
      },
      async (request) => service.get(request.caller, request.params.configId),
    );
    app.put(
      '/api/v1/oidc-token-configs/:configId',
      {
        schema: {
          operationId: 'updateOidcTokenConfig',
          tags,
          summary: 'Update an OIDC token config (reference 5.17; admin only)',
          description: 'The fields given change; the type never does. New claims or subject reach the running deployments at once, in their next token file.',
          params: OidcTokenConfigParams,
          body: ref(UpdateOidcTokenConfigBody),
          response: { 200: Type.Ref('OidcTokenConfig') },
          problems: [...WRITE, 'OIDC_TOKEN_CONFIG_NOT_FOUND', 'OIDC_TOKEN_CONFIG_EXISTS'],
        },
      },
      async (request) => service.update(request.caller, request.params.configId, request.body),
    );
    app.delete(
      '/api/v1/oidc-token-configs/:configId',
      {
        schema: {
          operationId: 'deleteOidcTokenConfig',
          tags,
          summary: 'Delete an OIDC token config (reference 5.18; admin only)',
          params: OidcTokenConfigParams,
          response: { 200: Type.Object({}) },
          problems: [...WRITE, 'OIDC_TOKEN_CONFIG_NOT_FOUND'],
        },
      },
      async (request) => service.remove(request.caller, request.params.configId),
    );
  };
}
