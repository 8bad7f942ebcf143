import type { Readable } from 'node:stream';
import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { DeploymentRow } from '../../db/tables.js';
import { serveSmartHttp, type SmartHttpResponse } from '../../git/http-backend.js';
import { ApiError } from '../../shared/problems.js';
import { authorizeDeployment } from '../deployments/index.js';
import { devBranchesOf } from './branches.store.js';
import type { DeploymentRepositories } from './deployment-repositories.js';

export interface GitHttpRequest {
  method: string;
  /** What follows `<id>.git/`: `info/refs`, `git-upload-pack`, `git-receive-pack`, ... */
  rest: string;
  query: string;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  gitProtocol: string | undefined;
  body: Readable | null;
  remoteAddr: string;
}

const SMART_PATHS = new Set(['info/refs', 'git-upload-pack', 'git-receive-pack']);

/** A push (receive-pack) or its advertisement: everything else on this path only reads. */
function isPush(request: GitHttpRequest): boolean {
  return request.rest === 'git-receive-pack' || (request.rest === 'info/refs' && /(^|&)service=git-receive-pack(&|$)/.test(request.query));
}

/**
 * The deployment's repository over git's smart HTTP protocol (an extension): SchemaRead may
 * clone and fetch, SchemaUpdate may push. Fast-forward only, no deletions, and the per-credential
 * rules of the pre-receive hook (git/push-hook.ts): never the deploy branch while it is read-only,
 * never another credential's dev-mode branch. git's own ref locking makes a push and the API's
 * writes safe against each other: each moves a ref only from the value it read.
 */
export function gitHttpService(
  store: Store,
  repositories: DeploymentRepositories,
  onPushed: (row: DeploymentRow, changed: Map<string, string>) => Promise<void>,
) {
  return {
    async serve(caller: Caller, deploymentId: number, request: GitHttpRequest): Promise<SmartHttpResponse> {
      // Smart HTTP only: the dumb protocol's object paths would bypass the negotiation.
      if (!SMART_PATHS.has(request.rest)) throw new ApiError('ROUTE_NOT_FOUND', `${request.rest} is not served here; clone with a git client over smart HTTP.`);
      const push = isPush(request);
      const { row } = await authorizeDeployment(store.db, caller, deploymentId, push ? 'SchemaUpdate' : 'SchemaRead');
      const repo = await repositories.open(row);
      const hookEnv: Record<string, string> = {};
      let before: Map<string, string> | null = null;
      if (push) {
        hookEnv.MAPI_PUSH = '1';
        hookEnv.MAPI_READ_ONLY_BRANCHES = row.deploy_branch_read_only === 1 ? row.deploy_branch_name : '';
        hookEnv.MAPI_OWN_DEV_BRANCHES = (await devBranchesOf(store.db, row.id, caller.actor.keyId)).join(' ');
        if (request.rest === 'git-receive-pack') before = await repo.branches();
      }
      const previous = before;
      return serveSmartHttp(repositories.repositories.root, {
        method: request.method,
        pathInfo: `/${row.id}.git/${request.rest}`,
        query: request.query,
        contentType: request.contentType,
        contentEncoding: request.contentEncoding,
        gitProtocol: request.gitProtocol,
        body: request.body,
        remoteUser: caller.actor.email,
        remoteAddr: request.remoteAddr,
        hookEnv,
        // Before the push is answered: a client that sees it done may use its branches on any
        // route of any server process at once (docs/decisions/branches-usable-when-answered.md).
        ...(previous === null
          ? {}
          : {
              beforeEnd: async () => {
                const after = await repo.branches();
                const changed = new Map([...after].filter(([name, sha]) => previous.get(name) !== sha));
                if (changed.size > 0) await onPushed(row, changed);
              },
            }),
      });
    },
  };
}
export type GitHttpService = ReturnType<typeof gitHttpService>;
