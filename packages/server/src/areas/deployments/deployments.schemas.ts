import { Type, type Static } from 'typebox';
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

export const DeploymentSettingsSchema = Type.Record(Type.String(), Type.Unknown(), {
  $id: 'DeploymentSettings',
  description: 'Deployment settings. Keys naming a secret, password, token or private value are never returned.',
});
export type DeploymentSettings = Static<typeof DeploymentSettingsSchema>;

const Name = Type.String({ minLength: 1, maxLength: 255 });

export const CreateDeploymentBody = Type.Object({ name: Name }, { additionalProperties: false });
export type CreateDeploymentInput = Static<typeof CreateDeploymentBody>;

export const UpdateDeploymentBody = Type.Object(
  {
    name: Type.Optional(Name),
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
