import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sealedAs } from '../src/areas/git-host/git-host.store.js';
import { buildApp } from '../src/app.js';
import { PUBLIC_ROUTES } from '../src/http/auth.js';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';
import { startGitHost, type GitHostFixture, type HostUser } from './git-host-fixture.js';

const CLIENT_SECRET = 'client-secret-do-not-show';
// The app's key as the host issues it: PKCS#1 PEM. Its base64 body must never be shown.
const PRIVATE_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
const KEY_BODY = PRIVATE_KEY.split('\n')[5]!;
const MINUTE = 60_000;

// 130 branches: more than one page of the host's (100) and of this server's when asked for 50.
const manyBranches = ['main', ...Array.from({ length: 129 }, (_, i) => `feature-${String(i).padStart(3, '0')}`)];

const alice: HostUser = {
  login: 'alice',
  code: 'code-alice',
  token: 'host-token-alice-do-not-show',
  installations: [
    {
      id: 101,
      account: 'acme',
      repositories: [
        { id: 7, name: 'models', owner: 'acme', defaultBranch: 'main', branches: manyBranches },
        { id: 3, name: 'docs', owner: 'acme', defaultBranch: 'trunk', branches: ['trunk', 'draft'] },
      ],
    },
    { id: 55, account: 'alice', repositories: [] },
  ],
};
const bob: HostUser = {
  login: 'bob',
  code: 'code-bob',
  token: 'host-token-bob-do-not-show',
  installations: [{ id: 202, account: 'globex', repositories: [{ id: 9, name: 'secret-models', owner: 'globex', defaultBranch: 'main', branches: ['main'] }] }],
};

// A host whose user tokens expire (8 hours) and come with rotating refresh tokens.
const carol: HostUser = {
  login: 'carol',
  code: 'code-carol',
  token: 'host-token-carol-do-not-show',
  expiresInSec: 8 * 3600,
  installations: [{ id: 303, account: 'initech', repositories: [] }],
};

interface Page<T> {
  items: T[];
  data: T[];
  pageInfo: { endCursor: string | null; hasNextPage: boolean; hasPreviousPage: boolean };
}

describe.each(DIALECTS)('git host: app, linked accounts and discovery (%s)', (dialect) => {
  let t: TestApp;
  let host: GitHostFixture;
  let explorer: Caller;
  let viewer: Caller;
  let developer: Caller;
  let other: { tenantId: number; admin: Caller };
  const logs: string[] = [];
  const clock = { offsetMs: 0 };
  const bodies: string[] = [];

  beforeAll(async () => {
    host = await startGitHost([alice, bob, carol], { clientId: 'Iv1.client', clientSecret: CLIENT_SECRET });
    t = await TestApp.create(dialect, {
      // The stand-in runs on loopback, which the outbound guard refuses unless allowed.
      outbound: { allowPrivate: ['127.0.0.1/32'], retryBaseMs: 1 },
      now: () => new Date(Date.now() + clock.offsetMs),
      logger: { level: 'trace', stream: { write: (line: string) => void logs.push(line) } },
    });
    explorer = await t.user('EXPLORER');
    viewer = await t.user('VIEWER');
    developer = await t.user('DEVELOPER');
    other = await t.tenant('githost-other', ['githost-other.example.test']);
  });
  afterAll(async () => {
    await t?.close();
    await host?.close();
  });

  /** Every response body is kept, to prove no secret ever leaves in one. */
  const call = async (request: Parameters<TestApp['request']>[0]) => {
    const res = await t.request(request);
    bodies.push(res.body);
    return res;
  };
  const appBody = (overrides: Record<string, unknown> = {}) => ({
    apiBaseUrl: host.baseUrl,
    webBaseUrl: host.baseUrl,
    appId: '12345',
    appSlug: 'mapi-models',
    clientId: host.clientId,
    clientSecret: CLIENT_SECRET,
    privateKey: PRIVATE_KEY,
    ...overrides,
  });
  const stateOf = (linkUrl: string) => new URL(linkUrl).searchParams.get('state') ?? '';
  const statusOf = async (caller: Caller) => {
    const res = await call({ url: '/api/v1/git-host/status', key: caller.key });
    expect(res.statusCode).toBe(200);
    return res.json<{ connected: boolean; linkUrl: string; settingsUrl: string }>();
  };
  const link = async (caller: Caller, code: string) => {
    const { linkUrl } = await statusOf(caller);
    return call({ url: `/api/v1/git-host/callback?state=${stateOf(linkUrl)}&code=${code}`, key: null });
  };

  it('the callback is a listed public route with its budget', () => {
    expect(PUBLIC_ROUTES.get('GET /api/v1/git-host/callback')).toBe(30);
  });

  it('before an admin configures the app, status answers not connected with no URLs (reference 5.19 shape); the lists and the app say what is missing; only admins read or set it', async () => {
    const status = await call({ url: '/api/v1/git-host/status', key: explorer.key });
    expect(status.statusCode).toBe(200);
    expect(status.json()).toEqual({ connected: false, linkUrl: '', settingsUrl: '' });
    problem(await call({ url: '/api/v1/git-host/installations', key: explorer.key }), 404, 'GIT_HOST_NOT_CONFIGURED');
    problem(await call({ url: '/api/v1/git-host/installations/101/repositories', key: explorer.key }), 404, 'GIT_HOST_NOT_CONFIGURED');
    problem(await call({ url: '/api/v1/git-host/repositories/acme/models/branches?installationId=101', key: explorer.key }), 404, 'GIT_HOST_NOT_CONFIGURED');
    problem(await call({ url: '/api/v1/tenant/git-host-app' }), 404, 'GIT_HOST_NOT_CONFIGURED');
    problem(await call({ method: 'PUT', url: '/api/v1/tenant/git-host-app', key: explorer.key, body: appBody() }), 403, 'FORBIDDEN');
    problem(await call({ url: '/api/v1/tenant/git-host-app', key: viewer.key }), 403, 'FORBIDDEN');
    problem(await call({ method: 'PUT', url: '/api/v1/tenant/git-host-app', body: appBody({ clientSecret: null }) }), 400, 'VALIDATION_FAILED');
    problem(await call({ method: 'PUT', url: '/api/v1/tenant/git-host-app', body: appBody({ privateKey: undefined }) }), 400, 'VALIDATION_FAILED');
    problem(
      await call({ method: 'PUT', url: '/api/v1/tenant/git-host-app', body: appBody({ apiBaseUrl: 'http://git.example.test' }) }),
      400,
      'VALIDATION_FAILED',
    );
    // Not a key, or not an RSA one: told now, not at the first connect.
    for (const privateKey of [
      '-----BEGIN PRIVATE KEY-----\nnot-a-key\n-----END PRIVATE KEY-----',
      generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }),
    ]) {
      const body = problem(await call({ method: 'PUT', url: '/api/v1/tenant/git-host-app', body: appBody({ privateKey }) }), 400, 'VALIDATION_FAILED');
      expect(body.errors?.map((e) => e.pointer)).toEqual(['/body/privateKey']);
    }
  });

  it('an admin sets the app; the secrets are sealed at rest, kept when left out, never returned', async () => {
    const res = await call({ method: 'PUT', url: '/api/v1/tenant/git-host-app', body: appBody() });
    expect(res.statusCode).toBe(200);
    const app = res.json<Record<string, unknown>>();
    expect(app).toMatchObject({ apiBaseUrl: host.baseUrl, webBaseUrl: host.baseUrl, appId: '12345', appSlug: 'mapi-models', clientId: host.clientId });
    expect(app.callbackUrl).toMatch(/\/api\/v1\/git-host\/callback$/);
    expect(Object.keys(app)).not.toContain('clientSecret');
    expect(Object.keys(app)).not.toContain('privateKey');

    const row = await t.store.db.selectFrom('git_host_apps').selectAll().where('tenant_id', '=', t.tenantId).executeTakeFirstOrThrow();
    expect(row.client_secret).not.toContain(CLIENT_SECRET);
    expect(row.private_key).not.toContain(KEY_BODY);
    // Left out: kept.
    expect(
      (await call({ method: 'PUT', url: '/api/v1/tenant/git-host-app', body: appBody({ clientSecret: undefined, privateKey: null, appId: '999' }) })).json(),
    ).toMatchObject({ appId: '999' });
    const kept = await t.store.db.selectFrom('git_host_apps').selectAll().where('tenant_id', '=', t.tenantId).executeTakeFirstOrThrow();
    expect(t.app.services.secrets.open(kept.client_secret, sealedAs.clientSecret(t.tenantId))).toBe(CLIENT_SECRET);
    expect(t.app.services.secrets.open(kept.private_key, sealedAs.privateKey(t.tenantId))).toBe(PRIVATE_KEY);
    expect((await call({ url: '/api/v1/tenant/git-host-app' })).json()).toMatchObject({ appId: '999' });
  });

  it('another tenant sees none of it: its app is 404 and its users’ status is not connected, with no URLs', async () => {
    problem(await call({ url: '/api/v1/tenant/git-host-app', key: other.admin.key, host: 'githost-other.example.test' }), 404, 'GIT_HOST_NOT_CONFIGURED');
    const status = await call({ url: '/api/v1/git-host/status', key: other.admin.key, host: 'githost-other.example.test' });
    expect(status.statusCode).toBe(200);
    expect(status.json()).toEqual({ connected: false, linkUrl: '', settingsUrl: '' });
  });

  it('not linked: connected false with the URLs to link and to install; the lists say to link first', async () => {
    const status = await statusOf(explorer);
    expect(status.connected).toBe(false);
    const linkUrl = new URL(status.linkUrl);
    expect(`${linkUrl.origin}${linkUrl.pathname}`).toBe(`${host.baseUrl}/login/oauth/authorize`);
    expect(linkUrl.searchParams.get('client_id')).toBe(host.clientId);
    expect(stateOf(status.linkUrl)).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    expect(status.settingsUrl).toBe(`${host.baseUrl}/apps/mapi-models/installations/new`);
    problem(await call({ url: '/api/v1/git-host/installations', key: explorer.key }), 409, 'GIT_HOST_NOT_LINKED');
    problem(await call({ url: '/api/v1/git-host/installations/101/repositories', key: explorer.key }), 409, 'GIT_HOST_NOT_LINKED');
  });

  it('a wrong, replayed, expired or another user’s state is refused and links nothing', async () => {
    problem(await call({ url: '/api/v1/git-host/callback?code=code-alice', key: null }), 400, 'OAUTH_STATE_INVALID');
    problem(await call({ url: '/api/v1/git-host/callback?code=code-alice&state=made-up', key: null }), 400, 'OAUTH_STATE_INVALID');

    // Presented with another user's credential: refused, and still usable by its own user once.
    const mine = stateOf((await statusOf(explorer)).linkUrl);
    problem(await call({ url: `/api/v1/git-host/callback?state=${mine}&code=code-alice`, key: viewer.key }), 400, 'OAUTH_STATE_INVALID');

    // The host refusing the code spends the state.
    problem(await call({ url: `/api/v1/git-host/callback?state=${mine}&code=not-a-code`, key: null }), 400, 'GIT_HOST_LINK_FAILED');
    problem(await call({ url: `/api/v1/git-host/callback?state=${mine}&code=code-alice`, key: null }), 400, 'OAUTH_STATE_INVALID');

    const late = stateOf((await statusOf(explorer)).linkUrl);
    clock.offsetMs = 11 * MINUTE;
    try {
      problem(await call({ url: `/api/v1/git-host/callback?state=${late}&code=code-alice`, key: null }), 400, 'OAUTH_STATE_INVALID');
    } finally {
      clock.offsetMs = 0;
    }
    // The user who started it was deactivated meanwhile.
    const leaver = await t.user('EXPLORER');
    const theirs = stateOf((await statusOf(leaver)).linkUrl);
    await t.store.db.updateTable('users').set({ deactivated_at: new Date().toISOString() }).where('id', '=', leaver.userId).execute();
    problem(await call({ url: `/api/v1/git-host/callback?state=${theirs}&code=code-alice`, key: null }), 400, 'OAUTH_STATE_INVALID');

    expect(await t.store.db.selectFrom('git_host_links').selectAll().execute()).toEqual([]);
    expect((await statusOf(explorer)).connected).toBe(false);
  });

  it('links the caller’s account through the host; the token is sealed; a replayed state does nothing more', async () => {
    const { linkUrl } = await statusOf(explorer);
    const state = stateOf(linkUrl);
    const res = await call({ url: `/api/v1/git-host/callback?state=${state}&code=code-alice`, key: null });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ connected: true, login: 'alice' });
    problem(await call({ url: `/api/v1/git-host/callback?state=${state}&code=code-bob`, key: null }), 400, 'OAUTH_STATE_INVALID');

    const row = await t.store.db.selectFrom('git_host_links').selectAll().where('user_id', '=', explorer.userId).executeTakeFirstOrThrow();
    expect(row.login).toBe('alice');
    expect(row.access_token).not.toContain(alice.token);
    expect(t.app.services.secrets.open(row.access_token, sealedAs.accessToken(t.tenantId, explorer.userId))).toBe(alice.token);
    expect((await statusOf(explorer)).connected).toBe(true);
    expect((await statusOf(viewer)).connected).toBe(false);
  });

  it('lists the installations the caller’s account reaches (installationId a string), paged by cursor', async () => {
    const res = await call({ url: '/api/v1/git-host/installations', key: explorer.key });
    expect(res.statusCode).toBe(200);
    const page = res.json<Page<Record<string, unknown>>>();
    expect(page.items).toEqual([
      { installationId: '55', id: '55', login: 'alice', avatarUrl: 'https://avatars.example.test/alice' },
      { installationId: '101', id: '101', login: 'acme', avatarUrl: 'https://avatars.example.test/acme' },
    ]);
    expect(page.data).toEqual(page.items);
    expect(page.pageInfo.hasNextPage).toBe(false);

    const first = (await call({ url: '/api/v1/git-host/installations?first=1', key: explorer.key })).json<Page<{ id: string }>>();
    expect(first.items.map((i) => i.id)).toEqual(['55']);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = (await call({ url: `/api/v1/git-host/installations?first=1&after=${first.pageInfo.endCursor}`, key: explorer.key })).json<
      Page<{ id: string }>
    >();
    expect(second.items.map((i) => i.id)).toEqual(['101']);
    expect(second.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    problem(await call({ url: '/api/v1/git-host/installations?after=nonsense', key: explorer.key }), 400, 'INVALID_CURSOR');
  });

  it('lists an installation’s repositories; another user’s installation is not reachable', async () => {
    const page = (await call({ url: '/api/v1/git-host/installations/101/repositories', key: explorer.key })).json<Page<unknown>>();
    expect(page.items).toEqual([
      { id: 3, name: 'docs', htmlUrl: 'https://git.example.test/acme/docs' },
      { id: 7, name: 'models', htmlUrl: 'https://git.example.test/acme/models' },
    ]);
    expect(page.data).toEqual(page.items);
    // Bob's installation, through Alice's link.
    problem(await call({ url: '/api/v1/git-host/installations/202/repositories', key: explorer.key }), 404, 'GIT_HOST_NOT_FOUND');
    problem(await call({ url: '/api/v1/git-host/installations/abc/repositories', key: explorer.key }), 400);
  });

  it('lists a repository’s branches across the host’s pages, the default one marked', async () => {
    const url = '/api/v1/git-host/repositories/acme/models/branches?installationId=101&first=50';
    const names: string[] = [];
    let after: string | null = null;
    let defaults = 0;
    for (let i = 0; i < 5; i++) {
      const page: Page<{ name: string; isDefault: boolean }> = (await call({ url: after === null ? url : `${url}&after=${after}`, key: explorer.key })).json();
      names.push(...page.items.map((b) => b.name));
      defaults += page.items.filter((b) => b.isDefault).length;
      expect(page.items.find((b) => b.isDefault)?.name ?? 'main').toBe('main');
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(names).toEqual([...manyBranches].sort());
    expect(defaults).toBe(1);
    const docs = (await call({ url: '/api/v1/git-host/repositories/acme/docs/branches?installationId=101', key: explorer.key })).json<Page<unknown>>();
    expect(docs.items).toEqual([
      { name: 'draft', isDefault: false },
      { name: 'trunk', isDefault: true },
    ]);
    // installationId is required, and must be one of the caller's.
    problem(await call({ url: '/api/v1/git-host/repositories/acme/docs/branches', key: explorer.key }), 400, 'VALIDATION_FAILED');
    problem(await call({ url: '/api/v1/git-host/repositories/acme/docs/branches?installationId=202', key: explorer.key }), 404, 'GIT_HOST_NOT_FOUND');
    problem(
      await call({ url: '/api/v1/git-host/repositories/globex/secret-models/branches?installationId=101', key: explorer.key }),
      404,
      'GIT_HOST_NOT_FOUND',
    );
  });

  it('each user sees only what their own account reaches', async () => {
    expect((await link(viewer, 'code-bob')).statusCode).toBe(200);
    const theirs = (await call({ url: '/api/v1/git-host/installations', key: viewer.key })).json<Page<{ id: string }>>();
    expect(theirs.items.map((i) => i.id)).toEqual(['202']);
    const mine = (await call({ url: '/api/v1/git-host/installations', key: explorer.key })).json<Page<{ id: string }>>();
    expect(mine.items.map((i) => i.id)).toEqual(['55', '101']);
    problem(await call({ url: '/api/v1/git-host/installations/101/repositories', key: viewer.key }), 404, 'GIT_HOST_NOT_FOUND');
  });

  it('a token the host no longer accepts asks to link again; a host that cannot be reached is 502', async () => {
    const revoked = t.app.services.secrets.seal('revoked-token', sealedAs.accessToken(t.tenantId, viewer.userId));
    await t.store.db.updateTable('git_host_links').set({ access_token: revoked }).where('user_id', '=', viewer.userId).execute();
    problem(await call({ url: '/api/v1/git-host/installations', key: viewer.key }), 409, 'GIT_HOST_NOT_LINKED');

    // The app pointed at a port nothing listens on.
    await call({ method: 'PUT', url: '/api/v1/tenant/git-host-app', body: appBody({ apiBaseUrl: 'http://127.0.0.1:1' }) });
    try {
      problem(await call({ url: '/api/v1/git-host/installations', key: explorer.key }), 502, 'GIT_HOST_UNAVAILABLE');
    } finally {
      await call({ method: 'PUT', url: '/api/v1/tenant/git-host-app', body: appBody() });
    }
  });

  it('an expiring token is refreshed before use and its refresh token rotated; two requests at once refresh once; a refused refresh asks to link again', async () => {
    const installationsOf = async () =>
      (await call({ url: '/api/v1/git-host/installations', key: developer.key })).json<Page<{ id: string }>>().items.map((i) => i.id);
    expect((await link(developer, 'code-carol')).statusCode).toBe(200);
    const row = await t.store.db.selectFrom('git_host_links').selectAll().where('user_id', '=', developer.userId).executeTakeFirstOrThrow();
    expect(row.refresh_token).toMatch(/^v1:/);
    expect(row.refresh_token).not.toContain('ghr_');
    expect(Date.parse(row.expires_at!) - Date.now()).toBeGreaterThan(7.9 * 3600_000);
    expect(await installationsOf()).toEqual(['303']);
    expect(host.refreshed).toEqual([]);
    try {
      // Past the expiry: refreshed first (the old token no longer works at the host), once.
      clock.offsetMs = 8 * 3600_000;
      expect(await installationsOf()).toEqual(['303']);
      expect(await installationsOf()).toEqual(['303']);
      expect(host.refreshed).toEqual(['carol']);
      // Two at once after the next expiry: one refresh wins, the other takes its tokens; both answer.
      clock.offsetMs = 17 * 3600_000;
      const both = await Promise.all([installationsOf(), installationsOf()]);
      expect(both).toEqual([['303'], ['303']]);
      expect(host.refreshed).toEqual(['carol', 'carol']);
      expect(await installationsOf()).toEqual(['303']);
      // A refresh token the host does not know: link again.
      clock.offsetMs = 26 * 3600_000;
      const unknown = t.app.services.secrets.seal('ghr_unknown', sealedAs.refreshToken(t.tenantId, developer.userId));
      await t.store.db.updateTable('git_host_links').set({ refresh_token: unknown }).where('user_id', '=', developer.userId).execute();
      problem(await call({ url: '/api/v1/git-host/installations', key: developer.key }), 409, 'GIT_HOST_NOT_LINKED');
    } finally {
      clock.offsetMs = 0;
    }
  });

  it('two server processes refresh at once: the host takes one refresh, the other waits for its tokens instead of asking to link again', async () => {
    const second = await buildApp({
      store: t.store.reopen(),
      secrets: t.app.services.secrets,
      baseDomain: null,
      tenantCacheMs: 0,
      startJobs: 'on-first-job',
      outbound: { allowPrivate: ['127.0.0.1/32'], retryBaseMs: 1 },
      now: () => new Date(Date.now() + clock.offsetMs),
    });
    try {
      expect((await link(developer, 'code-carol')).statusCode).toBe(200);
      const before = host.refreshed.length;
      clock.offsetMs = 9 * 3600_000;
      // The winner's answer comes late, so the loser hears its refusal before the new tokens are stored.
      host.refreshAnswerDelayMs = 300;
      const headers = { authorization: `Bearer ${developer.key}` };
      const answers = await Promise.all([
        t.request({ url: '/api/v1/git-host/installations', key: developer.key }),
        second.inject({ url: '/api/v1/git-host/installations', headers }),
      ]);
      expect(answers.map((a) => a.statusCode)).toEqual([200, 200]);
      expect(answers.map((a) => a.json<Page<{ id: string }>>().items.map((i) => i.id))).toEqual([['303'], ['303']]);
      // The host rotated the refresh token once for both processes.
      expect(host.refreshed.length - before).toBe(1);
    } finally {
      clock.offsetMs = 0;
      host.refreshAnswerDelayMs = 0;
      await second.close();
    }
  });

  it('unlink (extension): the token is revoked at the host and forgotten here; a second unlink is 409', async () => {
    expect((await link(developer, 'code-carol')).statusCode).toBe(200);
    expect((await call({ method: 'DELETE', url: '/api/v1/git-host/link', key: developer.key })).statusCode).toBe(204);
    expect(host.revoked).toEqual([carol.token]);
    expect((await call({ url: '/api/v1/git-host/status', key: developer.key })).json()).toMatchObject({ connected: false });
    problem(await call({ url: '/api/v1/git-host/installations', key: developer.key }), 409, 'GIT_HOST_NOT_LINKED');
    problem(await call({ method: 'DELETE', url: '/api/v1/git-host/link', key: developer.key }), 409, 'GIT_HOST_NOT_LINKED');
    expect(await t.store.db.selectFrom('git_host_links').selectAll().where('user_id', '=', developer.userId).execute()).toEqual([]);
  });

  it('no secret appears in any response or log line', () => {
    for (const secret of [CLIENT_SECRET, KEY_BODY, alice.token, bob.token, carol.token, 'ghr_carol']) {
      expect(bodies.filter((b) => b.includes(secret))).toEqual([]);
      expect(logs.filter((l) => l.includes(secret))).toEqual([]);
    }
    // The codes and states travel in query strings, which logs never show.
    expect(logs.filter((l) => l.includes('code-alice'))).toEqual([]);
    expect(host.seen.some((s) => s.startsWith('GET /user/installations'))).toBe(true);
  });
});
