import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DeploymentParams } from '../../shared/schemas.js';
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
          summary: 'Create a deployment (admins only)',
          body: CreateDeploymentBody,
          response: { 201: Type.Ref('Deployment') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN'],
        },
      },
      async (request, reply) => reply.code(201).send(await service.create(request.caller, request.body)),
    );

    app.get(
      '/api/v1/deployments',
      {
        schema: {
          operationId: 'listDeployments',
          tags,
          summary: 'List the deployments the caller can view (and, for a scoped key, that are in its scope)',
          querystring: ListDeploymentsQuery,
          response: { 200: Type.Ref('DeploymentPage') },
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
          summary: 'Update a deployment: rename, and merge settings as a JSON merge patch (needs MANAGE)',
          params: DeploymentParams,
          body: UpdateDeploymentBody,
          response: { 200: Type.Ref('Deployment') },
          problems: ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND', 'DEPLOYMENT_BUSY'],
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
          summary: 'All deployment settings, secrets excluded',
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
          summary: 'Delete a deployment and the policies granted on it (needs MANAGE)',
          params: DeploymentParams,
          response: { 204: Type.Null({ description: 'Deleted' }) },
          problems: ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request, reply) => {
        await service.remove(request.caller, request.params.deploymentId);
        return reply.code(204).send(null);
      },
    );
  };
}
