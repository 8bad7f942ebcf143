import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { TextEditBody, TextFileSchema } from '../../shared/canonical-text.js';
import { ReportParams } from './reports.schemas.js';
import type { ReportFileService } from './report-file.js';

const tags = ['Reports'];
const path = '/api/v1/deployments/:deploymentId/reports/:reportId/file';

export function reportFileRoutes(service: ReportFileService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      path,
      {
        schema: {
          operationId: 'getReportFile',
          extension: true,
          tags,
          summary: 'Extension: the report as canonical text, with its SHA-256 hash (needs VIEW)',
          description:
            '`content` is JSON with object keys sorted at every level, two-space indentation and a trailing newline: the report’s `name` and content fields (`kind`, `title`, `description`, `sqlQuery`, `pythonCode`, `spec`, `meta`, `preferences`, `periodComparisons`, `fillMissingRows`), each present, null when empty. ' +
            '`hash` is the SHA-256 (hex) of `content`, which a PATCH names. Reading the text does not record a view (`lastViewedAt`). The ETag header carries the hash too.',
          params: ReportParams,
          response: { 200: TextFileSchema },
          problems: ['DEPLOYMENT_NOT_FOUND', 'REPORT_NOT_FOUND', 'FORBIDDEN'],
        },
      },
      async (request, reply) => {
        const file = await service.read(request.caller, request.params.deploymentId, request.params.reportId);
        return reply.header('etag', `"${file.hash}"`).send(file);
      },
    );

    app.patch(
      path,
      {
        schema: {
          operationId: 'editReportFile',
          extension: true,
          tags,
          summary: 'Extension: replace exact text in the report’s canonical text (needs EDIT, as the report update)',
          description:
            'Each edit replaces its `oldText`, which must occur exactly once in the text as the edits before it left it (else 400 naming the edit), by its `newText`. `hash` must be the hash of the report’s current text: another is 409 FILE_HASH_MISMATCH naming the current hash, and nothing is written. ' +
            'The resulting text must be a valid report with the same rules as the report update (400 with pointers `/content/...` into the edited document); a content field it leaves out is cleared. It is saved as an update of the report (its `version` goes up when something changed). ' +
            'Answers the new text and hash. Of two PATCHes made against the same hash, one is applied and the other gets 409.',
          params: ReportParams,
          body: TextEditBody,
          response: { 200: TextFileSchema },
          problems: ['DEPLOYMENT_NOT_FOUND', 'REPORT_NOT_FOUND', 'FORBIDDEN', 'FILE_HASH_MISMATCH', 'DEPLOYMENT_BUSY'],
        },
      },
      async (request, reply) => {
        const file = await service.edit(request.caller, request.params.deploymentId, request.params.reportId, request.body);
        return reply.header('etag', `"${file.hash}"`).send(file);
      },
    );
  };
}
