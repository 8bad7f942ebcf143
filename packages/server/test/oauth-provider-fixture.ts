import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/**
 * A real OAuth 2.0 / OpenID provider (oidc-provider) on loopback, as the third party of the OAuth
 * integration tests. Its interaction step (login and consent) is answered by a minimal handler:
 * the account named by `account` signs in and grants what was asked, as a user clicking through
 * the provider's pages would. Access tokens are opaque; refresh tokens rotate on every use.
 */
export interface OAuthProviderFixture {
  issuer: string;
  clientId: string;
  clientSecret: string;
  authUrl: string;
  tokenUrl: string;
  revocationUrl: string;
  /** RFC 7662 at the provider: whether it still honours `token`. */
  isActive(token: string): Promise<boolean>;
  /** Runs the user's browser from an authorization URL until the provider redirects to `redirectUri`: that URL. */
  authorize(authorizationUrl: string, redirectUri: string): Promise<URL>;
  /** Token endpoint requests received so far (grant types), to see what was exchanged. */
  grants: string[];
  close(): Promise<void>;
}

export async function startOAuthProvider(options: { redirectUri: string; account?: string }): Promise<OAuthProviderFixture> {
  const account = options.account ?? 'warehouse-user-1';
  const clientId = 'mapi-test-client';
  const clientSecret = `fixture-client-secret-${Math.random().toString(36).slice(2)}`;
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    ],
    features: {
      devInteractions: { enabled: false },
      revocation: { enabled: true, allowedPolicy: async () => true },
      introspection: { enabled: true, allowedPolicy: async () => true },
    },
    // An hour for access tokens (the tests move the server's clock across it), a day for the rest.
    ttl: { AccessToken: 3600, RefreshToken: 86_400, Interaction: 600, Grant: 86_400, Session: 86_400, IdToken: 3600, AuthorizationCode: 60 },
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
    issueRefreshToken: async () => true,
    rotateRefreshToken: true,
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['fixture-cookie-key'] },
    pkce: { required: () => true },
  } as never);
  const grants: string[] = [];
  const callback = provider.callback();
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    void (async () => {
      if (req.url?.startsWith('/interaction/')) {
        const details = await provider.interactionDetails(req, res);
        const params = details.params as { client_id: string; scope?: string };
        const grant = new provider.Grant({ accountId: account, clientId: params.client_id });
        if (params.scope) grant.addOIDCScope(params.scope);
        const grantId = await grant.save();
        await provider.interactionFinished(req, res, { login: { accountId: account }, consent: { grantId } }, { mergeWithLastSubmission: false });
        return;
      }
      if (req.url === '/token' && req.method === 'POST') {
        const chunks: Buffer[] = [];
        // oidc-provider reads the body itself: peek at the grant type from a copy.
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => grants.push(new URLSearchParams(Buffer.concat(chunks).toString()).get('grant_type') ?? ''));
      }
      callback(req, res);
    })().catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  });

  const basic = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
  return {
    issuer,
    clientId,
    clientSecret,
    authUrl: `${issuer}/auth`,
    tokenUrl: `${issuer}/token`,
    revocationUrl: `${issuer}/token/revocation`,
    grants,
    async isActive(token) {
      const res = await fetch(`${issuer}/token/introspection`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }),
      });
      return ((await res.json()) as { active: boolean }).active;
    },
    async authorize(authorizationUrl, redirectUri) {
      const cookies = new Map<string, string>();
      let url = new URL(authorizationUrl);
      for (let hop = 0; hop < 10; hop++) {
        const res = await fetch(url, { redirect: 'manual', headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
        for (const line of res.headers.getSetCookie()) {
          const [pair = ''] = line.split(';');
          const at = pair.indexOf('=');
          cookies.set(pair.slice(0, at), pair.slice(at + 1));
        }
        const location = res.headers.get('location');
        if (location === null) throw new Error(`the provider stopped at ${url.pathname} with ${res.status}: ${await res.text()}`);
        url = new URL(location, url);
        if (url.href.startsWith(redirectUri)) return url;
      }
      throw new Error('the provider redirected too often');
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
