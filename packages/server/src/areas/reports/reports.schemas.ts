import { Type, type Static, type TSchema } from 'typebox';
import { LegacyPageOf, type LegacyPage, type LegacyPagination } from '../../shared/pagination.js';
import { DeploymentParams, Id, MAX_OFFSET, Nullable, PageQuery, ref, Timestamp } from '../../shared/schemas.js';
import { FillMissingRows, PeriodComparison, ReportKind, ReportPreferences } from '../workspace/index.js';
import { ReportPlacementSchema } from './placements.schemas.js';
import { FolderPathEntrySchema, ItemName, ResourceOwnerSchema } from '../workspace/index.js';

/**
 * A report's public id: its stable key within a deployment, for scripts that upsert. 1 to 64
 * characters of letters, digits, `_` and `-` (URL-safe, so nanoid- and UUID-style ids fit).
 */
export const PUBLIC_ID_PATTERN = '^[A-Za-z0-9_-]{1,64}$';
export const PublicId = Type.String({
  pattern: PUBLIC_ID_PATTERN,
  description: 'Unique per deployment: 1 to 64 characters of letters, digits, `_` and `-`. Case-sensitive.',
});

export const ReportParams = Type.Object({ ...DeploymentParams.properties, reportId: Id });
export const ReportPublicIdParams = Type.Object({ ...DeploymentParams.properties, publicId: PublicId });

const FreeForm = Type.Record(Type.String(), Type.Unknown(), { description: 'Free-form object.' });
const optionalNullable = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema));
const Spec = Type.Union([Type.String(), FreeForm, Type.Null()], { description: 'The chart spec: a string or an object.' });

/** The report's content fields, as sent and as returned. */
const contentFields = {
  kind: Nullable(ref(ReportKind)),
  title: Nullable(Type.String()),
  description: Nullable(Type.String()),
  sqlQuery: Nullable(Type.String()),
  pythonCode: Nullable(Type.String()),
  spec: Spec,
  meta: Nullable(FreeForm),
  preferences: Nullable(ref(ReportPreferences)),
  periodComparisons: Nullable(Type.Array(ref(PeriodComparison))),
  fillMissingRows: Nullable(ref(FillMissingRows)),
};
export type ReportContent = { [K in keyof typeof contentFields]: Static<(typeof contentFields)[K]> };
export const CONTENT_FIELDS = Object.keys(contentFields) as Array<keyof ReportContent>;

export const UpsertReportBody = Type.Object(
  {
    name: ItemName,
    folderId: Type.Optional({
      ...Nullable(Id),
      description:
        'Containing folder; null for the workspace root. On create, absent means the root. On update, absent keeps the folder, and a different value moves the report with the single move’s checks and errors.',
    }),
    kind: optionalNullable(ref(ReportKind)),
    title: optionalNullable(Type.String()),
    description: optionalNullable(Type.String()),
    sqlQuery: optionalNullable(Type.String()),
    pythonCode: optionalNullable(Type.String()),
    spec: Type.Optional(Spec),
    meta: optionalNullable(FreeForm),
    preferences: optionalNullable(ref(ReportPreferences)),
    periodComparisons: optionalNullable(Type.Array(ref(PeriodComparison))),
    fillMissingRows: optionalNullable(ref(FillMissingRows)),
    expectedVersion: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 2 ** 31 - 1,
        description:
          'Optimistic update: the report’s `version` this update was made from. When the stored version differs (another write came first), or no report has this public id yet, the call is 409 REPORT_VERSION_MISMATCH and writes nothing. Left out: no check.',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Creates the report with this public id, or updates it. Fields left out keep their stored values on update and are null on create; null clears a field.',
  },
);
export type UpsertReportInput = Static<typeof UpsertReportBody>;

export const ReportSchema = Type.Object(
  {
    id: Id,
    deploymentId: Id,
    type: Type.Literal('REPORT'),
    name: Type.String(),
    publicId: Type.String(),
    ...contentFields,
    folderId: Nullable(Id),
    folderPath: Type.Array(ref(FolderPathEntrySchema), {
      description: 'The containing folder and its ancestors, from the top-level folder down; empty at the root.',
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    createdBy: Nullable(Id),
    user: Nullable(ref(ResourceOwnerSchema)),
    isFavorite: Type.Boolean({ description: 'Whether the calling user marked this report as a favorite.' }),
    lastViewedAt: Nullable({ ...Timestamp, description: 'When anyone last read the report with `GET /reports/{reportId}`.' }),
    externalWorkbookPlacements: Type.Array(ref(ReportPlacementSchema), {
      description: 'Where the report is placed in external spreadsheets (connect-workbook), oldest first.',
    }),
    version: Type.Integer({
      minimum: 1,
      description:
        'The revision of the report’s name and content: 1 when created, one more on every update that changes them (moves and placements leave it). Send it back as `expectedVersion` to update only what you read.',
    }),
    currentQueryChecksum: Type.String({
      description:
        'SHA-256 (hex) of the report’s normalised query (`sqlQuery` and `spec`): a placement whose `queryChecksum` differs holds the results of an older query.',
    }),
  },
  { $id: 'Report', description: 'A report with its content, place in the workspace and owner.' },
);
export type Report = Static<typeof ReportSchema>;

export const REPORT_SORT_KEYS = ['createdAt', 'updatedAt', 'lastViewedAt', 'name'] as const;
export type ReportSortKey = (typeof REPORT_SORT_KEYS)[number];

export const ListReportsQuery = Type.Object(
  {
    ...PageQuery,
    offset: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_OFFSET,
        description: 'Offset paging: skip this many reports. The way to page when `sortBy` is `lastViewedAt`; not combined with `after`.',
      }),
    ),
    folderId: Type.Optional(
      Type.String({ pattern: '^(root|[1-9][0-9]{0,15})$', description: 'Only the reports directly in this folder; `root` for those at the workspace root.' }),
    ),
    kind: Type.Optional(Type.Enum([...ReportKind.enum], { description: 'Only reports of this kind.' })),
    createdBy: Type.Optional({ ...Id, description: 'Only reports created by this user.' }),
    search: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Only reports whose name contains this text, ignoring case.' })),
    sortBy: Type.Optional(
      Type.Enum([...REPORT_SORT_KEYS], {
        default: 'createdAt',
        description: 'Ordering; ties are broken by id. Cursor pagination (`after`) is unavailable with `lastViewedAt` (400 CURSOR_UNAVAILABLE): use `offset`.',
      }),
    ),
    sortOrder: Type.Optional(
      Type.Enum(['asc', 'desc'], {
        description: 'Direction; `asc` by default for `name`, `desc` for the timestamps. Never-viewed reports come last either way.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListReportsInput = Static<typeof ListReportsQuery>;

/** The cursor page, plus the deprecated `data`, `count`, `totalCount` and `pagination` (spec: Other operations). */
export const ReportPageSchema = LegacyPageOf('Report', { withPagination: true });
export type ReportPage = LegacyPage<Report> & { pagination: LegacyPagination };

export const reportSchemas = [ReportSchema, ReportPageSchema];
