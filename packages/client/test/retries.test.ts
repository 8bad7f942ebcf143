import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { ApiError, BulkInterruptedError, unwrap, type BulkMoveResult, type MapiClient } from '../src/node.js';
import { retryAfterMs } from '../src/retry.js';
import { FaultyProxy, type Fault } from './faulty-proxy.js';
import { key, startTestServer, Workspace, workbookRef, type TestServer } from './support.js';

const unavailable = (status = 503): Fault => ({ status });

describe('retryAfterMs', () => {
  const now = Date.UTC(2015, 9, 21, 7, 28, 0);

  it('reads delay-seconds', () => {
    expect(retryAfterMs('0', now)).toBe(0);
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs(' 5 ', now)).toBe(5000);
  });

  it('reads an IMF-fixdate ahead as the time until then, and one past as no wait', () => {
    expect(retryAfterMs('Wed, 21 Oct 2015 07:28:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('Thu, 22 Oct 2015 07:28:00 GMT', now)).toBe(86_400_000);
    expect(retryAfterMs('Tue, 20 Oct 2015 07:28:00 GMT', now)).toBe(0);
    expect(retryAfterMs(new Date(now + 2000).toUTCString(), now)).toBe(2000);
  });

  it('reads the obsolete RFC 850 and asctime forms', () => {
    expect(retryAfterMs('Wednesday, 21-Oct-15 07:29:00 GMT', now)).toBe(60_000);
    expect(retryAfterMs('Wed Oct 21 07:28:10 2015', now)).toBe(10_000);
    expect(retryAfterMs('Thu Oct  1 07:28:00 2015', now)).toBe(0);
  });

  it('returns null, for the usual backoff, when the header is absent or not one of those forms', () => {
    for (const junk of [
      '1.5',
      '-1',
      '+3',
      '1e3',
      'soon',
      '',
      '2015-10-21T07:28:30Z',
      '21 Oct 2015 07:28:30 GMT',
      'Wed, 21 Oct 2015 07:28:30 UTC',
      'Wed, 31 Feb 2015 07:28:30 GMT',
      'Wed, 21 Oct 2015 24:00:00 GMT',
    ]) {
      expect(retryAfterMs(junk, now), JSON.stringify(junk)).toBeNull();
    }
    expect(retryAfterMs(null, now)).toBeNull();
  });
});

describe.each(STORE_INDEPENDENT)('retries (%s)', (dialect) => {
  let server: TestServer;
  let proxy: FaultyProxy;
  /** Talks to the server directly, to check its state behind the proxy's back. */
  let direct: MapiClient;
  /** Talks through the proxy. */
  let client: MapiClient;
  let ws: Workspace;
  const ME = '/api/v1/users/me';

  beforeAll(async () => {
    server = await startTestServer(dialect);
    proxy = await FaultyProxy.start(server);
    direct = server.client();
    client = server.client({ baseUrl: proxy.url });
    ws = await Workspace.create(direct);
  });
  beforeEach(() => proxy.reset());
  afterAll(async () => {
    await proxy?.close();
    await server?.close();
  });

  it('retries a GET through 502, 503 and 504 and returns the answer that finally came', async () => {
    const statuses = [502, 503, 504];
    proxy.rule = ({ path }, n) => (path === ME && n < 3 ? unavailable(statuses[n]) : 'forward');
    const me = unwrap(await client.GET(ME));
    expect(me.email).toBe('admin@localhost');
    expect(proxy.count('GET', ME)).toBe(4);
  });

  /**
   * A client whose backoff waits days (full jitter: under 10 s about once in 200,000 runs), below
   * setTimeout's limit of 2^31 - 1 ms, past which Node would wait 1 ms instead.
   */
  const STALLING_BACKOFF = { baseDelayMs: 2_000_000_000, maxDelayMs: 2_000_000_000 };

  // With a backoff that would outlast the test's timeout, the second request comes in time only if
  // the wait Retry-After asks for was taken instead: no timing assertion needed.
  it('honours a 429 Retry-After of 0 seconds instead of backing off', { timeout: 10_000 }, async () => {
    const stalling = server.client({ baseUrl: proxy.url, retry: STALLING_BACKOFF });
    proxy.rule = ({ path }, n) => (path === ME && n === 0 ? { status: 429, headers: { 'retry-after': '0' } } : 'forward');
    expect((await stalling.GET(ME)).response.status).toBe(200);
    expect(proxy.count('GET', ME)).toBe(2);
  });

  it('honours a 503 Retry-After as an HTTP-date in the past, and one a second ahead', { timeout: 10_000 }, async () => {
    const stalling = server.client({ baseUrl: proxy.url, retry: STALLING_BACKOFF });
    const groups = '/api/v1/groups';
    proxy.rule = ({ path }, n) => (path === groups && n === 0 ? { status: 503, headers: { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' } } : 'forward');
    expect((await stalling.GET(groups)).response.status).toBe(200);
    expect(proxy.count('GET', groups)).toBe(2);

    proxy.reset();
    const soon = new Date(Date.now() + 1000).toUTCString();
    proxy.rule = ({ path }, n) => (path === groups && n === 0 ? { status: 429, headers: { 'retry-after': soon } } : 'forward');
    expect((await stalling.GET(groups)).response.status).toBe(200);
    expect(proxy.count('GET', groups)).toBe(2);
  });

  it('returns the 429 when Retry-After asks for longer than maxRetryAfterMs', async () => {
    const keys = '/api/v1/api-keys';
    proxy.rule = ({ path }) => (path === keys ? { status: 429, headers: { 'retry-after': '120' } } : 'forward');
    const result = await client.GET(keys);
    expect(result.response.status).toBe(429);
    expect(() => unwrap(result)).toThrow(ApiError);
    expect(proxy.count('GET', keys)).toBe(1);

    const patient = server.client({ baseUrl: proxy.url, retry: { maxRetryAfterMs: 1000, baseDelayMs: 1 } });
    proxy.rule = ({ path }) => (path === keys ? { status: 429, headers: { 'retry-after': '2' } } : 'forward');
    expect((await patient.GET(keys)).response.status).toBe(429);
    expect(proxy.count('GET', keys)).toBe(2);
  });

  it('does not repeat a POST that creates something, so a 503 creates nothing twice', async () => {
    const path = `/api/v1/deployments/${ws.deploymentId}/folders`;
    proxy.rule = (req, n) => (req.method === 'POST' && req.path === path && n === 0 ? unavailable() : 'forward');
    const name = 'not-retried';
    const result = await client.POST('/api/v1/deployments/{deploymentId}/folders', { params: { path: { deploymentId: ws.deploymentId } }, body: { name } });
    expect(result.response.status).toBe(503);
    expect(proxy.count('POST', path)).toBe(1);
    const names = [];
    for await (const folder of direct.folders.list(ws.deploymentId)) names.push(folder.name);
    expect(names).not.toContain(name);
  });

  it('repeats a POST that carries an Idempotency-Key', async () => {
    const path = `/api/v1/deployments/${ws.deploymentId}/folders`;
    proxy.rule = (req, n) => (req.method === 'POST' && req.path === path && n < 2 ? unavailable() : 'forward');
    const folder = unwrap(
      await client.POST('/api/v1/deployments/{deploymentId}/folders', {
        params: { path: { deploymentId: ws.deploymentId } },
        body: { name: 'keyed' },
        headers: { 'Idempotency-Key': 'create-keyed-folder' },
      }),
    );
    expect(folder.name).toBe('keyed');
    expect(proxy.count('POST', path)).toBe(3);
  });

  it('a refusal after an attempt the server may have applied leaves the chunk unconfirmed, not pending', async () => {
    const dest = await ws.folder();
    const items = [workbookRef(await ws.workbook()), workbookRef(await ws.workbook()), workbookRef(await ws.workbook())];
    const path = `/api/v1/deployments/${ws.deploymentId}/workspace/bulk-move`;
    // Second chunk: the server applies it but the client sees a 502; the retry is then rate limited.
    proxy.rule = (req, n) =>
      req.path !== path ? 'forward' : n === 1 ? 'forward-then-502' : n === 2 ? { status: 429, headers: { 'retry-after': '3600' } } : 'forward';
    const failure = await client.bulkMove(ws.deploymentId, items, dest, { chunkSize: 1 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(BulkInterruptedError);
    const stopped = failure as BulkInterruptedError;
    expect(stopped.cause).toMatchObject({ status: 429 });
    expect(stopped.unconfirmed).toEqual([items[1]]);
    expect(stopped.pending).toEqual([items[2]]);
    const tree = await ws.tree();
    // The unconfirmed item was in fact moved: calling it "pending" would have been false.
    expect(items.map((r) => tree.get(key(r)))).toEqual([dest, dest, null]);
  });

  it('repeats a bulk move, which leaves the same state when sent twice', async () => {
    const dest = await ws.folder();
    const items = [workbookRef(await ws.workbook()), workbookRef(await ws.workbook())];
    const path = `/api/v1/deployments/${ws.deploymentId}/workspace/bulk-move`;
    proxy.rule = (req, n) => (req.path === path && n === 0 ? unavailable(502) : 'forward');
    const result = await client.bulkMove(ws.deploymentId, items, dest);
    expect(result.moved.map(key)).toEqual(items.map(key));
    expect(proxy.count('POST', path)).toBe(2);
    const tree = await ws.tree();
    for (const ref of items) expect(tree.get(key(ref))).toBe(dest);
  });

  it('retries when the connection drops, unless retries are off', async () => {
    proxy.rule = ({ path }, n) => (path === ME && n === 0 ? 'destroy' : 'forward');
    expect((await client.GET(ME)).response.status).toBe(200);
    expect(proxy.count('GET', ME)).toBe(2);

    const once = server.client({ baseUrl: proxy.url, retry: false });
    proxy.rule = ({ path }) => (path === ME ? 'destroy' : 'forward');
    await expect(once.GET(ME)).rejects.toThrow(TypeError);
    expect(proxy.count('GET', ME)).toBe(3);
  });

  it('gives up after its retries and stops a bulk job with what was applied, what is unconfirmed and what is pending', async () => {
    const dest = await ws.folder();
    const items = (await ws.many(5, () => ws.workbook())).map(workbookRef);
    const path = `/api/v1/deployments/${ws.deploymentId}/workspace/bulk-move`;
    proxy.rule = (req, n) => (req.path === path && n >= 1 ? unavailable() : 'forward');
    const failure = await client.bulkMove(ws.deploymentId, items, dest, { chunkSize: 2 }).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(BulkInterruptedError);
    const stopped = failure as BulkInterruptedError<BulkMoveResult>;
    expect(stopped.name).toBe('BulkInterruptedError');
    expect(stopped.cause).toBeInstanceOf(ApiError);
    expect(stopped.cause).toMatchObject({ status: 503, code: 'PROXY_FAULT' });
    expect(stopped.result.moved.map(key)).toEqual(items.slice(0, 2).map(key));
    expect(stopped.result.requests).toBe(1);
    expect(stopped.unconfirmed).toEqual(items.slice(2, 4));
    expect(stopped.pending).toEqual(items.slice(4));
    // One good request, then the first attempt and three retries of the second chunk.
    expect(proxy.count('POST', path)).toBe(5);
    const tree = await ws.tree();
    expect(items.map((ref) => tree.get(key(ref)))).toEqual([dest, dest, null, null, null]);
  });

  it('stops waiting for a retry as soon as the caller aborts', async () => {
    const patient = server.client({ baseUrl: proxy.url, retry: { maxRetryAfterMs: 7_200_000 } });
    const controller = new AbortController();
    proxy.rule = ({ path }) => {
      if (path !== ME) return 'forward';
      setImmediate(() => controller.abort());
      return { status: 429, headers: { 'retry-after': '3600' } };
    };
    await expect(patient.GET(ME, { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(proxy.count('GET', ME)).toBe(1);
  });
});
