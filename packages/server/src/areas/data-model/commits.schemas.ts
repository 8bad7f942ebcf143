import { Type, type Static } from 'typebox';
import { PageOf, PageQuery, Timestamp } from '../../shared/schemas.js';

/** A branch as git names it; whether git accepts it is checked by git (git/refs.ts). */
export const BranchName = Type.String({ minLength: 1, maxLength: 255, description: 'A branch name, e.g. `main` or `feature/orders`.' });

export const CommitSchema = Type.Object(
  {
    hash: Type.String({ description: 'The commit id (SHA-1, 40 hex digits).' }),
    parentHashes: Type.Array(Type.String(), { description: 'First parent first; two for a merge.' }),
    message: Type.String(),
    authorName: Type.String(),
    authorEmail: Type.String(),
    authoredAt: Timestamp,
    committedAt: Timestamp,
  },
  { $id: 'Commit' },
);
export type Commit = Static<typeof CommitSchema>;

export const CommitPageSchema = PageOf('Commit');

export const CommitsQuery = Type.Object(
  {
    branchName: Type.Optional({ ...BranchName, description: 'Whose history; default: the deploy branch.' }),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export type CommitsInput = Static<typeof CommitsQuery>;

export const commitSchemas = [CommitSchema, CommitPageSchema];
