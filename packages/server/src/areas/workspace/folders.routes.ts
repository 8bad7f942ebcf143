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
