import { Type, type Static, type TSchema } from 'typebox';
import { LegacyPageOf } from '../../shared/pagination.js';
import { Id, Nullable, PageQuery, Timestamp } from '../../shared/schemas.js';

/** VIEW < EDIT < MANAGE: "can view", "can edit", "full access" (DESIGN.md, Roles and access). */
export const AccessLevel = Type.Enum(['VIEW', 'EDIT', 'MANAGE'], {
  description: 'VIEW < EDIT < MANAGE: can view, can edit, full access.',
});

export const DeploymentSchema = Type.Object(
  {
    id: Id,
    name: Type.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    access: {
      ...Nullable(AccessLevel),
      description: "The caller's effective access to this deployment; null when their access is only to folders, workbooks or reports inside it.",
    },
  },
  { $id: 'Deployment' },
);
export type Deployment = Static<typeof DeploymentSchema>;

/** The cursor page, plus the deprecated `data`, `count` and `totalCount` that older clients still read. */
export const DeploymentPageSchema = LegacyPageOf('Deployment');

export const DeployMode = Type.Enum(['git', 'cli'], { description: '`cli`: production changes only through uploads; merges build nothing (reference 2.0).' });

export const DeploymentSettingsSchema = Type.Object(
  {
    deployBranchName: Type.String(),
    deployBranchReadOnly: Type.Boolean(),
    deployBranchMergeAllowed: Type.Boolean(),
    deployProjectRoot: Type.String(),
    deployMode: DeployMode,
  },
  {
    $id: 'DeploymentSettings',
    additionalProperties: true,
    description: 'Deployment settings: the deploy settings of the reference, and the free-form settings merged by PUT. Keys naming a secret, password, token or private value are never returned.',
  },
);
export type DeploymentSettings = Static<typeof DeploymentSettingsSchema>;

const Name = Type.String({ minLength: 1, maxLength: 255 });

export const CreateDeploymentBody = Type.Object({ name: Name }, { additionalProperties: false });
export type CreateDeploymentInput = Static<typeof CreateDeploymentBody>;

const OrNull = <T extends TSchema>(schema: T, description: string) => Type.Optional(Type.Union([schema, Type.Null()], { description }));

export const UpdateDeploymentBody = Type.Object(
  {
    name: Type.Optional(Name),
    deployBranchName: OrNull(Type.String({ minLength: 1, maxLength: 255 }), 'The branch production is built from; it must exist. Null leaves it as it is.'),
    deployBranchReadOnly: OrNull(Type.Boolean(), 'The deploy branch takes no direct writes (uploads, commits, pushes); merges still land when allowed.'),
    deployBranchMergeAllowed: OrNull(Type.Boolean(), 'Merges straight into the deploy branch (merge-to-default) are allowed.'),
    deployProjectRoot: OrNull(Type.String({ maxLength: 1024 }), 'The directory of the repository holding the project; empty for its root.'),
    deployMode: OrNull(DeployMode, '`git` (default) or `cli`.'),
    settings: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'A JSON merge patch (RFC 7386) over the current settings: null removes a key, nested objects merge.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type UpdateDeploymentInput = Static<typeof UpdateDeploymentBody>;

export const ListDeploymentsQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
export type ListDeploymentsInput = Static<typeof ListDeploymentsQuery>;

/** Schemas other schemas refer to by `$id`; registered once by the app. */
export const deploymentSchemas = [DeploymentSchema, DeploymentPageSchema, DeploymentSettingsSchema];
