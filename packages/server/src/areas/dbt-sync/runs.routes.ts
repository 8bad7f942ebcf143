import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { decodeCursor, encodeCursor, pageRequest } from '../../shared/pagination.js';
import { ApiError } from '../../shared/problems.js';
import { DeploymentParams } from '../../shared/schemas.js';
import { DbtSyncHistoryQuery, DbtSyncPageQuery, DbtSyncParams, START_BODY_LIMIT, StartDbtSyncBody } from './runs.schemas.js';
import type { DbtSyncService } from './runs.service.js';

const tags = ['dbt-sync'];
const COMMON = ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND'] as const;

/** A cursor naming a position: the id (or number) of the last item served. */
function afterNumber(after: string | undefined): number | undefined {
  if (after === undefined) return undefined;
  const [n] = decodeCursor(after, 1);
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw new ApiError('INVALID_CURSOR', 'The `after` cursor was not issued by this list.');
  return n;
}

function pageOf<T, U>(rows: T[], first: number, after: string | undefined, key: (row: T) => number, shape: (row: T) => U) {
  const items = rows.slice(0, first);
  const head = items[0];
  const last = items[items.length - 1];
  return {
    items: items.map(shape),
    pageInfo: {
      startCursor: head === undefined ? null : encodeCursor([key(head)]),
      endCursor: last === undefined ? null : encodeCursor([key(last)]),
      hasNextPage: rows.length > first,
      hasPreviousPage: after !== undefined,
    },
  };
}

/** Transformation-project syncs (reference 7.1-7.7). */
export function dbtSyncRoutes(service: DbtSyncService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/v1/deployments/:deploymentId/dbt-sync',
      {
        bodyLimit: START_BODY_LIMIT,
        config: { optionalBody: true },
        schema: {
          operationId: 'startDbtSync',
          tags,
          summary: 'Start a sync: generate cubes from the dbt project’s manifest (reference 7.1; SchemaUpdate)',
          description:
            'Bodies up to 50 MB. `git` reads the compiled manifest committed at `ref` (it never runs dbt); `manifest` converts the one sent. A given `branchName` must be new (the deploy branch or an existing branch is 400). One running sync per deployment: a second start is 409 `DBT_SYNC_RUNNING`.',
          params: DeploymentParams,
          body: StartDbtSyncBody,
          response: { 200: Type.Ref('StartDbtSyncResponse') },
          problems: [...COMMON, 'INVALID_BRANCH', 'DBT_SYNC_RUNNING', 'PAYLOAD_TOO_LARGE'],
        },
      },
      async (request) => service.start(request.caller, request.params.deploymentId, request.body ?? {}),
    );

    app.get(
      '/api/v1/deployments/:deploymentId/dbt-sync',
      {
        schema: {
          operationId: 'listDbtSyncs',
          tags,
          summary: 'Sync history, newest first (reference 7.2; SchemaRead)',
          params: DeploymentParams,
          querystring: DbtSyncHistoryQuery,
          response: { 200: Type.Ref('DbtSyncRunPage') },
          problems: [...COMMON, 'INVALID_CURSOR'],
        },
      },
      async (request) => {
        const page = pageRequest(request.query);
        const beforeId = afterNumber(page.after);
        const rows = await service.history(request.caller, request.params.deploymentId, {
          limit: page.first + 1,
          ...(request.query.status === undefined ? {} : { status: request.query.status }),
          ...(request.query.trigger === undefined ? {} : { trigger: request.query.trigger }),
          ...(beforeId === undefined ? {} : { beforeId }),
        });
        return pageOf(
          rows,
          page.first,
          page.after,
          (r) => r.id,
          ({ id: _id, ...run }) => run,
        );
      },
    );

    app.get(
      '/api/v1/deployments/:deploymentId/dbt-sync/:syncJobId',
      {
        schema: {
          operationId: 'getDbtSyncStatus',
          tags,
          summary: 'Status of a sync, to poll until COMPLETED or FAILED (reference 7.3; SchemaRead)',
          params: DbtSyncParams,
          response: { 200: Type.Ref('DbtSyncStatusResponse') },
          problems: [...COMMON, 'DBT_SYNC_NOT_FOUND'],
        },
      },
      async (request) => service.status(request.caller, request.params.deploymentId, request.params.syncJobId),
    );

    app.delete(
      '/api/v1/deployments/:deploymentId/dbt-sync/:syncJobId',
      {
        schema: {
          operationId: 'cancelDbtSync',
          tags,
          summary: 'Cancel a running sync: it stops before its next stage, the branch unchanged (reference 7.4; SchemaUpdate)',
          description: 'A sync that has ended is 409 `DBT_SYNC_NOT_RUNNING`.',
          params: DbtSyncParams,
          response: { 200: Type.Ref('DbtSyncCancelResponse') },
          problems: [...COMMON, 'DBT_SYNC_NOT_FOUND', 'DBT_SYNC_NOT_RUNNING'],
        },
      },
      async (request) => service.cancel(request.caller, request.params.deploymentId, request.params.syncJobId),
    );

    app.get(
      '/api/v1/deployments/:deploymentId/dbt-sync/:syncJobId/result',
      {
        schema: {
          operationId: 'getDbtSyncResult',
          tags,
          summary: 'Result of a completed sync (reference 7.5; SchemaRead)',
          description: 'Before the sync is COMPLETED (or when it failed): 409 `DBT_SYNC_NOT_COMPLETED`.',
          params: DbtSyncParams,
          response: { 200: Type.Ref('DbtSyncResultResponse') },
          problems: [...COMMON, 'DBT_SYNC_NOT_FOUND', 'DBT_SYNC_NOT_COMPLETED'],
        },
      },
      async (request) => service.result(request.caller, request.params.deploymentId, request.params.syncJobId),
    );

    app.get(
      '/api/v1/deployments/:deploymentId/dbt-sync/:syncJobId/logs',
      {
        schema: {
          operationId: 'getDbtSyncLogs',
          tags,
          summary: 'Log of a sync, oldest first (reference 7.6; SchemaRead)',
          params: DbtSyncParams,
          querystring: DbtSyncPageQuery,
          response: { 200: Type.Ref('DbtSyncLogPage') },
          problems: [...COMMON, 'DBT_SYNC_NOT_FOUND', 'INVALID_CURSOR'],
        },
      },
      async (request) => {
        const page = pageRequest(request.query);
        const afterSeq = afterNumber(page.after);
        const lines = await service.logs(request.caller, request.params.deploymentId, request.params.syncJobId, {
          limit: page.first + 1,
          ...(afterSeq === undefined ? {} : { afterSeq }),
        });
        return pageOf(
          lines,
          page.first,
          page.after,
          (l) => l.seq,
          ({ seq: _seq, ...entry }) => entry,
        );
      },
    );

    app.get(
      '/api/v1/deployments/:deploymentId/dbt-sync/:syncJobId/generated-files',
      {
        schema: {
          operationId: 'getDbtSyncGeneratedFiles',
          tags,
          summary: 'Generated files of an `output: files` sync, for one hour after it completed (reference 7.7; DeploymentRead)',
          description:
            '404 `DBT_SYNC_FILES_NOT_FOUND` for a sync that committed to a branch, and once the hour is over; 409 `DBT_SYNC_NOT_COMPLETED` while it runs.',
          params: DbtSyncParams,
          querystring: DbtSyncPageQuery,
          response: { 200: Type.Ref('DbtSyncGeneratedFilesPage') },
          problems: [...COMMON, 'DBT_SYNC_NOT_FOUND', 'DBT_SYNC_FILES_NOT_FOUND', 'DBT_SYNC_NOT_COMPLETED', 'INVALID_CURSOR'],
        },
      },
      async (request) => {
        const page = pageRequest(request.query);
        const after = afterNumber(page.after) ?? -1;
        const files = await service.files(request.caller, request.params.deploymentId, request.params.syncJobId);
        const indexed = files.map((f, i) => ({ ...f, i })).slice(after + 1, after + 2 + page.first);
        return pageOf(
          indexed,
          page.first,
          page.after,
          (f) => f.i,
          ({ i: _i, ...file }) => file,
        );
      },
    );
  };
}
