import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installBodyRules } from '../src/http/body.js';
import { installErrorHandler } from '../src/http/error-handler.js';
import { installInputGuard } from '../src/http/input-guard.js';
import { STORE_INDEPENDENT, TestApp, problem } from './harness.js';
import { scimError, SCIM, USER_SCHEMA } from './scim-harness.js';

/** Issue 11, "No 500 from client input": request-level checks shared by every route. */
describe.each(STORE_INDEPENDENT)('input hardening (%s)', (dialect) => {
  let t: TestApp;
  let deployment: number;
  const json = { 'content-type': 'application/json' };
  const raw = (method: 'POST' | 'PUT' | 'PATCH', url: string, body: string, headers: Record<string, string> = json) =>
    t.request({ method, url, body, headers });
  /** `{"a":{"a":...1}}`, `depth` objects deep, built as text (recursion would not survive the deep ones). */
  const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  const workbook = (slug: string) => `/api/v1/deployments/${deployment}/workbooks/by-slug/${slug}`;
  const report = (publicId: string) => `/api/v1/deployments/${deployment}/reports/by-public-id/${publicId}`;

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    deployment = await t.deployment('hardening');
  });
  afterAll(async () => t?.close());

  describe('JSON nesting is bounded', () => {
    it('free-form fields nest at most 32 levels; deeper is a 400 naming the field, and nothing is stored', async () => {
      const ok = await raw('PUT', workbook('deep-ok'), `{"name":"ok","meta":${nested(32)}}`);
      expect(ok.statusCode).toBe(201);
      const cases: Array<[string, string, string]> = [
        [workbook('deep-meta'), `{"name":"w","meta":${nested(33)}}`, '/body/meta'],
        [workbook('deep-calc'), `{"name":"w","calculatedFields":{"f":${nested(4100)}}}`, '/body/calculatedFields'],
        [report('deep-spec'), `{"name":"r","spec":${nested(40)}}`, '/body/spec'],
        [report('deep-meta'), `{"name":"r","meta":${nested(4100)}}`, '/body/meta'],
        [`/api/v1/deployments/${deployment}`, `{"settings":${nested(33)}}`, '/body/settings'],
      ];
      for (const [url, body, pointer] of cases) {
        const res = await raw('PUT', url, body);
        expect(problem(res, 400, 'VALIDATION_FAILED').errors?.map((e) => e.pointer)).toEqual([pointer]);
      }
      for (const slug of ['deep-meta', 'deep-calc']) {
        const listed = await t.request({ url: `/api/v1/deployments/${deployment}/workspace?first=200` });
        expect(JSON.stringify(listed.json())).not.toContain(slug);
      }
    });

    it('undeclared fields a dashboard keeps are open JSON too, bounded the same way', async () => {
      const widget = { id: 'w1', type: 'TEXT', position: { x: 0, y: 0, w: 1, h: 1 } };
      const draft = (extra: string) => `{"name":"d","dashboardDraft":{"widgets":[${JSON.stringify(widget).slice(0, -1)},"future":${extra}}]}}`;
      expect((await raw('PUT', workbook('dash-ok'), draft(nested(3)))).statusCode).toBe(201);
      const res = await raw('PUT', workbook('dash-deep'), draft(nested(33)));
      expect(problem(res, 400, 'VALIDATION_FAILED').errors?.map((e) => e.pointer)).toEqual(['/body/dashboardDraft/widgets/0/future']);
    });

    it('a body of 100,000 nested arrays or objects is a 400, and the server keeps answering', async () => {
      for (const body of ['['.repeat(100_000) + ']'.repeat(100_000), `{"name":"x","meta":${nested(100_000)}}`]) {
        const res = await raw('PUT', workbook('abyss'), body);
        problem(res, 400, 'VALIDATION_FAILED');
      }
      expect((await t.request({ url: '/api/v1/user-attributes' })).statusCode).toBe(200);
    });

    it("SCIM bodies are bounded too, answered in SCIM's error schema", async () => {
      const body = `{"schemas":["${USER_SCHEMA}"],"userName":"deep@example.com","name":${nested(100)}}`;
      const res = await t.request({ method: 'POST', url: `${SCIM}/Users`, body, headers: { 'content-type': 'application/scim+json' } });
      expect(scimError(res, 400).detail).toContain('/body/name');
    });
  });

  describe('NUL characters, lone surrogates and numbers past a 64-bit float are refused with a 400 naming them', () => {
    it('a NUL character in a body string, at any depth, is a 400 naming the field, on both stores', async () => {
      const res = await t.request({ method: 'POST', url: `/api/v1/deployments/${deployment}/folders`, body: { name: 'a\u0000b' } });
      expect(problem(res, 400, 'VALIDATION_FAILED').errors).toEqual([{ pointer: '/body/name', message: 'must not contain a NUL character (\\u0000)' }]);
      const deep = await raw('PUT', workbook('nul'), '{"name":"w","meta":{"list":[1,{"note":"x\\u0000"}]}}');
      expect(problem(deep, 400, 'VALIDATION_FAILED').errors?.map((e) => e.pointer)).toEqual(['/body/meta/list/1/note']);
    });

    it('object keys count as strings, and lone surrogates are refused the same way', async () => {
      const key = await raw('PUT', workbook('nul-key'), '{"name":"w","meta":{"a\\u0000b":1}}');
      expect(problem(key, 400, 'VALIDATION_FAILED').errors?.[0]?.pointer).toBe('/body/meta/a\u0000b');
      for (const lone of ['\\ud800', '\\udc00x', 'x\\ud83d']) {
        const res = await raw('POST', `/api/v1/deployments/${deployment}/folders`, `{"name":"${lone}"}`);
        expect(problem(res, 400, 'VALIDATION_FAILED').errors).toEqual([
          { pointer: '/body/name', message: 'must be well-formed Unicode (it holds a lone UTF-16 surrogate)' },
        ]);
      }
      // A well-formed pair is an ordinary character.
      expect((await t.request({ method: 'POST', url: `/api/v1/deployments/${deployment}/folders`, body: { name: 'rocket \ud83d\ude80' } })).statusCode).toBe(
        201,
      );
    });

    it('a number beyond a 64-bit float (1e400, read as Infinity) is a 400 naming it, and nothing is stored', async () => {
      const body = '{"name":"r","periodComparisons":[{"measure":"m","timeDimension":"t","offset":{"amount":1e400,"unit":"day"}}]}';
      const res = await raw('PUT', report('infinite'), body);
      expect(problem(res, 400, 'VALIDATION_FAILED').errors).toEqual([
        { pointer: '/body/periodComparisons/0/offset/amount', message: 'must be a finite number (it is beyond what a 64-bit float holds)' },
      ]);
      const meta = await raw('PUT', workbook('infinite'), '{"name":"w","meta":{"x":-1e400}}');
      expect(problem(meta, 400, 'VALIDATION_FAILED').errors?.[0]?.pointer).toBe('/body/meta/x');
      expect((await t.request({ url: `/api/v1/deployments/${deployment}/reports?first=200` })).json().items.map((r: { name: string }) => r.name)).not.toContain(
        'r',
      );
    });

    it('a NUL in the query or a path segment is a 400 naming it', async () => {
      const query = await t.request({ url: `/api/v1/deployments/${deployment}/workspace?search=a%00b` });
      expect(problem(query, 400, 'VALIDATION_FAILED').errors).toEqual([{ pointer: '/query/search', message: 'must not contain a NUL character (\\u0000)' }]);
      const path = await t.request({ method: 'PUT', url: `/api/v1/deployments/${deployment}/workbooks/by-slug/a%00b`, body: { name: 'x' } });
      expect(problem(path, 400, 'VALIDATION_FAILED').errors?.[0]?.pointer).toBe('/path/slug');
    });
  });

  describe("bodies the parser cannot read are answered with a problem and a code, in the route's error schema", () => {
    const url = () => `/api/v1/deployments/${deployment}/folders`;

    it('bad JSON and an empty JSON body are problem+json 400 with a code', async () => {
      problem(await raw('POST', url(), '{"name":'), 400, 'MALFORMED_JSON');
      problem(await raw('POST', url(), ''), 400, 'MALFORMED_JSON');
    });

    it('a charset other than UTF-8 is a 400; utf-8 in any spelling is read', async () => {
      const latin = await raw('POST', url(), '{"name":"x"}', { 'content-type': 'application/json; charset=iso-8859-1' });
      expect(problem(latin, 400, 'MALFORMED_JSON').detail).toContain('iso-8859-1');
      problem(await raw('POST', url(), '{"name":"x"}', { 'content-type': 'application/json; charset=utf-16' }), 400, 'MALFORMED_JSON');
      expect((await raw('POST', url(), '{"name":"utf8"}', { 'content-type': 'application/json; charset=UTF-8' })).statusCode).toBe(201);
    });

    it('text/plain and form data are 415 problem+json', async () => {
      problem(await raw('POST', url(), '{"name":"x"}', { 'content-type': 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
      problem(await raw('POST', url(), 'name=x', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('a route whose body is optional accepts an empty one with a JSON content type', async () => {
      const created = await t.request({ method: 'PUT', url: workbook('to-copy'), body: { name: 'to copy' } });
      const res = await raw('POST', `/api/v1/deployments/${deployment}/workbooks/${created.json().id}/duplicate`, '');
      expect(res.statusCode).toBe(200);
    });

    it('SCIM keeps its own error schema for bad JSON and text/plain, and takes both JSON media types', async () => {
      const send = (body: string, type: string) => t.request({ method: 'POST', url: `${SCIM}/Users`, body, headers: { 'content-type': type } });
      scimError(await send('{"schemas":', 'application/scim+json'), 400, 'invalidSyntax');
      scimError(await send('{"userName":"x"}', 'text/plain'), 415);
      for (const [type, name] of [
        ['application/scim+json', 'a'],
        ['application/json', 'b'],
      ]) {
        const res = await send(JSON.stringify({ schemas: [USER_SCHEMA], userName: `${name}@example.com` }), type!);
        expect(res.statusCode).toBe(201);
      }
    });

    it("the 413 states the route's limit", async () => {
      const res = await t.request({ method: 'POST', url: url(), body: { name: 'x'.repeat(1024 * 1024) } });
      expect(problem(res, 413, 'PAYLOAD_TOO_LARGE').detail).toBe("The request body exceeds this operation's limit of 1 MiB.");
    });
  });

  describe('integer path ids are strict', () => {
    it('1.0, 01, +1, " 1", 1e0, 0, -1, 0x1 and 2^53 are 400 naming the parameter, and act on nothing', async () => {
      const folder = (await t.request({ method: 'POST', url: `/api/v1/deployments/${deployment}/folders`, body: { name: 'kept' } })).json().id as number;
      for (const spelled of [
        `${folder}.0`,
        `0${folder}`,
        `+${folder}`,
        `%20${folder}`,
        `${folder}e0`,
        '0',
        '-1',
        `0x${folder.toString(16)}`,
        '9007199254740992',
        '99999999999999999999',
      ]) {
        const res = await t.request({ method: 'DELETE', url: `/api/v1/deployments/${deployment}/folders/${spelled}` });
        expect(problem(res, 400, 'VALIDATION_FAILED').errors?.map((e) => e.pointer)).toEqual(['/path/folderId']);
      }
      expect((await t.request({ url: `/api/v1/deployments/${deployment}/folders/${folder}` })).statusCode).toBe(200);
      problem(await t.request({ method: 'DELETE', url: '/api/v1/policies/1.0' }), 400, 'VALIDATION_FAILED');
      const both = problem(await t.request({ url: `/api/v1/deployments/0${deployment}/folders/0${folder}` }), 400, 'VALIDATION_FAILED');
      expect(both.errors?.map((e) => e.pointer).sort()).toEqual(['/path/deploymentId', '/path/folderId']);
    });

    it('integer query parameters are strict too: ids, page sizes and SCIM paging', async () => {
      const admin = t.admin.userId;
      expect((await t.request({ url: `/api/v1/api-keys?userId=${admin}` })).statusCode).toBe(200);
      for (const spelled of [`${admin}.0`, `${admin}e0`, `0${admin}`, `%2B${admin}`, `${admin}%20`, '%0A%09']) {
        const res = await t.request({ url: `/api/v1/api-keys?userId=${spelled}` });
        expect(problem(res, 400, 'VALIDATION_FAILED').errors?.map((e) => e.pointer)).toEqual(['/query/userId']);
      }
      problem(await t.request({ url: `/api/v1/deployments/${deployment}/reports?createdBy=${admin}e0` }), 400, 'VALIDATION_FAILED');
      problem(await t.request({ url: `/api/v1/deployments/${deployment}/folders?first=1.0` }), 400, 'VALIDATION_FAILED');
      for (const query of ['startIndex=%0A%09', 'count=%0A%09', 'count=1.0', 'startIndex=01', 'startIndex=1e25']) {
        const res = await t.request({ url: `/api/scim/v2/Users?${query}` });
        expect(res.statusCode, query).toBe(400);
        expect(res.headers['content-type']).toContain('application/scim+json');
      }
      expect((await t.request({ url: '/api/scim/v2/Users?startIndex=1&count=0' })).statusCode).toBe(200);
    });

    it('a key scoped to a deployment gets no further with another spelling of its id', async () => {
      const owner = await t.user('ADMIN');
      const scoped = await t.key(owner.userId, { deploymentIds: [deployment] });
      expect((await t.request({ url: `/api/v1/deployments/${deployment}`, key: scoped })).statusCode).toBe(200);
      for (const spelled of [`0${deployment}`, `${deployment}.0`, `${deployment}e0`]) {
        const res = await t.request({ method: 'DELETE', url: `/api/v1/deployments/${spelled}`, key: scoped });
        expect([400, 403]).toContain(res.statusCode);
      }
      expect((await t.request({ url: `/api/v1/deployments/${deployment}` })).statusCode).toBe(200);
    });
  });

  describe('the Host header must be given once', () => {
    /** Sends `request` as raw bytes (no client library would send two Host headers) and returns the answer. */
    async function rawHttp(request: string): Promise<{ status: number; text: string }> {
      const address = t.app.server.address() as AddressInfo;
      const socket = connect(address.port, '127.0.0.1');
      socket.write(request);
      let text = '';
      socket.setEncoding('utf8');
      for await (const chunk of socket) {
        text += chunk as string;
        if (/\r\n\r\n/.test(text) && text.includes('}')) break;
      }
      socket.destroy();
      return { status: Number(text.slice(9, 12)), text };
    }

    beforeAll(async () => {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
    });

    it('two Host headers are refused with 400, on API routes, unknown routes and SCIM routes', async () => {
      const twice = (path: string) =>
        `GET ${path} HTTP/1.1\r\nHost: localhost\r\nHost: other.example\r\nAuthorization: Bearer ${t.admin.key}\r\nConnection: close\r\n\r\n`;
      for (const path of ['/api/v1/user-attributes', '/api/v1/no-such-route']) {
        const { status, text } = await rawHttp(twice(path));
        expect(status).toBe(400);
        expect(text).toContain('application/problem+json');
        expect(text).toContain('/headers/host');
      }
      const scim = await rawHttp(twice(`${SCIM}/Users`));
      expect(scim.status).toBe(400);
      expect(scim.text).toContain('urn:ietf:params:scim:api:messages:2.0:Error');
      const once = await rawHttp(
        `GET /api/v1/user-attributes HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${t.admin.key}\r\nConnection: close\r\n\r\n`,
      );
      expect(once.status).toBe(200);
    });
  });
});

/**
 * Routes to come (uploads, git over HTTPS, large manifests) declare their own limit and media
 * types. No route of the API does yet, so this app has one, on the same body plumbing.
 */
describe('each route can declare its own body limit and content types', () => {
  const app = Fastify({ bodyLimit: 1024 * 1024 });
  beforeAll(async () => {
    installErrorHandler(app);
    installBodyRules(app);
    installInputGuard(app);
    // As a route plugin would: its parser applies to its own routes only.
    await app.register(async (uploads) => {
      uploads.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
      uploads.post('/upload', { bodyLimit: 2 * 1024 * 1024, config: { contentTypes: ['application/octet-stream'] } }, async (request) => ({
        bytes: (request.body as Buffer).length,
      }));
    });
    app.post('/small', { bodyLimit: 512 }, async () => ({ ok: true }));
    app.post('/json', async () => ({ ok: true }));
    await app.ready();
  });
  afterAll(async () => app.close());

  it('a route takes a body up to its own limit, and the 413 states that limit', async () => {
    const upload = (size: number) =>
      app.inject({ method: 'POST', url: '/upload', payload: Buffer.alloc(size), headers: { 'content-type': 'application/octet-stream' } });
    expect((await upload(1024 * 1024 + 1)).json()).toEqual({ bytes: 1024 * 1024 + 1 });
    const over = await upload(2 * 1024 * 1024 + 1);
    expect(over.statusCode).toBe(413);
    expect(over.json().detail).toBe("The request body exceeds this operation's limit of 2 MiB.");
    const small = await app.inject({ method: 'POST', url: '/small', payload: { pad: 'x'.repeat(600) } });
    expect(small.json()).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE', detail: "The request body exceeds this operation's limit of 512 bytes." });
  });

  it('a route that declares its media types refuses others with 415, JSON included; routes that declare none take JSON only', async () => {
    const json = await app.inject({ method: 'POST', url: '/upload', payload: { a: 1 } });
    expect(json.json()).toMatchObject({
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
      detail: 'Content-Type application/json is not accepted here; send application/octet-stream.',
    });
    const bytes = await app.inject({ method: 'POST', url: '/json', payload: Buffer.alloc(4), headers: { 'content-type': 'application/octet-stream' } });
    expect(bytes.json()).toMatchObject({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
    expect((await app.inject({ method: 'POST', url: '/json', payload: { a: 1 } })).json()).toEqual({ ok: true });
  });
});
