import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { EmbedAccessService } from './embed-access.service.js';
import {
  FolderEmbedAccessParams,
  TenantWorkbooksParams,
  TenantWorkbooksQuery,
  UpdateEmbedAccessBody,
  UpdateFolderEmbedAccessBody,
  WorkbookEmbedAccessParams,
} from './embed-access.schemas.js';

const tags = ['Embedding'];

/** Reference 3.4, 3.5 and 4.14, and the folder form of 3.4/3.5 (an extension). */
export function embedAccessRoutes(service: EmbedAccessService): FastifyPluginAsyncTypebox {
  return async (app) => {
    const workbook = '/api/v1/deployments/:deploymentId/workbooks/:workbookId/embed-access';
    app.get(
      workbook,
      {
        config: { apiKeyScheme: true },
        schema: {
          operationId: 'getWorkbookEmbedAccess',
          tags,
          summary: "Read a workbook's embed access: allowEmbed, and the embed tenants and all-embed-users share (read access to the workbook)",
          params: WorkbookEmbedAccessParams,
          response: { 200: Type.Ref('EmbedAccessResponse') },
          problems: ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND', 'WORKBOOK_NOT_FOUND'],
        },
      },
      async (request) => service.getWorkbook(request.caller, request.params.deploymentId, request.params.workbookId),
    );

    app.put(
      workbook,
      {
        config: { apiKeyScheme: true },
        schema: {
          operationId: 'updateWorkbookEmbedAccess',
          tags,
          summary:
            'Share a workbook read-only with an embed tenant or all embed users, or remove that share, and/or set allowEmbed (manage access to the workbook)',
          params: WorkbookEmbedAccessParams,
          body: UpdateEmbedAccessBody,
          response: { 200: Type.Ref('EmbedAccessResponse') },
          problems: ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND', 'WORKBOOK_NOT_FOUND', 'EMBED_TENANT_NOT_FOUND', 'INVALID_OPERATION'],
        },
      },
      async (request) => service.updateWorkbook(request.caller, request.params.deploymentId, request.params.workbookId, request.body),
    );

    const folder = '/api/v1/deployments/:deploymentId/folders/:folderId/embed-access';
    app.get(
      folder,
      {
        config: { apiKeyScheme: true },
        schema: {
          operationId: 'getFolderEmbedAccess',
          extension: true,
          tags,
          summary: "Extension: read a folder's embed access, which every workbook below it inherits (read access to the folder)",
          params: FolderEmbedAccessParams,
          response: { 200: Type.Ref('FolderEmbedAccess') },
          problems: ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND', 'FOLDER_NOT_FOUND'],
        },
      },
      async (request) => service.getFolder(request.caller, request.params.deploymentId, request.params.folderId),
    );

    app.put(
      folder,
      {
        config: { apiKeyScheme: true },
        schema: {
          operationId: 'updateFolderEmbedAccess',
          extension: true,
          tags,
          summary:
            'Extension: share a folder (and all below it) read-only with an embed tenant or all embed users, or remove that share (manage access to the folder)',
          params: FolderEmbedAccessParams,
          body: UpdateFolderEmbedAccessBody,
          response: { 200: Type.Ref('FolderEmbedAccess') },
          problems: ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND', 'FOLDER_NOT_FOUND', 'EMBED_TENANT_NOT_FOUND'],
        },
      },
      async (request) => service.updateFolder(request.caller, request.params.deploymentId, request.params.folderId, request.body),
    );

    app.get(
      '/api/v1/deployments/:deploymentId/embed-tenants/:embedTenantName/workbooks',
      {
        config: { apiKeyScheme: true },
        schema: {
          operationId: 'listEmbedTenantWorkbooks',
          tags,
          summary:
            'List the workbooks of a deployment an embed tenant can reach (admin only), filtered by how: shared with the tenant, with all embed users, or through a folder',
          params: TenantWorkbooksParams,
          querystring: TenantWorkbooksQuery,
          response: { 200: Type.Ref('EmbedTenantWorkbookPage') },
          problems: ['FORBIDDEN', 'DEPLOYMENT_NOT_FOUND', 'EMBED_TENANT_NOT_FOUND'],
        },
      },
      async (request) => service.tenantWorkbooks(request.caller, request.params.deploymentId, request.params.embedTenantName, request.query),
    );
  };
}
