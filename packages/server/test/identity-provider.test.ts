import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLIC_ROUTES } from '../src/http/auth.js';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';
import { Browser, startIdp, type IdpFixture } from './idp-fixture.js';
import { oauthPost, pollDevice, startDevice, type TokenSet } from './oauth-harness.js';

/** This server's callback, as the admin registers it with the identity provider (the default tenant answers on localhost). */
const CALLBACK = 'https://localhost/oauth/idp/callback';
const APP_REDIRECT = 'https://app.example.test/callback';
const S256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

interface IdentityProvider {
  issuer: string;
  clientId: string;
  allowedEmailDomains: string[];
  redirectUri: string;
  createdAt: string;
  updatedAt: string;
}

interface AppClient {
  id: number;
  clientId: string;
  clientSecret?: string;
  type: string;
  public: boolean;
  redirectUris: string[];
}

/*
 * Sign-in through the tenant's identity provider (issue 17, reference 5.0): the authorization
 * server's pages send the browser to the tenant's OpenID provider, match the user by a verified
 * email, and complete the device flow or an app's authorization code flow as that user. The
 * provider is a second real oidc-provider, with users of its own, driven over HTTP.
 */
describe.each(DIALECTS)('sign-in through the identity provider (%s)', (dialect) => {
  let t: TestApp;
  let idp: IdpFixture;
  let member: Caller;
  let gone: Caller;
  let deploymentA: number;
  let deploymentB: number;
  let other: { tenantId: number; admin: Caller };
  const logs: string[] = [];
  /** Every response body this server sent, to show no secret is ever in one. */
  const bodies: string[] = [];
  /** Codes, tokens and secrets the tests saw, to show none reaches a log line. */
  const seen: string[] = [];

  beforeAll(async () => {
    t = await TestApp.create(dialect, {
      // The identity provider runs on loopback, which the outbound guard refuses unless allowed.
      outbound: { allowPrivate: ['127.0.0.1/32'], retryBaseMs: 1 },
      logger: { level: 'trace', stream: { write: (line: string) => void logs.push(line) } },
    });
    member = await t.user('DEVELOPER', { email: 'Dana@Corp.example' });
    gone = await t.user('DEVELOPER', { email: 'gone@corp.example' });
    await t.store.db.updateTable('users').set({ deactivated_at: new Date().toISOString() }).where('id', '=', gone.userId).execute();
    await t.user('DEVELOPER', { email: 'eve@elsewhere.example' });
    deploymentA = await t.deployment('a');
    deploymentB = await t.deployment('b');
    for (const id of [deploymentA, deploymentB]) await t.grant({ type: 'USER', id: member.userId }, { type: 'DEPLOYMENT', id }, 'VIEW');
    other = await t.tenant('idp-other', ['idp-other.example.test']);
    idp = await startIdp({
      redirectUri: CALLBACK,
      accounts: [
        { sub: 'dana', email: 'dana@corp.example', email_verified: true },
        { sub: 'unverified', email: 'dana@corp.example', email_verified: false },
        { sub: 'stranger', email: 'stranger@corp.example', email_verified: true },
        { sub: 'gone', email: 'gone@corp.example', email_verified: true },
        { sub: 'eve', email: 'eve@elsewhere.example', email_verified: true },
        { sub: 'no-email' },
      ],
    });
    expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/settings', body: { auditLogEnabled: true } })).statusCode).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  const browser = () =>
    new Browser(async (request) => {
      const res = await t.app.inject(request);
      bodies.push(res.body);
      return res;
    });
  const configure = async (overrides: Record<string, unknown> = {}) => {
    const res = await t.request({
      method: 'PUT',
      url: '/api/v1/tenant/identity-provider',
      body: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, allowedEmailDomains: ['corp.example'], ...overrides },
    });
    bodies.push(res.body);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as IdentityProvider;
  };
  const me = (token: string) => t.request({ url: '/api/v1/users/me', key: token });
  const events = async (action: string) => {
    const res = await t.request({ url: `/api/v1/tenant/audit-events?action=${action}` });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { items: Array<Record<string, unknown>> }).items;
  };

  /** A device sign-in from the verification page up to the identity provider's redirect back (not followed). */
  async function deviceToCallback(b: Browser) {
    const started = await startDevice(t);
    const input = await b.go(started.verification_uri_complete);
    expect(input.status, input.body).toBe(200);
    const field = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
    const confirm = await b.go('/oauth/device', { method: 'POST', form: { xsrf: field(input.body, 'xsrf'), user_code: started.user_code } });
    expect(confirm.body).toContain('Confirm the device');
    const atCallback = await b.go('/oauth/device', {
      method: 'POST',
      form: { xsrf: field(confirm.body, 'xsrf'), user_code: started.user_code, confirm: 'yes' },
      stopAt: (url) => url.href.startsWith(CALLBACK),
    });
    expect(atCallback.location?.href, atCallback.body).toMatch(/^https:\/\/localhost\/oauth\/idp\/callback\?/);
    return { started, callback: atCallback.location! };
  }

  describe('settings', () => {
    it('PUT sets the provider and answers it without the secret, with the callback to register; GET reads it; admins only', async () => {
      problem(await t.request({ url: '/api/v1/tenant/identity-provider' }), 404, 'IDENTITY_PROVIDER_NOT_FOUND');
      // The secret is required the first time.
      const first = problem(
        await t.request({
          method: 'PUT',
          url: '/api/v1/tenant/identity-provider',
          body: { issuer: idp.issuer, clientId: idp.clientId, allowedEmailDomains: ['corp.example'] },
        }),
        400,
        'VALIDATION_FAILED',
      );
      expect(first.errors).toEqual([{ pointer: '/body/clientSecret', message: 'is required the first time' }]);
      const saved = await configure({ allowedEmailDomains: ['Corp.Example'] });
      expect(saved).toEqual({
        issuer: idp.issuer,
        clientId: idp.clientId,
        allowedEmailDomains: ['corp.example'],
        redirectUri: CALLBACK,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const read = await t.request({ url: '/api/v1/tenant/identity-provider' });
      bodies.push(read.body);
      expect(read.json()).toEqual(saved);
      // A PUT without the secret keeps the stored one (the sign-ins below use it).
      await configure({ clientSecret: undefined });
      const row = await t.store.db.selectFrom('identity_providers').selectAll().where('tenant_id', '=', t.tenantId).executeTakeFirstOrThrow();
      expect(row.client_secret).not.toContain(idp.clientSecret);
    });

    it('refuses an issuer that is not https (http only on loopback), and domains that are not domains', async () => {
      const bad = problem(
        await t.request({
          method: 'PUT',
          url: '/api/v1/tenant/identity-provider',
          body: { issuer: 'http://idp.example.com', clientId: 'x', clientSecret: 'y', allowedEmailDomains: ['corp.example'] },
        }),
        400,
        'VALIDATION_FAILED',
      );
      expect(bad.errors?.[0]?.pointer).toBe('/body/issuer');
      problem(
        await t.request({
          method: 'PUT',
          url: '/api/v1/tenant/identity-provider',
          body: { issuer: 'https://idp.example.com', clientId: 'x', clientSecret: 'y', allowedEmailDomains: ['@corp'] },
        }),
        400,
        'VALIDATION_FAILED',
      );
      problem(
        await t.request({
          method: 'PUT',
          url: '/api/v1/tenant/identity-provider',
          body: { issuer: 'https://idp.example.com', clientId: 'x', clientSecret: 'y', allowedEmailDomains: [] },
        }),
        400,
        'VALIDATION_FAILED',
      );
      expect((await t.request({ url: '/api/v1/tenant/identity-provider' })).json()).toMatchObject({ issuer: idp.issuer });
    });

    it('non-admins get 403 on read and write; a scoped admin key cannot write; another tenant sees none of it (404)', async () => {
      const explorer = await t.user('EXPLORER');
      problem(await t.request({ url: '/api/v1/tenant/identity-provider', key: explorer.key }), 403, 'FORBIDDEN');
      problem(
        await t.request({
          method: 'PUT',
          url: '/api/v1/tenant/identity-provider',
          key: explorer.key,
          body: { issuer: idp.issuer, clientId: 'x', clientSecret: 'y', allowedEmailDomains: ['corp.example'] },
        }),
        403,
        'FORBIDDEN',
      );
      problem(await t.request({ method: 'DELETE', url: '/api/v1/tenant/identity-provider', key: explorer.key }), 403, 'FORBIDDEN');
      const scoped = await t.key(t.admin.userId, { deploymentIds: [deploymentA] });
      problem(
        await t.request({
          method: 'PUT',
          url: '/api/v1/tenant/identity-provider',
          key: scoped,
          body: { issuer: idp.issuer, clientId: 'x', clientSecret: 'y', allowedEmailDomains: ['corp.example'] },
        }),
        403,
        'KEY_SCOPE_FORBIDDEN',
      );
      problem(
        await t.request({ url: '/api/v1/tenant/identity-provider', key: other.admin.key, host: 'idp-other.example.test' }),
        404,
        'IDENTITY_PROVIDER_NOT_FOUND',
      );
      problem(
        await t.request({ method: 'DELETE', url: '/api/v1/tenant/identity-provider', key: other.admin.key, host: 'idp-other.example.test' }),
        404,
        'IDENTITY_PROVIDER_NOT_FOUND',
      );
      // This tenant's key on the other tenant's host is no credential there.
      expect((await t.request({ url: '/api/v1/tenant/identity-provider', host: 'idp-other.example.test' })).statusCode).toBe(401);
      expect((await t.request({ url: '/api/v1/tenant/identity-provider' })).json()).toMatchObject({ issuer: idp.issuer });
    });

    it('the callback is a credential-less route with its own per-address budget', () => {
      expect(PUBLIC_ROUTES.get('GET /oauth/idp/callback')).toBe(30);
      expect(PUBLIC_ROUTES.get('POST /oauth/interaction/:uid/consent')).toBe('default');
    });
  });

  describe('device flow', () => {
    it('the verification page sends the user to the identity provider; back with a verified email, the device gets tokens acting as that user', async () => {
      idp.signInAs('dana');
      const b = browser();
      const { started, callback } = await deviceToCallback(b);
      expect((await pollDevice(t, started.device_code)).json()).toMatchObject({ error: 'authorization_pending' });
      const done = await b.go(callback);
      expect(done.status, done.body).toBe(200);
      expect(done.body).toContain('Device signed in');
      // The user as this account knows them.
      expect(done.body).toContain('Dana@Corp.example');
      const res = await pollDevice(t, started.device_code);
      expect(res.statusCode, res.body).toBe(200);
      const tokens = res.json() as TokenSet;
      seen.push(tokens.access_token, tokens.refresh_token!, started.device_code);
      expect((await me(tokens.access_token)).json()).toMatchObject({ id: member.userId });
      // The sign-in is in the audit log, with the user and the provider.
      expect((await events('sign-in'))[0]).toMatchObject({
        action: 'sign-in',
        actorUserId: member.userId,
        credentialKind: 'identity-provider',
        details: { issuer: idp.issuer, clientId: 'mapi-cli', flow: 'device' },
      });
    });

    it('the provider’s discovery document is read once for many sign-ins, and again when the settings change', async () => {
      const before = idp.discoveries();
      for (let i = 0; i < 3; i++) {
        const b = browser();
        await deviceToCallback(b);
      }
      expect(idp.discoveries() - before).toBeLessThanOrEqual(1);
      // Another client secret is another configuration: discovered anew (the sign-in only goes as far as the provider here).
      const settings = (await t.request({ url: '/api/v1/tenant/identity-provider' })).json<Record<string, unknown>>();
      const put = (clientSecret: string) =>
        t.request({
          method: 'PUT',
          url: '/api/v1/tenant/identity-provider',
          body: { issuer: settings.issuer, clientId: settings.clientId, clientSecret, allowedEmailDomains: settings.allowedEmailDomains },
        });
      expect((await put('another-secret')).statusCode).toBe(200);
      const changed = idp.discoveries();
      await deviceToCallback(browser());
      expect(idp.discoveries()).toBe(changed + 1);
      expect((await put(idp.clientSecret)).statusCode).toBe(200);
    });

    it('a callback is single use: replayed, it is refused and issues nothing', async () => {
      idp.signInAs('dana');
      const b = browser();
      const { started, callback } = await deviceToCallback(b);
      // The same redirect from another browser (no binding cookie) is refused, and leaves the sign-in to its own browser.
      const foreign = await browser().go(callback);
      expect(foreign.status).toBe(400);
      expect(foreign.body).toContain('another browser');
      expect((await b.go(callback)).body).toContain('Device signed in');
      expect((await pollDevice(t, started.device_code)).statusCode).toBe(200);
      const replayed = await b.go(callback);
      expect(replayed.status).toBe(400);
      expect(replayed.body).toContain('not valid any more');
      expect(replayed.body).toContain('Nothing was issued');
    });

    it('two sign-ins started in one browser (two tabs) each complete, in either order', async () => {
      idp.signInAs('dana');
      const b = browser();
      const first = await deviceToCallback(b);
      const second = await deviceToCallback(b);
      expect((await b.go(second.callback)).body).toContain('Device signed in');
      expect((await b.go(first.callback)).body).toContain('Device signed in');
      for (const { started } of [first, second]) expect((await pollDevice(t, started.device_code)).statusCode).toBe(200);
    });

    it('a wrong or missing state is refused with a page, and issues nothing', async () => {
      for (const query of ['?code=abc&state=not-a-state', '?code=abc', '']) {
        const res = await t.app.inject({ method: 'GET', url: `/oauth/idp/callback${query}` });
        expect(res.statusCode).toBe(400);
        expect(res.headers['content-type']).toMatch(/text\/html/);
        expect(res.body).toContain('Sign-in refused');
      }
      expect((await events('sign-in.refused'))[0]).toMatchObject({ details: { reason: 'state_invalid' } });
    });

    it.each([
      ['unverified', 'is not verified', 'email_unverified'],
      ['stranger', 'No user of this account', 'unknown_user'],
      ['gone', 'is deactivated', 'user_deactivated'],
      ['eve', 'may not sign in to this account', 'domain_not_allowed'],
      ['no-email', 'did not share an email address', 'no_email'],
    ])('the identity provider’s user "%s" gets a clear error page and the device nothing', async (sub, message, reason) => {
      idp.signInAs(sub);
      const b = browser();
      const { started, callback } = await deviceToCallback(b);
      const page = await b.go(callback);
      expect(page.status).toBe(403);
      expect(page.body).toContain('Sign-in refused');
      expect(page.body).toContain(message);
      expect((await pollDevice(t, started.device_code)).json()).toMatchObject({ error: 'authorization_pending' });
      expect((await events('sign-in.refused'))[0]).toMatchObject({ action: 'sign-in.refused', details: { reason, issuer: idp.issuer } });
    });

    it('an identity provider the outbound guard refuses is a page saying it cannot be reached, not a sign-in', async () => {
      const guarded = await TestApp.create(dialect);
      try {
        await guarded.request({
          method: 'PUT',
          url: '/api/v1/tenant/identity-provider',
          body: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, allowedEmailDomains: ['corp.example'] },
        });
        const b = new Browser((request) => guarded.app.inject(request));
        const started = await startDevice(guarded);
        const input = await b.go(started.verification_uri_complete);
        const field = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
        const confirm = await b.go('/oauth/device', { method: 'POST', form: { xsrf: field(input.body, 'xsrf'), user_code: started.user_code } });
        const page = await b.go('/oauth/device', { method: 'POST', form: { xsrf: field(confirm.body, 'xsrf'), user_code: started.user_code, confirm: 'yes' } });
        expect(page.status).toBe(502);
        expect(page.body).toContain('could not be reached');
      } finally {
        await guarded.close();
      }
    });
  });

  describe('authorization code with PKCE for apps', () => {
    let confidential: AppClient;
    let publicApp: AppClient;

    beforeAll(async () => {
      const made = await t.request({
        method: 'POST',
        url: '/api/v1/oauth-clients',
        body: { name: 'Reporting app', type: 'app', redirectUris: [APP_REDIRECT] },
      });
      expect(made.statusCode, made.body).toBe(201);
      bodies.push(made.body.replace((made.json() as AppClient).clientSecret!, '[shown once]'));
      confidential = made.json() as AppClient;
      const pub = await t.request({
        method: 'POST',
        url: '/api/v1/oauth-clients',
        body: { name: 'Browser app', type: 'app', public: true, redirectUris: [APP_REDIRECT] },
      });
      expect(pub.statusCode, pub.body).toBe(201);
      publicApp = pub.json() as AppClient;
    });

    function authorizeUrl(client: AppClient, options: { scope?: string; challenge?: string | null; method?: string; state?: string } = {}) {
      const query = new URLSearchParams({
        client_id: client.clientId,
        redirect_uri: APP_REDIRECT,
        response_type: 'code',
        scope: options.scope ?? 'openid',
        state: options.state ?? 'app-state-1',
      });
      if (options.challenge !== null) query.set('code_challenge', options.challenge ?? S256('v'.repeat(43)));
      if (options.method !== undefined) query.set('code_challenge_method', options.method);
      else if (options.challenge !== null) query.set('code_challenge_method', 'S256');
      return `/oauth/auth?${query.toString()}`;
    }
    const toApp = (url: URL) => url.href.startsWith(APP_REDIRECT);

    /** The whole browser part: sign in at the identity provider, consent; answers the app's redirect. */
    async function authorize(client: AppClient, verifier: string, scope: string) {
      idp.signInAs('dana');
      const b = browser();
      const consent = await b.go(authorizeUrl(client, { scope, challenge: S256(verifier) }), { stopAt: toApp });
      expect(consent.status, consent.body).toBe(200);
      expect(consent.body).toContain('Allow access?');
      const action = /action="([^"]+)"/.exec(consent.body)![1]!;
      const back = await b.go(action, { method: 'POST', form: { decision: 'allow' }, stopAt: toApp });
      expect(back.location?.href, back.body).toMatch(/^https:\/\/app\.example\.test\/callback\?/);
      return { b, consent, redirect: back.location! };
    }

    it('signs the user in through the identity provider, shows and records consent, and the code becomes a token acting as that user within the consented deployments', async () => {
      const verifier = randomBytes(32).toString('base64url');
      const { consent, redirect } = await authorize(confidential, verifier, `openid offline_access deployments:${deploymentA}`);
      expect(consent.body).toContain('Reporting app');
      expect(consent.body).toContain(`deployment ${deploymentA}`);
      expect(consent.body).toContain('Dana@Corp.example');
      expect(redirect.searchParams.get('state')).toBe('app-state-1');
      const code = redirect.searchParams.get('code')!;
      const basic = `Basic ${Buffer.from(`${confidential.clientId}:${confidential.clientSecret}`).toString('base64')}`;
      const res = await oauthPost(
        t,
        '/oauth/token',
        { grant_type: 'authorization_code', code, redirect_uri: APP_REDIRECT, code_verifier: verifier },
        { headers: { authorization: basic } },
      );
      expect(res.statusCode, res.body).toBe(200);
      const tokens = res.json() as TokenSet & { id_token: string };
      seen.push(code, tokens.access_token, tokens.refresh_token!, tokens.id_token, confidential.clientSecret!);
      expect((await me(tokens.access_token)).json()).toMatchObject({ id: member.userId });
      expect((await t.request({ url: `/api/v1/deployments/${deploymentA}`, key: tokens.access_token })).statusCode).toBe(200);
      problem(await t.request({ url: `/api/v1/deployments/${deploymentB}`, key: tokens.access_token }), 403, 'KEY_SCOPE_FORBIDDEN');
      // It refreshes, with rotation, and keeps its deployments.
      const refreshed = await oauthPost(
        t,
        '/oauth/token',
        { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! },
        { headers: { authorization: basic } },
      );
      expect(refreshed.statusCode, refreshed.body).toBe(200);
      const second = (refreshed.json() as TokenSet).access_token;
      problem(await t.request({ url: `/api/v1/deployments/${deploymentB}`, key: second }), 403, 'KEY_SCOPE_FORBIDDEN');
      expect((await me(second)).statusCode).toBe(200);
      // The code works once; presented again, it ends the sign-in it made (RFC 6749 section 4.1.2).
      expect(
        (
          await oauthPost(
            t,
            '/oauth/token',
            { grant_type: 'authorization_code', code, redirect_uri: APP_REDIRECT, code_verifier: verifier },
            { headers: { authorization: basic } },
          )
        ).json(),
      ).toMatchObject({ error: 'invalid_grant' });
      problem(await me(second), 401, 'UNAUTHENTICATED');
      expect((await events('oauth.consent.allowed'))[0]).toMatchObject({
        actorUserId: member.userId,
        details: { clientId: confidential.clientId, scope: `deployments:${deploymentA}` },
      });
      expect((await events('sign-in'))[0]).toMatchObject({
        actorUserId: member.userId,
        details: { flow: 'authorization_code', clientId: confidential.clientId },
      });
    });

    it('a public app exchanges its code with PKCE alone; a wrong verifier or none is refused', async () => {
      const verifier = randomBytes(32).toString('base64url');
      const { redirect } = await authorize(publicApp, verifier, 'openid');
      const code = redirect.searchParams.get('code')!;
      const exchange = (form: Record<string, string>) =>
        oauthPost(t, '/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: APP_REDIRECT, client_id: publicApp.clientId, ...form });
      expect((await exchange({})).json()).toMatchObject({ error: expect.stringMatching(/invalid_grant|invalid_request/) });
      const again = await authorize(publicApp, verifier, 'openid');
      const code2 = again.redirect.searchParams.get('code')!;
      const wrong = await oauthPost(t, '/oauth/token', {
        grant_type: 'authorization_code',
        code: code2,
        redirect_uri: APP_REDIRECT,
        client_id: publicApp.clientId,
        code_verifier: 'w'.repeat(43),
      });
      expect(wrong.json()).toMatchObject({ error: 'invalid_grant' });
      const third = await authorize(publicApp, verifier, 'openid');
      const ok = await oauthPost(t, '/oauth/token', {
        grant_type: 'authorization_code',
        code: third.redirect.searchParams.get('code')!,
        redirect_uri: APP_REDIRECT,
        client_id: publicApp.clientId,
        code_verifier: verifier,
      });
      expect(ok.statusCode, ok.body).toBe(200);
      const token = (ok.json() as TokenSet).access_token;
      // Consented to no deployment in particular: every deployment the user can reach.
      expect((await t.request({ url: `/api/v1/deployments/${deploymentB}`, key: token })).statusCode).toBe(200);
    });

    it('/oauth/auth requires PKCE with S256: without a challenge, or with plain, the app gets an error and no one is asked to sign in', async () => {
      for (const options of [{ challenge: null }, { method: 'plain', challenge: 'p'.repeat(43) }]) {
        const res = await t.app.inject({ method: 'GET', url: authorizeUrl(publicApp, options) });
        expect(res.statusCode).toBe(303);
        const location = new URL(String(res.headers.location));
        expect(location.href.startsWith(APP_REDIRECT)).toBe(true);
        expect(location.searchParams.get('error')).toBe('invalid_request');
        expect(location.searchParams.get('code')).toBeNull();
      }
    });

    it('denying consent sends the app access_denied and issues nothing', async () => {
      idp.signInAs('dana');
      const b = browser();
      const consent = await b.go(authorizeUrl(confidential, { scope: 'openid' }), { stopAt: toApp });
      const action = /action="([^"]+)"/.exec(consent.body)![1]!;
      const back = await b.go(action, { method: 'POST', form: { decision: 'deny' }, stopAt: toApp });
      expect(back.location?.searchParams.get('error')).toBe('access_denied');
      expect(back.location?.searchParams.get('code')).toBeNull();
      // The consent form answers only the browser that holds the interaction.
      const forged = await browser().go(action, { method: 'POST', form: { decision: 'allow' } });
      expect(forged.status).toBe(400);
    });

    it('an unverified user signing in for an app gets the error page, and the app no code', async () => {
      idp.signInAs('unverified');
      const page = await browser().go(authorizeUrl(confidential, { scope: 'openid' }), { stopAt: toApp });
      expect(page.status).toBe(403);
      expect(page.body).toContain('is not verified');
    });

    it('registering apps: redirect URIs required and https; no userId or deploymentIds; machine clients take no redirect URIs; another tenant cannot delete them (404)', async () => {
      problem(await t.request({ method: 'POST', url: '/api/v1/oauth-clients', body: { name: 'x', type: 'app' } }), 400, 'VALIDATION_FAILED');
      const http = problem(
        await t.request({ method: 'POST', url: '/api/v1/oauth-clients', body: { name: 'x', type: 'app', redirectUris: ['http://app.example.test/cb'] } }),
        400,
        'VALIDATION_FAILED',
      );
      expect(http.errors?.[0]?.pointer).toBe('/body/redirectUris/0');
      problem(
        await t.request({
          method: 'POST',
          url: '/api/v1/oauth-clients',
          body: { name: 'x', type: 'app', redirectUris: [APP_REDIRECT], userId: member.userId },
        }),
        400,
        'VALIDATION_FAILED',
      );
      problem(await t.request({ method: 'POST', url: '/api/v1/oauth-clients', body: { name: 'x', redirectUris: [APP_REDIRECT] } }), 400, 'VALIDATION_FAILED');
      expect(publicApp).toMatchObject({ type: 'app', public: true, redirectUris: [APP_REDIRECT] });
      expect(publicApp.clientSecret).toBeUndefined();
      const listed = (await t.request({ url: '/api/v1/oauth-clients' })).json() as { items: AppClient[] };
      expect(listed.items.find((c) => c.id === confidential.id)).toMatchObject({ type: 'app', public: false, userId: null });
      expect(JSON.stringify(listed)).not.toContain(confidential.clientSecret);
      problem(
        await t.request({ method: 'DELETE', url: `/api/v1/oauth-clients/${confidential.id}`, key: other.admin.key, host: 'idp-other.example.test' }),
        404,
        'OAUTH_CLIENT_NOT_FOUND',
      );
      problem(
        await t.request({ method: 'POST', url: '/api/v1/oauth-clients', key: member.key, body: { name: 'x', type: 'app', redirectUris: [APP_REDIRECT] } }),
        403,
        'FORBIDDEN',
      );
    });
  });

  it('no secret appears in any response or log line: the client secrets, codes, states, tokens', async () => {
    const text = logs.join('\n');
    const responses = bodies.join('\n');
    expect(text.length).toBeGreaterThan(0);
    expect(text).toContain('/oauth/idp/callback?[redacted]');
    for (const secret of [idp.clientSecret]) {
      expect(text).not.toContain(secret);
      expect(responses).not.toContain(secret);
    }
    // What only the token endpoint answers (and the client secret, only the registration) never reaches a log line.
    expect(seen.length).toBeGreaterThan(5);
    for (const secret of seen) expect(text).not.toContain(secret);
    // Codes and states the provider sent back never reach a log line.
    const codes = [...text.matchAll(/[?&](code|state)=([A-Za-z0-9_-]{20,})/g)];
    expect(codes).toEqual([]);
    // The stored row holds the secret sealed.
    const rows = JSON.stringify(await t.store.db.selectFrom('identity_providers').selectAll().execute());
    expect(rows).not.toContain(idp.clientSecret);
  });
});
