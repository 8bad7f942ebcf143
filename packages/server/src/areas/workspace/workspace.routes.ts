import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DeploymentParams, ref } from '../../shared/schemas.js';
import { ListWorkspaceQuery } from './listing.schemas.js';
import { BulkDeleteBody, BulkMoveBody, FavoriteParams, MoveBody } from './workspace.schemas.js';
import type { WorkspaceService } from './workspace.service.js';

const tags = ['Workspace'];
const base = '/api/v1/deployments/:deploymentId/workspace';

export function workspaceRoutes(service: WorkspaceService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      `${base}/move`,
      {
        schema: {
          operationId: 'moveWorkspaceObject',
          tags,
          summary: 'Move one folder, workbook or report into a folder or to the workspace root',
          description:
            'Checks, in order: the item exists in this deployment (404), the destination exists (404), the caller holds MANAGE on a folder or workbook or EDIT on a report, and EDIT on the destination or, at the root, on the deployment (403), the move is valid (400: into itself or below, deeper than 10 levels, a sibling folder of the same name). Moving an item to where it is succeeds and changes nothing.',
          params: DeploymentParams,
          body: MoveBody,
          response: { 200: Type.Ref('Workbook') },
          problems: [
            'DEPLOYMENT_NOT_FOUND',
            'FOLDER_NOT_FOUND',
            'WORKBOOK_NOT_FOUND',
            'REPORT_NOT_FOUND',
            'DESTINATION_NOT_FOUND',
            'FORBIDDEN',
            'INVALID_MOVE',
            'FOLDER_TOO_DEEP',
            'FOLDER_NAME_CONFLICT',
            'DEPLOYMENT_BUSY',
          ],
        },
      },
      async (request) => service.move(request.caller, request.params.deploymentId, request.body),
    );

    app.post(
      `${base}/bulk-move`,
      {
        // The spec declares the body optional at the HTTP level; `items` is still required inside.
        config: { optionalBody: true },
        schema: {
          operationId: 'bulkMoveWorkspaceObjects',
          tags,
          summary: 'Move up to 100 workspace items into one folder or to the root, with per-item failures',
          description:
            'Rules: a well-formed request is 200 however many items fail; repeated (type, id) references collapse to one; items apply one at a time in the given order, each in its own transaction, and earlier moves are not rolled back; each item is checked exactly as the single move checks it, and each `failed` entry carries the status and message the single move would have returned; `failed` is empty if and only if the whole batch applied; `folderId` null moves every item to the root.',
          params: DeploymentParams,
          body: ref(BulkMoveBody),
          response: { 200: Type.Ref('BulkMoveWorkspaceObjectsResponse') },
          problems: ['DEPLOYMENT_NOT_FOUND'],
        },
      },
      async (request) => service.bulkMove(request.caller, request.params.deploymentId, request.body),
    );

    app.get(
      base,
      {
        schema: {
          operationId: 'listWorkspace',
          tags,
          summary: 'List a folder (or the root): folders first, then workbooks and reports; or search the whole workspace',
          params: DeploymentParams,
          querystring: ListWorkspaceQuery,
          response: { 200: Type.Ref('WorkspacePage') },
          problems: ['DEPLOYMENT_NOT_FOUND', 'FOLDER_NOT_FOUND'],
        },
      },
      async (request) => service.list(request.caller, request.params.deploymentId, request.query),
    );

    for (const [method, on] of [
      ['PUT', true],
      ['DELETE', false],
    ] as const) {
      app.route({
        method,
        url: `${base}/favorites/:itemType/:itemId`,
        schema: {
          operationId: on ? 'addFavorite' : 'removeFavorite',
          tags,
          summary: on
            ? 'Extension: mark an item as one of the caller’s favorites (needs VIEW); the reference shows `isFavorite` but names no operation that sets it'
            : 'Extension: unmark an item as a favorite',
          extension: true,
          params: FavoriteParams,
          response: { 204: Type.Null({ description: on ? 'Marked' : 'Unmarked' }) },
          problems: ['DEPLOYMENT_NOT_FOUND', 'FOLDER_NOT_FOUND', 'WORKBOOK_NOT_FOUND', 'REPORT_NOT_FOUND', 'FORBIDDEN', 'DEPLOYMENT_BUSY'],
        },
        handler: async (request, reply) => {
          const { deploymentId, itemType, itemId } = request.params;
          await service.favorite(request.caller, deploymentId, { type: itemType, id: itemId }, on);
          return reply.code(204).send(null);
        },
      });
    }

    app.post(
      `${base}/bulk-delete`,
      {
        schema: {
          operationId: 'bulkDeleteWorkspaceObjects',
          tags,
          summary: 'Delete up to 100 folders, workbooks and reports, in order, with per-item failures',
          description:
            'Each item needs MANAGE. A folder with subfolders is refused (400), so list children before their parent; a deleted folder’s workbooks and reports move to the root.',
          params: DeploymentParams,
          body: ref(BulkDeleteBody),
          response: { 200: Type.Ref('BulkDeleteWorkspaceObjectsResponse') },
          problems: ['DEPLOYMENT_NOT_FOUND'],
        },
      },
      async (request) => service.bulkDelete(request.caller, request.params.deploymentId, request.body),
    );
  };
}
