import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ExternalDocumentParams } from './external-placements.schemas.js';
import type { ExternalPlacementsService } from './external-placements.service.js';
import { MAX_DOCUMENT_PLACEMENTS, MAX_PLACED_REPORTS } from './external-placements.service.js';

export function externalPlacementsRoutes(service: ExternalPlacementsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/external-documents/:externalWorkbookId/placements',
      {
        schema: {
          operationId: 'listExternalDocumentPlacements',
          extension: true,
          tags: ['Reports'],
          summary: 'Extension: every report placement in one external spreadsheet document, across the tenant’s deployments (any credential)',
          description:
            'Lists the placements (reference 3.0) whose `workbookId` is this document, in every deployment of the tenant. Placements of reports the caller cannot read (no access, or a deployment outside the key’s scope) are included with `access: DENIED`, `reportName: null`, and null `queryChecksum` and `syncStatus`. ' +
            `Past ${MAX_PLACED_REPORTS} placed reports or ${MAX_DOCUMENT_PLACEMENTS} placements the answer is 422 PLACEMENTS_TOO_MANY, never a partial list. The document id is matched exactly (case-sensitive).`,
          params: ExternalDocumentParams,
          response: { 200: Type.Ref('ExternalDocumentPlacements') },
          problems: ['PLACEMENTS_TOO_MANY'],
        },
      },
      async (request) => service.list(request.caller, request.params.externalWorkbookId),
    );
  };
}
