import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { TextEditBody, TextFileSchema } from '../../shared/canonical-text.js';
import { WorkbookParams } from './dashboards.schemas.js';
import type { DashboardFileService } from './dashboard-file.js';

const tags = ['Dashboards'];
const path = '/api/v1/deployments/:deploymentId/workbooks/:workbookId/dashboard/file';

export function dashboardFileRoutes(service: DashboardFileService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      path,
      {
        schema: {
          operationId: 'getDashboardDraftFile',
          extension: true,
          tags,
          summary: 'Extension: the workbook’s dashboard draft as canonical text, with its SHA-256 hash (needs VIEW)',
          description:
            '`content` is the draft as the draft save stores it, as JSON with object keys sorted at every level, two-space indentation and a trailing newline (`null` and a newline when the workbook has no draft). ' +
            '`hash` is the SHA-256 (hex) of `content`, which a PATCH names. The ETag header carries the hash too.',
          params: WorkbookParams,
          response: { 200: TextFileSchema },
          problems: ['DEPLOYMENT_NOT_FOUND', 'WORKBOOK_NOT_FOUND', 'FORBIDDEN'],
        },
      },
      async (request, reply) => {
        const file = await service.read(request.caller, request.params.deploymentId, request.params.workbookId);
        return reply.header('etag', `"${file.hash}"`).send(file);
      },
    );

    app.patch(
      path,
      {
        schema: {
          operationId: 'editDashboardDraftFile',
          extension: true,
          tags,
          summary: 'Extension: replace exact text in the dashboard draft’s canonical text (needs EDIT, as the draft save)',
          description:
            'Each edit replaces its `oldText`, which must occur exactly once in the text as the edits before it left it (else 400 naming the edit), by its `newText`. `hash` must be the hash of the draft’s current text: another is 409 FILE_HASH_MISMATCH naming the current hash, and nothing is written. ' +
            'The resulting text must be a valid draft (a DashboardConfigDraftInput, or `null` to clear it), checked with the draft save’s rules (400 with pointers `/content/...` into the edited document); widgets without an `id` get one. ' +
            'Answers the draft’s new text and hash. Of two PATCHes made against the same hash, one is applied and the other gets 409.',
          params: WorkbookParams,
          body: TextEditBody,
          response: { 200: TextFileSchema },
          problems: ['DEPLOYMENT_NOT_FOUND', 'WORKBOOK_NOT_FOUND', 'FORBIDDEN', 'FILE_HASH_MISMATCH', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request, reply) => {
        const file = await service.edit(request.caller, request.params.deploymentId, request.params.workbookId, request.body);
        return reply.header('etag', `"${file.hash}"`).send(file);
      },
    );
  };
}
