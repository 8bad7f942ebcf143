import { Type, type Static } from 'typebox';
import { BranchName } from './commits.schemas.js';

/** How long an upload transaction stays open after it starts. */
export const UPLOAD_TTL_MS = 60 * 60 * 1000;

export const UploadQuery = Type.Object(
  {
    live: Type.Optional(Type.Boolean({ description: 'Accepted for the reference’s clients; an upload always lands as a commit.' })),
    branchName: Type.Optional(BranchName),
    useDeployProjectRoot: Type.Optional(
      Type.Boolean({ description: 'The upload’s paths are relative to `deployProjectRoot`, and only files below it are pruned.' }),
    ),
  },
  { additionalProperties: false },
);
export type UploadQueryInput = Static<typeof UploadQuery>;

export const StartUploadResponseSchema = Type.Object(
  { transaction: Type.Object({ id: Type.String() }), deploymentName: Type.String() },
  { $id: 'StartUploadResponse' },
);

/**
 * Reference 2.7's `multipart/form-data` fields, for the document: Fastify does not validate a
 * multipart body, the route reads and checks the parts itself.
 */
export const UploadFileFields = Type.Object({
  transaction: Type.String({ description: 'The transaction id from POST …/upload/start.' }),
  fileName: Type.String({ description: 'The file’s path, relative to the project root (or to `deployProjectRoot` with `useDeployProjectRoot`).' }),
  file: Type.String({ format: 'binary', contentMediaType: 'application/octet-stream', description: 'The file’s bytes, at most 1 MiB; one file a request.' }),
});

const Hash = Type.String({ pattern: '^[0-9a-f]{40}$' });

export const FinishUploadBody = Type.Object(
  {
    transaction: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
    files: Type.Record(Type.String({ minLength: 1, maxLength: 1024 }), Type.Union([Hash, Type.Object({ hash: Hash }, { additionalProperties: false })]), {
      maxProperties: 20_000,
      description: 'The whole project: each path and git’s blob SHA-1 of its content (as `file-hashes` gives it), as a string or `{hash}`.',
    }),
    autoRemoveFiles: Type.Optional(
      Type.Union([Type.Boolean(), Type.Null()], { description: 'Default true: files of the branch missing from `files` are deleted.' }),
    ),
    awaitGitOperations: Type.Optional(Type.Union([Type.Boolean(), Type.Null()], { description: 'Accepted; the commit is always written before the answer.' })),
    commitMessage: Type.Optional(Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()])),
  },
  { additionalProperties: false },
);
export type FinishUploadInput = Static<typeof FinishUploadBody>;

export const FinishUploadResponseSchema = Type.Object({ lastHash: Type.Union([Type.String(), Type.Null()]) }, { $id: 'FinishUploadResponse' });

export const uploadSchemas = [StartUploadResponseSchema, FinishUploadResponseSchema];
