import fs from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_FILE } from '../scripts/write-openapi.js';
import { STORE_INDEPENDENT, TestApp, problem } from './harness.js';
import { KNOWN_EXTENSIONS, REFERENCE_OPERATIONS } from './reference-operations.js';

type Operation = {
  operationId?: string;
  summary?: string;
  security?: unknown[];
  requestBody?: {
    required?: boolean;
    content: Record<string, { schema: { type?: string; required?: string[]; properties?: Record<string, Record<string, unknown>> } }>;
  };
  responses: Record<string, unknown>;
  'x-extension'?: unknown;
};

/** How a summary names an operation beyond the reference: `… (extension; admin)` or `Extension: …`. */
const saysExtension = (op: Operation) => /^Extension:|\(extension\b/.test(op.summary ?? '');

describe.each(STORE_INDEPENDENT)('OpenAPI document (%s)', (dialect) => {
  let t: TestApp;
  let doc: { openapi: string; info: { version: string }; paths: Record<string, Record<string, Operation>> };
  beforeAll(async () => {
    t = await TestApp.create(dialect);
    const res = await t.request({ url: '/api/v1/spec' });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });
  afterAll(async () => t?.close());

  it('GET /api/v1/spec needs a credential (spec: Authentication 1)', async () => {
    problem(await t.request({ url: '/api/v1/spec', key: null }), 401, 'UNAUTHENTICATED');
  });

  it('is OpenAPI 3.1.0, document version 1.0.0 (spec: Versioning)', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
  });

  it('passes an OpenAPI 3.1 schema validator', async () => {
    const result = await new Validator().validate(structuredClone(doc) as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('matches the committed openapi.json (run `npm run openapi` after changing a route)', () => {
    const committed = JSON.parse(fs.readFileSync(OPENAPI_FILE, 'utf8'));
    expect(doc).toEqual(committed);
  });

  it('describes security and error responses on every API operation, with unique operation ids', () => {
    const ids = new Set<string>();
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        expect(op.operationId, `${method} ${path}`).toBeTruthy();
        expect(ids.has(op.operationId ?? '')).toBe(false);
        ids.add(op.operationId ?? '');
        // Only the health probes, the key sets and the embed session exchange answer without a credential.
        if (
          path === '/healthz' ||
          path === '/readyz' ||
          path === '/.well-known/jwks.json' ||
          path === '/.well-known/openid-configuration' ||
          path === '/api/v1/data-api/jwks.json' ||
          path === '/api/v1/embed/jwks.json' ||
          path === '/api/v1/embed/session/token'
        ) {
          expect(op.security).toEqual([]);
          continue;
        }
        // The OAuth and git-host callbacks need no credential (their `state` names the user), but answer problem details like the API.
        if (path === '/api/v1/oauth-integrations/callback' || path === '/api/v1/git-host/callback') {
          expect(op.security).toEqual([]);
          expect(op.responses['400'], `${method} ${path} 400`).toBeDefined();
          continue;
        }
        expect(op.security, `${method} ${path}`).toBeUndefined(); // inherits the global bearerAuth
        // SCIM answers errors in its own schema and media type (RFC 7644 section 3.12), the REST API in
        // problem details narrowed to the route's codes (see problem-codes.test.ts).
        if (path.startsWith('/api/scim/v2')) {
          const errorContent = { 'application/scim+json': { schema: { $ref: '#/components/schemas/ScimError' } } };
          for (const status of ['401', '403', '404', '500']) {
            expect(op.responses[status], `${method} ${path} ${status}`).toEqual({ description: expect.any(String), content: errorContent });
          }
          continue;
        }
        expect(op.responses['401'], `${method} ${path} 401`).toEqual({ $ref: '#/components/responses/Unauthenticated' });
        expect(op.responses['500'], `${method} ${path} 500`).toEqual({ $ref: '#/components/responses/Internal' });
        expect(op.responses['404'], `${method} ${path} 404`).toBeDefined();
      }
    }
    expect(ids.size).toBeGreaterThan(3);
  });

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })));

  it('marks exactly the operations its summaries call extensions with `x-extension: true`, so clients can tell them apart (docs/api/reference.md)', () => {
    const marked = operations().filter(({ op }) => op['x-extension'] !== undefined);
    for (const { name, op } of marked) expect(op['x-extension'], name).toBe(true);
    expect(marked.map(({ name }) => name).sort()).toEqual(
      operations()
        .filter(({ op }) => saysExtension(op))
        .map(({ name }) => name)
        .sort(),
    );
  });

  it('marks the known extensions, the dashboard versions and both OAuth callbacks among them, and none of the reference’s operations', () => {
    const byName = new Map(operations().map(({ name, op }) => [name, op]));
    for (const name of KNOWN_EXTENSIONS) {
      expect(byName.get(name), `${name} is served`).toBeDefined();
      expect(byName.get(name)?.['x-extension'], name).toBe(true);
    }
    for (const name of [
      'GET /api/v1/deployments/{deploymentId}/workbooks/{workbookId}/dashboard/versions',
      'GET /api/v1/oauth-integrations/callback',
      'GET /api/v1/git-host/callback',
    ]) {
      expect(KNOWN_EXTENSIONS).toContain(name);
    }
    for (const name of REFERENCE_OPERATIONS) {
      expect(byName.get(name), `${name} is served`).toBeDefined();
      expect(byName.get(name)?.['x-extension'], name).toBeUndefined();
    }
    // Every operation is one or the other: a new route is either listed as the reference's or marked.
    const listed = new Set(REFERENCE_OPERATIONS);
    expect(
      operations()
        .filter(({ name, op }) => !listed.has(name) && op['x-extension'] === undefined)
        .map(({ name }) => name),
    ).toEqual([]);
    // A reference path can have an extension beside it: the reference's PATCH, this product's GET.
    expect(byName.get('PATCH /api/v1/users/me/settings')?.['x-extension']).toBeUndefined();
    expect(byName.get('GET /api/v1/users/me/settings')?.['x-extension']).toBe(true);
  });

  it('documents the file upload’s multipart/form-data body: transaction, fileName and the file’s bytes (reference 2.7)', () => {
    const body = doc.paths['/build/api/v1/deployments/{deploymentId}/data-model/upload/file']?.post?.requestBody;
    expect(body?.required).toBe(true);
    expect(Object.keys(body?.content ?? {})).toEqual(['multipart/form-data']);
    const schema = body?.content['multipart/form-data']?.schema;
    expect(schema?.type).toBe('object');
    expect([...(schema?.required ?? [])].sort()).toEqual(['file', 'fileName', 'transaction']);
    expect(schema?.properties?.transaction).toMatchObject({ type: 'string' });
    expect(schema?.properties?.fileName).toMatchObject({ type: 'string' });
    expect(schema?.properties?.file).toMatchObject({ type: 'string', format: 'binary' });
  });
});
