import { Type, type Static } from 'typebox';
import { DeploymentParams, Id, Nullable, PageOf, PageQuery, Timestamp } from '../../shared/schemas.js';

/*
 * Report deliveries (an extension named in reference 9, shapes of our own in the style of
 * notifications and scheduled agent tasks). Null in a body member means the same as leaving it out.
 */

/** The most recipients one delivery may have. */
export const MAX_RECIPIENTS = 50;
/** The most rows one recipient's attachment holds; rows past it are left out and the mail says so. */
export const MAX_ROWS = 10_000;

export const FORMATS = ['csv', 'xlsx'] as const;
export type DeliveryFormat = (typeof FORMATS)[number];

const Format = Type.Unsafe<DeliveryFormat>({
  type: 'string',
  enum: [...FORMATS],
  description:
    'The attachment: `csv` (RFC 4180, UTF-8, a header row of the column names; the default) or `xlsx` (one sheet, a bold header row of the column names, numbers as number cells).',
});
const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Shown in the list and used as the mail subject and file name.' });
const Cron = Type.String({
  minLength: 9,
  maxLength: 200,
  description: 'Five fields (minute hour day-of-month month day-of-week); it may fire at most hourly, so the minute is one value.',
});
const TimeZone = Type.String({ minLength: 1, maxLength: 64, description: 'An IANA zone; default UTC.' });

export const RecipientInputSchema = Type.Object(
  {
    type: Type.Unsafe<'USER' | 'EMBED_USER'>({ type: 'string', enum: ['USER', 'EMBED_USER'] }),
    userId: Type.Optional(Nullable(Id)),
    email: Type.Optional(Nullable(Type.String({ minLength: 3, maxLength: 320, description: "USER: the user's email, instead of userId." }))),
    embedTenantName: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64, description: 'EMBED_USER: with externalId.' }))),
    externalId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255, description: 'EMBED_USER: an existing embed user of the embed tenant.' }))),
    securityContext: Type.Optional(
      Nullable(
        Type.Object(
          {},
          { additionalProperties: true, maxProperties: 100, description: "EMBED_USER: the security context the recipient's rows are read with (default {})." },
        ),
      ),
    ),
  },
  { additionalProperties: false },
);
export type RecipientInput = Static<typeof RecipientInputSchema>;

const Recipients = Type.Array(RecipientInputSchema, { minItems: 1, maxItems: MAX_RECIPIENTS, description: `1-${MAX_RECIPIENTS} recipients, each once.` });

export const CreateReportDeliveryBody = Type.Object(
  {
    reportId: Id,
    name: Type.Optional(Nullable(Name)),
    format: Type.Optional(Nullable(Format)),
    cron: Cron,
    timezone: Type.Optional(Nullable(TimeZone)),
    recipients: Recipients,
    paused: Type.Optional(Nullable(Type.Boolean({ description: 'Default false.' }))),
  },
  { additionalProperties: false },
);
export type CreateReportDeliveryInput = Static<typeof CreateReportDeliveryBody>;

export const UpdateReportDeliveryBody = Type.Object(
  {
    name: Type.Optional(Nullable(Name)),
    format: Type.Optional(Nullable(Format)),
    cron: Type.Optional(Nullable(Cron)),
    timezone: Type.Optional(Nullable(TimeZone)),
    recipients: Type.Optional(Nullable(Recipients)),
  },
  { additionalProperties: false },
);
export type UpdateReportDeliveryInput = Static<typeof UpdateReportDeliveryBody>;

export const ReportDeliveryRecipientSchema = Type.Object(
  {
    type: Type.String({ enum: ['USER', 'EMBED_USER'] }),
    userId: Nullable(Id),
    email: Nullable(Type.String({ description: 'The address mails go to, as it stands now; null for a recipient since removed.' })),
    embedUserId: Nullable(Id),
    embedTenantName: Nullable(Type.String()),
    externalId: Nullable(Type.String()),
  },
  { $id: 'ReportDeliveryRecipient' },
);
export type ReportDeliveryRecipient = Static<typeof ReportDeliveryRecipientSchema>;

export const ReportDeliverySchema = Type.Object(
  {
    id: Id,
    deploymentId: Id,
    reportId: Id,
    name: Type.String(),
    format: Type.String({ enum: [...FORMATS], description: 'The attachment: `csv` or `xlsx`.' }),
    cron: Type.String(),
    timezone: Type.String(),
    paused: Type.Boolean(),
    recipients: Type.Array(Type.Ref('ReportDeliveryRecipient')),
    nextRunAt: Nullable(Type.String({ format: 'date-time', description: 'The next occurrence (UTC); null while paused.' })),
    createdBy: Nullable(Id),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'ReportDelivery' },
);
export type ReportDelivery = Static<typeof ReportDeliverySchema>;

export const RunResultSchema = Type.Object({
  type: Type.String({ enum: ['USER', 'EMBED_USER'] }),
  userId: Nullable(Id),
  embedUserId: Nullable(Id),
  email: Nullable(Type.String()),
  status: Type.String({
    enum: ['sent', 'failed', 'skipped'],
    description: '`sent` once the SMTP server accepted the mail; `failed`: the query or the send failed; `skipped`: not sent, `error` says why.',
  }),
  rows: Nullable(Type.Integer({ minimum: 0, description: 'The rows in the attachment; null when the query did not run.' })),
  truncated: Type.Boolean({ description: `True when the recipient may see more than ${MAX_ROWS} rows and only the first ${MAX_ROWS} were attached.` }),
  error: Nullable(Type.String()),
});
export type RunResult = Static<typeof RunResultSchema>;

export const ReportDeliveryRunSchema = Type.Object(
  {
    id: Id,
    deliveryId: Id,
    trigger: Type.String({ enum: ['schedule', 'manual'] }),
    scheduledFor: Nullable(Type.String({ format: 'date-time', description: 'The occurrence a scheduled run is for; null for a manual run.' })),
    status: Type.String({ enum: ['queued', 'running', 'succeeded', 'failed'] }),
    jobId: Nullable(Id),
    message: Nullable(Type.String({ description: 'Why some or all mail was not sent; null when every recipient was mailed.' })),
    recipients: Type.Array(RunResultSchema, { description: "Each recipient's outcome; empty until the run finishes." }),
    createdAt: Timestamp,
    startedAt: Nullable(Timestamp),
    finishedAt: Nullable(Timestamp),
  },
  { $id: 'ReportDeliveryRun' },
);
export type ReportDeliveryRun = Static<typeof ReportDeliveryRunSchema>;

export const ReportDeliveryParams = Type.Object({ ...DeploymentParams.properties, deliveryId: Id });

export const ListReportDeliveriesQuery = Type.Object({ reportId: Type.Optional(Id), ...PageQuery }, { additionalProperties: false });
export type ListReportDeliveriesInput = Static<typeof ListReportDeliveriesQuery>;

export const RunsQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
export type RunsInput = Static<typeof RunsQuery>;

export const reportDeliverySchemas = [
  ReportDeliveryRecipientSchema,
  ReportDeliverySchema,
  PageOf('ReportDelivery'),
  ReportDeliveryRunSchema,
  PageOf('ReportDeliveryRun'),
];
