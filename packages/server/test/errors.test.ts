import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem } from './harness.js';

/** Request-level errors: RFC 9457 problem details with a stable code (DESIGN.md, "Errors"). */
describe.each(DIALECTS)('errors (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
  });
  afterAll(async () => t?.close());

  const keyCount = async () => (await t.request({ url: '/api/v1/api-keys?first=200' })).json().items.length;

  it('400 for a malformed JSON body, and nothing is applied', async () => {
    const before = await keyCount();
    const res = await t.request({ method: 'POST', url: '/api/v1/api-keys', body: '{"name": "x",', headers: { 'content-type': 'application/json' } });
    problem(res, 400, 'MALFORMED_JSON');
    expect(await keyCount()).toBe(before);
  });

  it('400 with one JSON pointer per bad field', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/api-keys', body: { name: '', deploymentIds: [1, 'two'], expiresAt: 'soon', extra: 1 } });
    const body = problem(res, 400, 'VALIDATION_FAILED');
    const pointers = body.errors?.map((e) => e.pointer).sort();
    expect(pointers).toEqual(['/body/deploymentIds/1', '/body/expiresAt', '/body/extra', '/body/name']);
    for (const e of body.errors ?? []) expect(e.message.length).toBeGreaterThan(0);
  });

  it('400 for a missing body and for ids that are not integers', async () => {
    const missing = await t.request({ method: 'POST', url: '/api/v1/api-keys' });
    expect(missing.statusCode).toBe(400);
    problem(missing, 400);
    // A JSON string is not an integer, even when it spells one.
    const stringId = await t.request({ method: 'POST', url: '/api/v1/api-keys', body: { name: 'x', userId: '1' } });
    expect(problem(stringId, 400, 'VALIDATION_FAILED').errors?.[0]?.pointer).toBe('/body/userId');
    const pathId = await t.request({ method: 'DELETE', url: '/api/v1/api-keys/abc' });
    expect(problem(pathId, 400, 'VALIDATION_FAILED').errors?.[0]?.pointer).toBe('/path/apiKeyId');
    const query = await t.request({ url: '/api/v1/api-keys?first=0' });
    expect(problem(query, 400, 'VALIDATION_FAILED').errors?.[0]?.pointer).toBe('/query/first');
  });

  it('404 for unknown routes, inside and outside the API', async () => {
    problem(await t.request({ url: '/api/v1/no-such-thing' }), 404, 'ROUTE_NOT_FOUND');
    problem(await t.request({ url: '/nothing-here', key: null }), 404, 'ROUTE_NOT_FOUND');
  });

  it('405 with an Allow header for a known path and an unknown method', async () => {
    const res = await t.request({ method: 'PATCH', url: '/api/v1/api-keys' });
    problem(res, 405, 'METHOD_NOT_ALLOWED');
    expect(res.headers.allow).toBe('GET, POST');
  });

  it('413 for a body over 1 MiB', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/api-keys', body: { name: 'x'.repeat(1024 * 1024 + 10) } });
    problem(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('415 for a body that is not JSON', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/api-keys', body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    problem(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('a percent-encoded path is the same path: it still needs a credential', async () => {
    for (const url of ['/%61pi/v1/spec', '/%61pi/v1/users', '/api/v1/%61pi-keys', '/build/%61pi/v1/deployments/']) {
      const res = await t.request({ url, key: null });
      problem(res, 401, 'UNAUTHENTICATED');
    }
    expect((await t.request({ url: '/%61pi/v1/api-keys' })).statusCode).toBe(200);
  });

  it('an undecodable URL gets problem details and a request id, not a framework error', async () => {
    const res = await t.request({ url: '/api/v1/users/%zz' });
    problem(res, 400, 'VALIDATION_FAILED');
    expect(res.headers['x-request-id']).toBe(res.json().requestId);
  });

  it('every response carries a request id; a sane client id is echoed, an odd one replaced', async () => {
    const ok = await t.request({ url: '/api/v1/api-keys' });
    expect(ok.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const err = await t.request({ url: '/api/v1/api-keys', key: null });
    expect(err.headers['x-request-id']).toBe(err.json().requestId);
    const mine = await t.request({ url: '/api/v1/api-keys', headers: { 'x-request-id': 'trace-42' } });
    expect(mine.headers['x-request-id']).toBe('trace-42');
    const odd = await t.request({ url: '/api/v1/api-keys', headers: { 'x-request-id': 'a b\nc' } });
    expect(odd.headers['x-request-id']).not.toBe('a b\nc');
  });
});

describe.each(DIALECTS)('500 (%s)', (dialect) => {
  it('hides internals and names the request id', async () => {
    const t = await TestApp.create(dialect);
    try {
      // Break the store under the running app: the key lookup of the next request fails.
      await sql`drop table api_keys`.execute(t.store.db);
      const broken = await t.request({ url: '/api/v1/api-keys' });
      const body = problem(broken, 500, 'INTERNAL');
      expect(body.detail).toContain(body.requestId);
      expect(broken.body).not.toMatch(/api_keys|sql|table|stack|select/i);
    } finally {
      await t.close();
    }
  });
});

describe.each(DIALECTS)('429 (%s)', (dialect) => {
  it('limits each API key to its budget per minute, with Retry-After, and other keys are unaffected', async () => {
    const t = await TestApp.create(dialect, { rateLimitPerMinute: 3 });
    try {
      for (let i = 0; i < 3; i++) expect((await t.request({ url: '/api/v1/api-keys' })).statusCode).toBe(200);
      const limited = await t.request({ url: '/api/v1/api-keys' });
      expect(problem(limited, 429, 'RATE_LIMITED').detail).toMatch(/retry in/);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      const other = await t.user('VIEWER');
      expect((await t.request({ url: '/api/v1/api-keys', key: other.key })).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});
