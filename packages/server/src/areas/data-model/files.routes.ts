import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DeploymentParams } from '../../shared/schemas.js';
import { FILES_BODY_LIMIT, HashesQuery, RemoveFilesBody, RenameFilesBody, TreeQuery, UpdateFilesBody } from './data-model.schemas.js';
import type { FilesService } from './files.service.js';

const tags = ['Data model'];
const base = '/build/api/v1/deployments/:deploymentId/data-model';
const WRITE_PROBLEMS = [
  'FORBIDDEN',
  'DEPLOYMENT_NOT_FOUND',
  'NO_DEV_MODE',
  'NOT_A_DEV_BRANCH',
  'BRANCH_NOT_FOUND',
  'BRANCH_MOVED',
  'PAYLOAD_TOO_LARGE',
] as const;

export function filesRoutes(service: FilesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      `${base}/files`,
      {
        schema: {
          operationId: 'listDataModelFiles',
          tags,
          summary: 'The data-model files of a branch as a tree (reference 2.1; SchemaRead)',
          description:
            'Default branch: the credential’s active branch (its dev-mode branch, with pending changes), else the deploy branch. `first`/`after` page through the top-level nodes only; leave `first` out for the whole tree. Nodes: directories (`children`) first, then files (`size`, `hash`, and `content` with `withContent=true`).',
          params: DeploymentParams,
          querystring: TreeQuery,
          response: { 200: Type.Ref('SourceTreeResponse') },
          problems: ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND', 'BRANCH_NOT_FOUND', 'INVALID_CURSOR'],
        },
      },
      async (request) => service.tree(request.caller, request.params.deploymentId, request.query),
    );

    app.put(
      `${base}/files`,
      {
        bodyLimit: FILES_BODY_LIMIT,
        schema: {
          operationId: 'updateDataModelFiles',
          tags,
          summary: 'Create or overwrite files on a dev-mode branch (reference 2.2; SchemaUpdate)',
          description: 'The writes become pending changes of the branch (POST …/commit commits them). At most 1,000 files and 1 MiB a file.',
          params: DeploymentParams,
          body: UpdateFilesBody,
          response: { 200: Type.Ref('DataModelWriteResponse') },
          problems: [...WRITE_PROBLEMS],
        },
      },
      async (request) => service.write(request.caller, request.params.deploymentId, request.body),
    );

    app.delete(
      `${base}/files`,
      {
        bodyLimit: FILES_BODY_LIMIT,
        schema: {
          operationId: 'deleteDataModelFiles',
          tags,
          summary: 'Delete files on a dev-mode branch (reference 2.3; SchemaUpdate)',
          params: DeploymentParams,
          body: RemoveFilesBody,
          response: { 200: Type.Ref('DataModelWriteResponse') },
          problems: [...WRITE_PROBLEMS, 'FILE_NOT_FOUND'],
        },
      },
      async (request) => service.remove(request.caller, request.params.deploymentId, request.body),
    );

    app.post(
      `${base}/files/rename`,
      {
        bodyLimit: FILES_BODY_LIMIT,
        schema: {
          operationId: 'renameDataModelFiles',
          tags,
          summary: 'Rename files on a dev-mode branch (reference 2.4; SchemaUpdate)',
          params: DeploymentParams,
          body: RenameFilesBody,
          response: { 200: Type.Ref('DataModelWriteResponse') },
          problems: [...WRITE_PROBLEMS, 'FILE_NOT_FOUND', 'FILE_EXISTS'],
        },
      },
      async (request) => service.rename(request.caller, request.params.deploymentId, request.body),
    );

    app.get(
      `${base}/file-hashes`,
      {
        schema: {
          operationId: 'getDataModelFileHashes',
          tags,
          summary: 'Git blob SHA-1 of every file of a branch, for upload diffing (reference 2.5; SchemaRead)',
          description:
            'Default branch: where an upload would land (the active dev-mode branch, else the deploy branch). Committed files only, unless `live=true` adds the pending dev-mode changes. `useDeployProjectRoot=true` keeps only files below `deployProjectRoot`, with paths relative to it.',
          params: DeploymentParams,
          querystring: HashesQuery,
          response: { 200: Type.Ref('FileHashes') },
          problems: ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND', 'BRANCH_NOT_FOUND'],
        },
      },
      async (request) => service.hashes(request.caller, request.params.deploymentId, request.query),
    );
  };
}
