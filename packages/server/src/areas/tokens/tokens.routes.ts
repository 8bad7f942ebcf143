import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DeploymentParams, ref } from '../../shared/schemas.js';
import { CreateDeploymentEnvironmentTokenInputSchema, CreateDeploymentTokenInputSchema, EnvironmentParams, EnvironmentTokensQuery } from './tokens.schemas.js';
import type { TokensService } from './tokens.service.js';

const tags = ['Deployments'];
const COMMON = ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND', 'ENVIRONMENT_NOT_FOUND'] as const;
const base = '/api/v1/deployments/:deploymentId/environments/:environmentId';

const RULES =
  'Only the scopes `meta` and `sql-runner` are ever signed, others are dropped silently; `sql-runner` needs EDIT access on the deployment. ' +
  'A caller without EDIT access gets every `security_context` key dropped; a `scope` key of the security context is never signed. The response shows what was signed.';

/** Data-API tokens of a deployment and its environments (reference 1.16, 1.18-1.20). */
export function tokensRoutes(service: TokensService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/v1/deployments/:deploymentId/token',
      {
        config: { optionalBody: true },
        schema: {
          operationId: 'createDeploymentToken',
          tags,
          summary: 'Mint a token for the deployment’s production data API (reference 1.16; DeploymentRead)',
          description:
            'A JWT signed with the tenant’s key (ES256; keys at `/api/v1/data-api/jwks.json`), for the audience `<deploymentUrl>/data-api/v1`, naming the deployment, the `production` environment and the caller. It lives `expiresIn` seconds (60 to 86400; default 86400).',
          params: DeploymentParams,
          body: Type.Optional(ref(CreateDeploymentTokenInputSchema)),
          response: { 200: Type.Ref('DeploymentTokenResponse') },
          problems: ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND'],
        },
      },
      async (request) => service.deploymentToken(request.caller, request.params.deploymentId, request.body ?? undefined),
    );

    app.get(
      `${base}/tokens`,
      {
        schema: {
          operationId: 'listEnvironmentTokens',
          tags,
          summary: 'The caller’s own live tokens of an environment (reference 1.18; DeploymentRead)',
          description: 'Only the tokens the calling user minted, among the newest 1,000 live tokens of the environment, newest first.',
          params: EnvironmentParams,
          querystring: EnvironmentTokensQuery,
          response: { 200: Type.Ref('DeploymentEnvironmentTokensListResponse') },
          problems: [...COMMON, 'INVALID_CURSOR'],
        },
      },
      async (request) => service.list(request.caller, request.params.deploymentId, request.params.environmentId, request.query),
    );

    app.post(
      `${base}/tokens`,
      {
        schema: {
          operationId: 'createEnvironmentToken',
          tags,
          summary: 'Mint a token for an environment’s data API (reference 1.19; DeploymentRead)',
          description: `${RULES} It lives \`expires_in\` seconds (1 to 3600; default 3600).`,
          params: EnvironmentParams,
          body: ref(CreateDeploymentEnvironmentTokenInputSchema),
          response: { 200: Type.Ref('DeploymentEnvironmentTokenResponse') },
          problems: [...COMMON],
        },
      },
      async (request) => service.environmentToken(request.caller, request.params.deploymentId, request.params.environmentId, request.body),
    );

    app.post(
      `${base}/tokens-for-meta-sync`,
      {
        schema: {
          operationId: 'createEnvironmentMetaSyncToken',
          tags,
          summary: 'Mint a metadata-sync token for an environment (reference 1.20; DeploymentRead)',
          description:
            'The `meta` scope is always signed and other requested scopes are ignored, except `meta-private`, added when listed and the caller holds SchemaRead (VIEW on the deployment, which every caller here holds). The security context follows the rules of the environment token.',
          params: EnvironmentParams,
          body: ref(CreateDeploymentEnvironmentTokenInputSchema),
          response: { 200: Type.Ref('DeploymentEnvironmentTokenResponse') },
          problems: [...COMMON],
        },
      },
      async (request) => service.metaSyncToken(request.caller, request.params.deploymentId, request.params.environmentId, request.body),
    );
  };
}
