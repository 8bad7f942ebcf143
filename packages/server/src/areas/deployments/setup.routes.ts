import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DeploymentParams, LegacyPageQuery, PageQuery, ref } from '../../shared/schemas.js';
import { CreationStep } from './deployments.schemas.js';
import type { EnvironmentsService } from './environments.service.js';
import type { SetupService } from './setup.service.js';

const tags = ['Deployments'];

const ApiCredential = Type.Object({
  type: Type.Enum(['rest', 'sql']),
  version: Type.Integer({ minimum: 1 }),
  url: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  host: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  port: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  database: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

export const DeploymentEnvironmentSchema = Type.Object(
  {
    id: Type.String(),
    type: Type.Enum(['production', 'staging', 'development']),
    api_credentials: Type.Array(ApiCredential),
    branch: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    user: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { $id: 'DeploymentEnvironment' },
);

export const DeploymentEnvironmentsListSchema = Type.Object(
  {
    items: Type.Array(Type.Ref('DeploymentEnvironment')),
    data: Type.Array(Type.Ref('DeploymentEnvironment'), { deprecated: true }),
    pageInfo: Type.Ref('PageInfo'),
    pagination: Type.Union([Type.Object({ total: Type.Integer(), offset: Type.Integer(), limit: Type.Integer() }), Type.Null()], { deprecated: true }),
  },
  { $id: 'DeploymentEnvironmentsListResponse' },
);

export const setupSchemas = [DeploymentEnvironmentSchema, DeploymentEnvironmentsListSchema];

export function setupRoutes(setup: SetupService, environments: EnvironmentsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/v1/deployments/:deploymentId/creation-step/advance',
      {
        schema: {
          operationId: 'advanceCreationStep',
          tags,
          summary: 'Move the setup wizard to a step (reference 1.13; DeploymentUpdate)',
          description:
            'Any step may follow any other, forward or back, as the reference does not restrict the moves; the step is the wizard’s bookmark and gates nothing (whether production has built is `GET …/build-status`’s to say). Advancing to the current step changes nothing.',
          params: DeploymentParams,
          body: Type.Object({ creationStep: ref(CreationStep) }, { additionalProperties: false }),
          response: { 200: Type.Ref('Deployment') },
          problems: ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request) => setup.advance(request.caller, request.params.deploymentId, request.body.creationStep),
    );

    app.post(
      '/api/v1/deployments/:deploymentId/creation-step/reset',
      {
        config: { optionalBody: true },
        schema: {
          operationId: 'resetCreationStep',
          tags,
          summary: 'Send the setup wizard back to `project` (reference 1.14; DeploymentUpdate)',
          params: DeploymentParams,
          response: { 200: Type.Ref('Deployment') },
          problems: ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request) => setup.reset(request.caller, request.params.deploymentId),
    );

    app.get(
      '/api/v1/deployments/:deploymentId/environments',
      {
        schema: {
          operationId: 'listEnvironments',
          tags,
          summary: 'The deployment’s environments: production, staging branches, developers in dev mode (reference 1.17; DeploymentRead)',
          params: DeploymentParams,
          querystring: Type.Object(
            {
              ...PageQuery,
              type: Type.Optional(Type.Enum(['production', 'staging', 'development'])),
              ...LegacyPageQuery,
            },
            { additionalProperties: false },
          ),
          response: { 200: Type.Ref('DeploymentEnvironmentsListResponse') },
          problems: ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND', 'INVALID_CURSOR'],
        },
      },
      async (request) => environments.list(request.caller, request.params.deploymentId, request.query),
    );
  };
}
