import { randomUUID } from 'node:crypto';
import type { Caller } from '../../access/caller.js';
import type { TenantSnapshot } from '../../cache/tenant-cache.js';
import type { Store } from '../../db/database.js';
import type { DeploymentRow } from '../../db/tables.js';
import { ApiError, type FieldError } from '../../shared/problems.js';
import { SigningError, type Signing, type SigningTenant } from '../../signing/index.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { confirmEmbedUserCap, provisionEmbedUser } from '../embed-tenants/index.js';
import { existingEmbedUserId } from '../embed-tenants/index.js';
import { authorizeDeployment } from '../deployments/index.js';
import type { DeploymentUrlOf } from '../deployments/index.js';
import { findUserByEmail } from '../users/index.js';
import { EMBED_TOKEN_TYPE, embedAudience, type EmbedClaims } from './embed-claims.js';
import { SECURITY_CONTEXT_MAX_BYTES, SESSION_ID, type GenerateSessionInput } from './embed-sessions.schemas.js';
import { findBranch, findDevSessionOn, insertSession, redeemSession, revokeSession, sweepSessions, tokenSession } from './embed-sessions.store.js';
import { randomToken, tokenHash } from '../../shared/tokens.js';
import { branchRunning } from '../../runtime/environments.js';

/**
 * The embed tenant of a session that names none (reference 4.15: "the default is the current
 * tenant"): every such user lives in one embed tenant of the account, under this name.
 */
export const DEFAULT_EMBED_TENANT = 'default';

/** Reference 4.15: a session id must be exchanged within 5 minutes. */
export const SESSION_SECONDS = 300;

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The embed token's principal, on the routes that take one (`config.credential: 'embed'`, and
     * the data API); null otherwise. Such a request has no `caller`: an embed user is no API key's user.
     */
    embed: EmbedPrincipal | null;
  }
}

/** Who an embed token speaks for, once verified (http/auth.ts hands it to the routes that take one). */
export interface EmbedPrincipal {
  tenantId: number;
  jti: string;
  claims: EmbedClaims;
}

const hashOf = (sessionId: string) => tokenHash(sessionId);

function invalid(detail: string, pointer: string): ApiError {
  const errors: FieldError[] = [{ pointer, message: detail }];
  return new ApiError('VALIDATION_FAILED', detail, { errors });
}

/** 401 for an embed token or session id that is not (or no longer) good. */
export function embedUnauthenticated(detail: string): ApiError {
  return new ApiError('UNAUTHENTICATED', detail, { headers: { 'www-authenticate': 'Bearer realm="mapi", error="invalid_token"' } });
}

export interface EmbedSessionsOptions {
  signing: Signing;
  urlOf: DeploymentUrlOf;
  /** The tenant's embed settings (`enabled`, `useCreatorMode`; account/embed-settings.ts). */
  settings: (tenantId: number) => Promise<{ enabled: boolean; useCreatorMode: boolean }>;
  /** The account-wide cap of embed users (EMBED_USER_LIMIT): a session for a new user past it is 429. */
  embedUserLimit: number;
  /** The clock (tests move it). */
  now: () => Date;
  /** How long a token lives: EMBED_TOKEN_SECONDS, shorter where the operator says so (EMBED_TOKEN_LIFETIME_MS). */
  tokenSeconds: number;
}

/**
 * Signed embedding sessions (reference 4.15-4.17): an admin's backend generates a one-time
 * session for a deployment and an identity; the embedding page exchanges it, once, for a token
 * signed with the tenant's embed keys (`embed` purpose of signing/); revoking cuts off either.
 */
export function embedSessionsService(store: Store, options: EmbedSessionsOptions) {
  const { db } = store;
  const { signing, now } = options;

  async function requireEnabled(tenantId: number): Promise<void> {
    const settings = await options.settings(tenantId);
    if (!settings.enabled)
      throw new ApiError(
        'EMBEDDING_DISABLED',
        'Embedding is turned off for this account; an admin turns it on with PUT /api/v1/tenant/embed-settings {"enabled": true}.',
      );
  }

  /** Reference 4.15: the deploy branch (or none) is production; another branch must exist and be served now. */
  async function resolveBranch(row: DeploymentRow, name: string | null | undefined): Promise<string | null> {
    if (name === null || name === undefined || name === row.deploy_branch_name) return null;
    const branch = await findBranch(db, row.id, name);
    if (!branch) throw new ApiError('BRANCH_NOT_FOUND', `Deployment ${row.id} has no branch ${JSON.stringify(name)}.`);
    if (branch.owner_key_id === null && branch.staging_enabled === 1) return name;
    // Served while someone has it open: a dev-mode session on it, or its environment running now.
    const open = await findDevSessionOn(db, row.id, name);
    const running = await branchRunning(db, row.id, name);
    if (open || running) return name;
    throw new ApiError(
      'BRANCH_NOT_SERVED',
      `Nothing serves branch ${JSON.stringify(name)} of deployment ${row.id}: turn its staging environment on (PUT /build/api/v1/deployments/${row.id}/branches/staging-environment) or open it in dev mode.`,
    );
  }

  /**
   * Reference 4.15: `creatorMode` needs the account's `useCreatorMode` flag (403) and an external
   * user; `tenantGroups`, `tenantGroupDefinitions` and `userAttributeDefinitions` need creator
   * mode, the group fields an `embedTenantName` too (400).
   */
  async function checkCreatorMode(tenantId: number, input: GenerateSessionInput): Promise<boolean> {
    const creator = input.creatorMode === true;
    if (!creator) {
      const field = (['tenantGroups', 'tenantGroupDefinitions', 'userAttributeDefinitions'] as const).find((f) => input[f] !== undefined && input[f] !== null);
      if (field !== undefined)
        throw new ApiError('CREATOR_MODE_REQUIRED', `\`${field}\` needs a creator-mode session: add \`"creatorMode": true\` (and an \`embedTenantName\`).`, {
          errors: [{ pointer: `/body/${field}`, message: 'needs creatorMode: true' }],
        });
      return false;
    }
    if (!(await options.settings(tenantId)).useCreatorMode)
      throw new ApiError(
        'CREATOR_MODE_DISABLED',
        'Creator mode is turned off for this account; an admin turns it on with PUT /api/v1/tenant/embed-settings {"useCreatorMode": true}.',
      );
    if (input.externalId === undefined || input.externalId === null)
      throw invalid('A creator-mode session is for an external user: give `externalId` (an `internalId` user has their own workspace).', '/body/externalId');
    const tenantless = (['tenantGroups', 'tenantGroupDefinitions'] as const).find((f) => input[f] !== undefined && input[f] !== null);
    if (tenantless !== undefined && (input.embedTenantName === undefined || input.embedTenantName === null))
      throw invalid(`\`${tenantless}\` needs \`embedTenantName\`: tenant groups belong to a named embed tenant.`, '/body/embedTenantName');
    return true;
  }

  return {
    /** Reference 4.15. */
    async generate(caller: Caller, input: GenerateSessionInput): Promise<{ sessionId: string }> {
      const { actor } = caller;
      // Sessions act for someone else: only an admin's key may make them (a non-admin's key is 403).
      caller.access.requireAdmin('generate embed sessions (use an admin’s API key)');
      await requireEnabled(actor.tenantId);
      if (actor.scope !== null && !actor.scope.includes(input.deploymentId)) {
        throw new ApiError(
          'KEY_SCOPE_FORBIDDEN',
          `This API key is scoped to deployments ${actor.scope.join(', ') || '(none)'} and cannot act on deployment ${input.deploymentId}.`,
        );
      }
      const { row } = await authorizeDeployment(db, caller, input.deploymentId, 'DeploymentRead');
      const creatorMode = await checkCreatorMode(actor.tenantId, input);

      const external = input.externalId ?? null;
      const internal = input.internalId ?? null;
      if ((external === null) === (internal === null))
        throw invalid(
          'Give exactly one of `externalId` (an external user) and `internalId` (the username of a user of this account).',
          external === null ? '/body/externalId' : '/body/internalId',
        );
      if (external !== null && external !== external.trim().toLowerCase()) throw invalid('`externalId` must be lowercase and trimmed.', '/body/externalId');
      if (internal !== null) {
        const mixed = (['groups', 'userAttributes', 'securityContext', 'userProfile', 'roles', 'email', 'groupDefinitions'] as const).find(
          (f) => input[f] !== undefined && input[f] !== null,
        );
        if (mixed !== undefined) throw invalid(`\`internalId\` uses that user's own permissions: it cannot be combined with \`${mixed}\`.`, `/body/${mixed}`);
      }
      const securityContext = input.securityContext ?? {};
      if (Buffer.byteLength(JSON.stringify(securityContext)) > SECURITY_CONTEXT_MAX_BYTES)
        throw invalid(`\`securityContext\` is at most ${SECURITY_CONTEXT_MAX_BYTES} bytes as JSON.`, '/body/securityContext');

      let userId: number | null = null;
      if (internal !== null) {
        const user = await findUserByEmail(db, actor.tenantId, internal);
        if (!user || user.deactivated_at !== null)
          throw new ApiError('USER_NOT_FOUND', `No active user ${JSON.stringify(internal)} in this account (\`internalId\` is a user's email).`);
        userId = user.id;
      }
      // Resolved before anything is written: a refused branch provisions nobody.
      const branch = await resolveBranch(row, input.branchName);

      const settings: Record<string, boolean | string> = {};
      for (const [name, value] of Object.entries(input.settings ?? {})) if (value !== null && value !== undefined) settings[name] = value;
      const sessionId = randomToken(16, 'hex');
      const at = now();
      const base = {
        tenant_id: actor.tenantId,
        deployment_id: row.id,
        branch,
        security_context: securityContext,
        settings,
        theme: (input.embedTheme as Record<string, unknown> | null | undefined) ?? null,
      };
      // The user is created or updated with the session, in one transaction: a refused group,
      // attribute or type writes nothing, and a session never exists for a user that does not.
      // Sessions hold the account's embed-people lock shared, so they run side by side (only
      // provisioning and tenant deletes hold it alone); writers of one user take turns on its
      // row, and a session that created a user checks the cap as its last step.
      // A user already there: its sessions also queue for the user's key in this process, so a
      // burst for one user waits without holding pool connections (the row lock stays the guard).
      const known =
        external === null ? undefined : await existingEmbedUserId(db, actor.tenantId, (input.embedTenantName ?? DEFAULT_EMBED_TENANT).toLowerCase(), external);
      const keys = [{ shared: lockKey.embedPeople(actor.tenantId) }, ...(known === undefined ? [] : [lockKey.embedUser(known)])];
      await serialized(store, keys, async (trx) => {
        let claims: EmbedClaims;
        let created: string | undefined;
        if (external !== null) {
          const identity = await provisionEmbedUser(
            trx,
            actor.tenantId,
            {
              embedTenantName: input.embedTenantName ?? DEFAULT_EMBED_TENANT,
              ...(input.embedTenantProfile ? { embedTenantDisplayName: input.embedTenantProfile.displayName ?? null } : {}),
              externalId: external,
              email: input.email,
              userProfile: input.userProfile,
              groups: input.groups,
              userAttributes: input.userAttributes,
              ...(creatorMode
                ? {
                    creatorMode: true,
                    tenantGroups: input.tenantGroups,
                    tenantGroupDefinitions: input.tenantGroupDefinitions,
                    userAttributeDefinitions: input.userAttributeDefinitions,
                  }
                : {}),
            },
            { userLimit: options.embedUserLimit, concurrent: true, now },
          );
          if (identity.user.created) created = identity.user.externalId;
          claims = {
            ...base,
            embed_tenant: identity.embedTenant.name,
            embed_user: { external_id: identity.user.externalId, id: identity.user.id, email: identity.user.email, user_id: null },
            groups: identity.groups,
            tenant_groups: [identity.tenantSystemGroup, ...identity.tenantGroups],
            user_attributes: identity.userAttributes,
            ...(creatorMode ? { creator_mode: true } : {}),
          };
        } else {
          claims = {
            ...base,
            embed_tenant: null,
            embed_user: { external_id: null, id: null, email: null, user_id: userId },
            groups: [],
            tenant_groups: [],
            user_attributes: {},
          };
        }
        await insertSession(trx, {
          tenant_id: actor.tenantId,
          deployment_id: row.id,
          session_hash: hashOf(sessionId),
          created_by_user_id: actor.userId,
          claims: JSON.stringify(claims),
          created_at: at.toISOString(),
          expires_at: new Date(at.getTime() + SESSION_SECONDS * 1000).toISOString(),
        });
        if (created !== undefined) await confirmEmbedUserCap(trx, actor.tenantId, created, options.embedUserLimit);
      });
      // Housekeeping outside the transaction: concurrent sessions would otherwise wait on each other's deletes.
      await sweepSessions(db, actor.tenantId, at.toISOString());
      return { sessionId };
    },

    /** Reference 4.16: once, within 5 minutes; every other attempt is 401. */
    async exchange(tenant: SigningTenant, sessionId: string): Promise<{ token: string }> {
      const refused = embedUnauthenticated('The session id is unknown, already exchanged, revoked or older than 5 minutes; generate a new session.');
      if (!new RegExp(SESSION_ID).test(sessionId)) throw refused;
      const at = now();
      const jti = randomUUID();
      const tokenExpiresAt = new Date((Math.floor(at.getTime() / 1000) + options.tokenSeconds) * 1000).toISOString();
      const session = await redeemSession(db, tenant.id, hashOf(sessionId), at.toISOString(), jti, tokenExpiresAt);
      if (!session) throw refused;
      const claims = JSON.parse(session.claims) as EmbedClaims;
      const subject =
        claims.embed_user.external_id !== null
          ? `embed-user:${claims.embed_tenant ?? ''}:${claims.embed_user.external_id}`
          : `user:${claims.embed_user.user_id}`;
      const signed = await signing.sign(
        tenant,
        { ...claims },
        {
          audience: embedAudience(await options.urlOf(tenant)),
          expiresInSeconds: options.tokenSeconds,
          purpose: 'embed',
          type: EMBED_TOKEN_TYPE,
          subject,
          jti,
        },
      );
      return { token: signed.token };
    },

    /** Reference 4.17: 204 whatever the state; the session's deployment must be in a scoped key's scope. */
    async revoke(caller: Caller, sessionId: string): Promise<void> {
      caller.access.requireAdmin('revoke embed sessions (use an admin’s API key)');
      await requireEnabled(caller.actor.tenantId);
      await revokeSession(db, caller.actor.tenantId, hashOf(sessionId), now().toISOString(), caller.actor.scope);
    },

    /**
     * An embed token of this tenant, signed by a current embed key, unexpired, whose session has
     * not been revoked. The revocation is read through the tenant's cache snapshot: revoking bumps
     * the tenant's auth_version, so every process reads the session again on the next request.
     */
    async verify(tenant: SigningTenant, token: string, snapshot: TenantSnapshot): Promise<EmbedPrincipal> {
      let payload: Record<string, unknown>;
      try {
        payload = await signing.verify(tenant, token, { audience: embedAudience(await options.urlOf(tenant)), types: [EMBED_TOKEN_TYPE], purpose: 'embed' });
      } catch (error) {
        if (error instanceof SigningError)
          throw embedUnauthenticated(`The embed token is not valid: ${error.message.replace(/\.$/, '')}. Exchange a new session for a token.`);
        throw error;
      }
      const jti = payload.jti;
      if (typeof jti !== 'string' || payload.tenant_id !== tenant.id) throw embedUnauthenticated('The embed token is not valid for this account.');
      const cacheKey = `embed-jti:${jti}`;
      const state = await snapshot.memo(cacheKey, () => tokenSession(db, tenant.id, jti));
      if (state === undefined) snapshot.forget(cacheKey);
      if (state === undefined || state.revoked) throw embedUnauthenticated('The embed session of this token was revoked; generate a new session.');
      return { tenantId: tenant.id, jti, claims: payload as unknown as EmbedClaims };
    },
  };
}
export type EmbedSessionsService = ReturnType<typeof embedSessionsService>;
