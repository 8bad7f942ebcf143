import Fastify from 'fastify';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installErrorHandler } from '../src/http/error-handler.js';
import { installOpenApi } from '../src/http/openapi.js';
import { ApiError, PROBLEMS, type ProblemCode } from '../src/shared/problems.js';
import { sharedSchemas } from '../src/shared/schemas.js';
import { STORE_INDEPENDENT, TestApp, problem } from './harness.js';

/*
 * Issue 11, "Publish the error codes": every route's error responses name their statuses and
 * the codes it can answer, and a route that answers a code its document does not list fails.
 * The test harness builds every app with `strictProblemCodes`, so the whole suite enforces the
 * documented codes; the tests here prove that mechanism and the document's consistency.
 */

type Json = Record<string, unknown>;
type Response = { $ref?: string; description?: string; headers?: Json; content?: Record<string, { schema?: Json }> };
type Operation = { operationId: string; security?: unknown[]; parameters?: unknown[]; requestBody?: unknown; responses: Record<string, Response> };
type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Json>; responses?: Record<string, Response> } };

/** A one-route app built from the same plumbing as the real one: error handler and OpenAPI hooks. */
async function tinyApp(strict: boolean) {
  const logged: Array<{ level: number; msg: string }> = [];
  const app = Fastify({ logger: { level: 'error', stream: { write: (line: string) => void logged.push(JSON.parse(line)) } } });
  for (const schema of sharedSchemas) app.addSchema(schema);
  installErrorHandler(app, [], { strictProblemCodes: strict });
  await installOpenApi(app);
  app.get(
    '/things/:code',
    {
      schema: {
        operationId: 'getThing',
        params: Type.Object({ code: Type.String() }),
        response: { 200: Type.Object({}) },
        problems: ['FOLDER_NOT_FOUND'],
      },
    },
    async (request) => {
      const { code } = request.params as { code: ProblemCode };
      throw new ApiError(code, `thrown on purpose: ${code}`);
    },
  );
  await app.ready();
  return { app, logged };
}

describe('strict problem codes hold a route to the codes its document lists', () => {
  it('a route answering a code it declares keeps its status and code', async () => {
    const { app } = await tinyApp(true);
    problem(await app.inject({ url: '/things/FOLDER_NOT_FOUND' }), 404, 'FOLDER_NOT_FOUND');
    // Generic codes come with every route without being listed by it.
    problem(await app.inject({ url: '/things/UNAUTHENTICATED' }), 401, 'UNAUTHENTICATED');
    await app.close();
  });

  it('a route throwing a code its document does not list fails with 500, naming the route and the code, and logs it', async () => {
    const { app, logged } = await tinyApp(true);
    const body = problem(await app.inject({ url: '/things/GROUP_NOT_FOUND' }), 500, 'INTERNAL');
    expect(body.detail).toContain('GET /things/:code answered GROUP_NOT_FOUND (404)');
    expect(logged.some((line) => line.level >= 50 && line.msg.includes('GROUP_NOT_FOUND'))).toBe(true);
    // The same code under a declared status is still undeclared: codes are checked, not only statuses.
    problem(await app.inject({ url: '/things/FOLDER_NAME_TAKEN' }), 500, 'INTERNAL');
    await app.close();
  });

  it('without the strict option (production), the thrown code is answered as it is', async () => {
    const { app } = await tinyApp(false);
    problem(await app.inject({ url: '/things/GROUP_NOT_FOUND' }), 404, 'GROUP_NOT_FOUND');
    await app.close();
  });

  it("the route's document lists exactly its generic and declared codes, per status", async () => {
    const { app } = await tinyApp(true);
    const doc = app.swagger() as unknown as Doc;
    const responses = doc.paths['/things/{code}']!.get!.responses;
    expect(Object.keys(responses).sort()).toEqual(['200', '400', '401', '404', '429', '500', '503']);
    const codes = (res: Response) =>
      ((res.content?.['application/problem+json']?.schema?.allOf as Json[])[1]!.properties as Json & { code: { enum: string[] } }).code.enum;
    expect(codes(responses['404']!)).toEqual(['TENANT_NOT_FOUND', 'FOLDER_NOT_FOUND']);
    expect(responses['401']).toEqual({ $ref: '#/components/responses/Unauthenticated' });
    await app.close();
  });
});

describe.each(STORE_INDEPENDENT)('published error codes (%s)', (dialect) => {
  let t: TestApp;
  let doc: Doc;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
    doc = (await t.request({ url: '/api/v1/spec' })).json();
  });
  afterAll(async () => t?.close());

  const resolve = (res: Response): Response => (res.$ref ? doc.components.responses![res.$ref.replace('#/components/responses/', '')]! : res);
  const operations = () => Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));

  it('ProblemDetails.code is an enum of every code in the table, so clients get one union type', () => {
    const code = (doc.components.schemas.ProblemDetails!.properties as Record<string, { enum: string[] }>).code!;
    expect(code.enum).toEqual(Object.keys(PROBLEMS));
  });

  it('every error response of every operation has a description and lists only codes of PROBLEMS under their own status', () => {
    let checked = 0;
    for (const { path, method, op } of operations()) {
      // Routes without a credential (health probes) keep their own error schema.
      if (op.security?.length === 0) continue;
      const where = `${method.toUpperCase()} ${path}`;
      for (const [status, raw] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        const res = resolve(raw);
        expect(res, `${where} ${status}`).toBeDefined();
        expect(res.description?.length ?? 0, `${where} ${status} has a description`).toBeGreaterThan(10);
        if (path.startsWith('/api/scim/v2')) {
          expect(res.content?.['application/scim+json']?.schema, `${where} ${status}`).toEqual({ $ref: '#/components/schemas/ScimError' });
          continue;
        }
        const [base, narrowed] = res.content?.['application/problem+json']?.schema?.allOf as [
          Json,
          { properties: { status: { enum: number[] }; code: { enum: string[] } } },
        ];
        expect(base, `${where} ${status}`).toEqual({ $ref: '#/components/schemas/ProblemDetails' });
        expect(narrowed.properties.status.enum, `${where} ${status}`).toEqual([Number(status)]);
        expect(narrowed.properties.code.enum.length, `${where} ${status} lists codes`).toBeGreaterThan(0);
        for (const code of narrowed.properties.code.enum) {
          expect(PROBLEMS[code as ProblemCode]?.status, `${where}: ${code} is in PROBLEMS with status ${status}`).toBe(Number(status));
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(300);
  });

  it('every authenticated operation lists the generic codes: headers, credential, tenant, limits, failures, and body checks where it reads a body', () => {
    const codesOf = (op: Operation) =>
      Object.entries(op.responses)
        .filter(([status]) => Number(status) >= 400)
        .flatMap(
          ([, raw]) =>
            (
              (resolve(raw).content?.['application/problem+json']?.schema?.allOf as Json[] | undefined)?.[1]?.properties as
                { code: { enum: string[] } } | undefined
            )?.code.enum ?? [],
        );
    for (const { path, method, op } of operations()) {
      if (path.startsWith('/api/scim/v2') || op.security?.length === 0) continue;
      const codes = codesOf(op);
      const where = `${method.toUpperCase()} ${path}`;
      expect(codes, where).toEqual(
        expect.arrayContaining(['VALIDATION_FAILED', 'UNAUTHENTICATED', 'TENANT_NOT_FOUND', 'RATE_LIMITED', 'INTERNAL', 'UNAVAILABLE']),
      );
      if (op.requestBody)
        expect(codes, where).toEqual(expect.arrayContaining(['MALFORMED_JSON', 'REQUEST_TIMEOUT', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE']));
      if (path.includes('{deploymentId}')) expect(codes, where).toContain('KEY_SCOPE_FORBIDDEN');
    }
  });

  it('a rate-limited answer and an authentication failure document their headers (Retry-After, WWW-Authenticate)', () => {
    expect(Object.keys(doc.components.responses!.RateLimited!.headers ?? {})).toEqual(['Retry-After']);
    expect(Object.keys(doc.components.responses!.Unauthenticated!.headers ?? {})).toEqual(['WWW-Authenticate']);
  });

  it('a code a route really answers is the one its document lists (createFolder, 409 FOLDER_NAME_TAKEN)', async () => {
    const deploymentId = await t.deployment('codes');
    const url = `/api/v1/deployments/${deploymentId}/folders`;
    expect((await t.request({ method: 'POST', url, body: { name: 'Finance' } })).statusCode).toBe(201);
    const body = problem(await t.request({ method: 'POST', url, body: { name: 'Finance' } }), 409, 'FOLDER_NAME_TAKEN');
    const listed = resolve(doc.paths['/api/v1/deployments/{deploymentId}/folders']!.post!.responses['409']!);
    expect(JSON.stringify(listed)).toContain(body.code);
  });
});
