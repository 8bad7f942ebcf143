import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { ApiError, createClient as createUniversalClient, unwrap, type DeploymentLogLine, type DeploymentPod, type MapiClient } from '../src/node.js';
import { createDeployment, FAST_RUNTIME, startTestServer, type TestServer } from './support.js';

/** pods.list, logs.tail and logs.follow (reference 1.9-1.10) against a server that runs pods. */

const WAIT = { timeout: 30_000, interval: 50 };

describe.each(STORE_INDEPENDENT)('pods and runtime logs (%s)', (dialect) => {
  let server: TestServer;
  let admin: MapiClient;
  /** A deployment whose production pod is running, and the pod. */
  let d: number;
  let pod: DeploymentPod;

  const running = (deploymentId: number) =>
    vi.waitFor(async () => {
      const [first] = await admin.pods.list(deploymentId);
      expect(first).toMatchObject({ status: 'Running', ready: true, type: 'production' });
      return first as DeploymentPod;
    }, WAIT);

  beforeAll(async () => {
    server = await startTestServer(dialect, { runtime: FAST_RUNTIME });
    admin = server.client();
    d = await createDeployment(admin);
    pod = await running(d);
  });
  afterAll(async () => server?.close());

  it('pods.list: every pod of the deployment, following the pages', async () => {
    const queries: URLSearchParams[] = [];
    const client = server.client();
    client.use({ onRequest: ({ request }) => void queries.push(new URL(request.url).searchParams) });
    const pods = await client.pods.list(d);
    expect(pods).toEqual([
      { name: expect.stringMatching(/^production-[a-z0-9]{5}$/), containers: ['MAIN'], ready: true, restartCount: 0, status: 'Running', type: 'production' },
    ]);
    expect(queries.map((q) => q.get('first'))).toEqual(['200']);
    await expect(admin.pods.list(987654)).rejects.toMatchObject({ status: 404, code: 'DEPLOYMENT_NOT_FOUND' });
  });

  it('logs.tail: the newest lines, oldest first, filtered by source and pod', async () => {
    const all = await admin.logs.tail(d);
    expect(all.some((l) => l.message.startsWith(`Scheduled pod ${pod.name}`))).toBe(true);
    expect(all.every((l) => l.pod === pod.name)).toBe(true);
    const dates = all.map((l) => l.date);
    expect(dates).toEqual([...dates].sort());
    const lastTwo = await admin.logs.tail(d, { first: 2 });
    expect(lastTwo).toEqual(all.slice(-2));
    expect(await admin.logs.tail(d, { source: 'production', pod: pod.name })).toEqual(all);
    expect(await admin.logs.tail(d, { source: 'dev' })).toEqual([]);
    expect(await admin.logs.tail(d, { pod: 'production-nope0' })).toEqual([]);
    const tooMany = await admin.logs.tail(d, { first: 201 }).catch((e: unknown) => e);
    expect(tooMany).toBeInstanceOf(ApiError);
    expect(tooMany).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
  });

  it('logs.follow: yields the tail, then lines written later by passing endCursor back; aborting ends it without an error', async () => {
    const id = await createDeployment(admin);
    await running(id);
    const queries: URLSearchParams[] = [];
    const client = server.client();
    client.use({ onRequest: ({ request }) => void queries.push(new URL(request.url).searchParams) });
    const controller = new AbortController();
    const seen: DeploymentLogLine[] = [];
    const following = (async () => {
      for await (const line of client.logs.follow(id, { first: 3, intervalMs: 100, signal: controller.signal })) seen.push(line);
    })();
    await vi.waitFor(() => expect(seen.length).toBeGreaterThanOrEqual(3), WAIT);

    unwrap(
      await admin.PUT('/api/v1/deployments/{deploymentId}/env-vars', {
        params: { path: { deploymentId: id } },
        body: { env_variables: [{ name: 'X', value: '1' }] },
      }),
    );
    await vi.waitFor(() => expect(seen.map((l) => l.message).join('\n')).toContain('environment variables changed: X (added)'), WAIT);
    controller.abort();
    await expect(following).resolves.toBeUndefined();

    // Every line once, in the order the log has them, from the three newest when it started.
    const log = await admin.logs.tail(id);
    const start = log.findIndex((l) => l.message === seen[0]?.message && l.date === seen[0]?.date);
    expect(start).toBeGreaterThanOrEqual(0);
    expect(seen).toEqual(log.slice(start, start + seen.length));
    // The tail once, then polls that carry the cursor.
    expect(queries[0]?.has('after')).toBe(false);
    expect(queries[0]?.get('first')).toBe('3');
    expect(queries.slice(1).every((q) => q.has('after'))).toBe(true);
  });

  it('logs.follow: a signal aborted before it starts sends nothing', async () => {
    const queries: URLSearchParams[] = [];
    const client = server.client();
    client.use({ onRequest: ({ request }) => void queries.push(new URL(request.url).searchParams) });
    const lines: DeploymentLogLine[] = [];
    for await (const line of client.logs.follow(d, { signal: AbortSignal.abort() })) lines.push(line);
    expect(lines).toEqual([]);
    expect(queries).toEqual([]);
  });
});

/**
 * The polling itself, over pages scripted here: a server only has more than one page of new lines
 * after a burst too large to make on cue.
 */
describe('logs.follow polling', () => {
  const line = (message: string): DeploymentLogLine => ({ pod: 'production-abcde', date: '2026-01-01T00:00:00.000Z', message });
  const page = (messages: string[], endCursor: string | null, hasNextPage = false) => ({
    items: messages.map(line),
    pageInfo: { startCursor: null, endCursor, hasNextPage, hasPreviousPage: false },
  });

  /** A client whose log requests are answered from `pages` by their `after`, recording each query. */
  function scripted(pages: Record<string, ReturnType<typeof page>>) {
    const queries: URLSearchParams[] = [];
    const client = createUniversalClient({
      baseUrl: 'https://mapi.test',
      token: 'mapi_test',
      retry: false,
      fetch: async (input) => {
        const query = new URL((input as Request).url).searchParams;
        queries.push(query);
        const answer = pages[query.get('after') ?? 'tail'];
        if (!answer) throw new Error(`no page scripted for after=${query.get('after')}`);
        return new Response(JSON.stringify(answer), { headers: { 'content-type': 'application/json' } });
      },
    });
    return { client, queries };
  }

  it('asks again at once while hasNextPage, waits intervalMs after a page without more, and keeps the cursor of an empty page', async () => {
    const { client, queries } = scripted({
      tail: page(['a', 'b'], 'c1'),
      c1: page(['c'], 'c2', true),
      c2: page(['d'], 'c3', false),
      c3: page([], 'c3'),
    });
    const controller = new AbortController();
    const seen: string[] = [];
    const started = Date.now();
    const at: Record<string, number> = {};
    let stopping: Promise<void> | undefined;
    for await (const l of client.logs.follow(1, { source: 'production', pod: 'production-abcde', first: 2, intervalMs: 400, signal: controller.signal })) {
      seen.push(l.message);
      at[l.message] = Date.now();
      // Then two polls that find nothing, each after a wait; the loop goes on meanwhile.
      if (l.message === 'd') stopping = vi.waitFor(() => expect(queries.length).toBe(5), { timeout: 5_000, interval: 10 }).then(() => controller.abort());
    }
    await stopping;
    expect(seen).toEqual(['a', 'b', 'c', 'd']);
    // The tail has no more, so 'c' came after a wait; it came with hasNextPage, so 'd' came without one.
    expect((at.c as number) - started).toBeGreaterThanOrEqual(400 - 5);
    expect((at.d as number) - (at.c as number)).toBeLessThan(400);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3 * 400 - 5);
    expect(queries.map((q) => [q.get('after'), q.get('first')])).toEqual([
      [null, '2'],
      ['c1', '200'],
      ['c2', '200'],
      ['c3', '200'],
      ['c3', '200'],
    ]);
    expect(queries.every((q) => q.get('source') === 'production' && q.get('pod') === 'production-abcde')).toBe(true);
  });

  it('an empty log has no cursor yet: it asks for the tail until a line appears, then follows that line’s cursor', async () => {
    let tailAnswers = 0;
    const pages = {
      get tail() {
        tailAnswers += 1;
        return tailAnswers < 3 ? page([], null) : page(['first'], 'c1');
      },
      c1: page([], 'c1'),
    };
    const { client, queries } = scripted(pages);
    const controller = new AbortController();
    const seen: string[] = [];
    let stopping: Promise<void> | undefined;
    for await (const l of client.logs.follow(1, { intervalMs: 1, signal: controller.signal })) {
      seen.push(l.message);
      stopping = vi.waitFor(() => expect(queries.length).toBeGreaterThanOrEqual(5), { timeout: 5_000, interval: 5 }).then(() => controller.abort());
    }
    await stopping;
    expect(seen).toEqual(['first']);
    expect(queries.slice(0, 5).map((q) => q.get('after'))).toEqual([null, null, null, 'c1', 'c1']);
  });

  it('a failed request ends the iteration with its error', async () => {
    const { client } = scripted({ tail: page(['a'], 'c1') });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const l of client.logs.follow(1, { intervalMs: 1 })) seen.push(l.message);
    })().catch((e: unknown) => e);
    expect(seen).toEqual(['a']);
    expect(String(error)).toContain('no page scripted for after=c1');
  });
});
