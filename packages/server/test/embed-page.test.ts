import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, problem, TestApp } from './harness.js';

/**
 * How the server serves the embedded dashboard page (areas/embed-page): its policy, its files and
 * their caching, without a browser (embed-page.browser.test.ts drives Chromium).
 */

describe.each(DIALECTS)('GET /embed/dashboard/{publicId} (%s)', (dialect) => {
  let t: TestApp;
  let unbuilt: TestApp;
  let empty: string;
  beforeAll(async () => {
    empty = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-embed-page-'));
    [t, unbuilt] = await Promise.all([TestApp.create(dialect), TestApp.create(dialect, { embedPageDir: empty })]);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), unbuilt?.close()]);
    fs.rmSync(empty, { recursive: true, force: true });
  });

  const policyOf = (header: unknown) =>
    Object.fromEntries(
      String(header)
        .split('; ')
        .map((d) => [d.split(' ')[0], d.slice(d.indexOf(' ') + 1)]),
    );

  it('answers the page without a credential, no-cache, with a policy that frames it nowhere while no origin is allowed', async () => {
    const res = await t.request({ url: '/embed/dashboard/some-dashboard?session=0123456789abcdef0123456789abcdef', key: null });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const policy = policyOf(res.headers['content-security-policy']);
    expect(policy).toMatchObject({
      'default-src': "'self'",
      'script-src': "'self'",
      'style-src': "'self'",
      'connect-src': "'self'",
      'object-src': "'none'",
      'frame-ancestors': "'none'",
    });
    expect(res.body).toContain('<meta name="mapi-allowed-origins" content="[]">');
    // Scripts are files of the page's own, never inline.
    expect(res.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });

  it('frame-ancestors and the page name the account’s allowed origins', async () => {
    const origins = ['https://app.example.com', 'http://localhost:8080'];
    expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/embed-settings', body: { allowedOrigins: origins } })).statusCode).toBe(200);
    const res = await t.request({ url: '/embed/dashboard/x', key: null });
    expect(policyOf(res.headers['content-security-policy'])['frame-ancestors']).toBe(origins.join(' '));
    expect(res.body).toContain(`content="[&quot;https://app.example.com&quot;,&quot;http://localhost:8080&quot;]"`);
  });

  it('serves the fingerprinted files for a year, immutable; another name is 404', async () => {
    const page = await t.request({ url: '/embed/dashboard/x', key: null });
    const files = [...page.body.matchAll(/(?:src|href)="(\/embed\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(files.some((f) => /\/index-[\w-]+\.js$/.test(f))).toBe(true);
    for (const file of files) {
      const res = await t.request({ url: file, key: null });
      expect(res.statusCode, file).toBe(200);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.headers['content-type']).toMatch(/^(text\/javascript|text\/css)/);
    }
    problem(await t.request({ url: '/embed/assets/index-nothing.js', key: null }), 404, 'ROUTE_NOT_FOUND');
    problem(await t.request({ url: '/embed/assets/..%2Fpackage.json', key: null }), 404, 'ROUTE_NOT_FOUND');
  });

  it('a server without the page built says so (503)', async () => {
    problem(await unbuilt.request({ url: '/embed/dashboard/x', key: null }), 503, 'UNAVAILABLE');
  });

  it('page views have the exchange’s budget per address; the files have none', async () => {
    const limited = await TestApp.create(dialect, { embedExchangePerIpPerMinute: 2, rateLimitPerIpPerMinute: 1 });
    try {
      const view = () => limited.request({ url: '/embed/dashboard/x', key: null });
      const first = await view();
      expect(first.statusCode).toBe(200);
      expect((await view()).statusCode).toBe(200);
      problem(await view(), 429, 'RATE_LIMITED');
      const file = /src="(\/embed\/assets\/[^"]+)"/.exec(first.body)![1]!;
      for (let i = 0; i < 3; i++) expect((await limited.request({ url: file, key: null })).statusCode).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it('a host no tenant answers on is 404', async () => {
    const other = await TestApp.create(dialect, { baseDomain: 'mapi.example.com' });
    try {
      problem(await other.request({ url: '/embed/dashboard/x', key: null, host: 'nobody.mapi.example.com' }), 404, 'TENANT_NOT_FOUND');
    } finally {
      await other.close();
    }
  });
});
