import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TenantCache } from '../src/cache/tenant-cache.js';
import { EMBED_DEFAULTS, embedSettings } from '../src/areas/account/embed-settings.js';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';

const URL = '/api/v1/tenant/embed-settings';

describe.each(DIALECTS)('embed settings (%s)', (dialect) => {
  let t: TestApp;
  let developer: Caller;
  let other: { tenantId: number; admin: Caller };
  beforeAll(async () => {
    t = await TestApp.create(dialect);
    developer = await t.user('DEVELOPER');
    other = await t.tenant('other', ['other.example.test']);
  });
  afterAll(async () => t?.close());

  const put = (body: unknown, key?: string) => t.request({ method: 'PUT', url: URL, body, ...(key ? { key } : {}) });
  const reset = () =>
    put({
      allowAi: null,
      enableDashboardComments: null,
      showAiWidgets: null,
      showDashboardChat: null,
      showWorkbookChat: null,
      locale: null,
      timezone: null,
      enabled: null,
      allowedOrigins: null,
      pythonAnalysisEnabled: null,
      useCreatorMode: null,
    });

  it('starts with the defaults: reference fields not set, embedding on, no origins, Python analysis and creator mode off', async () => {
    const res = await t.request({ url: URL });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      allowAi: null,
      enableDashboardComments: null,
      showAiWidgets: null,
      showDashboardChat: null,
      showWorkbookChat: null,
      locale: null,
      timezone: null,
      enabled: true,
      allowedOrigins: [],
      pythonAnalysisEnabled: false,
      useCreatorMode: false,
    });
  });

  it('merges: the keys sent change, the others keep their values; null puts a key back to its default', async () => {
    await reset();
    const first = await put({ allowAi: true, locale: 'de-CH', allowedOrigins: ['https://app.example.com'] });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ allowAi: true, locale: 'de-CH', allowedOrigins: ['https://app.example.com'], enabled: true });
    const second = await put({ timezone: 'Europe/Berlin', enabled: false, pythonAnalysisEnabled: true });
    expect(second.json()).toEqual({
      ...EMBED_DEFAULTS,
      allowAi: true,
      locale: 'de-CH',
      timezone: 'Europe/Berlin',
      allowedOrigins: ['https://app.example.com'],
      enabled: false,
      pythonAnalysisEnabled: true,
    });
    expect((await t.request({ url: URL })).json()).toEqual(second.json());
    const cleared = await put({ allowAi: null, enabled: null, allowedOrigins: null });
    expect(cleared.json()).toMatchObject({ allowAi: null, enabled: true, allowedOrigins: [], locale: 'de-CH', pythonAnalysisEnabled: true });
  });

  it('stores a locale in canonical case and lists each origin once', async () => {
    const res = await put({ locale: 'en-us', allowedOrigins: ['http://localhost:8080', 'https://a.example.com', 'http://localhost:8080'] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ locale: 'en-US', allowedOrigins: ['http://localhost:8080', 'https://a.example.com'] });
  });

  it('is for admins only: 403 to others, reading and writing, and a write changes nothing', async () => {
    await reset();
    problem(await t.request({ url: URL, key: developer.key }), 403, 'FORBIDDEN');
    problem(await put({ allowAi: true }, developer.key), 403, 'FORBIDDEN');
    expect((await t.request({ url: URL })).json().allowAi).toBeNull();
  });

  it('refuses a write with an admin key scoped to some deployments', async () => {
    const deploymentId = await t.deployment('embed-scoped');
    const scoped = await t.key(t.admin.userId, { deploymentIds: [deploymentId] });
    problem(await put({ allowAi: true }, scoped), 403, 'KEY_SCOPE_FORBIDDEN');
  });

  it.each([
    ['an unknown key', { creatorMode: true }],
    ['a locale that is not a BCP 47 tag', { locale: 'en_US' }],
    ['a time zone that is not an IANA name', { timezone: 'Mars/Olympus' }],
    ['a UTC offset as time zone', { timezone: '+01:00' }],
    ['an origin with a path', { allowedOrigins: ['https://app.example.com/embed'] }],
    ['an origin with a trailing slash', { allowedOrigins: ['https://app.example.com/'] }],
    ['an origin with an upper-case host', { allowedOrigins: ['https://App.example.com'] }],
    ['an origin with its default port', { allowedOrigins: ['https://app.example.com:443'] }],
    ['an origin of another scheme', { allowedOrigins: ['ftp://app.example.com'] }],
    ['a wildcard origin', { allowedOrigins: ['*'] }],
    ['a string for a flag', { allowAi: 'yes' }],
  ])('answers 400 for %s and changes nothing', async (_label, body) => {
    await reset();
    await put({ locale: 'fr-FR' });
    const before = (await t.request({ url: URL })).json();
    problem(await put({ allowAi: true, ...body }), 400, 'VALIDATION_FAILED');
    expect((await t.request({ url: URL })).json()).toEqual(before);
  });

  it('names the bad field in the problem', async () => {
    const body = problem(await put({ allowedOrigins: ['https://ok.example.com', 'https://bad.example.com/x'] }), 400, 'VALIDATION_FAILED');
    expect(body.errors).toEqual([{ pointer: '/body/allowedOrigins/1', message: expect.stringContaining('https://bad.example.com/x') }]);
  });

  it('keeps each tenant’s settings to itself', async () => {
    await put({ allowAi: true });
    const theirs = await t.request({ url: URL, key: other.admin.key, host: 'other.example.test' });
    expect(theirs.statusCode).toBe(200);
    expect(theirs.json().allowAi).toBeNull();
  });

  it('gives the reader the new settings at once through every process’s cache', async () => {
    const processA = new TenantCache(t.store.db);
    const processB = new TenantCache(t.store.db);
    await put({ showDashboardChat: false });
    expect((await embedSettings(t.store.db, t.tenantId, await processA.snapshot(t.tenantId))).showDashboardChat).toBe(false);
    expect((await embedSettings(t.store.db, t.tenantId, await processB.snapshot(t.tenantId))).showDashboardChat).toBe(false);
    await put({ showDashboardChat: true });
    expect((await embedSettings(t.store.db, t.tenantId, await processA.snapshot(t.tenantId))).showDashboardChat).toBe(true);
    expect((await embedSettings(t.store.db, t.tenantId, await processB.snapshot(t.tenantId))).showDashboardChat).toBe(true);
    // Without a snapshot it reads the store; another tenant gets its own (defaults).
    expect((await embedSettings(t.store.db, t.tenantId)).showDashboardChat).toBe(true);
    expect(await embedSettings(t.store.db, other.tenantId)).toEqual(EMBED_DEFAULTS);
  });

  it('loses no key when two admins change different keys at the same time', async () => {
    await reset();
    const results = await Promise.all([put({ allowAi: true }), put({ showAiWidgets: true }), put({ locale: 'it-IT' }), put({ enabled: false })]);
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200]);
    expect((await t.request({ url: URL })).json()).toMatchObject({ allowAi: true, showAiWidgets: true, locale: 'it-IT', enabled: false });
  });
});
