import { timestamp, type Clock } from '../../time.js';
import type { Caller } from '../../access/caller.js';
import type { Audit } from '../../audit/index.js';
import { atLeast } from '../../access/levels.js';
import type { Store } from '../../db/database.js';
import type { DeploymentRow } from '../../db/tables.js';
import type { Secrets } from '../../secrets/index.js';
import type { Signing } from '../../signing/index.js';
import { positionalPageInfo, positionalWindow } from '../../shared/pagination.js';
import { ApiError } from '../../shared/problems.js';
import { authorizeDeployment } from '../deployments/index.js';
import { deploymentPath, type DeploymentUrlOf } from '../deployments/index.js';
import { findEnvironment, type EnvironmentRef } from '../deployments/index.js';
import {
  DEPLOYMENT_TOKEN_MAX_SECONDS,
  ENVIRONMENT_TOKEN_MAX_SECONDS,
  SECURITY_CONTEXT_MAX_BYTES,
  type CreateDeploymentEnvironmentTokenInput,
  type CreateDeploymentTokenInput,
  type DeploymentEnvironmentToken,
} from './tokens.schemas.js';
import { deleteExpiredTokens, environmentTokenContext, insertEnvironmentToken, listOwnTokens } from './tokens.store.js';

/** The `typ` of each kind of token, so a data API never takes one kind for another. */
export const DEPLOYMENT_TOKEN_TYPE = 'deployment+jwt';
export const ENVIRONMENT_TOKEN_TYPE = 'environment+jwt';

/** The only scopes an environment token ever carries (reference 1.19, later revision). */
const SIGNABLE_SCOPES = ['meta', 'sql-runner'] as const;

type Claims = Record<string, unknown>;

/**
 * Data-API tokens (reference 1.16, 1.18-1.20), signed by the tenant's keyring (signing/). Each
 * names its deployment, environment, branch and user, and its audience is the environment's data
 * API, so a token for one environment is refused by every other.
 */
export function tokensService(store: Store, signing: Signing, secrets: Secrets, urlOf: DeploymentUrlOf, now: Clock, audit?: Audit) {
  const { db } = store;

  function userClaims(caller: Caller): Claims {
    return { user_id: caller.actor.userId, email: caller.actor.email };
  }

  async function environmentOf(caller: Caller, row: DeploymentRow, environmentId: string): Promise<EnvironmentRef> {
    const env = await findEnvironment(db, row, deploymentPath(await urlOf(caller.tenant), row.id), environmentId);
    if (env === undefined)
      throw new ApiError(
        'ENVIRONMENT_NOT_FOUND',
        `Deployment ${row.id} has no environment "${environmentId}"; GET /api/v1/deployments/${row.id}/environments lists them.`,
      );
    return env;
  }

  /**
   * What a caller may sign into a security context: nothing without EDIT access on the deployment,
   * and never a `scope` key (scopes are the server's to grant).
   */
  function signableContext(given: Record<string, unknown>, canEdit: boolean): Record<string, unknown> {
    if (Buffer.byteLength(JSON.stringify(given), 'utf8') > SECURITY_CONTEXT_MAX_BYTES) {
      throw new ApiError('VALIDATION_FAILED', `The security context is larger than ${SECURITY_CONTEXT_MAX_BYTES} bytes as JSON.`, {
        errors: [{ pointer: '/body/security_context', message: `must be at most ${SECURITY_CONTEXT_MAX_BYTES} bytes as JSON` }],
      });
    }
    if (!canEdit) return {};
    return Object.fromEntries(Object.entries(given).filter(([name]) => name !== 'scope'));
  }

  async function mint(
    caller: Caller,
    deploymentId: number,
    environmentId: string,
    input: CreateDeploymentEnvironmentTokenInput,
    scopesFor: (canEdit: boolean) => string[],
  ) {
    const { row, level } = await authorizeDeployment(db, caller, deploymentId, 'DeploymentRead');
    const env = await environmentOf(caller, row, environmentId);
    // Edit access: EDIT on the deployment (the role caps it, so a VIEWER never has it).
    const canEdit = atLeast(level, 'EDIT');
    const securityContext = signableContext(input.security_context, canEdit);
    const scopes = scopesFor(canEdit);
    const signed = await signing.sign(
      caller.tenant,
      { ...userClaims(caller), deployment_id: row.id, environment_id: env.id, branch: env.branch, scopes, security_context: securityContext },
      {
        audience: env.dataApiUrl,
        expiresInSeconds: input.expires_in ?? ENVIRONMENT_TOKEN_MAX_SECONDS,
        subject: `user:${caller.actor.userId}`,
        type: ENVIRONMENT_TOKEN_TYPE,
      },
    );
    const token: DeploymentEnvironmentToken = {
      token: signed.token,
      security_context: securityContext,
      created_at: signed.issuedAt.toISOString(),
      expires_at: signed.expiresAt.toISOString(),
      scopes,
    };
    await deleteExpiredTokens(db, row.id, env.id, token.created_at);
    await insertEnvironmentToken(db, {
      tenant_id: caller.actor.tenantId,
      deployment_id: row.id,
      environment_id: env.id,
      jti: signed.jti,
      created_by_user_id: caller.actor.userId,
      token: secrets.seal(signed.token, environmentTokenContext(row.id, signed.jti)),
      security_context: JSON.stringify(securityContext),
      scopes: JSON.stringify(scopes),
      created_at: token.created_at,
      expires_at: token.expires_at,
    });
    await audit?.record(caller, {
      action: 'token.issued',
      target: { deploymentId: row.id, environmentId: env.id },
      details: { kind: ENVIRONMENT_TOKEN_TYPE, jti: signed.jti, scopes: scopes.join(' '), expiresAt: token.expires_at },
    });
    return { data: token };
  }

  return {
    /** Reference 1.16: a token for the production data API, as the caller (DeploymentRead). */
    async deploymentToken(caller: Caller, deploymentId: number, input: CreateDeploymentTokenInput | undefined): Promise<{ platformApiToken: string }> {
      const { row } = await authorizeDeployment(db, caller, deploymentId, 'DeploymentRead');
      const env = await environmentOf(caller, row, 'production');
      const signed = await signing.sign(
        caller.tenant,
        { ...userClaims(caller), deployment_id: row.id, environment_id: env.id, branch: env.branch },
        {
          audience: env.dataApiUrl,
          expiresInSeconds: input?.expiresIn ?? DEPLOYMENT_TOKEN_MAX_SECONDS,
          subject: `user:${caller.actor.userId}`,
          type: DEPLOYMENT_TOKEN_TYPE,
        },
      );
      await audit?.record(caller, {
        action: 'token.issued',
        target: { deploymentId: row.id, environmentId: env.id },
        details: { kind: DEPLOYMENT_TOKEN_TYPE, jti: signed.jti, expiresAt: signed.expiresAt.toISOString() },
      });
      return { platformApiToken: signed.token };
    },

    /** Reference 1.19: `meta` for anyone who may call; `sql-runner` with edit access; nothing else. */
    async environmentToken(caller: Caller, deploymentId: number, environmentId: string, input: CreateDeploymentEnvironmentTokenInput) {
      const requested = new Set(input.scopes ?? []);
      return mint(caller, deploymentId, environmentId, input, (canEdit) => SIGNABLE_SCOPES.filter((s) => requested.has(s) && (s === 'meta' || canEdit)));
    },

    /**
     * Reference 1.20: `meta` always; `meta-private` when asked for, to a caller holding
     * SchemaRead, which every caller that got this far holds (SchemaRead = DeploymentRead = VIEW).
     */
    async metaSyncToken(caller: Caller, deploymentId: number, environmentId: string, input: CreateDeploymentEnvironmentTokenInput) {
      const wantsPrivate = (input.scopes ?? []).includes('meta-private');
      return mint(caller, deploymentId, environmentId, input, () => (wantsPrivate ? ['meta', 'meta-private'] : ['meta']));
    },

    /** Reference 1.18: the caller's own live tokens among the environment's newest 1,000, newest first. */
    async list(caller: Caller, deploymentId: number, environmentId: string, input: { first?: number; after?: string; offset?: number; limit?: number }) {
      const { row } = await authorizeDeployment(db, caller, deploymentId, 'DeploymentRead');
      const env = await environmentOf(caller, row, environmentId);
      const { start, size } = positionalWindow(input);
      const where = {
        tenantId: caller.actor.tenantId,
        deploymentId: row.id,
        environmentId: env.id,
        userId: caller.actor.userId,
        now: timestamp(now),
      };
      const { rows, total } = await listOwnTokens(db, where, start, size);
      const items: DeploymentEnvironmentToken[] = rows.map((r) => ({
        token: secrets.open(r.token, environmentTokenContext(r.deployment_id, r.jti)),
        security_context: JSON.parse(r.security_context) as Record<string, unknown>,
        created_at: r.created_at,
        expires_at: r.expires_at,
        scopes: JSON.parse(r.scopes) as string[],
      }));
      // The list hands back live tokens: a read of secrets.
      await audit?.record(caller, { action: 'tokens.read', target: { deploymentId: row.id, environmentId: env.id }, details: { count: items.length } });
      return {
        items,
        data: items,
        pageInfo: positionalPageInfo(start, items.length, total),
        pagination: { total, offset: start, limit: size },
      };
    },
  };
}
export type TokensService = ReturnType<typeof tokensService>;
