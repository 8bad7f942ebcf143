import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DuplicateWorkbookBody, UpsertWorkbookBody, WorkbookParams, WorkbookSlugParams } from './workbooks.schemas.js';
import type { WorkbooksService } from './workbooks.service.js';

const tags = ['Workbooks'];
const base = '/api/v1/deployments/:deploymentId/workbooks';

export function workbooksRoutes(service: WorkbooksService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.put(
      `${base}/by-slug/:slug`,
      {
        schema: {
          operationId: 'upsertWorkbookBySlug',
          tags,
          summary: 'Create or update the workbook with this slug',
          description:
            'Creating (201) needs the EXPLORER role or above and EDIT on the folder, or on the deployment at the root; the creator gets MANAGE. ' +
            'Updating (200) needs EDIT on the workbook; fields left out keep their stored values. A different `folderId` moves the workbook with the single move’s checks, order and errors (MANAGE on the workbook, EDIT on the destination).',
          params: WorkbookSlugParams,
          body: UpsertWorkbookBody,
          response: { 200: Type.Ref('Workbook'), 201: Type.Ref('Workbook') },
          problems: ['DEPLOYMENT_NOT_FOUND', 'FOLDER_NOT_FOUND', 'DESTINATION_NOT_FOUND', 'FORBIDDEN', 'WORKBOOK_SLUG_TAKEN', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request, reply) => {
        const { created, workbook } = await service.upsert(request.caller, request.params.deploymentId, request.params.slug, request.body);
        return reply.code(created ? 201 : 200).send(workbook);
      },
    );

    app.get(
      `${base}/:workbookId`,
      {
        schema: {
          operationId: 'getWorkbook',
          tags,
          summary: 'Get a workbook (needs VIEW)',
          params: WorkbookParams,
          response: { 200: Type.Ref('Workbook') },
          problems: ['DEPLOYMENT_NOT_FOUND', 'WORKBOOK_NOT_FOUND', 'FORBIDDEN'],
        },
      },
      async (request) => service.get(request.caller, request.params.deploymentId, request.params.workbookId),
    );

    app.post(
      `${base}/:workbookId/duplicate`,
      {
        // The body is optional: none means a copy in the same folder under the default name.
        // A creator-mode embed token may copy from the shared workspace (`shared: true`).
        config: { optionalBody: true, credential: 'embed' },
        schema: {
          operationId: 'duplicateWorkbook',
          tags,
          summary: 'Copy a workbook, its reports and its published dashboard',
          description:
            'Reference 8.G.1. Needs VIEW on the source (and on every report its dashboards show), the EXPLORER role or above, and EDIT where the copy lands: beside the source when the caller has EDIT on its folder, otherwise the workspace root, which needs EDIT on the deployment (403 without it; the reference puts it at the root unconditionally), or the `folderId` given. Answers 200 with the copy. ' +
            'The copy gets the name `Copy of <name>` unless `name` is given, the slug `<slug>-copy` (or `-copy-2`, `-3`, ...), the source’s meta, calculated fields and draft; the reports its draft and published dashboard show are copied beside it, and its published dashboard is copied as version 1 of a new dashboard (new `publicId`, `allowEmbed` off), both re-pointed at the report copies. Sharing is not copied; the caller owns the copies. ' +
            '`shared: true` takes the embed token of a creator-mode session (reference 4.15; 403 for an API key or any other session): the workbook must be in the session’s shared workspace (404 otherwise) and have a published dashboard (400 otherwise); the copy is built from the published version’s report snapshots (the source’s draft is not copied), lands at the root (`folderId` is refused), is owned by the embed user (`userId` null) and has `allowEmbed` off.',
          params: WorkbookParams,
          body: DuplicateWorkbookBody,
          response: { 200: Type.Ref('Workbook') },
          problems: [
            'DEPLOYMENT_NOT_FOUND',
            'WORKBOOK_NOT_FOUND',
            'FOLDER_NOT_FOUND',
            'FORBIDDEN',
            'WORKBOOK_SLUG_TAKEN',
            'DEPLOYMENT_BUSY',
            'INVALID_OPERATION',
          ],
        },
      },
      // 200, not 201: reference 8.G.1 answers the copy with 200.
      async (request) =>
        request.embed === null
          ? service.duplicate(request.caller, request.params.deploymentId, request.params.workbookId, request.body ?? {})
          : service.duplicateShared(request.embed, request.params.deploymentId, request.params.workbookId, request.body ?? {}),
    );
  };
}
