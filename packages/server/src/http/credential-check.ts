import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Caller } from '../access/caller.js';
import { checkKeyScope } from '../access/key-scope.js';
import { ApiError } from '../shared/problems.js';
import type { Authenticated } from './auth.js';
import { refuseRepeatedHost, type Tenant } from './tenant.js';

/** Unknown paths under these prefixes still need a credential, so probing them reveals nothing. */
const API_PATH = /^\/(api|build\/api)\//;

/**
 * Fail closed: every route the router matched needs a tenant and a credential unless it is
 * marked public. The raw URL is never the test: the router decodes `%61pi` to `api`, a regex would not.
 */
function needsCredential(request: FastifyRequest): boolean {
  if (request.routeOptions.url !== undefined) return !request.routeOptions.config?.public;
  let path = request.url.split('?')[0] ?? '';
  try {
    path = decodeURIComponent(path);
  } catch {
    // an undecodable path matches no route; the prefix test on the raw text decides
  }
  return API_PATH.test(path);
}

/** The token of a data-API request: `Authorization: <token>` or `Authorization: Bearer <token>`. */
export function dataApiToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  const match = /^bearer\s+(\S+)$/i.exec(value);
  if (match) return match[1];
  return /^\S+$/.test(value) ? value : undefined;
}

export interface CredentialCheck {
  resolveTenant(request: FastifyRequest): Promise<Tenant>;
  authenticate(request: FastifyRequest, tenant: Tenant): Promise<Authenticated>;
  /** True for a REST credential (an API key, an OAuth access token); other bearer tokens are JWTs their routes verify. */
  isRestCredential(token: string): boolean;
  /** Verifies an embed token and records its principal on the request (the embed-sessions area's). */
  acceptEmbed(request: FastifyRequest, tenant: Tenant, token: string): Promise<void>;
  /** The caller of an authenticated request. */
  callerOf(request: FastifyRequest, tenant: Tenant, authenticated: Authenticated): Caller;
}

/**
 * The credential check of every request, before its body is read: the tenant its Host names, then
 * the caller its credential names, by the route's `config.credential`: a data-API route takes a
 * data-API or embed token (verified by the route, against the environment it addresses) or a REST
 * credential; an embed route an embed token or a REST credential; every other route a REST
 * credential. Refused from the headers alone, the connection is closed rather than waiting for a
 * body that may trickle in for as long as the body timeout allows.
 */
export function installCredentialCheck(app: FastifyInstance, check: CredentialCheck): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    refuseRepeatedHost(request);
    if (!needsCredential(request)) return;
    try {
      request.tenant = await check.resolveTenant(request);
      const kind = request.routeOptions.config?.credential;
      if (kind === 'data-api') {
        const token = dataApiToken(request.headers.authorization);
        if (token === undefined) {
          throw new ApiError(
            'UNAUTHENTICATED',
            'Send a data-API token as `Authorization: <token>` or `Authorization: Bearer <token>`, or an API key as `Bearer <key>`.',
            { headers: { 'www-authenticate': 'Bearer realm="mapi-data-api"' } },
          );
        }
        if (!check.isRestCredential(token)) return;
      }
      if (kind === 'embed') {
        const bearer = /^bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
        if (bearer !== undefined && !check.isRestCredential(bearer)) {
          await check.acceptEmbed(request, request.tenant, bearer);
          return;
        }
      }
      const authenticated = await check.authenticate(request, request.tenant);
      // Path parameters are known before the body is read: a key scoped elsewhere gets its 403
      // whatever the body holds (spec, Authentication 4).
      checkKeyScope(authenticated.actor.scope, request.params);
      request.caller = check.callerOf(request, request.tenant, authenticated);
    } catch (error) {
      reply.header('connection', 'close');
      throw error;
    }
  });
}
