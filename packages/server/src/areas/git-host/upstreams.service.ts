import type { Caller } from '../../access/caller.js';
import type { Db, DeploymentUpstreamRow, GitHostAppRow } from '../../db/tables.js';
import { fetchRemoteBranch, pushRemoteBranch, RemoteReadError, type RemoteEndpoint } from '../../git/remote.js';
import { isValidBranchName } from '../../git/refs.js';
import { RefMovedError, type Repository } from '../../git/repository.js';
import { OutboundError, type Outbound } from '../../outbound/index.js';
import type { Secrets } from '../../secrets/index.js';
import { ApiError } from '../../shared/problems.js';
import { authorOf } from '../data-model/index.js';
import { isPersonalBranch } from '../data-model/index.js';
import type { DeployBranchMoved } from '../data-model/index.js';
import type { DeploymentRepositories } from '../data-model/index.js';
import { normalizeProjectRoot } from '../../shared/model-paths.js';
import { STARTER_MODEL, STARTER_MODEL_PATH } from '../data-model/index.js';
import { upstreamRef, type Upstream } from '../data-model/index.js';
import { authorizeDeployment } from '../deployments/index.js';
import type { Deployment } from '../deployments/index.js';
import { toDeployment } from '../deployments/index.js';
import { findDeployment, updateDeployment } from '../deployments/index.js';
import { appJwt, appPrivateKey } from './app-jwt.js';
import { gitHostClient, HostError, type HostRepository } from './github-client.js';
import { hostFailure, notConfigured, settingsOf, type GitHostService } from './git-host.service.js';
import type { ConnectGitHostInput } from './git-host.schemas.js';
import { findApp, sealedAs } from './git-host.store.js';
import { findUpstream, saveUpstream } from './upstreams.store.js';

/** How long an installation token is reused: the host's last an hour, so one is never used near its end. */
const TOKEN_REUSE_MS = 10 * 60_000;

const invalid = (pointer: string, message: string) =>
  new ApiError('VALIDATION_FAILED', `Nothing was changed: ${pointer.slice(6)} ${message}.`, { errors: [{ pointer, message }] });

/** A failed git exchange with the upstream, as the caller sees it; the token is in no message. */
function remoteProblem(error: unknown, name: string): never {
  if (error instanceof RemoteReadError) {
    if (error.reason === 'rejected')
      throw new ApiError('UPSTREAM_DIVERGED', `${name}: ${error.message} Pull the branch (POST …/pull), then send the request again.`);
    if (error.reason === 'refused-token' || error.reason === 'not-found') {
      throw new ApiError('UPSTREAM_UNAVAILABLE', `${name}: ${error.message} Check that the app is still installed with access to the repository.`);
    }
    throw new ApiError('UPSTREAM_UNAVAILABLE', `${name}: ${error.message}`);
  }
  if (error instanceof OutboundError) throw new ApiError('UPSTREAM_UNAVAILABLE', `${name} was not called: ${error.message}.`);
  throw error;
}

/** The host's clone URL, which git may use: https, no credentials, query or fragment. */
function cloneUrlOf(hosted: HostRepository): string {
  let url: URL;
  try {
    url = new URL(hosted.cloneUrl);
  } catch {
    throw new ApiError('GIT_HOST_UNAVAILABLE', 'The git host gave the repository a clone URL that is not a URL.');
  }
  if (url.protocol !== 'https:' || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new ApiError('GIT_HOST_UNAVAILABLE', 'The git host gave the repository a clone URL other than a plain https one; git is used over https only.');
  }
  return url.href;
}

/**
 * A deployment's connection to a repository on the account's git host (reference 2.20), and the
 * git transport of its shared branches (data-model/upstream.ts). Connecting is the linked user's
 * act: their token must reach the installation and the repository. Git then runs with a token of
 * the app's installation, minted with the app's private key and never stored, so the connection
 * outlives the user's link and acts with exactly what the installation grants.
 */
export function upstreamsService(deps: {
  db: Db;
  secrets: Secrets;
  outbound: Outbound;
  repositories: DeploymentRepositories;
  deployBranchMoved: DeployBranchMoved;
  originOf: (tenant: { id: number; slug: string }) => Promise<string>;
  now: () => Date;
  /** The caller's client at the host and their (refreshed) token: git-host.service.ts. */
  linked: GitHostService['linked'];
}) {
  const { db, secrets, outbound, repositories, now } = deps;
  const tokens = new Map<string, { token: string; until: number }>();

  async function installationToken(app: GitHostAppRow, installationId: number): Promise<string> {
    // A new app (updated_at) never reuses a token of the one before.
    const key = `${app.tenant_id}:${installationId}:${app.updated_at}`;
    const cached = tokens.get(key);
    if (cached && cached.until > now().getTime()) return cached.token;
    const privateKey = appPrivateKey(secrets.open(app.private_key, sealedAs.privateKey(app.tenant_id)));
    if (privateKey === null)
      throw new ApiError(
        'GIT_HOST_APP_INVALID',
        'The git-host app’s private key is not an RSA private key: an admin saves the app’s key with PUT /api/v1/tenant/git-host-app.',
      );
    let token: string;
    try {
      token = await gitHostClient(outbound, settingsOf(app)).installationToken(await appJwt(app.app_id, privateKey, now()), installationId);
    } catch (error) {
      if (error instanceof HostError && (error.status === 401 || error.status === 403)) {
        throw new ApiError(
          'GIT_HOST_APP_INVALID',
          `The git host refused the app ${app.app_id} (HTTP ${error.status}): check its app id and private key in PUT /api/v1/tenant/git-host-app.`,
        );
      }
      if (error instanceof HostError && error.status === 404)
        throw new ApiError('GIT_HOST_NOT_FOUND', `The app is not installed on installation ${installationId} (any more).`);
      hostFailure(error);
    }
    tokens.set(key, { token, until: now().getTime() + TOKEN_REUSE_MS });
    return token;
  }

  function handle(row: Pick<DeploymentUpstreamRow, 'tenant_id' | 'installation_id' | 'owner' | 'repo' | 'clone_url'>): Upstream {
    const name = `${row.owner}/${row.repo}`;
    const endpoint = async (): Promise<RemoteEndpoint> => {
      const app = await findApp(db, row.tenant_id);
      if (!app) throw notConfigured();
      const url = new URL(row.clone_url);
      const address = await outbound.pinnedAddress(url).catch((error: unknown) => remoteProblem(error, name));
      return {
        url,
        address,
        token: await installationToken(app, row.installation_id),
        trustedCertificates: outbound.trustedCertificates,
        timeoutMs: outbound.timeoutMs,
      };
    };
    return {
      name,
      async fetch(repo, branch) {
        const remote = await endpoint();
        return fetchRemoteBranch(repo.gitDir, remote, branch, upstreamRef(branch)).catch((error: unknown) => remoteProblem(error, name));
      },
      async publish(repo, branch, commit) {
        if (isPersonalBranch(branch)) return;
        const remote = await endpoint();
        await pushRemoteBranch(repo.gitDir, remote, branch, commit).catch((error: unknown) => remoteProblem(error, name));
      },
      async remove(repo, branch) {
        if (isPersonalBranch(branch)) return;
        const remote = await endpoint();
        await pushRemoteBranch(repo.gitDir, remote, branch, null).catch((error: unknown) => remoteProblem(error, name));
      },
    };
  }

  /** The starter model as a commit on no branch yet (an empty deployment connected to an empty repository). */
  async function starterCommit(repo: Repository, caller: Caller): Promise<string> {
    const scratch = `refs/mapi/connecting/${now().getTime()}-${Math.random().toString(36).slice(2)}`;
    const commit = await repo.commit({
      ref: scratch,
      expectedHead: null,
      changes: new Map([[STARTER_MODEL_PATH, STARTER_MODEL]]),
      author: await authorOf(db, caller.actor),
      message: 'Start the data model',
    });
    await repo.moveRefs([{ ref: scratch, to: null, from: commit }]);
    return commit;
  }

  return {
    /** The deployment's upstream, or null when it is not connected (data-model/upstream.ts). */
    async of(row: { tenant_id: number; id: number }): Promise<Upstream | null> {
      const found = await findUpstream(db, row.tenant_id, row.id);
      return found ? handle(found) : null;
    },

    /**
     * Reference 2.20. The named branch of the repository becomes the deploy branch and production
     * builds from it. An empty repository (one made with `isNewRepo`) takes the deployment's model
     * instead. What the deploy branch held before stays in the repository at
     * `refs/mapi/before-connect/<time>`, so connecting never loses a commit.
     */
    async connect(caller: Caller, deploymentId: number, input: ConnectGitHostInput): Promise<Deployment> {
      const { row, level } = await authorizeDeployment(db, caller, deploymentId, 'DeploymentUpdate');
      const tenantId = caller.actor.tenantId;
      // Bad input changes nothing, at the host either: checked before anything is asked of it.
      if (input.deployBranchName != null && (!(await isValidBranchName(input.deployBranchName)) || isPersonalBranch(input.deployBranchName))) {
        throw invalid('/body/deployBranchName', 'is not a branch name git accepts, or is a dev-… name');
      }
      const projectRoot = input.deployProjectRoot == null ? row.deploy_project_root : normalizeProjectRoot(input.deployProjectRoot, '/body/deployProjectRoot');
      const { client, token: userToken } = await deps.linked(caller);
      const installation = (await client.installations(userToken).catch(hostFailure)).find((i) => i.id === input.installationId);
      if (!installation) throw new ApiError('GIT_HOST_NOT_FOUND', `Your linked git-host account cannot reach installation ${input.installationId}.`);

      let hosted: HostRepository;
      if (input.isNewRepo) {
        hosted = await client
          .createRepository(userToken, installation.organization ? installation.login : null, input.name, input.private ?? true)
          .catch((error: unknown) => {
            if (error instanceof HostError && error.status === 422)
              throw new ApiError('GIT_HOST_REPO_EXISTS', `${installation.login}/${input.name} exists already; connect it without isNewRepo.`);
            return hostFailure(error);
          });
      } else {
        hosted = await client.repository(userToken, installation.login, input.name).catch(hostFailure);
      }
      const upstreamRow = {
        tenant_id: tenantId,
        installation_id: installation.id,
        owner: installation.login,
        repo: hosted.name,
        clone_url: cloneUrlOf(hosted),
      };
      const upstream = handle(upstreamRow);
      const branch = input.deployBranchName ?? (!input.isNewRepo && hosted.defaultBranch !== '' ? hosted.defaultBranch : row.deploy_branch_name);

      const head = await repositories.write(row, async (repo) => {
        const fetched = await upstream.fetch(repo, branch);
        const local = await repo.head(row.deploy_branch_name);
        const current = await repo.head(branch);
        if (fetched === null) {
          // The repository has no such branch: it takes the deployment's model (the starter model for an empty deployment).
          const commit = local ?? (await starterCommit(repo, caller));
          await upstream.publish(repo, branch, commit);
          if (current !== commit) await repo.moveRefs([{ ref: `refs/heads/${branch}`, to: commit, from: current }]);
          return commit;
        }
        const moves: Array<{ ref: string; to: string | null; from: string | null }> = [{ ref: `refs/heads/${branch}`, to: fetched, from: current }];
        if (local !== null && local !== fetched) moves.push({ ref: `refs/mapi/before-connect/${now().getTime()}`, to: local, from: null });
        try {
          if (current !== fetched || moves.length > 1) await repo.moveRefs(moves);
        } catch (error) {
          if (error instanceof RefMovedError)
            throw new ApiError('BRANCH_MOVED', `Branch ${branch} moved while the repository was connected; send the request again.`);
          throw error;
        }
        return fetched;
      });

      const at = now().toISOString();
      const updated = await db.transaction().execute(async (trx) => {
        await saveUpstream(
          trx,
          tenantId,
          row.id,
          {
            installation_id: upstreamRow.installation_id,
            owner: upstreamRow.owner,
            repo: upstreamRow.repo,
            clone_url: upstreamRow.clone_url,
            connected_by: caller.actor.userId,
          },
          at,
        );
        await updateDeployment(trx, tenantId, row.id, { deploy_branch_name: branch, deploy_project_root: projectRoot, updated_at: at });
        return (await findDeployment(trx, tenantId, row.id))!;
      });
      // The first build, whatever the deploy mode: connecting is how a git-host deployment gets its model.
      await deps.deployBranchMoved(updated, head, `connected to ${upstream.name}`);
      return toDeployment(updated, level, await deps.originOf(caller.tenant));
    },
  };
}
export type UpstreamsService = ReturnType<typeof upstreamsService>;
