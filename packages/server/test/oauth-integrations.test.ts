import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPublicRoute, PUBLIC_ROUTES } from '../src/http/auth.js';
import { oauthSecretColumns, sealedAs } from '../src/areas/oauth-integrations/oauth-integrations.store.js';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';
import { startOAuthProvider, type OAuthProviderFixture } from './oauth-provider-fixture.js';

interface Integration {
  id: number;
  name: string;
  type: string;
  authUrl: string;
  tokenUrl: string;
  clientId: string;
  redirectUri: string;
  scopes: string[] | null;
  config: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
}

interface UserToken {
  id: number;
  userId: number;
  integrationId: number;
  status: string;
  accessTokenExpiresAt: string | null;
  refreshTokenExpiresAt: string | null;
  lastError: unknown;
  createdAt: string;
  updatedAt: string;
}

/** This server's callback, as the admin registers it with the provider (any host reaches the default tenant). */
const REDIRECT_URI = 'https://mapi.example.test/api/v1/oauth-integrations/callback';
const MINUTE = 60_000;

describe('routes without a credential (DESIGN.md)', () => {
  it('the OAuth callback is listed with its budget; a public route missing from the list, or with another budget, stops the app', () => {
    expect(PUBLIC_ROUTES.get('GET /api/v1/oauth-integrations/callback')).toBe(30);
    expect(() =>
      checkPublicRoute({ method: 'GET', url: '/api/v1/oauth-integrations/callback', config: { public: true, rateLimit: { max: 30 } } }),
    ).not.toThrow();
    expect(() => checkPublicRoute({ method: 'HEAD', url: '/healthz', config: { public: true, rateLimit: false } })).not.toThrow();
    expect(() => checkPublicRoute({ method: 'POST', url: '/api/v1/oauth-integrations', config: { public: true } })).toThrow(/not listed in PUBLIC_ROUTES/);
    expect(() => checkPublicRoute({ method: 'GET', url: '/api/v1/oauth-integrations/callback', config: { public: true } })).toThrow(/budget/);
    expect(() => checkPublicRoute({ method: 'POST', url: '/api/v1/oauth-integrations', config: {} })).not.toThrow();
  });
});

describe.each(DIALECTS)('OAuth integrations and user OAuth tokens (%s)', (dialect) => {
  let t: TestApp;
  let idp: OAuthProviderFixture;
  let explorer: Caller;
  let viewer: Caller;
  let other: { tenantId: number; admin: Caller };
  const logs: string[] = [];
  // The server's clock for expiring states and due refreshes; tests move it forward.
  const clock = { offsetMs: 0 };

  beforeAll(async () => {
    idp = await startOAuthProvider({ redirectUri: REDIRECT_URI });
    t = await TestApp.create(dialect, {
      // The provider runs on loopback, which the outbound guard refuses unless allowed.
      outbound: { allowPrivate: ['127.0.0.1/32'], retryBaseMs: 1 },
      now: () => new Date(Date.now() + clock.offsetMs),
      logger: { level: 'trace', stream: { write: (line: string) => void logs.push(line) } },
    });
    explorer = await t.user('EXPLORER');
    viewer = await t.user('VIEWER');
    other = await t.tenant('oauth-other', ['oauth-other.example.test']);
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  const body = (overrides: Record<string, unknown> = {}) => ({
    name: 'Warehouse',
    type: 'generic',
    authUrl: idp.authUrl,
    tokenUrl: idp.tokenUrl,
    clientId: idp.clientId,
    clientSecret: idp.clientSecret,
    redirectUri: REDIRECT_URI,
    scopes: ['openid', 'offline_access'],
    config: { revocationUrl: idp.revocationUrl },
    ...overrides,
  });
  const create = async (overrides: Record<string, unknown> = {}) => {
    const res = await t.request({ method: 'POST', url: '/api/v1/oauth-integrations', body: body(overrides) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Integration;
  };
  const initiate = async (integrationId: number, key: string) => {
    const res = await t.request({ method: 'POST', url: `/api/v1/user-oauth-tokens/${integrationId}/initiate`, key });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { authorizationUrl: string }).authorizationUrl;
  };
  /** The browser's return to this server: the path and query the provider redirected to. */
  const callback = (returned: URL, options: { key?: string | null; host?: string } = {}) =>
    t.request({ url: `${returned.pathname}${returned.search}`, key: options.key ?? null, ...(options.host ? { host: options.host } : {}) });
  const tokenOf = (integrationId: number, key: string) => t.request({ url: `/api/v1/user-oauth-tokens/${integrationId}`, key });
  /** The stored tokens, opened as the query engine would get them. */
  const stored = async (integrationId: number, userId: number) => {
    const row = await t.store.db
      .selectFrom('user_oauth_tokens')
      .selectAll()
      .where('integration_id', '=', integrationId)
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    const secrets = t.app.services.secrets;
    return {
      row,
      accessToken: secrets.open(row.access_token, sealedAs.accessToken(integrationId, userId)),
      refreshToken: row.refresh_token === null ? null : secrets.open(row.refresh_token, sealedAs.refreshToken(integrationId, userId)),
    };
  };

  describe('integrations (reference 5.5-5.9)', () => {
    it('creates an integration with the reference shape and never returns the client secret', async () => {
      const made = await create({ type: 'snowflake' });
      expect(made).toEqual({
        id: expect.any(Number),
        name: 'Warehouse',
        type: 'snowflake',
        authUrl: idp.authUrl,
        tokenUrl: idp.tokenUrl,
        clientId: idp.clientId,
        redirectUri: REDIRECT_URI,
        scopes: ['openid', 'offline_access'],
        config: { revocationUrl: idp.revocationUrl },
        createdAt: made.createdAt,
        updatedAt: made.createdAt,
      });
      // Any caller reads them; a bare array (reference 0.3).
      const list = await t.request({ url: '/api/v1/oauth-integrations', key: viewer.key });
      expect(list.statusCode).toBe(200);
      expect(list.json()).toContainEqual(made);
      expect((await t.request({ url: `/api/v1/oauth-integrations/${made.id}`, key: viewer.key })).json()).toEqual(made);
      // The secret is sealed at rest.
      const row = await t.store.db.selectFrom('oauth_integrations').select('client_secret').where('id', '=', made.id).executeTakeFirstOrThrow();
      expect(row.client_secret).not.toContain(idp.clientSecret);
      expect(t.app.services.secrets.open(row.client_secret, sealedAs.clientSecret(made.id))).toBe(idp.clientSecret);
    });

    it('update is a full replace; an omitted or null clientSecret keeps the stored one, a given one replaces it', async () => {
      const made = await create();
      const secretOf = async () => {
        const row = await t.store.db.selectFrom('oauth_integrations').select('client_secret').where('id', '=', made.id).executeTakeFirstOrThrow();
        return t.app.services.secrets.open(row.client_secret, sealedAs.clientSecret(made.id));
      };
      const { clientSecret: _omitted, scopes: _s, config: _c, ...rest } = body({ name: 'Renamed', type: 'databricks' });
      const res = await t.request({ method: 'PUT', url: `/api/v1/oauth-integrations/${made.id}`, body: rest });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ id: made.id, name: 'Renamed', type: 'databricks', scopes: null, config: null });
      expect(await secretOf()).toBe(idp.clientSecret);
      expect((await t.request({ method: 'PUT', url: `/api/v1/oauth-integrations/${made.id}`, body: { ...rest, clientSecret: null } })).statusCode).toBe(200);
      expect(await secretOf()).toBe(idp.clientSecret);
      const replaced = await t.request({ method: 'PUT', url: `/api/v1/oauth-integrations/${made.id}`, body: { ...rest, clientSecret: 'a-new-secret' } });
      expect(JSON.stringify(replaced.json())).not.toContain('a-new-secret');
      expect(await secretOf()).toBe('a-new-secret');
      // Required fields of the replace: leaving one out changes nothing.
      const { redirectUri: _r, ...missing } = rest;
      problem(await t.request({ method: 'PUT', url: `/api/v1/oauth-integrations/${made.id}`, body: missing }), 400, 'VALIDATION_FAILED');
      expect((await t.request({ url: `/api/v1/oauth-integrations/${made.id}` })).json()).toMatchObject({ name: 'Renamed', redirectUri: REDIRECT_URI });
    });

    it('deletes an integration with every user token for it: 200 {}, then 404', async () => {
      const made = await create();
      const res = await t.request({ method: 'DELETE', url: `/api/v1/oauth-integrations/${made.id}` });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({});
      problem(await t.request({ url: `/api/v1/oauth-integrations/${made.id}` }), 404, 'OAUTH_INTEGRATION_NOT_FOUND');
      problem(await t.request({ method: 'DELETE', url: `/api/v1/oauth-integrations/${made.id}` }), 404, 'OAUTH_INTEGRATION_NOT_FOUND');
    });

    it('refuses writes by non-admins with 403 and changes nothing (DESIGN.md: OAuth integrations’ writes are admin only)', async () => {
      const made = await create();
      for (const caller of [explorer, viewer]) {
        problem(await t.request({ method: 'POST', url: '/api/v1/oauth-integrations', key: caller.key, body: body() }), 403, 'FORBIDDEN');
        problem(
          await t.request({ method: 'PUT', url: `/api/v1/oauth-integrations/${made.id}`, key: caller.key, body: body({ name: 'taken over' }) }),
          403,
          'FORBIDDEN',
        );
        problem(await t.request({ method: 'DELETE', url: `/api/v1/oauth-integrations/${made.id}`, key: caller.key }), 403, 'FORBIDDEN');
      }
      expect((await t.request({ url: `/api/v1/oauth-integrations/${made.id}` })).json()).toEqual(made);
      // An integration is account-wide: an admin's key scoped to deployments may read but not write.
      const scoped = await t.key(t.admin.userId, { deploymentIds: [await t.deployment(`oauth-scope-${made.id}`)] });
      expect((await t.request({ url: `/api/v1/oauth-integrations/${made.id}`, key: scoped })).statusCode).toBe(200);
      problem(await t.request({ method: 'POST', url: '/api/v1/oauth-integrations', key: scoped, body: body() }), 403, 'KEY_SCOPE_FORBIDDEN');
      problem(
        await t.request({ method: 'PUT', url: `/api/v1/oauth-integrations/${made.id}`, key: scoped, body: body({ name: 'x' }) }),
        403,
        'KEY_SCOPE_FORBIDDEN',
      );
      problem(await t.request({ method: 'DELETE', url: `/api/v1/oauth-integrations/${made.id}`, key: scoped }), 403, 'KEY_SCOPE_FORBIDDEN');
    });

    it("another tenant's integration is 404 to every operation, and lists show only the tenant's own", async () => {
      const theirs = (
        await t.request({
          method: 'POST',
          url: '/api/v1/oauth-integrations',
          key: other.admin.key,
          host: 'oauth-other.example.test',
          body: body({ name: 'Theirs' }),
        })
      ).json() as Integration;
      problem(await t.request({ url: `/api/v1/oauth-integrations/${theirs.id}` }), 404, 'OAUTH_INTEGRATION_NOT_FOUND');
      problem(await t.request({ method: 'PUT', url: `/api/v1/oauth-integrations/${theirs.id}`, body: body() }), 404, 'OAUTH_INTEGRATION_NOT_FOUND');
      problem(await t.request({ method: 'DELETE', url: `/api/v1/oauth-integrations/${theirs.id}` }), 404, 'OAUTH_INTEGRATION_NOT_FOUND');
      problem(
        await t.request({ method: 'POST', url: `/api/v1/user-oauth-tokens/${theirs.id}/initiate`, key: explorer.key }),
        404,
        'OAUTH_INTEGRATION_NOT_FOUND',
      );
      const ours = (await t.request({ url: '/api/v1/oauth-integrations' })).json() as Integration[];
      expect(ours.map((i) => i.id)).not.toContain(theirs.id);
    });

    it('refuses URLs that are not https (http only on loopback), unknown fields and missing required fields, changing nothing', async () => {
      const before = (await t.request({ url: '/api/v1/oauth-integrations' })).json() as Integration[];
      for (const bad of [
        { authUrl: 'http://idp.example.com/auth' },
        { tokenUrl: 'ftp://idp.example.com/token' },
        { redirectUri: 'https://user:pw@mapi.example.test/cb' },
        { redirectUri: 'not a url' },
        { config: { revocationUrl: 'http://idp.example.com/revoke' } },
        { config: { tokenEndpointAuthMethod: 'private_key_jwt' } },
        { scopes: ['has space'] },
        { extra: true },
        { clientSecret: '' },
      ]) {
        const res = await t.request({ method: 'POST', url: '/api/v1/oauth-integrations', body: body(bad) });
        problem(res, 400, 'VALIDATION_FAILED');
      }
      const { tokenUrl: _missing, ...rest } = body();
      problem(await t.request({ method: 'POST', url: '/api/v1/oauth-integrations', body: rest }), 400, 'VALIDATION_FAILED');
      expect((await t.request({ url: '/api/v1/oauth-integrations' })).json()).toEqual(before);
      // http on loopback is for development, and is accepted.
      await create({ redirectUri: 'http://localhost:8443/api/v1/oauth-integrations/callback' });
    });
  });

  describe('user OAuth tokens (reference 5.10-5.13) against a real provider', () => {
    it('initiate → provider login and consent → callback → token stored encrypted, ACTIVE → refreshed before expiry → delete revokes it at the provider', async () => {
      const integration = await create();
      const authorizationUrl = new URL(await initiate(integration.id, explorer.key));
      // The URL carries the integration's settings, a state and a PKCE S256 challenge.
      expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(idp.authUrl);
      const params = authorizationUrl.searchParams;
      expect(Object.fromEntries(params)).toMatchObject({
        response_type: 'code',
        client_id: idp.clientId,
        redirect_uri: REDIRECT_URI,
        scope: 'openid offline_access',
        code_challenge_method: 'S256',
      });
      expect(params.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(params.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);

      const returned = await idp.authorize(authorizationUrl.href, REDIRECT_URI);
      expect(returned.searchParams.get('state')).toBe(params.get('state'));
      const done = await callback(returned);
      expect(done.statusCode, done.body).toBe(200);
      expect(done.json()).toEqual({ integrationId: integration.id, status: 'ACTIVE' });

      const token = (await tokenOf(integration.id, explorer.key)).json() as UserToken;
      expect(token).toEqual({
        id: expect.any(Number),
        userId: explorer.userId,
        integrationId: integration.id,
        status: 'ACTIVE',
        accessTokenExpiresAt: expect.any(String),
        refreshTokenExpiresAt: null,
        lastError: null,
        createdAt: token.createdAt,
        updatedAt: token.updatedAt,
      });
      // The provider's default access-token lifetime is an hour.
      const expiresIn = new Date(token.accessTokenExpiresAt!).getTime() - Date.now();
      expect(expiresIn).toBeGreaterThan(50 * MINUTE);
      expect(expiresIn).toBeLessThanOrEqual(60 * MINUTE);
      const list = (await t.request({ url: '/api/v1/user-oauth-tokens', key: explorer.key })).json() as UserToken[];
      expect(list).toEqual([token]);

      // Sealed at rest; the token in hand is one the provider honours.
      const first = await stored(integration.id, explorer.userId);
      expect(first.row.access_token).not.toContain(first.accessToken);
      expect(first.refreshToken).not.toBeNull();
      expect(await idp.isActive(first.accessToken)).toBe(true);
      const current = await t.app.services.userOAuthTokens.currentAccessToken(t.tenantId, explorer.userId, integration.id);
      expect(current).toEqual({ accessToken: first.accessToken, accessTokenExpiresAt: token.accessTokenExpiresAt });

      // 59 minutes later the token is within the refresh margin: using it refreshes it first.
      clock.offsetMs = 59 * MINUTE;
      try {
        const refreshed = await t.app.services.userOAuthTokens.currentAccessToken(t.tenantId, explorer.userId, integration.id);
        expect(refreshed?.accessToken).toBeDefined();
        expect(refreshed?.accessToken).not.toBe(first.accessToken);
        expect(await idp.isActive(refreshed!.accessToken)).toBe(true);
        const second = await stored(integration.id, explorer.userId);
        // The provider rotates refresh tokens: the new one is kept.
        expect(second.refreshToken).not.toBe(first.refreshToken);
        const after = (await tokenOf(integration.id, explorer.key)).json() as UserToken;
        expect(after.status).toBe('ACTIVE');
        expect(new Date(after.accessTokenExpiresAt!).getTime()).toBeGreaterThan(new Date(token.accessTokenExpiresAt!).getTime());
        expect(idp.grants).toContain('refresh_token');
      } finally {
        clock.offsetMs = 0;
      }

      // Delete revokes at the provider: the grant's tokens stop working there.
      const last = await stored(integration.id, explorer.userId);
      const removed = await t.request({ method: 'DELETE', url: `/api/v1/user-oauth-tokens/${integration.id}`, key: explorer.key });
      expect(removed.statusCode).toBe(200);
      expect(removed.json()).toEqual({});
      expect(await idp.isActive(last.refreshToken!)).toBe(false);
      expect(await idp.isActive(last.accessToken)).toBe(false);
      problem(await tokenOf(integration.id, explorer.key), 404, 'USER_OAUTH_TOKEN_NOT_FOUND');
      problem(await t.request({ method: 'DELETE', url: `/api/v1/user-oauth-tokens/${integration.id}`, key: explorer.key }), 404, 'USER_OAUTH_TOKEN_NOT_FOUND');
      expect(await t.app.services.userOAuthTokens.currentAccessToken(t.tenantId, explorer.userId, integration.id)).toBeNull();
    });

    it('a state works once: the same callback again is 400 OAUTH_STATE_INVALID', async () => {
      const integration = await create();
      const returned = await idp.authorize(await initiate(integration.id, viewer.key), REDIRECT_URI);
      expect((await callback(returned)).statusCode).toBe(200);
      problem(await callback(returned), 400, 'OAUTH_STATE_INVALID');
    });

    it('a state expires after 10 minutes', async () => {
      const integration = await create();
      const returned = await idp.authorize(await initiate(integration.id, explorer.key), REDIRECT_URI);
      clock.offsetMs = 10 * MINUTE + 1_000;
      try {
        const body = problem(await callback(returned), 400, 'OAUTH_STATE_INVALID');
        expect(body.detail).toContain('expired');
      } finally {
        clock.offsetMs = 0;
      }
      // Expired is gone: it does not come back when the clock does.
      problem(await callback(returned), 400, 'OAUTH_STATE_INVALID');
      problem(await tokenOf(integration.id, explorer.key), 404, 'USER_OAUTH_TOKEN_NOT_FOUND');
    });

    it("a state is bound to the user who started it: another user's credential is refused, and the token is only ever the initiator's", async () => {
      const integration = await create();
      const returned = await idp.authorize(await initiate(integration.id, explorer.key), REDIRECT_URI);
      const refused = problem(await callback(returned, { key: viewer.key }), 400, 'OAUTH_STATE_INVALID');
      expect(refused.detail).toContain('another user');
      problem(await tokenOf(integration.id, viewer.key), 404, 'USER_OAUTH_TOKEN_NOT_FOUND');
      // A forged credential is refused as on any route.
      problem(await callback(returned, { key: `mapi_${'Z'.repeat(40)}` }), 401, 'UNAUTHENTICATED');
      // The initiator completes it (with or without a credential); the token is theirs alone.
      expect((await callback(returned, { key: explorer.key })).statusCode).toBe(200);
      expect(((await tokenOf(integration.id, explorer.key)).json() as UserToken).userId).toBe(explorer.userId);
      problem(await tokenOf(integration.id, viewer.key), 404, 'USER_OAUTH_TOKEN_NOT_FOUND');
    });

    it("a state is bound to its tenant: another tenant's host does not know it", async () => {
      const integration = await create();
      const returned = await idp.authorize(await initiate(integration.id, explorer.key), REDIRECT_URI);
      problem(await callback(returned, { host: 'oauth-other.example.test' }), 400, 'OAUTH_STATE_INVALID');
      expect((await callback(returned)).statusCode).toBe(200);
    });

    it('a callback without a state, with an unknown one, or with the provider’s error is refused', async () => {
      problem(await t.request({ url: '/api/v1/oauth-integrations/callback?code=abc', key: null }), 400, 'OAUTH_STATE_INVALID');
      problem(await t.request({ url: '/api/v1/oauth-integrations/callback?code=abc&state=made-up', key: null }), 400, 'OAUTH_STATE_INVALID');
      const integration = await create();
      const state = new URL(await initiate(integration.id, explorer.key)).searchParams.get('state')!;
      const denied = problem(
        await t.request({ url: `/api/v1/oauth-integrations/callback?state=${state}&error=access_denied&error_description=User+said+no`, key: null }),
        400,
        'OAUTH_AUTHORIZATION_FAILED',
      );
      expect(denied.detail).toContain('access_denied');
      // The state was spent on the refusal.
      problem(await t.request({ url: `/api/v1/oauth-integrations/callback?state=${state}&code=abc`, key: null }), 400, 'OAUTH_STATE_INVALID');
    });

    it('a code the provider does not accept is 400 OAUTH_AUTHORIZATION_FAILED and stores nothing', async () => {
      const integration = await create();
      const state = new URL(await initiate(integration.id, explorer.key)).searchParams.get('state')!;
      const res = problem(
        await t.request({ url: `/api/v1/oauth-integrations/callback?state=${state}&code=not-a-code`, key: null }),
        400,
        'OAUTH_AUTHORIZATION_FAILED',
      );
      expect(res.detail).toContain('invalid_grant');
      problem(await tokenOf(integration.id, explorer.key), 404, 'USER_OAUTH_TOKEN_NOT_FOUND');
    });

    it('the token exchange goes through the outbound guard: a token URL on an address not allowed is 502, nothing stored', async () => {
      const port = new URL(idp.tokenUrl).port;
      const integration = await create({ tokenUrl: `http://[::1]:${port}/token` });
      const returned = await idp.authorize(await initiate(integration.id, explorer.key), REDIRECT_URI);
      const res = problem(await callback(returned), 502, 'OAUTH_PROVIDER_UNAVAILABLE');
      expect(res.detail).toContain('provider_refused');
      problem(await tokenOf(integration.id, explorer.key), 404, 'USER_OAUTH_TOKEN_NOT_FOUND');
    });

    it('a token endpoint that answers something other than tokens (a 200 page, a 503) is 502 OAUTH_PROVIDER_UNAVAILABLE', async () => {
      const answers = [
        { status: 200, body: '<html>sign in</html>' },
        { status: 503, body: '' },
      ];
      const odd = http.createServer((_req, res) => {
        const next = answers.shift() ?? { status: 500, body: '' };
        res.writeHead(next.status).end(next.body);
      });
      await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
      try {
        const integration = await create({ tokenUrl: `http://127.0.0.1:${(odd.address() as AddressInfo).port}/token` });
        for (let i = 0; i < 2; i++) {
          const returned = await idp.authorize(await initiate(integration.id, explorer.key), REDIRECT_URI);
          problem(await callback(returned), 502, 'OAUTH_PROVIDER_UNAVAILABLE');
        }
        problem(await tokenOf(integration.id, explorer.key), 404, 'USER_OAUTH_TOKEN_NOT_FOUND');
      } finally {
        odd.close();
      }
    });

    it('a failed refresh marks the token REFRESH_FAILED with lastError, keeps the token in hand until it expires, then reports EXPIRED', async () => {
      const integration = await create();
      expect((await callback(await idp.authorize(await initiate(integration.id, explorer.key), REDIRECT_URI))).statusCode).toBe(200);
      const { accessToken, refreshToken } = await stored(integration.id, explorer.userId);
      // The provider forgets the grant (revoked there): the next refresh fails.
      await fetch(idp.revocationUrl, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${idp.clientId}:${idp.clientSecret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ token: refreshToken!, token_type_hint: 'refresh_token' }),
      });
      clock.offsetMs = 59 * MINUTE;
      try {
        const inHand = await t.app.services.userOAuthTokens.currentAccessToken(t.tenantId, explorer.userId, integration.id);
        expect(inHand?.accessToken).toBe(accessToken);
        const token = (await tokenOf(integration.id, explorer.key)).json() as UserToken;
        expect(token.status).toBe('REFRESH_FAILED');
        expect(token.lastError).toMatchObject({ error: 'invalid_grant', during: 'refresh' });
        clock.offsetMs = 61 * MINUTE;
        expect(await t.app.services.userOAuthTokens.currentAccessToken(t.tenantId, explorer.userId, integration.id)).toBeNull();
      } finally {
        clock.offsetMs = 0;
      }
      // A new authorization replaces it and clears the failure.
      expect((await callback(await idp.authorize(await initiate(integration.id, explorer.key), REDIRECT_URI))).statusCode).toBe(200);
      expect((await tokenOf(integration.id, explorer.key)).json()).toMatchObject({ status: 'ACTIVE', lastError: null });
    });

    it('a user sees only their own tokens', async () => {
      const integration = await create();
      expect((await callback(await idp.authorize(await initiate(integration.id, viewer.key), REDIRECT_URI))).statusCode).toBe(200);
      const mine = (await t.request({ url: '/api/v1/user-oauth-tokens', key: viewer.key })).json() as UserToken[];
      expect(mine.every((tok) => tok.userId === viewer.userId)).toBe(true);
      const admins = (await t.request({ url: '/api/v1/user-oauth-tokens' })).json() as UserToken[];
      expect(admins.every((tok) => tok.userId === t.admin.userId)).toBe(true);
      problem(await tokenOf(integration.id, t.admin.key), 404, 'USER_OAUTH_TOKEN_NOT_FOUND');
      problem(await t.request({ method: 'DELETE', url: `/api/v1/user-oauth-tokens/${integration.id}` }), 404, 'USER_OAUTH_TOKEN_NOT_FOUND');
      expect((await tokenOf(integration.id, viewer.key)).statusCode).toBe(200);
    });

    it('every sealed OAuth value opens under the context its column declares, so `secrets re-encrypt` can move it to a new key', async () => {
      const integration = await create();
      await initiate(integration.id, explorer.key);
      expect((await callback(await idp.authorize(await initiate(integration.id, explorer.key), REDIRECT_URI))).statusCode).toBe(200);
      for (const column of oauthSecretColumns) {
        const rows = (await t.store.db
          .selectFrom(column.table as 'oauth_states')
          .selectAll()
          .execute()) as unknown as Array<Record<string, unknown>>;
        const sealed = rows.filter((row) => row[column.value] !== null);
        expect(sealed.length, column.table).toBeGreaterThan(0);
        for (const row of sealed)
          expect(() => t.app.services.secrets.open(String(row[column.value]), column.context(row)), `${column.table}.${column.value}`).not.toThrow();
      }
    });

    it('the callback is limited per client address (30 a minute), with 429 and Retry-After', async () => {
      const limited = await TestApp.create(dialect, { rateLimitPerMinute: 10_000 });
      try {
        for (let i = 0; i < 30; i++)
          problem(await limited.request({ url: `/api/v1/oauth-integrations/callback?state=s${i}&code=c`, key: null }), 400, 'OAUTH_STATE_INVALID');
        const over = await limited.request({ url: '/api/v1/oauth-integrations/callback?state=s&code=c', key: null });
        problem(over, 429, 'RATE_LIMITED');
        expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
        // A HEAD is not answered by the callback (it would spend the state).
        expect((await limited.app.inject({ method: 'HEAD', url: '/api/v1/oauth-integrations/callback?state=s' })).statusCode).not.toBe(200);
      } finally {
        await limited.close();
      }
    });

    it('no secret ever appears in a response or a log line', async () => {
      logs.length = 0;
      const responses: string[] = [];
      const integration = await create();
      const authorizationUrl = await initiate(integration.id, explorer.key);
      const returned = await idp.authorize(authorizationUrl, REDIRECT_URI);
      const done = await callback(returned);
      responses.push(
        done.body,
        (await tokenOf(integration.id, explorer.key)).body,
        (await t.request({ url: '/api/v1/user-oauth-tokens', key: explorer.key })).body,
      );
      responses.push(
        (await t.request({ url: `/api/v1/oauth-integrations/${integration.id}` })).body,
        (await t.request({ url: '/api/v1/oauth-integrations' })).body,
      );
      const first = await stored(integration.id, explorer.userId);
      clock.offsetMs = 59 * MINUTE;
      try {
        await t.app.services.userOAuthTokens.currentAccessToken(t.tenantId, explorer.userId, integration.id);
      } finally {
        clock.offsetMs = 0;
      }
      const second = await stored(integration.id, explorer.userId);
      responses.push((await t.request({ method: 'DELETE', url: `/api/v1/user-oauth-tokens/${integration.id}`, key: explorer.key })).body);
      const secrets = {
        clientSecret: idp.clientSecret,
        code: returned.searchParams.get('code')!,
        state: returned.searchParams.get('state')!,
        accessToken: first.accessToken,
        refreshToken: first.refreshToken!,
        refreshedAccessToken: second.accessToken,
        refreshedRefreshToken: second.refreshToken!,
      };
      expect(logs.length).toBeGreaterThan(5);
      // The callback's request line is there, without its query.
      expect(logs.some((l) => l.includes('/api/v1/oauth-integrations/callback?[redacted]'))).toBe(true);
      const text = `${logs.join('\n')}\n${responses.join('\n')}`;
      for (const [name, value] of Object.entries(secrets)) {
        expect(value.length, name).toBeGreaterThan(8);
        expect(text.includes(value), `${name} leaked`).toBe(false);
      }
    });
  });
});
