import { Type, type Static } from 'typebox';
import { Id, PageQuery, Timestamp } from '../../shared/schemas.js';
import { BranchName } from './commits.schemas.js';

const Text = (description?: string) => Type.Union([Type.String(), Type.Null()], description ? { description } : {});

export const BuildStatus = Type.Enum(['queued', 'building', 'success', 'failed'], {
  description: 'The reference leaves the values open; these are all of them.',
});

export const BuildStatusResponseSchema = Type.Object(
  {
    deploymentId: Type.Integer(),
    branchName: Type.String(),
    mode: Type.String({ description: '`production` for the deploy branch, `dev_mode` for any other.' }),
    status: Type.String({
      description:
        '`queued`, `building`, `success` or `failed`. A branch with no build yet: `building` with errorText `Branch is not active`; an unknown branch: `failed` with `Bad branch`.',
    }),
    buildJobId: Type.Union([Type.Integer(), Type.Null()], { description: 'The build’s id.' }),
    deploymentStatus: Text('Not reported yet (comes with the runtime).'),
    errorText: Text(),
    filesHash: Text('The git tree id of the built files.'),
    lastHash: Text('The commit built (or, with no build yet, the branch’s head).'),
    updatedAt: Type.Union([Timestamp, Type.Null()]),
  },
  { $id: 'BuildStatusResponse' },
);
export type BuildStatusResponse = Static<typeof BuildStatusResponseSchema>;

export const BuildSchema = Type.Object(
  {
    id: Type.Integer(),
    branchName: Type.String(),
    mode: Type.Enum(['production', 'dev_mode']),
    status: BuildStatus,
    commit: Type.String(),
    filesHash: Text(),
    errorText: Text(),
    cubesCount: Type.Union([Type.Integer(), Type.Null()]),
    cause: Type.String({ description: 'What started it: a merge, a commit, a push, an upload, the deployment’s creation.' }),
    createdAt: Timestamp,
    startedAt: Type.Union([Timestamp, Type.Null()]),
    finishedAt: Type.Union([Timestamp, Type.Null()]),
  },
  { $id: 'Build' },
);
export type Build = Static<typeof BuildSchema>;

export const BuildPageSchema = Type.Object({ items: Type.Array(Type.Ref('Build')), pageInfo: Type.Ref('PageInfo') }, { $id: 'BuildPage' });

export const BuildLogLineSchema = Type.Object({ seq: Type.Integer(), at: Timestamp, line: Type.String() }, { $id: 'BuildLogLine' });
export const BuildLogPageSchema = Type.Object({ items: Type.Array(Type.Ref('BuildLogLine')), pageInfo: Type.Ref('PageInfo') }, { $id: 'BuildLogPage' });

export const BuildStatusQuery = Type.Object({ branchName: Type.Optional(BranchName) }, { additionalProperties: false });
export const BuildsQuery = Type.Object({ branchName: Type.Optional(BranchName), ...PageQuery }, { additionalProperties: false });
export const BuildParams = Type.Object({ deploymentId: Id, buildId: Id });
export const BuildLogQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export const ValidateQuery = Type.Object(
  {
    branchName: Type.Optional(BranchName),
    devMode: Type.Optional(Type.Boolean({ description: 'Validate the credential’s active dev-mode branch, pending changes included. Not with `branchName`.' })),
  },
  { additionalProperties: false },
);

export const ValidationResponseSchema = Type.Object(
  {
    deploymentId: Type.Integer(),
    branchName: Type.String(),
    mode: Type.Enum(['production', 'dev_mode']),
    valid: Type.Boolean(),
    errors: Type.Array(
      Type.Object({
        message: Type.String(),
        fileName: Type.Union([Type.String(), Type.Null()]),
        line: Type.Optional(Type.Integer({ description: '1-based, where known.' })),
        column: Type.Optional(Type.Integer({ description: '1-based, where known.' })),
      }),
    ),
    cubesCount: Type.Union([Type.Integer(), Type.Null()]),
  },
  { $id: 'DataModelValidationResponse' },
);
export type ValidationResponse = Static<typeof ValidationResponseSchema>;

export const buildSchemas = [BuildStatusResponseSchema, BuildSchema, BuildPageSchema, BuildLogLineSchema, BuildLogPageSchema, ValidationResponseSchema];
