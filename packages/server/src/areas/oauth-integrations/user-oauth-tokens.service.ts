import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { UserOAuthTokenRow } from '../../db/tables.js';
import { exclusive } from '../../db/transactions.js';
import { OutboundError, type Outbound, type OutboundLog } from '../../outbound/index.js';
import type { Secrets } from '../../secrets/index.js';
import { ApiError } from '../../shared/problems.js';
import { authorizationUrl, claimState, exchangeCode, newPkce, newState, ProviderError, refreshTokens, revokeToken, type TokenSet } from './oauth-client.js';
import { clientSettings } from './oauth-integrations.service.js';
import type { CallbackInput, UserOAuthToken } from './oauth-integrations.schemas.js';
import {
  consumeState,
  deleteExpiredStates,
  deleteToken,
  findIntegration,
  findState,
  findToken,
  findTokenById,
  insertState,
  listTokens,
  releaseRefresh,
  sealedAs,
  updateToken,
  upsertToken,
  type TokenValues,
} from './oauth-integrations.store.js';
import { findUserDeactivation } from '../users/index.js';

/** How long a `state` can complete its authorization. */
export const STATE_TTL_MS = 10 * 60_000;
/** A token this close to expiry is refreshed before it is handed out: a query started with it still finishes in time. */
export const REFRESH_MARGIN_MS = 2 * 60_000;

export type TokenStatus = 'ACTIVE' | 'REFRESH_FAILED' | 'EXPIRED';

/** What the query engine puts into `platform.userCredentials.<source>`. */
export interface CurrentAccessToken {
  accessToken: string;
  accessTokenExpiresAt: string | null;
}

const invalidState = (why: string) =>
  new ApiError('OAUTH_STATE_INVALID', `The authorization cannot complete: ${why}. Start again with POST /api/v1/user-oauth-tokens/{integrationId}/initiate.`);
/** Provider text shown back: printable ASCII, bounded. */
const printable = (text: string, max: number) => text.replace(/[^\x20-\x7E]/g, '?').slice(0, max);

export interface UserOAuthTokensOptions {
  now: () => Date;
  log?: OutboundLog;
  /** How long after a refresh that failed for a passing reason it is tried again in the background; default 5 minutes. */
  retryMs?: number;
}

/** What a background refresh of one claimed token came to (the job's result). */
export type BackgroundOutcome = 'refreshed' | 'failed' | 'refreshed-meanwhile' | 'claim-lost' | 'gone';

export const DEFAULT_RETRY_MS = 5 * 60_000;

/**
 * Whether a failed refresh is worth trying again later: the provider could not be reached, timed
 * out or failed on its side. A refusal (a 4xx such as `invalid_grant`) stands until the user
 * authorizes again, as does a call the outbound guard refuses.
 */
function passing(error: unknown): boolean {
  if (error instanceof OutboundError) return error.kind === 'timeout' || error.kind === 'network';
  if (error instanceof ProviderError) return error.status === null || error.status === 429 || error.status >= 500;
  return false;
}

/**
 * The caller's own tokens for third-party OAuth apps (reference 5.10-5.13): authorization code
 * with PKCE through this server's callback, tokens sealed at rest, refreshed on use when close
 * to expiry, revoked at the provider on delete when the integration names a revocation endpoint.
 */
export function userOAuthTokensService(store: Store, secrets: Secrets, outbound: Outbound, options: UserOAuthTokensOptions) {
  const { db } = store;
  const { now } = options;
  const retryMs = options.retryMs ?? DEFAULT_RETRY_MS;
  const iso = () => now().toISOString();
  const later = (seconds: number | null) => (seconds === null ? null : new Date(now().getTime() + seconds * 1000).toISOString());

  function statusOf(row: UserOAuthTokenRow): TokenStatus {
    const at = iso();
    const accessExpired = row.access_token_expires_at !== null && row.access_token_expires_at <= at;
    const refreshUsable = row.refresh_token !== null && (row.refresh_token_expires_at === null || row.refresh_token_expires_at > at);
    if (accessExpired && !refreshUsable) return 'EXPIRED';
    return row.status === 'REFRESH_FAILED' ? 'REFRESH_FAILED' : 'ACTIVE';
  }

  function toToken(row: UserOAuthTokenRow): UserOAuthToken {
    return {
      id: row.id,
      userId: row.user_id,
      integrationId: row.integration_id,
      status: statusOf(row),
      accessTokenExpiresAt: row.access_token_expires_at,
      refreshTokenExpiresAt: row.refresh_token_expires_at,
      lastError: row.last_error === null ? null : (JSON.parse(row.last_error) as unknown),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  function sealTokens(integrationId: number, userId: number, tokens: TokenSet): TokenValues {
    return {
      status: 'ACTIVE',
      access_token: secrets.seal(tokens.accessToken, sealedAs.accessToken(integrationId, userId)),
      refresh_token: tokens.refreshToken === null ? null : secrets.seal(tokens.refreshToken, sealedAs.refreshToken(integrationId, userId)),
      token_type: tokens.tokenType,
      scope: tokens.scope,
      access_token_expires_at: later(tokens.expiresIn),
      refresh_token_expires_at: tokens.refreshToken === null ? null : later(tokens.refreshExpiresIn),
      last_error: null,
    };
  }

  function failure(error: unknown, during: 'exchange' | 'refresh' | 'revocation') {
    const at = iso();
    if (error instanceof ProviderError)
      return { error: printable(error.error, 100), errorDescription: error.description === null ? null : printable(error.description, 500), during, at };
    if (error instanceof OutboundError) return { error: `provider_${error.kind.replace('-', '_')}`, errorDescription: error.message, during, at };
    return { error: 'internal_error', errorDescription: null, during, at };
  }

  function usable(row: UserOAuthTokenRow): CurrentAccessToken | null {
    if (row.access_token_expires_at !== null && row.access_token_expires_at <= iso()) return null;
    return {
      accessToken: secrets.open(row.access_token, sealedAs.accessToken(row.integration_id, row.user_id)),
      accessTokenExpiresAt: row.access_token_expires_at,
    };
  }

  const dueForRefresh = (row: UserOAuthTokenRow) =>
    row.refresh_token !== null &&
    row.access_token_expires_at !== null &&
    new Date(row.access_token_expires_at).getTime() - now().getTime() <= REFRESH_MARGIN_MS;

  async function refresh(row: UserOAuthTokenRow): Promise<UserOAuthTokenRow> {
    const integration = await findIntegration(db, row.tenant_id, row.integration_id);
    if (!integration || row.refresh_token === null) return row;
    const settings = clientSettings(integration, secrets);
    const refreshToken = secrets.open(row.refresh_token, sealedAs.refreshToken(row.integration_id, row.user_id));
    try {
      const tokens = await refreshTokens(outbound, settings, refreshToken);
      const values = sealTokens(row.integration_id, row.user_id, tokens);
      // A provider that does not rotate refresh tokens answers none on refresh: the old one stays.
      if (tokens.refreshToken === null) Object.assign(values, { refresh_token: row.refresh_token, refresh_token_expires_at: row.refresh_token_expires_at });
      return (await updateToken(db, row.id, { ...values, refresh_retry_at: null }, iso())) ?? row;
    } catch (error) {
      // The token in hand stays usable until it expires; the status says a new authorization is
      // due, unless the failure was passing: then `retryAt` says when the background tries again.
      const retryAt = passing(error) ? new Date(now().getTime() + retryMs).toISOString() : null;
      const lastError = JSON.stringify({ ...failure(error, 'refresh'), retryAt });
      return (await updateToken(db, row.id, { status: 'REFRESH_FAILED', last_error: lastError, refresh_retry_at: retryAt }, iso())) ?? row;
    }
  }

  async function owned(caller: Caller, integrationId: number): Promise<UserOAuthTokenRow> {
    const row = await findToken(db, caller.actor.tenantId, caller.actor.userId, integrationId);
    if (!row)
      throw new ApiError(
        'USER_OAUTH_TOKEN_NOT_FOUND',
        `You hold no token for OAuth integration ${integrationId}: authorize it with POST /api/v1/user-oauth-tokens/${integrationId}/initiate.`,
      );
    return row;
  }

  return {
    /** Reference 5.10: the caller's tokens, by integration. */
    async list(caller: Caller): Promise<UserOAuthToken[]> {
      return (await listTokens(db, caller.actor.tenantId, caller.actor.userId)).map(toToken);
    },

    /** Reference 5.11; 404 when the caller holds none for it. */
    async get(caller: Caller, integrationId: number): Promise<UserOAuthToken> {
      return toToken(await owned(caller, integrationId));
    },

    /**
     * Reference 5.12: forgets the caller's token, after asking the provider to revoke it (the
     * refresh token, which ends the grant, else the access token) when the integration names a
     * `config.revocationUrl`. A provider that cannot be reached does not keep the token here.
     */
    async remove(caller: Caller, integrationId: number, log: OutboundLog | undefined = options.log): Promise<Record<string, never>> {
      const row = await owned(caller, integrationId);
      const integration = await findIntegration(db, row.tenant_id, integrationId);
      if (integration) {
        const settings = clientSettings(integration, secrets);
        const [sealed, context, hint] =
          row.refresh_token !== null
            ? [row.refresh_token, sealedAs.refreshToken(integrationId, row.user_id), 'refresh_token' as const]
            : [row.access_token, sealedAs.accessToken(integrationId, row.user_id), 'access_token' as const];
        try {
          await revokeToken(outbound, settings, secrets.open(sealed, context), hint);
        } catch (error) {
          log?.warn({ integrationId, ...failure(error, 'revocation') }, 'revoking a user OAuth token at the provider failed; it is deleted here all the same');
        }
      }
      await deleteToken(db, row.id);
      return {};
    },

    /**
     * Reference 5.13: starts the authorization-code flow for the caller. The `state` is single
     * use, lives 10 minutes and is bound to the caller and the integration; only its hash is kept,
     * beside the PKCE verifier (sealed).
     */
    async initiate(caller: Caller, integrationId: number): Promise<{ authorizationUrl: string }> {
      const tenantId = caller.actor.tenantId;
      const integration = await findIntegration(db, tenantId, integrationId);
      if (!integration) throw new ApiError('OAUTH_INTEGRATION_NOT_FOUND', `OAuth integration ${integrationId} does not exist.`);
      const settings = clientSettings(integration, secrets);
      const { state, hash } = newState();
      const pkce = newPkce();
      const at = now();
      await deleteExpiredStates(db, tenantId, at.toISOString());
      await insertState(db, {
        tenant_id: tenantId,
        user_id: caller.actor.userId,
        integration_id: integrationId,
        state_hash: hash,
        code_verifier: secrets.seal(pkce.verifier, sealedAs.codeVerifier(hash)),
        created_at: at.toISOString(),
        expires_at: new Date(at.getTime() + STATE_TTL_MS).toISOString(),
      });
      return { authorizationUrl: authorizationUrl(settings, state, pkce.challenge) };
    },

    /**
     * The provider's redirect back (no credential needed): the state decides whose token this is
     * and for which integration. A request that does carry a credential must be the initiating
     * user's. The code is exchanged at `tokenUrl` with the PKCE verifier.
     */
    async callback(tenantId: number, query: CallbackInput, credentialUserId: number | null): Promise<{ integrationId: number; status: TokenStatus }> {
      const state = await claimState(
        query.state,
        { find: (hash) => findState(db, tenantId, hash), consume: (id) => consumeState(db, id) },
        { now: iso(), ttlMs: STATE_TTL_MS, credentialUserId },
        invalidState,
      );
      if (query.error !== undefined) {
        const description = query.error_description === undefined ? '' : ` (${printable(query.error_description, 300)})`;
        throw new ApiError('OAUTH_AUTHORIZATION_FAILED', `The provider answered \`${printable(query.error, 100)}\`${description}.`);
      }
      if (query.code === undefined || query.code === '') throw new ApiError('OAUTH_AUTHORIZATION_FAILED', 'The provider sent neither a `code` nor an `error`.');
      const integration = await findIntegration(db, tenantId, state.integration_id);
      if (!integration) throw invalidState('the integration was deleted');
      const user = await findUserDeactivation(db, tenantId, state.user_id);
      if (!user || user.deactivated_at !== null) throw invalidState('the user who started it is deactivated');
      const verifier = secrets.open(state.code_verifier, sealedAs.codeVerifier(state.state_hash));
      let tokens: TokenSet;
      try {
        tokens = await exchangeCode(outbound, clientSettings(integration, secrets), query.code, verifier);
      } catch (error) {
        // A 4xx is the provider refusing the code; anything else (a 5xx, a 200 without a token) is no usable answer.
        if (error instanceof ProviderError && error.status !== null && error.status >= 400 && error.status < 500) {
          const f = failure(error, 'exchange');
          throw new ApiError(
            'OAUTH_AUTHORIZATION_FAILED',
            `The provider refused the code: \`${f.error}\`${f.errorDescription === null ? '' : ` (${f.errorDescription})`}.`,
          );
        }
        throw new ApiError(
          'OAUTH_PROVIDER_UNAVAILABLE',
          `The provider's token endpoint gave no usable answer: ${failure(error, 'exchange').error}. Try again later.`,
        );
      }
      await upsertToken(
        db,
        { tenantId, userId: state.user_id, integrationId: state.integration_id },
        sealTokens(state.integration_id, state.user_id, tokens),
        iso(),
      );
      return { integrationId: state.integration_id, status: 'ACTIVE' };
    },

    /**
     * The background refresh of one token whose refresh `claim` was taken (token-refresh.ts),
     * while the token is as it was when claimed (`seenExpiry`). Under the same per-token lock as a
     * refresh on use, so the two never both spend a rotating refresh token. The claim ends with it.
     */
    async refreshClaimed(tokenId: number, claim: string, seenExpiry: string | null): Promise<BackgroundOutcome> {
      return exclusive(store, `user-oauth-token:${tokenId}`, async () => {
        const row = await findTokenById(db, tokenId);
        if (!row) return 'gone';
        if (row.refresh_claim !== claim) return 'claim-lost';
        try {
          // Used, and so refreshed, since it was claimed: nothing left to do.
          if (row.access_token_expires_at !== seenExpiry) return 'refreshed-meanwhile';
          const after = await refresh(row);
          if (after === row) return 'gone';
          return after.status === 'ACTIVE' ? 'refreshed' : 'failed';
        } finally {
          await releaseRefresh(db, tokenId, claim);
        }
      });
    },

    /**
     * The user's access token for the integration, refreshed first when it expires within
     * REFRESH_MARGIN_MS (one refresh at a time per token across processes: with rotation, a
     * refresh token works once). Null when there is none or it has expired beyond refreshing.
     * For the query engine's `platform.userCredentials.<source>`.
     */
    async currentAccessToken(tenantId: number, userId: number, integrationId: number): Promise<CurrentAccessToken | null> {
      const row = await findToken(db, tenantId, userId, integrationId);
      if (!row) return null;
      if (!dueForRefresh(row)) return usable(row);
      return exclusive(store, `user-oauth-token:${row.id}`, async () => {
        // Another process may have refreshed it while this one waited.
        const fresh = await findToken(db, tenantId, userId, integrationId);
        if (!fresh) return null;
        return usable(dueForRefresh(fresh) ? await refresh(fresh) : fresh);
      });
    },
  };
}
export type UserOAuthTokensService = ReturnType<typeof userOAuthTokensService>;
