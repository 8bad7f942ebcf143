import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DeploymentParams } from '../../shared/schemas.js';
import { CommitsQuery } from './commits.schemas.js';
import type { CommitsService } from './commits.service.js';

const tags = ['Data model'];

export function commitsRoutes(service: CommitsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/build/api/v1/deployments/:deploymentId/commits',
      {
        schema: {
          operationId: 'listCommits',
          extension: true,
          tags,
          summary: 'A branch’s commits, newest first (extension; SchemaRead)',
          description:
            'Beyond the reference. Each commit has its author (the user whose credential made it), message and times. Cursor-paginated: a cursor continues the history as it was when the first page was read.',
          params: DeploymentParams,
          querystring: CommitsQuery,
          response: { 200: Type.Ref('CommitPage') },
          problems: ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND', 'BRANCH_NOT_FOUND', 'INVALID_CURSOR'],
        },
      },
      async (request) => service.list(request.caller, request.params.deploymentId, request.query),
    );
  };
}
