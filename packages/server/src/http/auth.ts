import type { FastifyRequest } from 'fastify';
import type { Actor } from '../access/caller.js';
import type { TenantCache, TenantSnapshot } from '../cache/tenant-cache.js';
import type { Role } from '../db/tables.js';
import { ApiError } from '../shared/problems.js';
import type { Tenant } from './tenant.js';

/**
 * How each kind of credential is told apart and looked up, given by the areas that issue them
 * (api-keys, oauth, embed-sessions) at the composition root: this module decides who is calling
 * and knows no area.
 */
export interface CredentialCheckers {
  apiKeys: {
    isFormat(token: string): boolean;
    hash(token: string): string;
    /** The live key with this hash and its active user, or none. */
    find(
      tenantId: number,
      hash: string,
    ): Promise<
      | { key: { id: number; key_hash: string; expires_at: string | null; deployment_ids: string | null }; user: { id: number; email: string; role: Role } }
      | undefined
    >;
    /** Constant-time comparison of two hashes. */
    equal(a: string, b: string): boolean;
    /** Records the key's use (written in batches). */
    touch(keyId: number, at: string): void;
  };
  accessTokens: {
    isFormat(token: string): boolean;
    /** What the tenant cache keeps a token's lookup under (never the token itself). */
    cacheKey(token: string): string;
    find(
      tenantId: number,
      token: string,
    ): Promise<{ user: { id: number; email: string; role: Role }; expiresAt: string; credentialId: number; scope: number[] | null } | undefined>;
  };
  /** The `typ` of embed tokens' JWT header, to say why one is refused where it does not open. */
  embedTokenType: string;
}

/**
 * Every route answered without a credential (DESIGN.md, "Routes without a credential"), by method
 * and path, with the per-address budget its own `config.rateLimit` declares: `false` never
 * limited (probes), `default` RATE_LIMIT_PER_IP_PER_MINUTE, a number its own, `configured` a budget
 * of its own set by the server's configuration. A route marked
 * `config.public` that is not listed here stops the app at start (see `checkPublicRoute`), so a
 * route cannot drop its credential by accident.
 */
export const PUBLIC_ROUTES: ReadonlyMap<string, false | 'default' | 'configured' | number> = new Map<string, false | 'default' | 'configured' | number>([
  ['GET /healthz', false],
  ['GET /readyz', false],
  // The tenant as the OIDC issuer of workload identity (reference 5.14), while it is one.
  ['GET /.well-known/jwks.json', 'default'],
  ['GET /.well-known/openid-configuration', 'default'],
  // The keys of its data-API tokens.
  ['GET /api/v1/data-api/jwks.json', 'default'],
  // Where OAuth providers send users back; the single-use state names the user.
  ['GET /api/v1/oauth-integrations/callback', 30],
  // Where the git host sends users back after linking their account; the single-use state names the user.
  ['GET /api/v1/git-host/callback', 30],
  // The embed key set, for customers' backends.
  ['GET /api/v1/embed/jwks.json', 'default'],
  // The embed session exchange: the session id is the credential; its own budget,
  // EMBED_EXCHANGE_PER_IP_PER_MINUTE (120 by default; 0: none).
  ['POST /api/v1/embed/session/token', 'configured'],
  // The tenant's OAuth 2.0 authorization server (areas/oauth): token, device authorization,
  // revocation, introspection, its metadata (RFC 8414) and its sign-in pages.
  ...['/oauth', '/oauth/*'].flatMap((url) => ['GET', 'POST', 'OPTIONS'].map((method): [string, 'default'] => [`${method} ${url}`, 'default'])),
  ['GET /.well-known/oauth-authorization-server/oauth', 'default'],
  ['OPTIONS /.well-known/oauth-authorization-server/oauth', 'default'],
  ['GET /oauth/interaction/:uid', 'default'],
  // The user's answer on an app's consent page.
  ['POST /oauth/interaction/:uid/consent', 'default'],
  // Where the tenant's identity provider sends the browser back; the single-use state and a
  // browser-binding cookie name the sign-in.
  ['GET /oauth/idp/callback', 30],
  // The API reference page and its scripts (http/reference.routes.ts): static files; the document
  // they render, GET /api/v1/spec, still takes a credential.
  ['GET /api/v1/reference', 'default'],
  ['GET /api/v1/reference/reference.js', 'default'],
  ['GET /api/v1/reference/redoc.standalone.js', 'default'],
  // The embedded dashboard page (areas/embed-page): the page takes its session id from its URL and
  // exchanges it itself; one view is one page and one exchange, so it has the exchange's budget.
  ['GET /embed/dashboard/:publicId', 'configured'],
  // Its fingerprinted files: static, held in memory, cached by browsers for a year; many viewers
  // behind one address (a company's egress) would otherwise share a budget of a few views a minute.
  ['GET /embed/assets/:file', false],
]);

/** Throws when a route marked public is not in PUBLIC_ROUTES, or declares another budget than listed there. */
export function checkPublicRoute(route: { method: string | string[]; url: string; config?: { public?: boolean; rateLimit?: false | { max?: number } } }): void {
  if (!route.config?.public) return;
  for (const method of [route.method].flat()) {
    // Fastify adds a HEAD beside each GET, with the GET's options.
    const key = `${method === 'HEAD' ? 'GET' : method} ${route.url}`;
    const listed = PUBLIC_ROUTES.get(key);
    if (listed === undefined) throw new Error(`${key} is marked public but is not listed in PUBLIC_ROUTES (http/auth.ts)`);
    const declared = route.config.rateLimit === false ? false : (route.config.rateLimit?.max ?? 'default');
    // `configured`: a budget of its own from the server's configuration, whatever its value.
    if (listed === 'configured' ? declared === 'default' : declared !== listed)
      throw new Error(`${key} declares the per-address budget ${String(declared)}, PUBLIC_ROUTES lists ${String(listed)}`);
  }
}

/** Paths where a SCIM client may send `Authorization: Api-Key <token>` (spec, Authentication 5). */
export const SCIM_PREFIX = '/api/scim/v2';

/** The request's path, percent-decoded as the router decodes it (`%65mbed` is `embed`). */
function decodedPath(url: string): string {
  const path = url.split('?')[0] ?? '';
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * The embed routes (`/api/v1/embed/...`, `/api/v1/embed-tenants/...`): they take
 * `Authorization: Api-Key <key>` as well as `Bearer` (reference 0.1), and their CORS answers
 * follow the tenant's embed settings alone (http/cors.ts).
 */
export function isEmbedPath(url: string): boolean {
  return /^\/api\/v1\/(embed|embed-tenants)(\/|$)/.test(decodedPath(url));
}

/** Whether a bearer value is an embed token (a JWT whose header has its `typ`), to say why it is refused where it does not open. */
function isEmbedToken(token: string, type: string): boolean {
  const dot = token.indexOf('.');
  if (dot <= 0) return false;
  try {
    const header = JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8')) as { typ?: unknown };
    return header.typ === type;
  } catch {
    return false;
  }
}

function unauthenticated(detail: string, error?: 'invalid_token' | 'invalid_request', basic = false): ApiError {
  // Git clients answer only a Basic challenge, by asking for a user name and password.
  const challenge = basic ? 'Basic realm="mapi", charset="UTF-8"' : error ? `Bearer realm="mapi", error="${error}"` : 'Bearer realm="mapi"';
  return new ApiError('UNAUTHENTICATED', detail, { headers: { 'www-authenticate': challenge } });
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `basic`: the route takes HTTP Basic credentials (any user name, an API key as the password)
     * instead of a bearer token. Only the git smart-HTTP routes do: git clients send nothing else.
     * `data-api`: a deployment's data API, which also takes data-API tokens (JWTs, verified by
     * the route against the environment it addresses), raw or after `Bearer`.
     * `embed`: the route also takes an embed token (reference 4.16), as `Bearer`; `request.embed`
     * is then set instead of `request.caller`.
     */
    credential?: 'basic' | 'data-api' | 'embed';
    /**
     * The route also takes `Authorization: Api-Key <key>`, as the embed routes do (reference
     * 0.1): embedding routes under a deployment (embed access, an embed tenant's workbooks).
     */
    apiKeyScheme?: boolean;
  }
}

/** The password of `Authorization: Basic base64(user:password)`, or undefined when the header is not that. */
function basicPassword(header: string): string | undefined {
  const match = /^basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? undefined : decoded.slice(colon + 1);
}

/** Who is calling, and the tenant's cache snapshot the rest of the request reads from. */
export interface Authenticated {
  actor: Actor;
  snapshot: TenantSnapshot;
}

export function authenticator(credentials: CredentialCheckers, cache: TenantCache) {
  const { apiKeys, accessTokens: tokens } = credentials;
  return async function authenticate(request: FastifyRequest, tenant: Tenant): Promise<Authenticated> {
    const header = request.headers.authorization;
    const basic = request.routeOptions.config?.credential === 'basic';
    if (basic) {
      const password = header === undefined ? undefined : basicPassword(header);
      if (password === undefined) throw unauthenticated('Sign in with any user name and an API key as the password.', undefined, true);
      return verify(password, tenant, { basic: true, accessTokens: false });
    }
    if (!header) {
      throw unauthenticated('Send an API key as `Authorization: Bearer <key>`; create keys with POST /api/v1/api-keys.');
    }
    const match = /^(\S+)\s+(\S+)\s*$/.exec(header);
    const scheme = match?.[1]?.toLowerCase();
    const onScim = request.url === SCIM_PREFIX || request.url.startsWith(`${SCIM_PREFIX}/`) || request.url.startsWith(`${SCIM_PREFIX}?`);
    const onEmbed = isEmbedPath(request.url) || request.routeOptions.config?.apiKeyScheme === true;
    if (!match || !(scheme === 'bearer' || (scheme === 'api-key' && (onScim || onEmbed)))) {
      throw unauthenticated(
        onScim || onEmbed ? 'The Authorization header must be `Bearer <token>` or `Api-Key <token>`.' : 'The Authorization header must be `Bearer <key>`.',
        'invalid_request',
      );
    }
    // OAuth access tokens are REST credentials (reference 5.0); SCIM takes an admin's API key only.
    return verify(match[2] ?? '', tenant, { basic: false, accessTokens: !onScim });
  };

  async function verify(token: string, tenant: Tenant, { basic, accessTokens }: { basic: boolean; accessTokens: boolean }): Promise<Authenticated> {
    if (accessTokens && tokens.isFormat(token)) return verifyAccessToken(token, tenant);
    if (!apiKeys.isFormat(token)) {
      if (isEmbedToken(token, credentials.embedTokenType)) {
        throw unauthenticated(
          'An embed token opens only GET /api/v1/embed/dashboard/{publicId} (and its python-run, comments and AI widget summaries), GET /api/v1/app-config, POST /api/v1/charts/compile, its deployment’s agent chat threads and the data API of its deployment (in creator mode also its deployment’s shared workspace and copies from it); this route needs an API key.',
          'invalid_token',
          basic,
        );
      }
      throw unauthenticated(
        accessTokens
          ? 'The credential is malformed: send an API key ("mapi_" followed by 40 letters or digits) or an OAuth access token.'
          : 'The credential is malformed: API keys are "mapi_" followed by 40 letters or digits.',
        'invalid_token',
        basic,
      );
    }
    const hash = apiKeys.hash(token);
    // Cached per tenant and validated by the tenant's auth version (cache/tenant-cache.ts): a
    // revoked key or a deactivated owner is refused on the very next request, on every process.
    const snapshot = await cache.snapshot(tenant.id);
    const cacheKey = `key:${hash}`;
    const found = await snapshot.memo(cacheKey, () => apiKeys.find(tenant.id, hash));
    if (!found) snapshot.forget(cacheKey);
    // The lookup is by hash, so timing reveals nothing about stored keys; the explicit
    // constant-time comparison guards against any future lookup that is not exact.
    if (!found || !apiKeys.equal(found.key.key_hash, hash)) {
      throw unauthenticated('The API key is not valid: unknown, revoked, or its user is deactivated.', 'invalid_token', basic);
    }
    const at = new Date().toISOString();
    if (found.key.expires_at !== null && found.key.expires_at <= at) {
      throw unauthenticated(`The API key expired at ${found.key.expires_at}; create a new one.`, 'invalid_token', basic);
    }
    apiKeys.touch(found.key.id, at);
    const actor: Actor = {
      tenantId: tenant.id,
      userId: found.user.id,
      email: found.user.email,
      role: found.user.role,
      keyId: found.key.id,
      scope: found.key.deployment_ids === null ? null : (JSON.parse(found.key.deployment_ids) as number[]),
    };
    return { actor, snapshot };
  }

  /**
   * An OAuth access token acts as the user who approved it (or, from client credentials, the
   * user its client acts as), within the deployments it was granted: from here on it is treated
   * exactly as an API key of that user with that scope. Cached like keys, under the tenant's auth
   * version: revoking it (or its grant) or deactivating its user bumps the version, so it fails
   * on the next request on every process.
   */
  async function verifyAccessToken(token: string, tenant: Tenant): Promise<Authenticated> {
    const snapshot = await cache.snapshot(tenant.id);
    const cacheKey = `oauth:${tokens.cacheKey(token)}`;
    const found = await snapshot.memo(cacheKey, () => tokens.find(tenant.id, token));
    if (!found) {
      snapshot.forget(cacheKey);
      throw unauthenticated('The access token is not valid: unknown, expired, revoked, or its user is deactivated.', 'invalid_token');
    }
    if (found.expiresAt <= new Date().toISOString()) {
      throw unauthenticated(`The access token expired at ${found.expiresAt}; refresh it or sign in again.`, 'invalid_token');
    }
    const actor: Actor = {
      tenantId: tenant.id,
      userId: found.user.id,
      email: found.user.email,
      role: found.user.role,
      keyId: found.credentialId,
      scope: found.scope,
    };
    return { actor, snapshot };
  }
}
