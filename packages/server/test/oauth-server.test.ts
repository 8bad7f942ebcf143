import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashOf } from '../src/areas/oauth/oauth.adapter.js';
import { DIALECTS, TestApp, problem } from './harness.js';
import { CLI_CLIENT, deviceTokens, oauthPost, pollDevice, startDevice, type TokenSet } from './oauth-harness.js';

/*
 * Reference 5.0: the REST token is an API key or an OAuth access token from the platform's own
 * OAuth flow; the command-line client gets one by the device flow and refreshes it. The server is
 * that authorization server (oidc-provider), issuer https://<host>/oauth.
 */
describe.each(DIALECTS)('OAuth authorization server (%s)', (dialect) => {
  let t: TestApp;
  const logged: string[] = [];
  let deploymentA: number;
  let deploymentB: number;

  beforeAll(async () => {
    t = await TestApp.create(dialect, { logger: { level: 'info', stream: { write: (line: string) => void logged.push(line) } } });
    deploymentA = await t.deployment('a');
    deploymentB = await t.deployment('b');
  });
  afterAll(async () => t?.close());

  const me = (token: string) => t.request({ url: '/api/v1/users/me', key: token });

  it('serves its metadata at /oauth/.well-known/openid-configuration and at the RFC 8414 address, issuer https://<host>/oauth', async () => {
    const oidc = await t.app.inject({ method: 'GET', url: '/oauth/.well-known/openid-configuration' });
    const rfc8414 = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server/oauth' });
    expect(oidc.statusCode, oidc.body).toBe(200);
    expect(rfc8414.statusCode, rfc8414.body).toBe(200);
    const meta = oidc.json() as Record<string, unknown>;
    expect(rfc8414.json()).toEqual(meta);
    expect(meta).toMatchObject({
      issuer: 'https://localhost/oauth',
      token_endpoint: 'https://localhost/oauth/token',
      device_authorization_endpoint: 'https://localhost/oauth/device/auth',
      revocation_endpoint: 'https://localhost/oauth/token/revocation',
      introspection_endpoint: 'https://localhost/oauth/token/introspection',
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
    });
    expect(meta.grant_types_supported).toEqual(
      expect.arrayContaining(['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code']),
    );
    expect(meta.grant_types_supported).not.toContain('implicit');
    // The host's root discovery document belongs to the workload-identity issuer, not to this one.
    expect((await t.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).statusCode).toBe(404);
  });

  it('device flow (RFC 8628): the device waits, an admin approves, its next poll gets tokens that are REST credentials on /api/v1 and /build/api/v1', async () => {
    const started = await startDevice(t);
    expect(started.verification_uri).toBe('https://localhost/oauth/device');
    expect(started.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(started.expires_in).toBe(600);
    const pending = await pollDevice(t, started.device_code);
    expect(pending.statusCode).toBe(400);
    expect(pending.json()).toMatchObject({ error: 'authorization_pending' });

    const approved = await t.request({ method: 'POST', url: '/api/v1/oauth/device-approvals', body: { userCode: started.user_code.toLowerCase() } });
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json()).toEqual({ userId: t.admin.userId, clientId: CLI_CLIENT, deploymentIds: null });

    const res = await pollDevice(t, started.device_code);
    expect(res.statusCode, res.body).toBe(200);
    const tokens = res.json() as TokenSet;
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    expect(tokens.refresh_token).toEqual(expect.any(String));
    expect((await me(tokens.access_token)).json()).toMatchObject({ id: t.admin.userId });
    const files = await t.request({ url: `/build/api/v1/deployments/${deploymentA}/data-model/files`, key: tokens.access_token });
    expect(files.statusCode, files.body).toBe(200);
    // A device code is exchanged once.
    expect((await pollDevice(t, started.device_code)).json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('approving a device: admin only, an unknown or used code is 404, the user must be active in this tenant', async () => {
    const started = await startDevice(t);
    const explorer = await t.user('EXPLORER');
    problem(
      await t.request({ method: 'POST', url: '/api/v1/oauth/device-approvals', key: explorer.key, body: { userCode: started.user_code } }),
      403,
      'FORBIDDEN',
    );
    problem(await t.request({ method: 'POST', url: '/api/v1/oauth/device-approvals', body: { userCode: 'BBBB-BBBB' } }), 404, 'DEVICE_CODE_NOT_FOUND');
    problem(
      await t.request({ method: 'POST', url: '/api/v1/oauth/device-approvals', body: { userCode: started.user_code, userId: 999_999 } }),
      404,
      'USER_NOT_FOUND',
    );
    const other = await t.tenant('oauth-other', ['oauth-other.example.com']);
    // Another tenant's admin, on its own host, cannot see this tenant's device codes.
    problem(
      await t.request({
        method: 'POST',
        url: '/api/v1/oauth/device-approvals',
        key: other.admin.key,
        host: 'oauth-other.example.com',
        body: { userCode: started.user_code, userId: other.admin.userId },
      }),
      404,
      'DEVICE_CODE_NOT_FOUND',
    );
    const approved = await t.request({ method: 'POST', url: '/api/v1/oauth/device-approvals', body: { userCode: started.user_code, userId: explorer.userId } });
    expect(approved.json()).toMatchObject({ userId: explorer.userId });
    problem(await t.request({ method: 'POST', url: '/api/v1/oauth/device-approvals', body: { userCode: started.user_code } }), 404, 'DEVICE_CODE_NOT_FOUND');
  });

  it('a token acts as the approving user: an explorer gets an explorer’s refusals (403), exactly as with their key', async () => {
    const explorer = await t.user('EXPLORER');
    const token = (await deviceTokens(t, { userId: explorer.userId })).access_token;
    expect((await me(token)).json()).toMatchObject({ id: explorer.userId, email: explorer.email });
    const withKey = await t.request({ method: 'POST', url: '/api/v1/users', key: explorer.key, body: { email: 'nope@example.com' } });
    const withToken = await t.request({ method: 'POST', url: '/api/v1/users', key: token, body: { email: 'nope@example.com' } });
    expect(withToken.statusCode).toBe(withKey.statusCode);
    problem(withToken, 403, 'FORBIDDEN');
  });

  it('scope deployments:<id> limits the token to those deployments: another is 403 KEY_SCOPE_FORBIDDEN (spec: Authentication 4)', async () => {
    const started = await startDevice(t, `deployments:${deploymentA} offline_access`);
    const approved = await t.request({ method: 'POST', url: '/api/v1/oauth/device-approvals', body: { userCode: started.user_code } });
    expect(approved.json()).toMatchObject({ deploymentIds: [deploymentA] });
    const tokens = (await pollDevice(t, started.device_code)).json() as TokenSet;
    expect(tokens.scope).toBe(`deployments:${deploymentA} offline_access`);
    expect((await t.request({ url: `/api/v1/deployments/${deploymentA}`, key: tokens.access_token })).statusCode).toBe(200);
    problem(await t.request({ url: `/api/v1/deployments/${deploymentB}`, key: tokens.access_token }), 403, 'KEY_SCOPE_FORBIDDEN');
    // Account-wide changes need an unscoped credential, as with keys.
    problem(
      await t.request({ method: 'POST', url: '/api/v1/users', key: tokens.access_token, body: { email: 'scoped@example.com' } }),
      403,
      'KEY_SCOPE_FORBIDDEN',
    );
    // The refreshed token keeps the scope.
    const refreshed = (
      await oauthPost(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: CLI_CLIENT })
    ).json() as TokenSet;
    problem(await t.request({ url: `/api/v1/deployments/${deploymentB}`, key: refreshed.access_token }), 403, 'KEY_SCOPE_FORBIDDEN');
  });

  it('refresh tokens rotate: the new pair works, the old refresh token is refused, and replaying it revokes the sign-in', async () => {
    const first = await deviceTokens(t);
    const res = await oauthPost(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: first.refresh_token!, client_id: CLI_CLIENT });
    expect(res.statusCode, res.body).toBe(200);
    const second = res.json() as TokenSet;
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect((await me(second.access_token)).statusCode).toBe(200);
    const replay = await oauthPost(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: first.refresh_token!, client_id: CLI_CLIENT });
    expect(replay.statusCode).toBe(400);
    expect(replay.json()).toMatchObject({ error: 'invalid_grant' });
    // A replayed refresh token means it leaked: the whole sign-in is revoked, on the next request.
    problem(await me(second.access_token), 401, 'UNAUTHENTICATED');
    expect(
      (await oauthPost(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: second.refresh_token!, client_id: CLI_CLIENT })).json(),
    ).toMatchObject({ error: 'invalid_grant' });
  });

  it('revocation (RFC 7009) applies to the very next request, and revoking either token ends the whole sign-in', async () => {
    const a = await deviceTokens(t);
    expect((await me(a.access_token)).statusCode).toBe(200);
    expect((await me(a.access_token)).statusCode).toBe(200);
    const revoked = await oauthPost(t, '/oauth/token/revocation', { token: a.access_token, client_id: CLI_CLIENT });
    expect(revoked.statusCode).toBe(200);
    const refused = problem(await me(a.access_token), 401, 'UNAUTHENTICATED');
    expect(refused.detail).toMatch(/access token is not valid/);
    expect((await oauthPost(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: a.refresh_token!, client_id: CLI_CLIENT })).json()).toMatchObject({
      error: 'invalid_grant',
    });

    const b = await deviceTokens(t);
    expect((await me(b.access_token)).statusCode).toBe(200);
    await oauthPost(t, '/oauth/token/revocation', { token: b.refresh_token!, client_id: CLI_CLIENT });
    problem(await me(b.access_token), 401, 'UNAUTHENTICATED');
    expect((await oauthPost(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: b.refresh_token!, client_id: CLI_CLIENT })).json()).toMatchObject({
      error: 'invalid_grant',
    });
  });

  it('introspection (RFC 7662): active with its user, scope and expiry; inactive once revoked', async () => {
    const started = await startDevice(t, `deployments:${deploymentB}`);
    await t.request({ method: 'POST', url: '/api/v1/oauth/device-approvals', body: { userCode: started.user_code } });
    const tokens = (await pollDevice(t, started.device_code)).json() as TokenSet;
    const live = await oauthPost(t, '/oauth/token/introspection', { token: tokens.access_token, client_id: CLI_CLIENT });
    expect(live.statusCode, live.body).toBe(200);
    expect(live.json()).toMatchObject({
      active: true,
      sub: String(t.admin.userId),
      client_id: CLI_CLIENT,
      scope: `deployments:${deploymentB}`,
      token_type: 'Bearer',
      iss: 'https://localhost/oauth',
    });
    await oauthPost(t, '/oauth/token/revocation', { token: tokens.access_token, client_id: CLI_CLIENT });
    expect((await oauthPost(t, '/oauth/token/introspection', { token: tokens.access_token, client_id: CLI_CLIENT })).json()).toEqual({ active: false });
  });

  it('an expired access token is 401 with WWW-Authenticate', async () => {
    const tokens = await deviceTokens(t);
    // Its hour has passed, as the store sees it (a cached token is compared with the clock on each request).
    await t.store.db
      .updateTable('oauth_models')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('key_hash', '=', hashOf(tokens.access_token))
      .execute();
    const res = await me(tokens.access_token);
    const body = problem(res, 401, 'UNAUTHENTICATED');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="mapi", error="invalid_token"/);
    expect(body.detail).toMatch(/not valid|expired/);
  });

  it("a deactivated user's token is 401 on the next request, and cannot be refreshed", async () => {
    const user = await t.user('DEVELOPER');
    const tokens = await deviceTokens(t, { userId: user.userId });
    expect((await me(tokens.access_token)).statusCode).toBe(200);
    await t.store.db.updateTable('users').set({ deactivated_at: new Date().toISOString() }).where('id', '=', user.userId).execute();
    problem(await me(tokens.access_token), 401, 'UNAUTHENTICATED');
    expect(
      (await oauthPost(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: CLI_CLIENT })).json(),
    ).toMatchObject({ error: 'invalid_grant' });
  });

  it('a token is refused on SCIM (API keys only) and on another tenant’s host', async () => {
    const tokens = await deviceTokens(t);
    const scim = await t.request({ url: '/api/scim/v2/Users', key: tokens.access_token });
    expect(scim.statusCode).toBe(401);
    problem(await t.request({ url: '/api/v1/users/me', key: tokens.access_token, host: 'oauth-other.example.com' }), 401, 'UNAUTHENTICATED');
  });

  it("a token is a REST credential on a deployment's data API too, with its deployment scope", async () => {
    const dataApi = (id: number, token: string) => t.request({ url: `/deployments/${id}/dev-mode/nope/data-api/v1/meta`, key: token });
    const all = await deviceTokens(t);
    problem(await dataApi(deploymentA, all.access_token), 404, 'ENVIRONMENT_NOT_FOUND');
    problem(await dataApi(deploymentA, t.admin.key), 404, 'ENVIRONMENT_NOT_FOUND');
    const scoped = await deviceTokens(t, { scope: `deployments:${deploymentB}` });
    problem(await dataApi(deploymentA, scoped.access_token), 403, 'KEY_SCOPE_FORBIDDEN');
  });

  it('no token, refresh token or device code appears in a response other than the token response, or in any log line', async () => {
    const started = await startDevice(t);
    await t.request({ method: 'POST', url: '/api/v1/oauth/device-approvals', body: { userCode: started.user_code } });
    const tokens = (await pollDevice(t, started.device_code)).json() as TokenSet;
    await me(tokens.access_token);
    await oauthPost(t, '/oauth/token/introspection', { token: tokens.access_token, client_id: CLI_CLIENT });
    await oauthPost(t, '/oauth/token/revocation', { token: tokens.refresh_token!, client_id: CLI_CLIENT });
    await me(tokens.access_token);
    const text = logged.join('\n');
    expect(text.length).toBeGreaterThan(0);
    for (const secret of [tokens.access_token, tokens.refresh_token!, started.device_code]) expect(text).not.toContain(secret);
    // The store keeps hashes of tokens, never a token.
    const rows = JSON.stringify(await t.store.db.selectFrom('oauth_models').selectAll().execute());
    for (const secret of [tokens.access_token, tokens.refresh_token!]) expect(rows).not.toContain(secret);
  });
});

describe.each(DIALECTS)('OAuth endpoints are limited per client address (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect, { rateLimitPerIpPerMinute: 5 });
  });
  afterAll(async () => t?.close());

  it('the sixth request in a minute from one address gets 429 with Retry-After, whatever the endpoint', async () => {
    for (let i = 0; i < 3; i++) expect((await t.app.inject({ method: 'GET', url: '/oauth/.well-known/openid-configuration' })).statusCode).toBe(200);
    for (let i = 0; i < 2; i++) expect((await pollDevice(t, 'x'.repeat(43))).statusCode).toBe(400);
    const res = await oauthPost(t, '/oauth/token', { grant_type: 'client_credentials', client_id: 'x', client_secret: 'y' });
    problem(res, 429, 'RATE_LIMITED');
    expect(res.headers['retry-after']).toEqual(expect.any(String));
    // Another address has its own budget.
    const elsewhere = await t.app.inject({ method: 'GET', url: '/oauth/.well-known/openid-configuration', remoteAddress: '10.0.0.9' });
    expect(elsewhere.statusCode).toBe(200);
  });
});

describe.each(DIALECTS)('the device flow in the browser (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
  });
  afterAll(async () => t?.close());

  /** A browser's cookies for this host: what the provider set, sent back on the next request. */
  const jar = new Map<string, string>();
  function remember(res: { headers: Record<string, unknown> }) {
    for (const line of [res.headers['set-cookie'] ?? []].flat() as string[]) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
  }
  const cookies = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const field = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';

  it('the verification page takes the code, asks to confirm it, then tells the user how an admin approves it', async () => {
    const started = await startDevice(t);
    const blank = await t.app.inject({ method: 'GET', url: '/oauth/device' });
    expect(blank.body).toContain('Sign in a device');
    // From verification_uri_complete the code is filled in and the form submits itself.
    const input = await t.app.inject({ method: 'GET', url: `/oauth/device?user_code=${started.user_code}` });
    expect(input.statusCode, input.body).toBe(200);
    remember(input);
    const confirm = await oauthPost(t, '/oauth/device', { xsrf: field(input.body, 'xsrf'), user_code: started.user_code }, { headers: { cookie: cookies() } });
    expect(confirm.statusCode, confirm.body).toBe(200);
    remember(confirm);
    expect(confirm.body).toContain('Confirm the device');
    expect(confirm.body).toContain(started.user_code);
    const confirmed = await oauthPost(
      t,
      '/oauth/device',
      { xsrf: field(confirm.body, 'xsrf'), user_code: field(confirm.body, 'user_code') || started.user_code, confirm: 'yes' },
      { headers: { cookie: cookies() } },
    );
    expect(confirmed.statusCode, confirmed.body).toBe(303);
    const location = String(confirmed.headers.location);
    expect(location).toMatch(/^\/oauth\/interaction\/[A-Za-z0-9_-]+$/);
    const interaction = await t.app.inject({ method: 'GET', url: location });
    expect(interaction.statusCode, interaction.body).toBe(200);
    expect(interaction.body).toContain(`approve-device ${started.user_code}`);
    // The admin approves; the device's poll gets its tokens.
    await t.request({ method: 'POST', url: '/api/v1/oauth/device-approvals', body: { userCode: started.user_code } });
    expect((await pollDevice(t, started.device_code)).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/oauth/interaction/unknown' })).statusCode).toBe(404);
  });
});
