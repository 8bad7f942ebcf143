import { Type, type Static, type TSchema } from 'typebox';
import { Id, PageQuery } from '../../shared/schemas.js';
import { BranchName } from './commits.schemas.js';

/*
 * The build API's shapes (reference section 2). Field names and nullability follow the reference:
 * most optional fields also accept null, which means the same as leaving them out.
 */

const OrNull = <T extends TSchema>(schema: T, description?: string) => Type.Optional(Type.Union([schema, Type.Null()], description ? { description } : {}));

/** The largest file a write accepts, and the most files one request may name. */
export const MAX_FILE_BYTES = 1024 * 1024;
export const MAX_FILES_PER_REQUEST = 1000;
/** A request may carry up to this much (many files up to MAX_FILE_BYTES each). */
export const FILES_BODY_LIMIT = 16 * 1024 * 1024;

const Path = Type.String({ minLength: 1, maxLength: 1024, description: 'Repository-relative, with forward slashes: `model/cubes/orders.yml`.' });
const Files = <T extends TSchema>(item: T) => Type.Array(item, { minItems: 1, maxItems: MAX_FILES_PER_REQUEST });
const Target = {
  branchId: OrNull(Id, 'The branch to write to, by id.'),
  branchName: OrNull(BranchName, 'The branch to write to, by name; default: the credential’s active dev-mode branch.'),
};

export const DataModelWriteResponseSchema = Type.Object({ success: Type.Boolean() }, { $id: 'DataModelWriteResponse' });

export const DevBranchResponseSchema = Type.Object(
  {
    active: Type.Boolean(),
    branchName: Type.Union([Type.String(), Type.Null()], {
      description: 'The branch the credential’s calls now target: its personal `dev-…` branch after entering dev mode.',
    }),
    parentBranch: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'DevBranchResponse' },
);
export type DevBranchResponse = Static<typeof DevBranchResponseSchema>;

export const BranchResponseSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    parentBranch: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    lastHash: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'The head commit of the branch.' })),
    isStagingEnvironmentEnabled: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  },
  { $id: 'BranchResponse' },
);
export type BranchResponse = Static<typeof BranchResponseSchema>;

export const BranchesListResponseSchema = Type.Object(
  {
    items: Type.Array(Type.Ref('BranchResponse')),
    data: Type.Array(Type.Ref('BranchResponse'), { deprecated: true, description: 'Deprecated: the same items.' }),
    pageInfo: Type.Ref('PageInfo'),
  },
  { $id: 'BranchesListResponse' },
);

export const MergeResponseSchema = Type.Object({ merged: Type.Boolean(), branchDeleted: Type.Boolean() }, { $id: 'MergeResponse' });
export type MergeResponse = Static<typeof MergeResponseSchema>;

export const TreeNodeSchema = Type.Object(
  {
    type: Type.Enum(['directory', 'file']),
    name: Type.String(),
    path: Type.String(),
  },
  {
    $id: 'TreeNode',
    additionalProperties: true,
    description:
      'A directory (`children`: its nodes, directories first, then by name) or a file (`size` in bytes, `hash`: git’s blob SHA-1, `content` with `withContent=true`).',
  },
);

export const SourceTreeResponseSchema = Type.Object(
  {
    items: Type.Array(Type.Ref('TreeNode')),
    data: Type.Array(Type.Ref('TreeNode'), { deprecated: true, description: 'Deprecated: the same items.' }),
    pageInfo: Type.Ref('PageInfo'),
  },
  { $id: 'SourceTreeResponse' },
);

export const FileHashesSchema = Type.Record(Type.String(), Type.Object({ hash: Type.String() }), {
  $id: 'FileHashes',
  description: 'Each project-relative path and git’s blob SHA-1 of its content (what `git hash-object` prints).',
});

export const TreeQuery = Type.Object(
  {
    withContent: Type.Optional(Type.Boolean({ default: false })),
    branchName: Type.Optional(BranchName),
    showLastCLIUpload: Type.Optional(
      Type.Boolean({ description: 'The tree as the deployment’s last finished upload committed it (empty before any upload); `branchName` is then ignored.' }),
    ),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export type TreeInput = Static<typeof TreeQuery>;

export const HashesQuery = Type.Object(
  {
    live: Type.Optional(Type.Boolean({ description: 'Include the pending (uncommitted) dev-mode changes of the branch.' })),
    branchName: Type.Optional(BranchName),
    useDeployProjectRoot: Type.Optional(Type.Boolean({ description: 'Only files below `deployProjectRoot`, with paths relative to it.' })),
  },
  { additionalProperties: false },
);
export type HashesInput = Static<typeof HashesQuery>;

export const UpdateFilesBody = Type.Object(
  { files: Files(Type.Object({ path: Path, content: Type.String() }, { additionalProperties: false })), ...Target },
  { additionalProperties: false },
);
export type UpdateFilesInput = Static<typeof UpdateFilesBody>;
export const RemoveFilesBody = Type.Object(
  { files: Files(Type.Object({ path: Path }, { additionalProperties: false })), ...Target },
  { additionalProperties: false },
);
export type RemoveFilesInput = Static<typeof RemoveFilesBody>;
export const RenameFilesBody = Type.Object(
  { files: Files(Type.Object({ path: Path, newPath: Path }, { additionalProperties: false })), ...Target },
  { additionalProperties: false },
);
export type RenameFilesInput = Static<typeof RenameFilesBody>;

export const StartDevModeBody = Type.Object(
  { branchName: OrNull(BranchName, 'The shared branch to fork from; default: the deploy branch.') },
  { additionalProperties: false },
);
export type StartDevModeInput = Static<typeof StartDevModeBody>;

export const CommitBody = Type.Object(
  {
    message: OrNull(Type.String({ minLength: 1, maxLength: 10_000 }), 'Default: a message naming the changed files.'),
    exitDevMode: OrNull(Type.Boolean()),
    resolveMergeConflict: OrNull(Type.Boolean(), 'When the parent changed the same files: keep this branch’s version of each conflicting file.'),
  },
  { additionalProperties: false },
);
export type CommitInput = Static<typeof CommitBody>;

export const CreateBranchBody = Type.Object(
  {
    name: BranchName,
    from: OrNull(BranchName, 'The parent branch; default: the deploy branch.'),
    activate: OrNull(Type.Boolean(), 'Point the credential’s session at the new branch (no dev branch is forked; writes still need dev mode).'),
  },
  { additionalProperties: false },
);
export type CreateBranchInput = Static<typeof CreateBranchBody>;

export const DeleteBranchQuery = Type.Object(
  { branchName: BranchName, removeOnUpstream: Type.Optional(Type.Boolean({ default: false })) },
  { additionalProperties: false },
);
export type DeleteBranchInput = Static<typeof DeleteBranchQuery>;

export const StagingBody = Type.Object({ enabled: Type.Boolean(), ...Target }, { additionalProperties: false });
export type StagingInput = Static<typeof StagingBody>;

export const PullBody = Type.Object({ branchName: BranchName }, { additionalProperties: false });
export type PullInput = Static<typeof PullBody>;

export const MergeBody = Type.Object(
  {
    branchId: Type.Optional(Id),
    branchName: Type.Optional(BranchName),
    message: OrNull(Type.String({ minLength: 1, maxLength: 10_000 })),
    squashCommits: OrNull(Type.Boolean()),
    deleteBranch: OrNull(Type.Boolean()),
    switchToParentBranch: OrNull(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type MergeInput = Static<typeof MergeBody>;

export const MergeToDefaultBody = Type.Object(
  {
    message: Type.String({ minLength: 1, maxLength: 10_000 }),
    branchId: Type.Optional(Id),
    branchName: Type.Optional(BranchName),
    removeBranchAfterMerge: OrNull(Type.Boolean(), 'Delete the merged branch; default false (the branch is kept).'),
  },
  { additionalProperties: false },
);
export type MergeToDefaultInput = Static<typeof MergeToDefaultBody>;

export const dataModelSchemas = [
  DataModelWriteResponseSchema,
  DevBranchResponseSchema,
  BranchResponseSchema,
  BranchesListResponseSchema,
  MergeResponseSchema,
  TreeNodeSchema,
  SourceTreeResponseSchema,
  FileHashesSchema,
];
