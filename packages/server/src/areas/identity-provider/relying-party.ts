import * as oidc from 'openid-client';
import { OutboundError, type Outbound } from '../../outbound/index.js';

/** What the relying party needs of the tenant's provider, its secret opened. */
export interface ProviderSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** This server's callback, registered with the provider. */
  redirectUri: string;
}

/** The claims a sign-in is judged on, as the provider asserted them. */
export interface SignInClaims {
  sub: string;
  email: string | null;
  emailVerified: boolean;
}

/** The provider gave no usable answer (unreachable, refused by the address guard, a 5xx): nothing to judge. */
export class ProviderUnavailable extends Error {}
/** The provider answered, and refused or answered something the relying party rejects (a bad code, a wrong issuer or nonce). */
export class ProviderRefused extends Error {}

/**
 * `openid-client` as the relying party, with every request it makes (discovery, token) sent
 * through outbound/, so the address guard, timeouts and redacted logs apply as to every other
 * call. Token requests are never retried (a code works once); discovery is.
 */
/** How long a provider's discovery document (and the keys openid-client fetched with it) is reused. */
export const DISCOVERY_CACHE_MS = 5 * 60_000;

export function relyingParty(outbound: Outbound, options: { now?: () => number; cacheMs?: number } = {}) {
  const clock = options.now ?? Date.now;
  const cacheMs = options.cacheMs ?? DISCOVERY_CACHE_MS;
  /**
   * Discovered configurations by everything they were made from (a changed secret or issuer is
   * another entry): a sign-in costs its two redirects and one token request, not a discovery
   * each time. Failures are not kept. The provider's new keys are still found: openid-client
   * fetches the key set again when an ID token names a key it does not have.
   */
  const discovered = new Map<string, { config: Promise<oidc.Configuration>; until: number }>();

  const customFetch: oidc.CustomFetch = async (url, options) => {
    const method = options.method.toUpperCase() as 'GET' | 'POST';
    const body =
      options.body === undefined || options.body === null
        ? undefined
        : typeof options.body === 'string'
          ? options.body
          : options.body instanceof URLSearchParams
            ? options.body.toString()
            : undefined;
    const response = await outbound.request(url, { method, headers: options.headers, ...(body === undefined ? {} : { body }) });
    return new Response(response.status === 204 || response.status === 304 ? null : response.body, { status: response.status, headers: response.headers });
  };

  function configuration(settings: ProviderSettings): Promise<oidc.Configuration> {
    const key = JSON.stringify([settings.issuer, settings.clientId, settings.clientSecret, settings.redirectUri]);
    const at = clock();
    const cached = discovered.get(key);
    if (cached && cached.until > at) return cached.config;
    for (const [k, entry] of discovered) if (entry.until <= at) discovered.delete(k);
    const config = discover(settings);
    discovered.set(key, { config, until: at + cacheMs });
    config.catch(() => discovered.delete(key));
    return config;
  }

  async function discover(settings: ProviderSettings): Promise<oidc.Configuration> {
    const issuer = new URL(settings.issuer);
    try {
      return await oidc.discovery(
        issuer,
        settings.clientId,
        { redirect_uris: [settings.redirectUri], response_types: ['code'] },
        oidc.ClientSecretBasic(settings.clientSecret),
        {
          [oidc.customFetch]: customFetch,
          // http is accepted only for loopback issuers (identity-provider.service.ts checks it), for development and tests.
          ...(issuer.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : {}),
        },
      );
    } catch (error) {
      throw failure(error, 'discovery');
    }
  }

  return {
    /** The provider's authorization URL: authorization code with PKCE (S256), `state` and `nonce`. */
    async authorizationUrl(settings: ProviderSettings, checks: { state: string; nonce: string; codeVerifier: string }): Promise<URL> {
      const config = await configuration(settings);
      return oidc.buildAuthorizationUrl(config, {
        redirect_uri: settings.redirectUri,
        scope: 'openid email',
        response_type: 'code',
        state: checks.state,
        nonce: checks.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(checks.codeVerifier),
        code_challenge_method: 'S256',
      });
    },

    /**
     * Exchanges the code the provider sent back (with the PKCE verifier), checks the ID token
     * (issuer, audience, nonce), and answers the user's claims: from the ID token, else from
     * the UserInfo endpoint (providers that put `email` only there).
     */
    async signIn(settings: ProviderSettings, query: URLSearchParams, checks: { state: string; nonce: string; codeVerifier: string }): Promise<SignInClaims> {
      const config = await configuration(settings);
      // The URL the provider redirected to: this server's callback with the provider's parameters.
      const callbackUrl = new URL(settings.redirectUri);
      callbackUrl.search = query.toString();
      let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
      try {
        tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
          expectedState: checks.state,
          expectedNonce: checks.nonce,
          pkceCodeVerifier: checks.codeVerifier,
          idTokenExpected: true,
        });
      } catch (error) {
        throw failure(error, 'code exchange');
      }
      const idToken = tokens.claims();
      if (!idToken) throw new ProviderRefused('the provider sent no ID token');
      let claims: Record<string, unknown> = idToken;
      if (typeof idToken.email !== 'string' && config.serverMetadata().userinfo_endpoint !== undefined) {
        try {
          claims = { ...(await oidc.fetchUserInfo(config, tokens.access_token, idToken.sub)), sub: idToken.sub };
        } catch (error) {
          throw failure(error, 'userinfo');
        }
      }
      return {
        sub: idToken.sub,
        email: typeof claims.email === 'string' ? claims.email : null,
        // Only a boolean true counts: "true" as a string, or an absent claim, is not a verified email.
        emailVerified: claims.email_verified === true,
      };
    },
  };
}
export type RelyingParty = ReturnType<typeof relyingParty>;

/** The library's error as one of ours; its message never quotes a URL's query or a token. */
function failure(error: unknown, during: string): Error {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof OutboundError) return new ProviderUnavailable(`${during}: ${e.message}`);
  }
  if (error instanceof oidc.ResponseBodyError) return new ProviderRefused(`${during}: the provider answered ${error.error}`);
  if (error instanceof oidc.ClientError || error instanceof oidc.AuthorizationResponseError)
    return new ProviderRefused(`${during}: ${(error as Error).message}`);
  if (error instanceof Error && /status code|response/i.test(error.message)) return new ProviderUnavailable(`${during}: the provider gave no usable answer`);
  return new ProviderRefused(`${during}: the provider's answer was not accepted`);
}
