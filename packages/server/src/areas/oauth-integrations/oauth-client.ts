import type { Outbound } from '../../outbound/index.js';
import { randomToken, tokenHash } from '../../shared/tokens.js';

/**
 * The client side of OAuth 2.0 (RFC 6749, PKCE RFC 7636, revocation RFC 7009) for generic
 * third-party apps: integrations name their endpoints, so there is no discovery, and every call
 * goes through outbound/. Plain form posts: the token endpoint of an arbitrary OAuth 2.0 app
 * needs nothing more, and the answer is checked field by field.
 */
export interface ClientSettings {
  authUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  scopes: string[] | null;
  revocationUrl: string | null;
  authMethod: 'client_secret_basic' | 'client_secret_post';
  authorizationParams: Record<string, string>;
}

export interface TokenSet {
  accessToken: string;
  tokenType: string | null;
  refreshToken: string | null;
  /** Seconds, as the provider said; null when it did not say. */
  expiresIn: number | null;
  refreshExpiresIn: number | null;
  scope: string | null;
}

/** The provider answered with an OAuth error (or something that is not a token response). */
export class ProviderError extends Error {
  constructor(
    readonly error: string,
    readonly description: string | null,
    readonly status: number | null,
  ) {
    super(description === null ? error : `${error}: ${description}`);
    this.name = 'ProviderError';
  }
}

/** A fresh `state` (256 bits) and its SHA-256, which is all the store keeps. */
export function newState(): { state: string; hash: string } {
  const state = randomToken(32);
  return { state, hash: hashState(state) };
}

export function hashState(state: string): string {
  return tokenHash(state);
}

/** A stored authorization state, as each redirect flow keeps one (hashed, bound to a user, expiring). */
export interface StoredState {
  id: number;
  user_id: number;
  expires_at: string;
}

/**
 * Checks and spends the `state` a provider sent back: known, unexpired (an expired one is spent
 * too), issued to the request's user when the request carries a credential (otherwise kept, so
 * its user can still complete), and taken by this request alone. Anything else throws
 * `invalid(why)`.
 */
export async function claimState<S extends StoredState>(
  raw: string | undefined,
  store: { find(hash: string): Promise<S | undefined>; consume(id: number): Promise<boolean> },
  check: { now: string; ttlMs: number; credentialUserId: number | null },
  invalid: (why: string) => Error,
): Promise<S> {
  if (raw === undefined || raw === '') throw invalid('the request has no `state`');
  const state = await store.find(hashState(raw));
  if (!state) throw invalid('the `state` is unknown or was already used');
  if (state.expires_at <= check.now) {
    await store.consume(state.id);
    throw invalid(`the \`state\` expired (it lives ${check.ttlMs / 60_000} minutes)`);
  }
  if (check.credentialUserId !== null && check.credentialUserId !== state.user_id) throw invalid('the `state` was issued to another user');
  if (!(await store.consume(state.id))) throw invalid('the `state` was already used');
  return state;
}

/** A PKCE verifier (43 characters) and its S256 challenge. */
export function newPkce(): { verifier: string; challenge: string } {
  const verifier = randomToken(32);
  return { verifier, challenge: tokenHash(verifier, 'base64url') };
}

const RESERVED = new Set(['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method']);

export function authorizationUrl(settings: ClientSettings, state: string, challenge: string): string {
  const url = new URL(settings.authUrl);
  for (const [name, value] of Object.entries(settings.authorizationParams)) if (!RESERVED.has(name)) url.searchParams.set(name, value);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', settings.clientId);
  url.searchParams.set('redirect_uri', settings.redirectUri);
  if (settings.scopes !== null && settings.scopes.length > 0) url.searchParams.set('scope', settings.scopes.join(' '));
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', challenge);
  url.searchParams.set('code_challenge_method', 'S256');
  return url.toString();
}

/** RFC 6749 2.3.1: Basic credentials are the form-encoded id and secret. */
function clientAuth(settings: ClientSettings, form: URLSearchParams): Record<string, string> {
  if (settings.authMethod === 'client_secret_post') {
    form.set('client_id', settings.clientId);
    form.set('client_secret', settings.clientSecret);
    return {};
  }
  const encode = (v: string) => encodeURIComponent(v).replace(/%20/g, '+');
  return { authorization: `Basic ${Buffer.from(`${encode(settings.clientId)}:${encode(settings.clientSecret)}`).toString('base64')}` };
}

async function post(outbound: Outbound, url: string, settings: ClientSettings, form: URLSearchParams, idempotent: boolean) {
  const headers = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...clientAuth(settings, form) };
  return outbound.request(url, { method: 'POST', headers, body: form.toString(), idempotent });
}

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
const seconds = (v: unknown) =>
  typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : typeof v === 'string' && /^\d{1,10}$/.test(v) ? Number(v) : null;

function tokenResponse(status: number, body: string): TokenSet {
  let json: Record<string, unknown> | null = null;
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) json = parsed as Record<string, unknown>;
  } catch {
    // judged below
  }
  if (status !== 200 || json === null || typeof json.access_token !== 'string' || json.access_token === '') {
    const error = str(json?.error) ?? (status === 200 ? 'invalid_response' : `http_${status}`);
    throw new ProviderError(error.slice(0, 100), str(json?.error_description)?.slice(0, 500) ?? null, status);
  }
  return {
    accessToken: json.access_token,
    tokenType: str(json.token_type),
    refreshToken: str(json.refresh_token),
    expiresIn: seconds(json.expires_in),
    refreshExpiresIn: seconds(json.refresh_token_expires_in) ?? seconds(json.refresh_expires_in),
    scope: str(json.scope),
  };
}

/** Trades an authorization code (with its PKCE verifier) for tokens. Never retried: a code is single use. */
export async function exchangeCode(outbound: Outbound, settings: ClientSettings, code: string, verifier: string): Promise<TokenSet> {
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: settings.redirectUri, code_verifier: verifier });
  const res = await post(outbound, settings.tokenUrl, settings, form, false);
  return tokenResponse(res.status, res.body);
}

/** A new access token from the refresh token. Never retried: with rotation, a refresh token works once. */
export async function refreshTokens(outbound: Outbound, settings: ClientSettings, refreshToken: string): Promise<TokenSet> {
  const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken });
  const res = await post(outbound, settings.tokenUrl, settings, form, false);
  return tokenResponse(res.status, res.body);
}

/** RFC 7009: revoking is idempotent, so it is retried; 200 is success whatever the token was. */
export async function revokeToken(outbound: Outbound, settings: ClientSettings, token: string, hint: 'refresh_token' | 'access_token'): Promise<void> {
  if (settings.revocationUrl === null) return;
  const form = new URLSearchParams({ token, token_type_hint: hint });
  const res = await post(outbound, settings.revocationUrl, settings, form, true);
  if (res.status !== 200) throw new ProviderError(`http_${res.status}`, null, res.status);
}
