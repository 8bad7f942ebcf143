import { Type, type Static, type TSchema } from 'typebox';
import { Id, Nullable, ref } from '../../shared/schemas.js';

const optionalNullable = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema));
const Text = (description: string, maxLength = 1024) => Type.String({ minLength: 1, maxLength, description });

export const PlacementHost = Type.Enum(['GOOGLE_SHEETS', 'EXCEL'], {
  $id: 'ReportPlacementHost',
  description: 'The spreadsheet application the placement lives in.',
});
export const SyncStatus = Type.Enum(['UP_TO_DATE', 'CHANGED', 'UNKNOWN'], {
  $id: 'ReportPlacementSyncStatus',
  description:
    '`UP_TO_DATE` when the placement’s `queryChecksum` equals the report’s `currentQueryChecksum`, `CHANGED` when it does not, `UNKNOWN` when the placement has none.',
});

export const ResultChecksumSchema = Type.Object(
  {
    v: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'The fingerprint’s format version, chosen by the client.' }),
    chunks: Type.Array(
      Type.Object(
        {
          from: Type.Integer({ minimum: 0, maximum: 2 ** 53 - 1 }),
          hash: Type.String({ minLength: 1, maxLength: 64 }),
          to: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 2 ** 53 - 1, deprecated: true }))),
        },
        { additionalProperties: false },
      ),
      { maxItems: 2000 },
    ),
    payload: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Opaque to the server.' })),
  },
  {
    $id: 'ResultChecksum',
    additionalProperties: false,
    description: 'A fingerprint, computed by the client, of the cells its last write placed; kept as sent, so the client can detect hand edits since.',
  },
);
export type ResultChecksum = Static<typeof ResultChecksumSchema>;

export const ReportPlacementSchema = Type.Object(
  {
    id: Nullable({ ...Type.String(), description: 'The placement’s id; null for a placement recorded before placements had ids.' }),
    workbookId: Type.String({ description: 'The external document id.' }),
    resultLocation: Type.String(),
    host: Nullable(ref(PlacementHost)),
    sheetId: Nullable(Type.String()),
    sheetName: Nullable(Type.String()),
    anchorCell: Nullable(Type.String()),
    endResultCell: Nullable(Type.String()),
    workbookName: Nullable(Type.String()),
    placedAt: Nullable(Type.String({ format: 'date-time' })),
    refreshedAt: Nullable(Type.String({ format: 'date-time' })),
    placedByUserId: Nullable(Id),
    refreshedByUserId: Nullable(Id),
    queryChecksum: Nullable({ ...Type.String(), description: 'The report’s `currentQueryChecksum` when the cells were last written (placed or refreshed).' }),
    syncStatus: Nullable(ref(SyncStatus)),
    resultChecksum: Nullable(ref(ResultChecksumSchema)),
  },
  { $id: 'ReportPlacement', description: 'One sheet and anchor cell of one external spreadsheet document where the report’s results are placed.' },
);
export type ReportPlacement = Static<typeof ReportPlacementSchema>;

const placementId = optionalNullable(
  Text('The placement’s id: names it on later calls. On connect, a new placement takes it as its id; without one the server assigns one.', 128),
);
const addressFields = {
  externalWorkbookId: optionalNullable(Text('The external document id.')),
  sheetName: optionalNullable(Text('The sheet’s (tab’s) name.', 255)),
  anchorCell: optionalNullable(Text('The top-left cell of the results, such as `B2`.', 32)),
  resultLocation: optionalNullable(
    Text('Where the results are, such as `Sales!B2:F40`; names the sheet and anchor when `sheetName` or `anchorCell` is left out.'),
  ),
  sheetId: optionalNullable(Text('The sheet’s id in its document. Narrows the target: a placement stored under another sheet id does not match.', 255)),
};

export const ConnectReportToWorkbookBody = Type.Object(
  {
    externalWorkbookId: Text('The external document id.'),
    resultLocation: Text('Where the results are, such as `Sales!B2:F40`.'),
    placementId,
    sheetId: addressFields.sheetId,
    sheetName: addressFields.sheetName,
    anchorCell: addressFields.anchorCell,
    endResultCell: optionalNullable(Text('The bottom-right cell of the results.', 32)),
    workbookName: optionalNullable(Text('The document’s name, for display.', 1024)),
    host: optionalNullable(ref(PlacementHost)),
    resultChecksum: optionalNullable(ref(ResultChecksumSchema)),
    addressOnly: optionalNullable(
      Type.Boolean({
        description: 'Corrects the address of an existing placement (a renamed tab, a moved range) without touching its fingerprint or checksums.',
      }),
    ),
  },
  { additionalProperties: false, description: 'ConnectReportToWorkbookInput: places the report, or updates its placement (idempotent per placement).' },
);
export type ConnectInput = Static<typeof ConnectReportToWorkbookBody>;

export const DisconnectReportFromWorkbookBody = Type.Object(
  { placementId, ...addressFields },
  { additionalProperties: false, description: 'DisconnectReportFromWorkbookInput: names one placement.' },
);
export type DisconnectInput = Static<typeof DisconnectReportFromWorkbookBody>;

export const RefreshReportBody = Type.Object(
  { placementId, ...addressFields, resultChecksum: optionalNullable(ref(ResultChecksumSchema)) },
  { additionalProperties: false, description: 'RefreshReportInput: names one placement, with the fingerprint of the cells just written.' },
);
export type RefreshInput = Static<typeof RefreshReportBody>;

export const placementSchemas = [PlacementHost, SyncStatus, ResultChecksumSchema, ReportPlacementSchema];
