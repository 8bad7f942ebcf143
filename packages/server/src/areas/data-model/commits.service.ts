import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import { GitError } from '../../git/run.js';
import { decodeCursor, encodeCursor, pageRequest } from '../../shared/pagination.js';
import { ApiError } from '../../shared/problems.js';
import type { PageInfo } from '../../shared/schemas.js';
import { authorizeDeployment } from '../deployments/index.js';
import type { Commit, CommitsInput } from './commits.schemas.js';
import type { DeploymentRepositories } from './deployment-repositories.js';

const SHA = /^[0-9a-f]{40}$/;

function invalidCursor(): ApiError {
  return new ApiError('INVALID_CURSOR', 'The `after` cursor was not issued by this history; pass `pageInfo.endCursor` of the previous page.', {
    errors: [{ pointer: '/query/after', message: 'is not a cursor of this history' }],
  });
}

/**
 * A branch's history, newest first (an extension of the reference). A cursor holds the branch's
 * head when the first page was read and how many commits were served: later pages continue the
 * same history even while others commit to the branch.
 */
export function commitsService(store: Store, repositories: DeploymentRepositories) {
  return {
    async list(caller: Caller, deploymentId: number, input: CommitsInput): Promise<{ items: Commit[]; pageInfo: PageInfo }> {
      const { row } = await authorizeDeployment(store.db, caller, deploymentId, 'SchemaRead');
      const repo = await repositories.open(row);
      const page = pageRequest(input);
      let head: string;
      let skip = 0;
      if (page.after !== undefined) {
        const [sha, served] = decodeCursor(page.after, 2);
        if (typeof sha !== 'string' || !SHA.test(sha) || typeof served !== 'number' || !Number.isSafeInteger(served) || served < 1) throw invalidCursor();
        head = sha;
        skip = served;
      } else {
        const branch = input.branchName ?? row.deploy_branch_name;
        const found = await repo.head(branch);
        if (found === null) throw new ApiError('BRANCH_NOT_FOUND', `Deployment ${deploymentId} has no branch ${JSON.stringify(branch)}.`);
        head = found;
      }
      const commits = await repo.log(head, skip, page.first + 1).catch((error: unknown) => {
        // A cursor naming a commit this repository does not have.
        if (error instanceof GitError) throw invalidCursor();
        throw error;
      });
      const items = commits.slice(0, page.first).map((c) => ({
        hash: c.sha,
        parentHashes: c.parents,
        message: c.message,
        authorName: c.authorName,
        authorEmail: c.authorEmail,
        authoredAt: c.authoredAt,
        committedAt: c.committedAt,
      }));
      return {
        items,
        pageInfo: {
          startCursor: items.length === 0 ? null : encodeCursor([head, skip + 1]),
          endCursor: items.length === 0 ? null : encodeCursor([head, skip + items.length]),
          hasNextPage: commits.length > page.first,
          hasPreviousPage: skip > 0,
        },
      };
    },
  };
}
export type CommitsService = ReturnType<typeof commitsService>;
