import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DeploymentParams, PageQuery } from '../../shared/schemas.js';
import { CreateDeploymentBody, ListDeploymentsQuery, UpdateDeploymentBody } from './deployments.schemas.js';
import type { DeploymentsService } from './deployments.service.js';

const tags = ['Deployments'];

export function deploymentsRoutes(service: DeploymentsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    // The spec lists this path with a trailing slash; the router treats both spellings alike.
    app.post(
      '/build/api/v1/deployments/',
      {
        schema: {
          operationId: 'createDeployment',
          tags,
          summary: 'Create a deployment, its starter project and its first build (reference 1.1; role DEVELOPER or above)',
          body: CreateDeploymentBody,
          response: { 200: Type.Ref('Deployment') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'DEPLOYMENT_NAME_TAKEN'],
        },
      },
      async (request) => service.create(request.caller, request.body),
    );

    app.get(
      '/api/v1/deployments',
      {
        schema: {
          operationId: 'listDeployments',
          tags,
          summary: 'List the deployments the caller can view (and, for a scoped key, that are in its scope) (reference 1.2)',
          querystring: ListDeploymentsQuery,
          response: { 200: Type.Ref('DeploymentPage') },
          problems: ['INVALID_CURSOR'],
        },
      },
      async (request) => service.list(request.caller, request.query),
    );

    app.get(
      '/api/v1/deployments/:deploymentId',
      {
        schema: {
          operationId: 'getDeployment',
          tags,
          summary: 'Get a deployment and the caller’s access to it',
          params: DeploymentParams,
          response: { 200: Type.Ref('Deployment') },
          problems: ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND'],
        },
      },
      async (request) => service.get(request.caller, request.params.deploymentId),
    );

    app.put(
      '/api/v1/deployments/:deploymentId',
      {
        schema: {
          operationId: 'updateDeployment',
          tags,
          summary: 'Update a deployment: a partial merge of its settings (reference 1.4; DeploymentUpdate)',
          params: DeploymentParams,
          body: UpdateDeploymentBody,
          response: { 200: Type.Ref('DeploymentSettings') },
          problems: ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND', 'DEPLOYMENT_BUSY', 'DEPLOYMENT_NAME_TAKEN'],
        },
      },
      async (request) => service.update(request.caller, request.params.deploymentId, request.body),
    );

    app.get(
      '/api/v1/deployments/:deploymentId/settings',
      {
        schema: {
          operationId: 'getDeploymentSettings',
          tags,
          summary: 'All deployment settings, secrets excluded (reference 1.6; DeploymentRead)',
          params: DeploymentParams,
          response: { 200: Type.Ref('DeploymentSettings') },
          problems: ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND'],
        },
      },
      async (request) => service.settings(request.caller, request.params.deploymentId),
    );

    app.delete(
      '/api/v1/deployments/:deploymentId',
      {
        schema: {
          operationId: 'deleteDeployment',
          tags,
          summary: 'Delete a deployment with everything in it: policies, repository, builds (reference 1.5; DeploymentDelete)',
          params: DeploymentParams,
          response: { 200: Type.Object({ success: Type.Boolean() }) },
          problems: ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request) => service.remove(request.caller, request.params.deploymentId),
    );

    app.get(
      '/api/v1/deployments/:deploymentId/versions',
      {
        schema: {
          operationId: 'listDeploymentVersions',
          tags,
          summary: 'Runtime versions the deployment can switch to (reference 1.7; DeploymentRead)',
          description:
            'The newest version of each release channel (RUNTIME_VERSIONS) and the versions this tenant ran in the last six months; `isCurrent` marks the one the deployment runs.',
          params: DeploymentParams,
          querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }),
          response: { 200: Type.Ref('DeploymentVersionPage') },
          problems: ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND', 'INVALID_CURSOR'],
        },
      },
      async (request) => service.versions(request.caller, request.params.deploymentId, request.query),
    );

    app.get(
      '/api/v1/regions',
      {
        schema: {
          operationId: 'listRegions',
          tags,
          summary: 'Regions a deployment can run in (reference 1.15; any key)',
          description:
            'From REGIONS, limited to the account’s own list when an operator set one (`npm run admin -- tenant regions`). `items` is a page; `data` the whole list.',
          querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }),
          response: { 200: Type.Ref('RegionsListResponse') },
          problems: ['INVALID_CURSOR'],
        },
      },
      async (request) => service.regions(request.caller, request.query),
    );
  };
}
