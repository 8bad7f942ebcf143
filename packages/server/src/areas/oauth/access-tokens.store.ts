import type { Executor, Role } from '../../db/tables.js';
import { hashOf } from './oauth.adapter.js';
import { deploymentsOf } from './deployment-scope.js';

/** What a client registered for machine use acts as: stored in its `Client` payload. */
export interface ClientIdentity {
  /** The user whose permissions the client's tokens carry (see docs/api/oauth.md). */
  mapi_user_id: number;
  /** Deployments its tokens may target; null: all of them. */
  mapi_deployment_ids: number[] | null;
}

/** An access token as a REST credential: who it acts as, within which deployments, until when. */
export interface TokenOwner {
  /**
   * The credential's number where the API counts credentials (dev-mode branches, uploads, rate
   * limits): the negative of the grant's or client's row id, never equal to an API key's id.
   */
  credentialId: number;
  expiresAt: string;
  scope: number[] | null;
  user: { id: number; email: string; role: Role };
}

interface StoredToken {
  accountId?: string;
  clientId?: string;
  grantId?: string;
  scope?: string;
  exp?: number;
}

/**
 * A live access token (authorization code, device or refresh grants) or client-credentials
 * token by its value, with the user it acts as; undefined when unknown, expired, revoked, its
 * grant or client is gone, or its user is deactivated.
 */
export async function findLiveAccessToken(db: Executor, tenantId: number, token: string): Promise<TokenOwner | undefined> {
  const at = new Date().toISOString();
  const row = await db
    .selectFrom('oauth_models')
    .select(['model', 'payload', 'expires_at'])
    .where('tenant_id', '=', tenantId)
    .where('model', 'in', ['AccessToken', 'ClientCredentials'])
    .where('key_hash', '=', hashOf(token))
    .where('expires_at', '>', at)
    .executeTakeFirst();
  if (!row || row.expires_at === null) return undefined;
  const payload = JSON.parse(row.payload) as StoredToken;
  if (typeof payload.clientId !== 'string') return undefined;
  const client = await modelRow(db, tenantId, 'Client', payload.clientId);
  let credentialId: number;
  let userId: number;
  let scope: number[] | null;
  if (row.model === 'ClientCredentials') {
    const identity = client ? (JSON.parse(client.payload) as Partial<ClientIdentity>) : undefined;
    if (!client || typeof identity?.mapi_user_id !== 'number') return undefined;
    credentialId = -client.id;
    userId = identity.mapi_user_id;
    scope = identity.mapi_deployment_ids ?? null;
  } else {
    // The command-line client is built in (no row); an app's client must still be registered.
    if (!client && payload.clientId !== CLI_CLIENT_ID) return undefined;
    const grant = typeof payload.grantId === 'string' ? await modelRow(db, tenantId, 'Grant', payload.grantId) : undefined;
    if (!grant || payload.accountId === undefined || !/^[1-9][0-9]*$/.test(payload.accountId)) return undefined;
    credentialId = -grant.id;
    userId = Number(payload.accountId);
    // The deployments the user granted (an admin's approval or the user's consent) bound the token
    // whatever its own scope says: an app's token lists only the OpenID scopes the provider knows.
    scope = deploymentsOf((JSON.parse(grant.payload) as { openid?: { scope?: string } }).openid?.scope) ?? deploymentsOf(payload.scope);
  }
  const user = await db
    .selectFrom('users')
    .select(['id', 'email', 'role'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .where('deactivated_at', 'is', null)
    .executeTakeFirst();
  if (!user) return undefined;
  return { credentialId, expiresAt: row.expires_at, scope, user };
}

async function modelRow(db: Executor, tenantId: number, model: string, id: string) {
  return db
    .selectFrom('oauth_models')
    .select(['id', 'payload'])
    .where('tenant_id', '=', tenantId)
    .where('model', '=', model)
    .where('key_hash', '=', hashOf(id))
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', new Date().toISOString())]))
    .executeTakeFirst();
}

/** The command-line client's id: public (no secret), device flow and refresh only. */
export const CLI_CLIENT_ID = 'mapi-cli';

/** Opaque tokens of the authorization server: 256 random bits, base64url (43 characters). */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
export function isAccessTokenFormat(candidate: string): boolean {
  return TOKEN_PATTERN.test(candidate);
}
