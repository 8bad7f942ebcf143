import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { decodeCursor, encodeCursor, pageRequest } from '../../shared/pagination.js';
import { ApiError, notFound } from '../../shared/problems.js';
import { DeploymentParams } from '../../shared/schemas.js';
import { BuildLogQuery, BuildParams, BuildsQuery, BuildStatusQuery, ValidateQuery } from './builds.schemas.js';
import { toBuild, type BuildsService } from './builds.service.js';
import type { ValidateService } from './validate.service.js';

const tags = ['Data model'];
const COMMON = ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND'] as const;

/** A cursor naming a position: the id (or sequence number) of the last item served. */
function afterNumber(after: string | undefined): number | undefined {
  if (after === undefined) return undefined;
  const [n] = decodeCursor(after, 1);
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw new ApiError('INVALID_CURSOR', 'The `after` cursor was not issued by this list.');
  return n;
}

function pageOf<T>(rows: T[], first: number, after: string | undefined, key: (row: T) => number) {
  const items = rows.slice(0, first);
  const head = items[0];
  const last = items[items.length - 1];
  return {
    items,
    pageInfo: {
      startCursor: head === undefined ? null : encodeCursor([key(head)]),
      endCursor: last === undefined ? null : encodeCursor([key(last)]),
      hasNextPage: rows.length > first,
      hasPreviousPage: after !== undefined,
    },
  };
}

export function buildsRoutes(builds: BuildsService, validation: ValidateService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/deployments/:deploymentId/build-status',
      {
        schema: {
          operationId: 'getBuildStatus',
          tags,
          summary: 'The latest build of a branch (reference 1.8; DeploymentRead)',
          params: DeploymentParams,
          querystring: BuildStatusQuery,
          response: { 200: Type.Ref('BuildStatusResponse') },
          problems: [...COMMON],
        },
      },
      async (request) => builds.status(request.caller, request.params.deploymentId, request.query.branchName),
    );

    app.get(
      '/api/v1/deployments/:deploymentId/builds',
      {
        schema: {
          operationId: 'listBuilds',
          extension: true,
          tags,
          summary: 'Builds of a deployment, newest first (extension; DeploymentRead)',
          params: DeploymentParams,
          querystring: BuildsQuery,
          response: { 200: Type.Ref('BuildPage') },
          problems: [...COMMON, 'INVALID_CURSOR'],
        },
      },
      async (request) => {
        const page = pageRequest(request.query);
        const beforeId = afterNumber(page.after);
        const rows = await builds.list(request.caller, request.params.deploymentId, {
          limit: page.first + 1,
          ...(request.query.branchName === undefined ? {} : { branchName: request.query.branchName }),
          ...(beforeId === undefined ? {} : { beforeId }),
        });
        return pageOf(rows, page.first, page.after, (b) => b.id);
      },
    );

    app.get(
      '/api/v1/deployments/:deploymentId/builds/:buildId',
      {
        schema: {
          operationId: 'getBuild',
          extension: true,
          tags,
          summary: 'One build (extension; DeploymentRead)',
          params: BuildParams,
          response: { 200: Type.Ref('Build') },
          problems: [...COMMON, 'BUILD_NOT_FOUND'],
        },
      },
      async (request) => {
        const build = await builds.get(request.caller, request.params.deploymentId, request.params.buildId);
        if (!build) throw notFound('BUILD_NOT_FOUND', 'Build', request.params.buildId);
        return toBuild(build);
      },
    );

    app.get(
      '/api/v1/deployments/:deploymentId/builds/:buildId/logs',
      {
        schema: {
          operationId: 'getBuildLogs',
          extension: true,
          tags,
          summary: 'The log lines of a build, oldest first (extension; DeploymentRead)',
          params: BuildParams,
          querystring: BuildLogQuery,
          response: { 200: Type.Ref('BuildLogPage') },
          problems: [...COMMON, 'BUILD_NOT_FOUND', 'INVALID_CURSOR'],
        },
      },
      async (request) => {
        const page = pageRequest(request.query);
        const afterSeq = afterNumber(page.after);
        const lines = await builds.logs(request.caller, request.params.deploymentId, request.params.buildId, {
          limit: page.first + 1,
          ...(afterSeq === undefined ? {} : { afterSeq }),
        });
        if (!lines) throw notFound('BUILD_NOT_FOUND', 'Build', request.params.buildId);
        return pageOf(lines, page.first, page.after, (l) => l.seq);
      },
    );

    app.get(
      '/build/api/v1/deployments/:deploymentId/data-model/validate',
      {
        schema: {
          operationId: 'validateDataModel',
          tags,
          summary: 'Validate the data model of a branch (reference 2.19; SchemaRead)',
          description:
            'Neither parameter: the deploy branch. `devMode=true`: the credential’s active dev-mode branch with its pending changes. An invalid model is a 200 with `valid: false`; each error has its file and, where known, line and column.',
          params: DeploymentParams,
          querystring: ValidateQuery,
          response: { 200: Type.Ref('DataModelValidationResponse') },
          problems: [...COMMON, 'BRANCH_NOT_FOUND', 'NO_DEV_MODE'],
        },
      },
      async (request) => validation.validate(request.caller, request.params.deploymentId, request.query),
    );
  };
}
