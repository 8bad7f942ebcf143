import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { standaloneReference } from '../src/http/reference.js';
import { OPENAPI_FILE } from '../scripts/write-openapi.js';
import { STORE_INDEPENDENT, TestApp, problem } from './harness.js';

describe.each(STORE_INDEPENDENT)('API reference page (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
  });
  afterAll(async () => t?.close());

  it('GET /api/v1/reference answers an HTML page, without a credential, that renders the served document', async () => {
    const res = await t.request({ url: '/api/v1/reference', key: null });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toMatch(/^<!doctype html>/);
    expect(res.body).toContain('data-spec-url="/api/v1/spec"');
    expect(res.body).toContain('<script src="/api/v1/reference/redoc.standalone.js"></script>');
    expect(res.body).toContain('<script src="/api/v1/reference/reference.js"></script>');
    // Offline: nothing is loaded from another origin.
    expect(res.body).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['content-security-policy']).toContain("img-src 'self' data:");
  });

  it('serves Redoc’s standalone bundle from node_modules and the page’s script', async () => {
    const bundle = await t.request({ url: '/api/v1/reference/redoc.standalone.js', key: null });
    expect(bundle.statusCode).toBe(200);
    expect(bundle.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(bundle.body.length).toBeGreaterThan(100_000);
    expect(bundle.body).toContain('Redoc');

    const script = await t.request({ url: '/api/v1/reference/reference.js', key: null });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.body).toContain("getAttribute('data-spec-url')");
    expect(script.body).toContain('Redoc.init(');
  });

  it('leaves the document itself behind a credential', async () => {
    problem(await t.request({ url: '/api/v1/spec', key: null }), 401, 'UNAUTHENTICATED');
    expect((await t.request({ url: '/api/v1/spec' })).statusCode).toBe(200);
  });

  it('is not an operation of the OpenAPI document', async () => {
    const doc = (await t.request({ url: '/api/v1/spec' })).json() as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/api/v1/reference'))).toEqual([]);
  });

  it('npm run reference inlines the committed document and the bundle into one page that needs no server', () => {
    const doc = JSON.parse(fs.readFileSync(OPENAPI_FILE, 'utf8')) as { info: { title: string } };
    const html = standaloneReference(doc);
    const json = /<script id="openapi-document" type="application\/json">([\s\S]*?)<\/script>/.exec(html)?.[1];
    expect(json).toBeDefined();
    expect(JSON.parse(json ?? 'null')).toEqual(doc);
    // Only the three script elements close: no `</script` from the bundle or the document ends one early.
    expect(html.match(/<\/script>/g)).toHaveLength(3);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });
});
