import { Type, type Static } from 'typebox';
import { Id, Nullable, PageQuery, Timestamp } from '../../shared/schemas.js';

/** Reference 7.0: a run's status in the history. */
export const RUN_STATUSES = ['RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED', 'UNKNOWN'] as const;
export const TRIGGERS = ['manual', 'api', 'webhook', 'agent', 'unknown'] as const;
/** Reference 7.3: the poll's values; only COMPLETED and FAILED are terminal. */
export const STAGES = [
  'INITIALIZING',
  'CREATING_SANDBOX',
  'UPLOADING_PROJECT',
  'INSTALLING_DEPENDENCIES',
  'RUNNING_DBT_DEPS',
  'COMPILING_DBT',
  'PROCESSING_MANIFEST',
  'WRITING_CUBE_FILES',
  'FINALIZING',
  'COMPLETED',
  'FAILED',
] as const;
export type Stage = (typeof STAGES)[number];

/** The reference caps this route's body at 50 MB (manifests are often tens of MB). */
export const START_BODY_LIMIT = 50 * 1024 * 1024;

export const StartDbtSyncBody = Type.Object(
  {
    source: Type.Optional(
      Nullable(
        Type.Enum(['git', 'manifest'], {
          description: 'Default `git`: the compiled manifest committed at `ref` (never runs dbt). `manifest`: the one in this body.',
        }),
      ),
    ),
    manifest: Type.Optional(
      Nullable(
        Type.Object(
          {},
          { additionalProperties: true, description: 'The contents of target/manifest.json. Required when `source` is `manifest`, ignored otherwise.' },
        ),
      ),
    ),
    ref: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 255,
          description: 'A branch or tag (not a commit SHA) overriding the saved one for this run; the new branch is named after it.',
        }),
      ),
    ),
    branchName: Type.Optional(
      Nullable(Type.String({ minLength: 1, maxLength: 255, description: 'The branch to create; default `dbt-sync/<ref>-<yyyymmddhhmmss>-<8 hex>`.' })),
    ),
    output: Type.Optional(
      Nullable(
        Type.Enum(['branch', 'files'], {
          description: '`branch` (default) commits to a new branch; `files` commits nothing (read them from generated-files for an hour).',
        }),
      ),
    ),
  },
  { additionalProperties: false },
);
export type StartDbtSyncInput = Static<typeof StartDbtSyncBody>;

export const StartDbtSyncResponseSchema = Type.Object(
  { syncJobId: Type.String(), workflowId: Type.String({ description: 'The job’s id in the jobs queue.' }), branchName: Type.String() },
  { $id: 'StartDbtSyncResponse' },
);

const Phase = Type.Object({ phase: Type.String(), startedOffsetMs: Type.Integer(), durationMs: Type.Integer(), outcome: Type.Enum(['ok', 'failed']) });
export type SyncPhase = Static<typeof Phase>;

const Stats = Type.Object({
  cubeCount: Nullable(Type.Integer()),
  generatedFileCount: Nullable(Type.Integer()),
  models: Nullable(Type.Integer()),
  sources: Nullable(Type.Integer()),
  macros: Nullable(Type.Integer()),
  dbtVersion: Nullable(Type.String({ description: 'Advisory.' })),
  manifestGeneratedAt: Nullable(Type.String({ description: 'When the manifest was produced, not when the sync ran.' })),
});
export type SyncStats = Static<typeof Stats>;

export const DbtSyncRunSchema = Type.Object(
  {
    syncJobId: Type.String(),
    deploymentId: Type.Integer(),
    status: Type.String({
      description: '`RUNNING`, `COMPLETED`, `FAILED`, `CANCELLED` or `UNKNOWN` (the run’s record was lost). Treat an unrecognised value as not terminal.',
    }),
    trigger: Type.String({ description: '`manual`, `api`, `webhook`, `agent` or `unknown`.' }),
    source: Type.String({ description: '`git` or `manifest`.' }),
    branchName: Type.String(),
    startedAt: Timestamp,
    completedAt: Type.Optional(Nullable(Timestamp)),
    durationMs: Type.Optional(Nullable(Type.Integer({ description: 'Measured on one clock; show this rather than subtracting the timestamps.' }))),
    errorMessage: Type.Optional(Nullable(Type.String())),
    failedPhase: Type.Optional(Nullable(Type.String())),
    lastStage: Type.Optional(Nullable(Type.String())),
    gitRef: Type.Optional(Nullable(Type.String())),
    phases: Type.Optional(Nullable(Type.Array(Phase))),
    stats: Type.Optional(Nullable(Stats)),
    triggerContext: Type.Optional(
      Nullable(Type.Object({ headSha: Nullable(Type.String()), pushedBranch: Nullable(Type.String()), targetBranch: Nullable(Type.String()) })),
    ),
    userId: Type.Optional(Nullable(Type.Integer())),
  },
  { $id: 'DbtSyncRun' },
);
export type DbtSyncRun = Static<typeof DbtSyncRunSchema>;

export const DbtSyncRunPageSchema = Type.Object({ items: Type.Array(Type.Ref('DbtSyncRun')), pageInfo: Type.Ref('PageInfo') }, { $id: 'DbtSyncRunPage' });

export const DbtSyncHistoryQuery = Type.Object(
  { status: Type.Optional(Type.Enum([...RUN_STATUSES])), trigger: Type.Optional(Type.Enum([...TRIGGERS])), ...PageQuery },
  { additionalProperties: false },
);

export const DbtSyncStatusResponseSchema = Type.Object(
  {
    syncJobId: Type.String(),
    status: Type.String({
      description: 'One of the 11 stage values; only `COMPLETED` and `FAILED` are terminal. A cancelled run is `FAILED` with error `cancelled`.',
    }),
    progress: Type.Object({ stage: Type.String(), percentComplete: Type.Integer({ description: 'For display only.' }), message: Nullable(Type.String()) }),
    updatedAt: Timestamp,
    error: Type.Optional(Nullable(Type.String())),
  },
  { $id: 'DbtSyncStatusResponse' },
);
export type DbtSyncStatusResponse = Static<typeof DbtSyncStatusResponseSchema>;

export const DbtSyncCancelResponseSchema = Type.Object({ message: Type.String() }, { $id: 'DbtSyncCancelResponse' });

export const DbtSyncResultResponseSchema = Type.Object(
  {
    syncJobId: Type.String(),
    generatedFiles: Type.Array(Type.Object({ path: Type.String() }), {
      description: 'The files committed to the branch (none when the model was unchanged or nothing was committed).',
    }),
    manifestStats: Type.Object({ models: Type.Integer(), sources: Type.Integer(), macros: Type.Integer() }),
    cubeCount: Type.Integer(),
    completedAt: Type.String(),
    durationMs: Type.Integer(),
  },
  { $id: 'DbtSyncResultResponse' },
);
export type DbtSyncResultResponse = Static<typeof DbtSyncResultResponseSchema>;

export const DbtSyncLogEntrySchema = Type.Object(
  {
    timestamp: Timestamp,
    level: Type.String({ description: '`info` or `error`.' }),
    stream: Type.String({ description: '`system` for now; treat it as an open set.' }),
    message: Type.String(),
    phase: Type.Optional(Nullable(Type.String())),
    durationMs: Type.Optional(Nullable(Type.Integer({ description: 'On a line that closes a phase.' }))),
  },
  { $id: 'DbtSyncLogEntry' },
);
export type DbtSyncLogEntry = Static<typeof DbtSyncLogEntrySchema>;
export const DbtSyncLogPageSchema = Type.Object({ items: Type.Array(Type.Ref('DbtSyncLogEntry')), pageInfo: Type.Ref('PageInfo') }, { $id: 'DbtSyncLogPage' });

export const DbtSyncGeneratedFilesPageSchema = Type.Object(
  { items: Type.Array(Type.Object({ path: Type.String(), content: Type.String() })), pageInfo: Type.Ref('PageInfo') },
  { $id: 'DbtSyncGeneratedFilesPage' },
);

export const DbtSyncParams = Type.Object({ deploymentId: Id, syncJobId: Type.String({ minLength: 1, maxLength: 64 }) });
export const DbtSyncPageQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export const dbtSyncRunSchemas = [
  StartDbtSyncResponseSchema,
  DbtSyncRunSchema,
  DbtSyncRunPageSchema,
  DbtSyncStatusResponseSchema,
  DbtSyncCancelResponseSchema,
  DbtSyncResultResponseSchema,
  DbtSyncLogEntrySchema,
  DbtSyncLogPageSchema,
  DbtSyncGeneratedFilesPageSchema,
];
