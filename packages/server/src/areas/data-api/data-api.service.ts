import type { Caller } from '../../access/caller.js';
import type { TenantSnapshot } from '../../cache/tenant-cache.js';
import type { Store } from '../../db/database.js';
import type { DeploymentRow, RuntimeEnvironmentType } from '../../db/tables.js';
import type { PodRequestOptions, Runtime } from '../../runtime/index.js';
import { StatementTimeout } from '../../runtime/driver.js';
import { QUERY_TIMEOUT_TYPE, timeoutMessage } from '../../semantic-layer/protocol.js';
import { ApiError, notFound } from '../../shared/problems.js';
import type { Signing } from '../../signing/index.js';
import { SigningError } from '../../signing/index.js';
import type { BuildsService } from '../data-model/index.js';
import { hasSuccessfulBuild, isPersonalBranch, latestBuild, recordBranches } from '../data-model/index.js';
import { systemClock, timestamp, type Clock } from '../../time.js';
import type { DeploymentRepositories } from '../data-model/index.js';
import { authorizeDeployment } from '../deployments/index.js';
import { findDeployment } from '../deployments/index.js';
import { deploymentPath, type DeploymentUrlOf } from '../deployments/index.js';
import { dataApiUrl } from '../deployments/index.js';
import { DEPLOYMENT_TOKEN_TYPE, ENVIRONMENT_TOKEN_TYPE } from '../tokens/index.js';
import { findBranch } from './data-api.store.js';
import { embedSecurityContext, userSecurityContext } from '../embed-tenants/index.js';
import type { SecurityContext } from '../../semantic-layer/query/access.js';
import type { EmbedPrincipal } from '../embed-sessions/index.js';
import { branchEnvironment, productionEnvironment, type Environment } from '../../runtime/environments.js';

/** The environment a data-API URL addresses. */
export interface DataApiEnvironment {
  row: DeploymentRow;
  environmentId: string;
  type: RuntimeEnvironmentType;
  branch: string;
  url: string;
}

/** What the caller may do on the data API, from its token or its REST credential. */
export interface DataApiGrant {
  /** Null: every scope (a REST credential, a deployment token). */
  scopes: string[] | null;
  /** Whose rows: the user the credential acts for, and the security context it carries. */
  userId: number;
  securityContext: Record<string, unknown>;
  /** The whole row-level context, when the credential carries it (an embed token); else read for `userId`. */
  context?: SecurityContext;
  /** The tenant's cache of the request (a REST credential's), where that context is kept between requests. */
  snapshot?: TenantSnapshot;
}

export interface ForwardRequest {
  method: string;
  /** The path below `/v1/`, and the query string without its `?`. */
  path: string;
  query: string;
  body: unknown;
  requestId: string;
}

/** How the data API answers a query the runtime stopped (JSON, as the runtime's own answers). */
const JSON_TYPE = 'application/json; charset=utf-8';

const dataApiEnvironment = (row: DeploymentRow, env: Environment, url: string): DataApiEnvironment => ({
  row,
  environmentId: env.id,
  type: env.type,
  branch: env.branch,
  url,
});

function unavailable(detail: string, retryAfterSeconds: number): ApiError {
  return new ApiError('RUNTIME_UNAVAILABLE', detail, { headers: { 'retry-after': String(retryAfterSeconds) } });
}

/** 401 for a data-API token that is not valid here (the data API's own challenge). */
export function unauthenticated(detail: string): ApiError {
  return new ApiError('UNAUTHENTICATED', detail, { headers: { 'www-authenticate': 'Bearer realm="mapi-data-api", error="invalid_token"' } });
}

/**
 * The deployment's data API (`<deploymentUrl>/data-api/v1`, a branch's at
 * `<deploymentUrl>/dev-mode/<branch>/data-api/v1`, reference 2.14): the caller is checked here,
 * then the request goes to the environment's pod, on whichever server process runs it.
 * On-demand environments (a branch's staging without its flag, dev mode) are woken by a request.
 */
export function dataApiService(
  store: Store,
  signing: Signing,
  runtime: Runtime,
  builds: BuildsService,
  repositories: DeploymentRepositories,
  urlOf: DeploymentUrlOf,
  options: { waitMs?: number; now?: Clock } = {},
) {
  const { db } = store;
  const { waitMs, now = systemClock } = options;

  /**
   * The branch's row; a shared branch git has without one (pushed over git before pushes kept
   * rows) gets it here, so the data API serves every branch the repository has.
   */
  async function branchRow(row: DeploymentRow, branch: string): Promise<{ id: number; owner_key_id: number | null } | undefined> {
    const found = await findBranch(db, row.id, branch);
    if (found || isPersonalBranch(branch) || (await (await repositories.open(row)).head(branch)) === null) return found;
    await recordBranches(db, { tenantId: row.tenant_id, deploymentId: row.id }, [branch], timestamp(now));
    return findBranch(db, row.id, branch);
  }

  /** The environment of a URL: production, or the branch's (staging for shared branches, development for `dev-…` ones). */
  async function environmentOf(row: DeploymentRow, tenant: { id: number; slug: string }, branch: string | null): Promise<DataApiEnvironment> {
    const base = deploymentPath(await urlOf(tenant), row.id);
    if (branch === null) return dataApiEnvironment(row, productionEnvironment(row.deploy_branch_name), dataApiUrl(base, null));
    const found = branch === row.deploy_branch_name ? undefined : await branchRow(row, branch);
    if (!found || branch === row.deploy_branch_name) {
      throw new ApiError(
        'ENVIRONMENT_NOT_FOUND',
        branch === row.deploy_branch_name
          ? `The deploy branch is served at ${dataApiUrl(base, null)}.`
          : `Deployment ${row.id} has no branch ${JSON.stringify(branch)}.`,
      );
    }
    return dataApiEnvironment(row, branchEnvironment({ ...found, name: branch }), dataApiUrl(base, branch));
  }

  const service = {
    /** The environment a URL names, for a caller with a data-API token (verified against it next). */
    async environment(tenant: { id: number; slug: string }, deploymentId: number, branch: string | null): Promise<DataApiEnvironment> {
      const row = await findDeployment(db, tenant.id, deploymentId);
      if (!row) throw notFound('DEPLOYMENT_NOT_FOUND', 'Deployment', deploymentId);
      return environmentOf(row, tenant, branch);
    },

    /** A REST credential (API key) needs DeploymentRead on the deployment; then the environment its URL names. */
    async authorizeCaller(caller: Caller, deploymentId: number, branch: string | null): Promise<{ env: DataApiEnvironment; grant: DataApiGrant }> {
      // The row from the request's cache snapshot: every write to deployments bumps its version.
      const { row } = await authorizeDeployment(db, caller, deploymentId, 'DeploymentRead', caller.snapshot);
      return {
        env: await environmentOf(row, caller.tenant, branch),
        grant: { scopes: null, userId: caller.actor.userId, securityContext: {}, snapshot: caller.snapshot },
      };
    },

    /** A data-API token (reference 1.16, 1.19, 1.20) signed for this very environment, unexpired. */
    async authorizeToken(tenant: { id: number; slug: string }, env: DataApiEnvironment, token: string): Promise<DataApiGrant> {
      let claims: Record<string, unknown>;
      try {
        claims = await signing.verify(tenant, token, { audience: env.url, types: [DEPLOYMENT_TOKEN_TYPE, ENVIRONMENT_TOKEN_TYPE] });
      } catch (error) {
        if (error instanceof SigningError)
          throw unauthenticated(
            `${error.message.replace(/\.?$/, '.')} Mint a token for this environment with POST /api/v1/deployments/${env.row.id}/environments/${env.environmentId}/tokens.`,
          );
        throw error;
      }
      if (claims.deployment_id !== env.row.id || claims.environment_id !== env.environmentId)
        throw unauthenticated('The token was minted for another deployment or environment.');
      if (typeof claims.user_id !== 'number') throw unauthenticated('The token names no user.');
      const context = claims.security_context;
      return {
        scopes: Array.isArray(claims.scopes) ? claims.scopes.filter((s): s is string => typeof s === 'string') : null,
        userId: claims.user_id,
        securityContext: typeof context === 'object' && context !== null && !Array.isArray(context) ? (context as Record<string, unknown>) : {},
      };
    },

    /**
     * An embed token (reference 4.16) opens the data API of its own deployment and branch, with
     * the context it was generated with: its global groups, attributes and security context, plus
     * its embed tenant's groups as 4.0 names them (`system:tenant:<name>`, the tenant's implicit
     * group, and `system:tenant:<name>:group:<group>`), so a policy can name the tenant.
     * A session for a user of the account (`internalId`) reads with that user's own context.
     * It may read the model (`meta`, public members only) and run queries; nothing else.
     */
    embedGrant(env: DataApiEnvironment, principal: EmbedPrincipal): DataApiGrant {
      const { claims } = principal;
      const branch = env.type === 'production' ? null : env.branch;
      if (claims.deployment_id !== env.row.id || (claims.branch ?? null) !== branch) {
        throw unauthenticated(
          `This embed token is for the data API of deployment ${claims.deployment_id}${claims.branch === null ? '' : ` (branch ${claims.branch})`}, not this one.`,
        );
      }
      const scopes = ['meta', 'sql-runner'];
      if (claims.embed_user.user_id !== null) return { scopes, userId: claims.embed_user.user_id, securityContext: {} };
      const identity = { groups: claims.groups, tenantGroups: claims.tenant_groups ?? [], userAttributes: claims.user_attributes };
      return { scopes, userId: 0, securityContext: claims.security_context, context: embedSecurityContext(identity, claims.security_context) };
    },

    /** Sends the request to the environment's pod and answers what it answers. */
    async forward(
      env: DataApiEnvironment,
      grant: DataApiGrant,
      request: ForwardRequest,
    ): Promise<{ status: number; contentType: string; body: Buffer | string }> {
      // An environment token reads the model with `meta`, and runs queries with `sql-runner`.
      const scope = request.path === 'meta' ? 'meta' : 'sql-runner';
      if (grant.scopes !== null && !grant.scopes.includes(scope)) {
        throw new ApiError(
          'FORBIDDEN',
          `This token does not carry the \`${scope}\` scope; mint one with \`scopes: ["${scope}"]\`${scope === 'sql-runner' ? ' (it needs edit access on the deployment)' : ''}.`,
        );
      }
      const key = { tenantId: env.row.tenant_id, deploymentId: env.row.id, environmentId: env.environmentId, type: env.type, branch: env.branch };
      const privateMeta = grant.scopes === null || grant.scopes.includes('meta-private');
      try {
        return await runtime.request(
          key,
          async () => ({
            method: request.method,
            path: `/v1/${request.path}`,
            search: request.query,
            privateMeta,
            security: grant.context ?? (await userSecurityContext(db, env.row.tenant_id, grant.userId, grant.securityContext, grant.snapshot)),
            ...(request.body === undefined || request.body === null ? {} : { body: request.body }),
            requestId: request.requestId,
          }),
          podOptions(env),
        );
      } catch (error) {
        // The query ran too long and was stopped: answered as the runtime answers a statement its
        // data source refuses (PostgreSQL's statement_timeout is such a refusal), not as an outage.
        if (error instanceof StatementTimeout)
          return { status: 400, contentType: JSON_TYPE, body: JSON.stringify({ type: QUERY_TIMEOUT_TYPE, error: timeoutMessage(error.limitMs) }) };
        throw error;
      }
    },

    run: async (caller: Caller, deploymentId: number, request: { sql: string } | { query: unknown }) => {
      const { env, grant } = await service.authorizeCaller(caller, deploymentId, null);
      return execute(env, grant, request);
    },

    /**
     * The same query run for someone who is not the caller of a request (a dashboard render for a
     * notification's recipient, an export rendered as another user): the grant says whose rows.
     * Checks no access; the caller of this method has decided who may see what, as whom.
     */
    runAs: async (tenant: { id: number; slug: string }, deploymentId: number, grant: DataApiGrant, request: { sql: string } | { query: unknown }) => {
      const env = await service.environment(tenant, deploymentId, null);
      return execute(env, grant, request);
    },

    /**
     * A query run inside the server for an embed session (a dashboard's Python analysis): on the
     * session's deployment and branch, with its row-level context, as its own data-API requests are.
     */
    async runForEmbed(tenant: { id: number; slug: string }, principal: EmbedPrincipal, request: { sql: string } | { query: unknown }) {
      const env = await service.environment(tenant, principal.claims.deployment_id, principal.claims.branch ?? null);
      return execute(env, service.embedGrant(env, principal), request);
    },

    /**
     * The model as `/v1/meta` answers it to the caller, with the caller's access policies applied
     * and its public members only, as an embed token or a `meta` token reads it: what an AI
     * feature may show a model of the deployment.
     */
    async meta(caller: Caller, deploymentId: number): Promise<{ cubes: Array<Record<string, unknown>> }> {
      const { env, grant } = await service.authorizeCaller(caller, deploymentId, null);
      return readMeta(env, { ...grant, scopes: ['meta', 'sql-runner'] });
    },

    /** The same for an embed session, on its deployment and branch. */
    async metaForEmbed(tenant: { id: number; slug: string }, principal: EmbedPrincipal): Promise<{ cubes: Array<Record<string, unknown>> }> {
      const env = await service.environment(tenant, principal.claims.deployment_id, principal.claims.branch ?? null);
      return readMeta(env, service.embedGrant(env, principal));
    },
  };
  return service;

  async function readMeta(env: DataApiEnvironment, grant: DataApiGrant): Promise<{ cubes: Array<Record<string, unknown>> }> {
    const answer = await service.forward(env, grant, {
      method: 'GET',
      path: 'meta',
      query: '',
      body: undefined,
      requestId: `meta-${env.row.id}-${Date.now()}`,
    });
    let body: { cubes?: unknown; error?: unknown };
    try {
      body = JSON.parse(answer.body.toString('utf8')) as typeof body;
    } catch {
      throw new ApiError('QUERY_REFUSED', 'The runtime answered something other than JSON.');
    }
    if (answer.status !== 200) throw new ApiError('QUERY_REFUSED', String(body.error ?? `The runtime answered ${answer.status}.`));
    return { cubes: Array.isArray(body.cubes) ? (body.cubes as Array<Record<string, unknown>>) : [] };
  }

  /**
   * A query run inside the server (a report run, a dashboard render) on the deployment's
   * production environment, with the grant's row-level context, through the same pod as any
   * data-API request.
   * The runtime's refusal comes back as 400 QUERY_REFUSED (403 FORBIDDEN for members a policy
   * hides) with its message.
   */
  async function execute(
    env: DataApiEnvironment,
    grant: DataApiGrant,
    request: { sql: string } | { query: unknown },
  ): Promise<{ data: Array<Record<string, unknown>>; annotation: Record<string, unknown> }> {
    const sql = 'sql' in request;
    const forward = {
      method: 'POST',
      path: sql ? 'sql' : 'load',
      query: '',
      body: sql ? { query: request.sql } : { query: request.query },
      requestId: `run-${env.row.id}-${Date.now()}`,
    };
    let answer: Awaited<ReturnType<DataApiService['forward']>>;
    let body: Record<string, unknown>;
    // A query still running answers Cube's "Continue wait"; asked again, the request joins the same run.
    do {
      answer = await service.forward(env, grant, forward);
      try {
        body = JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;
      } catch {
        throw new ApiError('QUERY_REFUSED', 'The runtime answered something other than JSON.');
      }
    } while (answer.status === 200 && body.error === 'Continue wait');
    if (answer.status === 403) throw new ApiError('FORBIDDEN', String(body.error ?? 'The query uses members your access policies exclude.'));
    if (answer.status !== 200) throw new ApiError('QUERY_REFUSED', String(body.error ?? `The runtime answered ${answer.status}.`));
    return { data: (body.data as Array<Record<string, unknown>>) ?? [], annotation: (body.annotation as Record<string, unknown>) ?? {} };
  }

  /**
   * How a request of this environment reaches its pod: a woken branch is built when behind, a
   * branch without a good build fails at once, and an outage is worded for the deployment.
   */
  function podOptions(env: DataApiEnvironment): PodRequestOptions {
    // The build the environment waits on, as last read while its pod was not up.
    let build: Awaited<ReturnType<typeof latestBuild>>;
    return {
      waitMs,
      woken: () => buildIfBehind(env),
      async waiting() {
        build = await latestBuild(db, env.row.id, env.branch);
        if (!build || (build.status === 'failed' && !(await hasSuccessfulBuild(db, env.row.id, env.branch)))) {
          throw unavailable(
            build
              ? `Branch ${env.branch} has no successful build; its latest failed: ${build.error_text ?? 'see the build log'}.`
              : `Branch ${env.branch} has no build yet.`,
            10,
          );
        }
      },
      unavailable: (why) => {
        if (why.reason === 'crashing') {
          const { pod } = why;
          return unavailable(
            `The ${env.type} runtime of deployment ${env.row.id} keeps crashing (pod ${pod.pod}, restart ${pod.restart_count}): ${pod.last_error ?? 'see its logs'}. GET /api/v1/deployments/${env.row.id}/logs shows why.`,
            10,
          );
        }
        if (why.reason === 'not-running') {
          const state = build?.status === 'success' ? `its pod is ${why.pod?.status ?? 'not scheduled yet'}` : `build ${build?.id} is ${build?.status}`;
          return unavailable(`The ${env.type} runtime of deployment ${env.row.id} is not running yet: ${state}. Retry in a few seconds.`, 5);
        }
        return unavailable(`The ${env.type} runtime of deployment ${env.row.id} stopped answering; retry in a few seconds.`, 2);
      },
    };
  }

  /** A branch whose head has no build yet gets one (dev mode builds on use, not on each commit). */
  async function buildIfBehind(env: DataApiEnvironment): Promise<void> {
    const head = await (await repositories.open(env.row)).head(env.branch);
    if (head !== null) await builds.ensureBuilt(env.row, env.branch, head, 'data API request');
  }
}
export type DataApiService = ReturnType<typeof dataApiService>;
