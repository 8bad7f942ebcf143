import { Type, type Static, type TSchema } from 'typebox';
import { LegacyPageOf } from '../../shared/pagination.js';
import { Id, Nullable, LegacyPageQuery, PageQuery, Timestamp, ref } from '../../shared/schemas.js';

/** VIEW < EDIT < MANAGE: "can view", "can edit", "full access" (DESIGN.md, Roles and access). */
export const AccessLevel = Type.Enum(['VIEW', 'EDIT', 'MANAGE'], {
  description: 'VIEW < EDIT < MANAGE: can view, can edit, full access.',
});

export const CREATION_STEPS = ['project', 'upload', 'schema', 'git-host', 'ssh', 'databases', 'ready', 'demo'] as const;
export const CreationStep = Type.Enum([...CREATION_STEPS], { $id: 'CreationStep', description: 'Where the setup wizard stands (reference 1.0).' });
const CloudProvider = Type.Enum(['platform', 'aws', 'gcp']);
const CreationMethod = Type.Enum(['upload', 'platform', 'git-host', 'ssh']);
export const DeployMode = Type.Enum(['git', 'cli'], { description: '`cli`: production changes only through uploads; merges build nothing (reference 2.0).' });
const ReleaseChannel = Type.Enum(['latest', 'release']);
const Template = Type.Enum(['single', 'simpleCluster', 'multiCluster']);

export const DeploymentSchema = Type.Object(
  {
    id: Id,
    name: Type.String(),
    deploymentUrl: Type.String({ description: '`https://<tenant host>/deployments/<id>`; the data API is at `<deploymentUrl>/data-api/v1`.' }),
    creationStep: ref(CreationStep),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    access: {
      ...Nullable(AccessLevel),
      description: "Extension: the caller's effective access to this deployment; null when their access is only to folders, workbooks or reports inside it.",
    },
  },
  {
    $id: 'Deployment',
    description: 'Reference 1.0 `Deployment` (`id`, `name`, `deploymentUrl`, `creationStep`), with `createdAt`, `updatedAt` and `access` beside it.',
  },
);
export type Deployment = Static<typeof DeploymentSchema>;

/** The cursor page, plus the deprecated `data`, `count`, `totalCount` and `pagination` that older clients still read (reference 1.2). */
export const DeploymentPageSchema = LegacyPageOf('Deployment', { withPagination: true });

const CspsConfig = Type.Object(
  {
    enabled: Type.Boolean(),
    storageProvider: Type.String({ maxLength: 255 }),
    ...Object.fromEntries(
      [
        's3Bucket',
        's3Region',
        's3Sse',
        'awsRoleArn',
        'gcsBucket',
        'gcpServiceAccountEmail',
        'gcpWorkloadIdentityProvider',
        'azureStorageAccount',
        'azureContainer',
        'azureTenantId',
        'azureClientId',
      ].map((k) => [k, Type.Optional(Type.Union([Type.String({ maxLength: 1024 }), Type.Null()]))]),
    ),
  },
  { additionalProperties: false },
);

const Maybe = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));

export const DeploymentSettingsSchema = Type.Object(
  {
    id: Id,
    name: Type.String(),
    template: Template,
    cloudProvider: CloudProvider,
    creationStep: ref(CreationStep),
    deploymentUrl: Type.String(),
    releaseChannel: ReleaseChannel,
    deployBranchName: Type.String(),
    deployBranchReadOnly: Type.Boolean(),
    deployBranchMergeAllowed: Type.Boolean(),
    deployProjectRoot: Type.String(),
    isPlatformSqlEnabled: Type.Boolean({ description: 'Always true: the SQL API over cubes and views is part of every runtime.' }),
    isSupportPreAggregations: Type.Boolean({
      description: "Always true: a model's rollup and original_sql pre-aggregations are built into its data source (external: false).",
    }),
    autoDomain: Maybe(Type.String()),
    customDomain: Maybe(Type.String()),
    region: Maybe(Type.String()),
    targetPlatform: Maybe(Type.String()),
    platformImageCloud: Maybe(Type.String()),
    platformImageVersion: Maybe(Type.String()),
    creationMethod: Maybe(CreationMethod),
    deployMode: Maybe(DeployMode),
    repoType: Maybe(Type.Enum(['git', 'deployRepo'])),
    isCold: Maybe(Type.Boolean()),
    isManaged: Maybe(Type.Boolean()),
    releaseChannelVersion: Maybe(Type.String()),
    releaseChannelVersionHold: Maybe(Type.Boolean()),
    defaultLaunchpadViewGroup: Maybe(Type.String()),
    launchpadTabs: Maybe(Type.Array(Type.String())),
    templateVariables: Maybe(Type.Record(Type.String(), Type.Unknown())),
    cspsConfig: Maybe(CspsConfig),
    settings: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          'Extension kept for earlier clients: the free-form settings merged by `PUT {settings}`. Keys naming a secret, password, token or private value are never returned.',
      }),
    ),
  },
  { $id: 'DeploymentSettings', description: 'Reference 1.0 `DeploymentSettings`. Secrets are never included.' },
);
export type DeploymentSettings = Static<typeof DeploymentSettingsSchema>;

const Name = Type.String({ minLength: 1, maxLength: 255 });

export const CreateDeploymentBody = Type.Object(
  {
    name: Name,
    cloudProvider: Type.Optional(CloudProvider),
    isManaged: Type.Optional(Type.Boolean()),
    region: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    targetPlatform: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    creationStep: Type.Optional(ref(CreationStep)),
    creationMethod: Maybe(CreationMethod),
    deployMode: Maybe(DeployMode),
  },
  {
    additionalProperties: false,
    description:
      'Reference 1.1 `CreateDeploymentInput`. Extension kept for earlier clients: `{name}` alone, the rest defaulting to `cloudProvider: platform`, `isManaged: true`, the first configured region, `targetPlatform: process`, `creationStep: project`, `creationMethod: platform`, `deployMode: git`.',
  },
);
export type CreateDeploymentInput = Static<typeof CreateDeploymentBody>;

export const UpdateDeploymentBody = Type.Object(
  {
    name: Maybe(Name),
    cloudProvider: Maybe(CloudProvider),
    creationMethod: Maybe(CreationMethod),
    deployMode: Maybe(DeployMode),
    region: Maybe(Type.String({ minLength: 1, maxLength: 64 })),
    customDomain: Maybe(Type.String({ maxLength: 253 })),
    deployBranchName: Maybe(Type.String({ minLength: 1, maxLength: 255 })),
    deployBranchReadOnly: Maybe(Type.Boolean()),
    deployBranchMergeAllowed: Maybe(Type.Boolean()),
    deployProjectRoot: Maybe(Type.String({ maxLength: 1024 })),
    releaseChannel: Maybe(ReleaseChannel),
    releaseChannelVersion: Maybe(Type.String({ minLength: 1, maxLength: 255 })),
    releaseChannelVersionHold: Maybe(Type.Boolean()),
    template: Maybe(Template),
    templateVariables: Maybe(Type.Record(Type.String({ maxLength: 255 }), Type.Unknown(), { maxProperties: 1000 })),
    defaultLaunchpadViewGroup: Maybe(Type.String({ maxLength: 255 })),
    launchpadTabs: Maybe(Type.Array(Type.String({ maxLength: 255 }), { maxItems: 100 })),
    cspsConfig: Maybe(CspsConfig),
    settings: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'Extension kept for earlier clients: a JSON merge patch (RFC 7386) over the free-form settings: null removes a key, nested objects merge.',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Reference 1.4 `UpdateDeploymentInput`: a partial merge. A field left out or sent as null keeps its value; `templateVariables` merges key by key (a null value removes that key).',
  },
);
export type UpdateDeploymentInput = Static<typeof UpdateDeploymentBody>;

export const ListDeploymentsQuery = Type.Object(
  {
    ...PageQuery,
    creationStep: Type.Optional(Type.Array(ref(CreationStep), { maxItems: 8, description: 'Only deployments at one of these steps.' })),
    ...LegacyPageQuery,
  },
  { additionalProperties: false },
);
export type ListDeploymentsInput = Static<typeof ListDeploymentsQuery>;

export const DeploymentVersionSchema = Type.Object(
  {
    releaseChannelVersion: Type.String({ description: 'The value to send back on update.' }),
    version: Type.String(),
    releaseChannel: ReleaseChannel,
    isLatestInChannel: Type.Boolean(),
    isCurrent: Type.Boolean(),
  },
  { $id: 'DeploymentVersion' },
);
export type DeploymentVersion = Static<typeof DeploymentVersionSchema>;
export const DeploymentVersionPageSchema = Type.Object(
  { items: Type.Array(Type.Ref('DeploymentVersion')), pageInfo: Type.Ref('PageInfo') },
  { $id: 'DeploymentVersionPage' },
);

export const RegionSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    title: Maybe(Type.String()),
    provider: Maybe(Type.String()),
    isPublic: Maybe(Type.Boolean()),
    isDedicated: Maybe(Type.Boolean()),
    isHybrid: Maybe(Type.Boolean()),
    useAiEngineer: Maybe(Type.Boolean()),
  },
  { $id: 'Region' },
);
export const RegionsListSchema = Type.Object(
  {
    items: Type.Array(Type.Ref('Region')),
    data: Type.Array(Type.Ref('Region'), { deprecated: true, description: 'The full list, not paginated (reference 1.15).' }),
    pageInfo: Type.Ref('PageInfo'),
  },
  { $id: 'RegionsListResponse' },
);

/** Schemas other schemas refer to by `$id`; registered once by the app. */
export const deploymentSchemas = [
  CreationStep,
  DeploymentSchema,
  DeploymentPageSchema,
  DeploymentSettingsSchema,
  DeploymentVersionSchema,
  DeploymentVersionPageSchema,
  RegionSchema,
  RegionsListSchema,
];

export { Id };
