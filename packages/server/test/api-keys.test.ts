import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp } from './harness.js';

describe.each(DIALECTS)('API keys (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
  });
  afterAll(async () => t?.close());

  it('creates a key shown once in the mapi_ + 40 alphanumerics format, and it authenticates', async () => {
    const created = await t.request({ method: 'POST', url: '/api/v1/api-keys', body: { name: 'ci' } });
    expect(created.statusCode).toBe(201);
    const body = created.json();
    expect(body.key).toMatch(/^mapi_[A-Za-z0-9]{40}$/);
    expect(body.prefix).toBe(body.key.slice(0, 9));
    const listed = await t.request({ url: '/api/v1/api-keys', key: body.key });
    expect(listed.statusCode).toBe(200);
    expect(JSON.stringify(listed.json())).not.toContain(body.key);
    expect(listed.json().items.map((k: { id: number }) => k.id)).toContain(body.id);
  });
});
