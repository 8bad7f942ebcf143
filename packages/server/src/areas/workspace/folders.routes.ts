import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DeploymentParams } from '../../shared/schemas.js';
import { CreateFolderBody, FolderParams, ListFoldersQuery, UpdateFolderBody } from './folders.schemas.js';
import type { FoldersService } from './folders.service.js';

const tags = ['Folders'];
const base = '/api/v1/deployments/:deploymentId/folders';

export function foldersRoutes(service: FoldersService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      base,
      {
        schema: {
          operationId: 'createFolder',
          tags,
          summary: 'Create a folder (EXPLORER or above, EDIT on the parent or, at the top level, on the deployment)',
          params: DeploymentParams,
          body: CreateFolderBody,
          response: { 201: Type.Ref('Folder') },
          problems: ['DEPLOYMENT_NOT_FOUND', 'FOLDER_NOT_FOUND', 'FORBIDDEN', 'FOLDER_TOO_DEEP', 'FOLDER_NAME_TAKEN', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request, reply) => reply.code(201).send(await service.create(request.caller, request.params.deploymentId, request.body)),
    );

    app.get(
      base,
      {
        schema: {
          operationId: 'listFolders',
          tags,
          summary: 'List the folders the caller can view, by id, cursor-paginated',
          params: DeploymentParams,
          querystring: ListFoldersQuery,
          response: { 200: Type.Ref('FolderPage') },
          problems: ['DEPLOYMENT_NOT_FOUND', 'FOLDER_NOT_FOUND'],
        },
      },
      async (request) => service.list(request.caller, request.params.deploymentId, request.query),
    );

    app.get(
      `${base}/:folderId`,
      {
        schema: {
          operationId: 'getFolder',
          tags,
          summary: 'Get a folder with its parent and path',
          params: FolderParams,
          response: { 200: Type.Ref('Folder') },
          problems: ['DEPLOYMENT_NOT_FOUND', 'FOLDER_NOT_FOUND', 'FORBIDDEN'],
        },
      },
      async (request) => service.get(request.caller, request.params.deploymentId, request.params.folderId),
    );

    app.get(
      `${base}/:folderId/ancestors`,
      {
        schema: {
          operationId: 'getFolderAncestors',
          tags,
          summary: 'A folder’s path as folders, from the top-level folder down to the folder itself',
          description:
            'The folder last, so the answer is the breadcrumb that ends at it. Needs VIEW on the folder, as GET does: 404 for a folder not in this deployment, 403 without access. A folder above it that the caller may not view is left out (its id and name stay in the folder’s `folderPath`).',
          params: FolderParams,
          response: { 200: Type.Array(Type.Ref('Folder')) },
          problems: ['DEPLOYMENT_NOT_FOUND', 'FOLDER_NOT_FOUND', 'FORBIDDEN'],
        },
      },
      async (request) => service.ancestors(request.caller, request.params.deploymentId, request.params.folderId),
    );

    app.patch(
      `${base}/:folderId`,
      {
        schema: {
          operationId: 'renameFolder',
          tags,
          summary: 'Rename a folder (needs EDIT); moving is done with the move endpoints',
          params: FolderParams,
          body: UpdateFolderBody,
          response: { 200: Type.Ref('Folder') },
          problems: ['DEPLOYMENT_NOT_FOUND', 'FOLDER_NOT_FOUND', 'FORBIDDEN', 'FOLDER_NAME_TAKEN', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request) => service.rename(request.caller, request.params.deploymentId, request.params.folderId, request.body),
    );

    app.delete(
      `${base}/:folderId`,
      {
        schema: {
          operationId: 'deleteFolder',
          tags,
          summary: 'Delete a folder without subfolders (needs MANAGE); its workbooks and reports move to the root',
          params: FolderParams,
          response: { 204: Type.Null({ description: 'Deleted' }) },
          problems: ['DEPLOYMENT_NOT_FOUND', 'FOLDER_NOT_FOUND', 'FORBIDDEN', 'FOLDER_HAS_SUBFOLDERS', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request, reply) => {
        await service.remove(request.caller, request.params.deploymentId, request.params.folderId);
        return reply.code(204).send(null);
      },
    );
  };
}
