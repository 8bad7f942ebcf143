import { Type, type Static } from 'typebox';
import { Id, Nullable, ref } from '../../shared/schemas.js';
import { ReportPlacementSchema } from './placements.schemas.js';

export const ExternalDocumentParams = Type.Object({
  externalWorkbookId: Type.String({ minLength: 1, maxLength: 1024, description: 'The external document id, as placements record it (`workbookId`).' }),
});

export const PlacementAccess = Type.Enum(['GRANTED', 'DENIED'], {
  $id: 'ExternalPlacementAccess',
  description: '`GRANTED` when the caller may read the report; `DENIED` when not (its name and everything taken from it are withheld).',
});

export const ExternalDocumentPlacementSchema = Type.Object(
  {
    deploymentId: Id,
    reportId: Id,
    reportName: Nullable({ ...Type.String(), description: 'The report’s name; null when `access` is `DENIED`.' }),
    access: ref(PlacementAccess),
    placement: {
      ...ref(ReportPlacementSchema),
      description:
        'The placement as the report records it. With `DENIED`, what comes from the report itself is withheld: `queryChecksum` and `syncStatus` are null; the address in the caller’s document is kept.',
    },
  },
  { $id: 'ExternalDocumentPlacement', description: 'One placement of a report in the external document.' },
);
export type ExternalDocumentPlacement = Static<typeof ExternalDocumentPlacementSchema>;

export const ExternalDocumentPlacementsSchema = Type.Object(
  {
    externalWorkbookId: Type.String(),
    items: Type.Array(ref(ExternalDocumentPlacementSchema), {
      description: 'Every placement in the document across the tenant’s deployments, by deployment, then report, then the report’s own order of placements.',
    }),
  },
  { $id: 'ExternalDocumentPlacements' },
);
export type ExternalDocumentPlacements = Static<typeof ExternalDocumentPlacementsSchema>;

export const externalPlacementSchemas = [PlacementAccess, ExternalDocumentPlacementSchema, ExternalDocumentPlacementsSchema];
