import type { IncomingMessage } from 'node:http';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import type { Tenant } from '../../http/tenant.js';
import type { OAuthProviders } from './oauth.provider.js';
import { escapeHtml, page } from './oauth.pages.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route is answered by the tenant's authorization server (see oauth.mount.ts). */
    oauthProvider?: boolean;
  }
}

export const OAUTH_PREFIX = '/oauth';
/** RFC 8414 section 3: the metadata of issuer `https://host/oauth`, inserted after the well-known prefix. */
export const OAUTH_METADATA = '/.well-known/oauth-authorization-server/oauth';

const callbacks = new WeakMap<Provider, ReturnType<Provider['callback']>>();

/**
 * The tenant's `oidc-provider` (a Koa app) answers everything under /oauth, on the raw request:
 * it reads its own bodies (form-encoded, as OAuth requires) and writes its own responses,
 * including OAuth's error format. The app's own hooks still run first: the Host check, the
 * per-address rate limit (these routes take no credential; http/auth.ts lists them). The provider
 * is told the scheme and host of its issuer, never what the client sent as forwarding headers.
 */
export function oauthMount(providers: OAuthProviders, resolveTenant: (request: FastifyRequest) => Promise<Tenant>): FastifyPluginAsync {
  return async (app) => {
    // Added after the rate limiter's own hook (registered earlier), so a refused request is never served.
    app.addHook('onRoute', (route) => {
      if (!route.config?.oauthProvider) return;
      const existing = route.onRequest === undefined ? [] : [route.onRequest].flat();
      route.onRequest = [...existing, serve] as never;
    });

    async function serve(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      const tenant = await resolveTenant(request);
      const provider = await providers.forTenant(tenant);
      const issuer = new URL(provider.issuer);
      const raw = request.raw as IncomingMessage & { originalUrl?: string };
      const url = raw.url ?? '/';
      const path = url.startsWith(OAUTH_METADATA) ? `${OAUTH_PREFIX}/.well-known/openid-configuration${url.slice(OAUTH_METADATA.length)}` : url;
      raw.headers['x-forwarded-proto'] = 'https';
      raw.headers['x-forwarded-host'] = issuer.host;
      raw.headers['x-forwarded-for'] = request.ip;
      raw.originalUrl = path;
      raw.url = path.slice(OAUTH_PREFIX.length) || '/';
      reply.raw.setHeader('x-request-id', request.id);
      let callback = callbacks.get(provider);
      if (!callback) {
        callback = provider.callback();
        callbacks.set(provider, callback);
      }
      reply.hijack();
      await callback(raw, reply.raw);
    }

    const options = { config: { public: true, oauthProvider: true }, schema: { hide: true } };
    const answered = async () => {
      // Never reached: the provider answers in the onRequest hook.
    };
    app.route({ method: ['GET', 'POST', 'OPTIONS'], url: OAUTH_PREFIX, ...options, handler: answered });
    app.route({ method: ['GET', 'POST', 'OPTIONS'], url: `${OAUTH_PREFIX}/*`, ...options, handler: answered });
    app.route({ method: ['GET', 'OPTIONS'], url: OAUTH_METADATA, ...options, handler: answered });

    // Where the provider sends a browser to sign in (its interactions). Sign-in through the
    // tenant's identity provider is not offered yet: the page tells the user how an admin
    // approves their device code instead.
    app.get<{ Params: { uid: string } }>(`${OAUTH_PREFIX}/interaction/:uid`, { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
      const tenant = await resolveTenant(request);
      const provider = await providers.forTenant(tenant);
      const interaction = /^[A-Za-z0-9_-]{1,64}$/.test(request.params.uid) ? await provider.Interaction.find(request.params.uid) : undefined;
      const deviceCode = typeof interaction?.deviceCode === 'string' ? await provider.DeviceCode.find(interaction.deviceCode) : undefined;
      reply.header('cache-control', 'no-store').type('text/html; charset=utf-8');
      if (!deviceCode?.userCode) {
        return reply.code(interaction ? 400 : 404).send(page('Sign-in unavailable', '<p>Signing in through this page is not available. Sign in with the command-line client (<code>mapi login --device</code>) and ask an admin to approve its code.</p>'));
      }
      const code = escapeHtml(`${deviceCode.userCode.slice(0, 4)}-${deviceCode.userCode.slice(4)}`);
      return reply.send(
        page('Ask an admin to approve', `<p>Ask an admin of this account to approve the code <code>${code}</code>: <code>npm run admin -- approve-device ${code} --user &lt;your email&gt;</code>, or <code>POST /api/v1/oauth/device-approvals</code>. Your device signs in as soon as they do.</p>`),
      );
    });
  };
}
