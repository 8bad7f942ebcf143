import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { STORE_INDEPENDENT, TestApp } from './harness.js';

const ALLOWED = 'https://app.example.com';

describe.each(STORE_INDEPENDENT)('CORS for browser clients [%s]', (dialect) => {
  let t: TestApp;
  let plain: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect, { corsOrigins: [ALLOWED] });
    plain = await TestApp.create(dialect);
  });
  afterAll(async () => {
    await t.close();
    await plain.close();
  });

  const preflight = (app: TestApp, origin: string) =>
    app.request({
      method: 'OPTIONS',
      url: '/api/v1/deployments/1/workspace/bulk-move',
      key: null,
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });

  it('answers a preflight from an allowed origin without a credential, allowing Authorization and JSON bodies', async () => {
    const res = await preflight(t, ALLOWED);
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(String(res.headers['access-control-allow-headers']).toLowerCase()).toContain('authorization');
    expect(String(res.headers['access-control-allow-methods'])).toContain('POST');
    // Keys travel in a header, never in cookies: credentials mode is not offered.
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('gives another origin no Access-Control-Allow-Origin, so its browser refuses the call', async () => {
    const res = await preflight(t, 'https://evil.example.net');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('still authenticates the actual request, and exposes the request id and Retry-After to browser code', async () => {
    const anonymous = await t.request({ url: '/api/v1/deployments', key: null, headers: { origin: ALLOWED } });
    expect(anonymous.statusCode).toBe(401);
    const res = await t.request({ url: '/api/v1/deployments', headers: { origin: ALLOWED } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
    const exposed = String(res.headers['access-control-expose-headers']).toLowerCase();
    expect(exposed).toContain('x-request-id');
    expect(exposed).toContain('retry-after');
  });

  it('sends no CORS headers when no origin is configured (the default)', async () => {
    const res = await preflight(plain, ALLOWED);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.statusCode).not.toBe(204);
    const get = await plain.request({ url: '/api/v1/deployments', headers: { origin: ALLOWED } });
    expect(get.statusCode).toBe(200);
    expect(get.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('adds no operation to the OpenAPI document', async () => {
    const withCors = (await t.request({ url: '/api/v1/spec' })).json();
    const without = (await plain.request({ url: '/api/v1/spec' })).json();
    expect(withCors.paths).toEqual(without.paths);
  });
});

describe('CORS_ORIGINS configuration', () => {
  it('reads a comma-separated list of origins, or *', () => {
    expect(loadConfig({ CORS_ORIGINS: 'https://a.example.com, http://localhost:5173' }).corsOrigins).toEqual([
      'https://a.example.com',
      'http://localhost:5173',
    ]);
    expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).toEqual(['*']);
    expect(loadConfig({}).corsOrigins).toEqual([]);
  });

  it('refuses an entry that is not an origin, naming it', () => {
    expect(() => loadConfig({ CORS_ORIGINS: 'https://a.example.com/path' })).toThrow(ConfigError);
    expect(() => loadConfig({ CORS_ORIGINS: 'a.example.com' })).toThrow(/CORS_ORIGINS.*"a\.example\.com"/);
  });
});
