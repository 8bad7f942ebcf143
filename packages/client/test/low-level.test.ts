import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { ApiError, createClient, unwrap, type Deployment, type Folder, type ProblemCode, type ProblemCodeOf, type ProblemDetails } from '../src/node.js';
import { startTestServer, Workspace, type TestServer } from './support.js';

describe.each(STORE_INDEPENDENT)('typed low-level calls (%s)', (dialect) => {
  let server: TestServer;
  let ws: Workspace;
  beforeAll(async () => {
    server = await startTestServer(dialect);
    ws = await Workspace.create(server.client());
  });
  afterAll(async () => server?.close());

  it('returns the typed data of a success, with the response', async () => {
    const client = server.client();
    const result = await client.GET('/api/v1/deployments/{deploymentId}', { params: { path: { deploymentId: ws.deploymentId } } });
    expectTypeOf(result.data).toEqualTypeOf<Deployment | undefined>();
    expect(result.error).toBeUndefined();
    expect(result.response.status).toBe(200);
    expect(result.data).toMatchObject({ id: ws.deploymentId, access: 'MANAGE' });
    const me = unwrap(await client.GET('/api/v1/users/me'));
    expect(me.email).toBe('admin@localhost');
  });

  it('returns problem details as `error` for a 404, and unwrap throws them as an ApiError', async () => {
    const client = server.client();
    const result = await client.GET('/api/v1/deployments/{deploymentId}', { params: { path: { deploymentId: 987654 } } });
    expect(result.data).toBeUndefined();
    expectTypeOf(result.error).toExtend<ProblemDetails | undefined>();
    // Issue 11, Publish the error codes: `code` is typed with exactly what the operation documents.
    expectTypeOf<NonNullable<typeof result.error>['code']>().toEqualTypeOf<ProblemCodeOf<'getDeployment'>>();
    expectTypeOf<ProblemCodeOf<'getDeployment'>>().toEqualTypeOf<
      | 'VALIDATION_FAILED'
      | 'UNAUTHENTICATED'
      | 'FORBIDDEN'
      | 'KEY_SCOPE_FORBIDDEN'
      | 'TENANT_NOT_FOUND'
      | 'DEPLOYMENT_NOT_FOUND'
      | 'RATE_LIMITED'
      | 'INTERNAL'
      | 'UNAVAILABLE'
    >();
    if (result.error?.status === 404) expectTypeOf(result.error.code).toEqualTypeOf<'TENANT_NOT_FOUND' | 'DEPLOYMENT_NOT_FOUND'>();
    expect(result.error).toMatchObject({ status: 404, code: 'DEPLOYMENT_NOT_FOUND' });

    const error = catchError(() => unwrap(result));
    expect(error).toBeInstanceOf(ApiError);
    expectTypeOf(error.code).toEqualTypeOf<ProblemCode | undefined>();
    expect(error).toMatchObject({
      name: 'ApiError',
      status: 404,
      code: 'DEPLOYMENT_NOT_FOUND',
      title: 'Deployment not found',
      detail: 'Deployment 987654 does not exist.',
      method: 'GET',
      url: `${server.url}/api/v1/deployments/987654`,
      requestId: result.response.headers.get('x-request-id'),
    });
    expect(error.requestId).toMatch(/\S/);
    expect(error.message).toBe('404 Deployment not found: Deployment 987654 does not exist.');
    expect(error.problem).toEqual(result.error);
  });

  it('carries each invalid field of a 400 validation error, and the request id the caller sent', async () => {
    const client = server.client({ headers: { 'X-Request-Id': 'trace-validation-1' } });
    const result = await client.POST('/api/v1/deployments/{deploymentId}/folders', {
      params: { path: { deploymentId: ws.deploymentId } },
      body: { name: '', parentId: 0 },
    });
    const error = catchError(() => unwrap(result));
    expect(error).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', title: 'The request is not valid', method: 'POST', requestId: 'trace-validation-1' });
    expect(error.errors?.map((e) => e.pointer).sort()).toEqual(['/body/name', '/body/parentId']);
    expect(error.message).toMatch(/^400 The request is not valid: .*\/body\/name/);
  });

  it('unwraps a 204 to undefined, and the change is made', async () => {
    const client = server.client();
    const folderId = await ws.folder();
    const params = { path: { deploymentId: ws.deploymentId, folderId } };
    const deleted = unwrap(await client.DELETE('/api/v1/deployments/{deploymentId}/folders/{folderId}', { params }));
    expect(deleted).toBeUndefined();
    expect((await client.GET('/api/v1/deployments/{deploymentId}/folders/{folderId}', { params })).response.status).toBe(404);
  });

  it('sends the token as a Bearer credential: a wrong one gets a 401', async () => {
    const client = server.client({ token: 'mapi_' + 'x'.repeat(40) });
    const result = await client.GET('/api/v1/users/me');
    expect(result.response.status).toBe(401);
    expect(result.error).toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('takes a base URL with a trailing slash, and refuses one that ends in /api/v1', async () => {
    const client = server.client({ baseUrl: `${server.url}/` });
    const typed: Folder = unwrap(
      await client.POST('/api/v1/deployments/{deploymentId}/folders', { params: { path: { deploymentId: ws.deploymentId } }, body: { name: 'slash' } }),
    );
    expect(typed).toMatchObject({ name: 'slash', parentId: null, deploymentId: ws.deploymentId });
    expect(() => server.client({ baseUrl: `${server.url}/api/v1` })).toThrow(/without \/api\/v1/);
    expect(() => server.client({ token: ' ' })).toThrow(TypeError);
  });

  it('trusts a self-signed server through `ca` (PEM text or bytes) and fails without it, without retrying', async () => {
    const bytes = server.client({ ca: new TextEncoder().encode(server.ca) });
    expect((await bytes.GET('/api/v1/users/me')).response.status).toBe(200);

    let attempts = 0;
    const untrusting = createClient({
      baseUrl: server.url,
      token: server.token,
      fetch: (input, init) => {
        attempts++;
        return fetch(input, init);
      },
    });
    const failure = await untrusting.GET('/api/v1/users/me').then(
      () => null,
      (error: unknown) => error,
    );
    expect(causes(failure).join(' ')).toMatch(/SELF_SIGNED|CERT/);
    expect(attempts).toBe(1);
  });
});

function catchError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    return error as ApiError;
  }
  throw new Error('expected an error');
}

/** The codes along an error's cause chain, e.g. fetch's TypeError caused by a TLS error. */
function causes(error: unknown): string[] {
  const codes: string[] = [];
  for (let e = error as { code?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e) codes.push(String(e.code));
  return codes;
}
