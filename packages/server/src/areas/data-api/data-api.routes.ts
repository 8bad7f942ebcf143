import { dataApiToken } from '../../http/credential-check.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Id } from '../../shared/schemas.js';
import type { Tenant } from '../../http/tenant.js';
import { EMBED_TOKEN_TYPE } from '../embed-sessions/index.js';
import type { EmbedPrincipal } from '../embed-sessions/index.js';
import { unauthenticated, type DataApiEnvironment, type DataApiGrant, type DataApiService } from './data-api.service.js';

/** The `typ` of a JWT's header, without verifying anything (the verifier of that kind does). */
function tokenType(token: string): unknown {
  try {
    return (JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8')) as { typ?: unknown }).typ;
  } catch {
    return undefined;
  }
}

const REST = Type.String({ maxLength: 512 });

/**
 * The deployments' data APIs, on the tenant's host (not part of the management API's document):
 * `/deployments/<id>/data-api/v1/...` for production and
 * `/deployments/<id>/dev-mode/<branch>/data-api/v1/...` for a branch's environment. The caller is
 * a data-API token of that environment (raw or `Bearer`), an embed token of that deployment and
 * branch, or a REST credential with DeploymentRead.
 */
export function dataApiRoutes(dataApi: DataApiService, verifyEmbed: (tenant: Tenant, token: string) => Promise<EmbedPrincipal>): FastifyPluginAsyncTypebox {
  return async (app) => {
    const routes = [
      { url: '/deployments/:deploymentId/data-api/v1/*', params: Type.Object({ deploymentId: Id, '*': REST }) },
      {
        url: '/deployments/:deploymentId/dev-mode/:branchName/data-api/v1/*',
        params: Type.Object({ deploymentId: Id, branchName: Type.String({ minLength: 1, maxLength: 255 }), '*': REST }),
      },
    ];
    for (const route of routes) {
      app.route({
        method: ['GET', 'POST'],
        url: route.url,
        config: { credential: 'data-api' },
        schema: {
          hide: true,
          params: route.params,
          problems: ['UNAUTHENTICATED', 'FORBIDDEN', 'DEPLOYMENT_NOT_FOUND', 'ENVIRONMENT_NOT_FOUND', 'RUNTIME_UNAVAILABLE'],
        },
        handler: async (request, reply) => {
          const params = request.params as { deploymentId: number; branchName?: string; '*': string };
          let env: DataApiEnvironment;
          let grant: DataApiGrant;
          if (request.caller) {
            ({ env, grant } = await dataApi.authorizeCaller(request.caller, params.deploymentId, params.branchName ?? null));
          } else {
            const token = dataApiToken(request.headers.authorization) ?? '';
            // A token holder learns nothing about deployments its token is not for.
            env = await dataApi.environment(request.tenant, params.deploymentId, params.branchName ?? null).catch(() => {
              throw unauthenticated('The token is not valid for a data API at this URL.');
            });
            grant =
              tokenType(token) === EMBED_TOKEN_TYPE
                ? dataApi.embedGrant(env, await verifyEmbed(request.tenant, token))
                : await dataApi.authorizeToken(request.tenant, env, token);
          }
          const queryAt = request.url.indexOf('?');
          const answer = await dataApi.forward(env, grant, {
            method: request.method,
            path: params['*'],
            query: queryAt === -1 ? '' : request.url.slice(queryAt + 1),
            body: request.method === 'POST' ? request.body : undefined,
            requestId: request.id,
          });
          return reply.code(answer.status).type(answer.contentType).send(answer.body);
        },
      });
    }
  };
}
