import type { IncomingMessage } from 'node:http';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import type { Tenant } from '../../http/tenant.js';
import type { OAuthProviders } from './oauth.provider.js';
import { ApiError } from '../../shared/problems.js';
import { IDP_CALLBACK_PATH } from '../identity-provider/index.js';
import { SIGN_IN_TTL_MS, SignInRefused, type IdpSignIn } from './idp-sign-in.js';
import {
  bindingCookie,
  bindingCookieName,
  consentedScope,
  consentPage,
  cookieOf,
  grantConsent,
  otherBrowserPage,
  sameBrowser,
  UID,
} from './oauth.interaction.js';
import { escapeHtml, page } from './oauth.pages.js';

/** Identity-provider callbacks a minute per client address: a browser completes one per sign-in. */
export const IDP_CALLBACK_RATE_LIMIT = 30;

/** What the sign-in pages need besides the provider: the identity provider, device approval, the audit log. */
export interface SignInDeps {
  idp: IdpSignIn;
  approveDevice: (tenant: Tenant, userCode: string, userId: number) => Promise<unknown>;
  consented: (tenant: Tenant, event: { userId: number; clientId: string; allowed: boolean; scope: string; requestId: string }) => Promise<void>;
  /** The email of a user, for the consent page ("signed in as"). */
  describeAccount: (tenantId: number, userId: number) => Promise<string | undefined>;
}

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
export function oauthMount(providers: OAuthProviders, resolveTenant: (request: FastifyRequest) => Promise<Tenant>, signIn: SignInDeps): FastifyPluginAsync {
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

    // Where the provider sends a browser to sign in (its interactions): to the tenant's identity
    // provider when it has one; without one, a device is approved by an admin (the page says how).
    // A HEAD (a link checker's) must not start a sign-in.
    app.get<{ Params: { uid: string } }>(
      `${OAUTH_PREFIX}/interaction/:uid`,
      { exposeHeadRoute: false, config: { public: true }, schema: { hide: true } },
      async (request, reply) => {
        const tenant = await resolveTenant(request);
        const provider = await providers.forTenant(tenant);
        const interaction = UID.test(request.params.uid) ? await provider.Interaction.find(request.params.uid) : undefined;
        reply.header('cache-control', 'no-store').type('text/html; charset=utf-8');
        if (!interaction)
          return reply.code(404).send(page('Sign-in expired', '<p>This sign-in is not valid any more. Start again from your device or app.</p>'));
        if (interaction.prompt.name === 'consent') {
          if (!(await sameBrowser(provider, request, reply, interaction.uid))) return reply.code(400).send(otherBrowserPage);
          return reply.send(await consentPage(provider, interaction, await signIn.describeAccount(tenant.id, Number(interaction.session?.accountId))));
        }
        if (await signIn.idp.configured(tenant.id)) {
          if (!(await sameBrowser(provider, request, reply, interaction.uid))) return reply.code(400).send(otherBrowserPage);
          try {
            const started = await signIn.idp.start(tenant, interaction.uid);
            reply.header('set-cookie', bindingCookie(bindingCookieName(started.state), started.binding, SIGN_IN_TTL_MS / 1000));
            return reply.code(303).header('location', started.location).send();
          } catch (error) {
            if (error instanceof SignInRefused) return reply.code(error.status).send(page('Sign-in unavailable', `<p>${escapeHtml(error.message)}</p>`));
            throw error;
          }
        }
        const deviceCode = typeof interaction.deviceCode === 'string' ? await provider.DeviceCode.find(interaction.deviceCode) : undefined;
        if (!deviceCode?.userCode) {
          return reply
            .code(400)
            .send(
              page(
                'Sign-in unavailable',
                '<p>This account has no identity provider to sign in with. Sign in with the command-line client (<code>mapi login --device</code>) and ask an admin to approve its code.</p>',
              ),
            );
        }
        const code = escapeHtml(`${deviceCode.userCode.slice(0, 4)}-${deviceCode.userCode.slice(4)}`);
        return reply.send(
          page(
            'Ask an admin to approve',
            `<p>Ask an admin of this account to approve the code <code>${code}</code>: <code>npm run admin -- approve-device ${code} --user &lt;your email&gt;</code>, or <code>POST /api/v1/oauth/device-approvals</code>. Your device signs in as soon as they do.</p>`,
          ),
        );
      },
    );

    // Where the identity provider sends the browser back. No credential: the single-use state and
    // the browser's binding cookie name the sign-in. Its query (code, state) is never logged.
    app.get(
      IDP_CALLBACK_PATH,
      { exposeHeadRoute: false, config: { public: true, rateLimit: { max: IDP_CALLBACK_RATE_LIMIT }, secretQuery: true }, schema: { hide: true } },
      async (request, reply) => {
        const tenant = await resolveTenant(request);
        const query = new URLSearchParams(request.url.slice(request.url.indexOf('?') + 1 || request.url.length));
        reply.header('cache-control', 'no-store').type('text/html; charset=utf-8');
        const cookie = bindingCookieName(query.get('state'));
        // The binding is spent with the state, whatever the outcome.
        reply.header('set-cookie', bindingCookie(cookie, '', 0));
        let who;
        try {
          who = await signIn.idp.complete(tenant, query, cookieOf(request, cookie), request.id);
        } catch (error) {
          if (error instanceof SignInRefused)
            return reply.code(error.status).send(page('Sign-in refused', `<p>${escapeHtml(error.message)}</p><p>Nothing was issued.</p>`));
          throw error;
        }
        const provider = await providers.forTenant(tenant);
        const interaction = await provider.Interaction.find(who.interactionUid);
        if (!interaction)
          return reply
            .code(400)
            .send(page('Sign-in expired', '<p>You signed in, but the request you signed in for has expired. Start again from your device or app.</p>'));
        const clientId = String(interaction.params.client_id ?? '');
        if (typeof interaction.deviceCode === 'string') {
          const code = await provider.DeviceCode.find(interaction.deviceCode);
          try {
            if (!code?.userCode) throw new ApiError('DEVICE_CODE_NOT_FOUND', 'gone');
            await signIn.approveDevice(tenant, code.userCode, who.userId);
          } catch (error) {
            if (error instanceof ApiError)
              return reply
                .code(400)
                .send(page('Sign-in expired', '<p>You signed in, but the device code has expired or was already used. Start again on your device.</p>'));
            throw error;
          }
          await interaction.destroy();
          await signIn.idp.signedIn(tenant, who, { clientId, flow: 'device', requestId: request.id });
          return reply.send(page('Device signed in', `<p>Signed in as ${escapeHtml(who.email)}. You may close this window and return to your device.</p>`));
        }
        interaction.result = { login: { accountId: String(who.userId) } };
        await interaction.save(Math.max(1, interaction.exp - Math.floor(Date.now() / 1000)));
        await signIn.idp.signedIn(tenant, who, { clientId, flow: 'authorization_code', requestId: request.id });
        return reply.code(303).header('location', interaction.returnTo).send();
      },
    );

    // The user's answer on the consent page (an app asked to act as them).
    await app.register(async (forms) => {
      forms.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 4096 }, (_request, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      });
      forms.post<{ Params: { uid: string }; Body: Record<string, string> | undefined }>(
        `${OAUTH_PREFIX}/interaction/:uid/consent`,
        { config: { public: true, contentTypes: ['application/x-www-form-urlencoded'] }, schema: { hide: true } },
        async (request, reply) => {
          const tenant = await resolveTenant(request);
          const provider = await providers.forTenant(tenant);
          reply.header('cache-control', 'no-store').type('text/html; charset=utf-8');
          const details =
            UID.test(request.params.uid) && (await sameBrowser(provider, request, reply, request.params.uid))
              ? await provider.interactionDetails(request.raw, reply.raw)
              : undefined;
          if (!details || details.prompt.name !== 'consent' || !details.session?.accountId) return reply.code(400).send(otherBrowserPage);
          const clientId = String(details.params.client_id);
          const userId = Number(details.session.accountId);
          const result =
            request.body?.decision === 'allow'
              ? { consent: { grantId: await grantConsent(provider, details) } }
              : { error: 'access_denied', error_description: 'The user declined the request.' };
          await signIn.consented(tenant, { userId, clientId, allowed: 'consent' in result, scope: consentedScope(details), requestId: request.id });
          const returnTo = await provider.interactionResult(request.raw, reply.raw, result, { mergeWithLastSubmission: true });
          return reply.code(303).header('location', returnTo).send();
        },
      );
    });
  };
}
