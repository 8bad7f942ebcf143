import { Type, type Static } from 'typebox';
import { Id, ref } from '../../shared/schemas.js';
import { DashboardFilterInput, DashboardMemberSwitcherInput, DashboardTimeGrainInput } from '../dashboards/index.js';

const nullable = <T extends Parameters<typeof Type.Optional>[0]>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));

export const DeploymentParams = Type.Object({ deploymentId: Id });
export const ExportParams = Type.Object({ deploymentId: Id, jobId: Type.String({ minLength: 1, maxLength: 64 }) });
export const DownloadQuery = Type.Object(
  {
    filename: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        pattern: '^[^/\\\\\\u0000-\\u001f"]+$',
        description: 'The file name’s stem; the extension follows the format.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** Reference 8.A: whom an export renders as. */
export const ExportSubjectInput = Type.Object(
  {
    type: Type.Enum(['USER', 'EMBED_USER']),
    userId: nullable(Id),
    email: nullable(Type.String({ minLength: 1, maxLength: 320 })),
    embedTenantName: nullable(Type.String({ minLength: 1, maxLength: 255 })),
    externalId: nullable(Type.String({ minLength: 1, maxLength: 255 })),
    groups: nullable(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100 })),
    userAttributes: nullable(
      Type.Array(Type.Object({ name: Type.String({ minLength: 1, maxLength: 255 }), value: Type.Unknown() }, { additionalProperties: false }), {
        maxItems: 100,
      }),
    ),
    securityContext: nullable(Type.Record(Type.String(), Type.Unknown())),
  },
  { $id: 'ExportSubjectInput', additionalProperties: false },
);
export type ExportSubjectInput = Static<typeof ExportSubjectInput>;

export const StartDashboardExportInput = Type.Object(
  {
    format: Type.Enum(['png', 'pdf']),
    dashboardId: nullable(Id),
    dashboardPublicId: nullable(Type.String({ minLength: 1, maxLength: 64 })),
    filters: nullable(Type.Array(ref(DashboardFilterInput), { maxItems: 100 })),
    timeGrains: nullable(Type.Array(ref(DashboardTimeGrainInput), { maxItems: 100 })),
    memberSwitchers: nullable(Type.Array(ref(DashboardMemberSwitcherInput), { maxItems: 100 })),
    renderAs: nullable(ref(ExportSubjectInput)),
    layout: nullable(
      Type.Enum(['screenshot', 'print'], {
        description:
          '`screenshot` (default): one page of the dashboard’s size. `print`: A4 portrait pages, split between widget rows; PDF only (400 with `png`).',
      }),
    ),
  },
  { additionalProperties: false, description: 'StartDashboardExportInput (reference 8.A.1, with its later `layout`).' },
);
export type StartDashboardExportInput = Static<typeof StartDashboardExportInput>;

export const StartDashboardExportResponse = Type.Object(
  { jobId: Type.String(), expiresAt: Type.String({ format: 'date-time' }) },
  { $id: 'StartDashboardExportResponse' },
);

export const DashboardExportStatus = Type.Object(
  {
    status: Type.Enum(['pending', 'processing', 'completed', 'failed']),
    progress: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 100 }), Type.Null()])),
    contentType: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    error: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { $id: 'DashboardExportStatus' },
);
export type DashboardExportStatus = Static<typeof DashboardExportStatus>;

export const dashboardExportSchemas = [ExportSubjectInput, StartDashboardExportResponse, DashboardExportStatus];
