import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem } from './harness.js';

/*
 * How every list pages (reference 0.3; docs/api/pagination.md): the deprecated `offset`/`limit`
 * on exactly the lists the reference gives them, read the same way on each, and a `first` above
 * the maximum refused on every list rather than clamped.
 */

type Json = Record<string, any>;
type Parameter = { name: string; in: string; schema: Json; deprecated?: boolean };
type Operation = { operationId: string; parameters?: Parameter[] };
type Doc = { paths: Record<string, Record<string, Operation>> };

/** The lists the reference gives `offset` and `limit` (1.2, 1.17, 1.18), by their documented path. */
const LEGACY_LISTS = [
  '/api/v1/deployments',
  '/api/v1/deployments/{deploymentId}/environments',
  '/api/v1/deployments/{deploymentId}/environments/{environmentId}/tokens',
];
const MAX_PAGE = 200;
/** The operations an embed token calls, not an API key (embed-token-access.test.ts). */
const EMBED_LISTS = new Set(['listAgentThreads', 'listDashboardComments', 'listMentionableUsers']);

const queryParameter = (op: Operation, name: string) => op.parameters?.find((p) => p.in === 'query' && p.name === name);

for (const dialect of DIALECTS) {
  describe(`list pagination (${dialect})`, () => {
    let t: TestApp;
    let doc: Doc;
    let deploymentId: number;
    let embedToken: string;

    /** Every GET operation of the served document that takes `first`: the cursor lists. */
    const lists = () =>
      Object.entries(doc.paths).flatMap(([path, methods]) => {
        const op = methods.get;
        return op && queryParameter(op, 'first') ? [{ path, op }] : [];
      });
    /** A URL for a documented path: the test deployment, the production environment, else 1 (the shape every id parameter takes). */
    const urlOf = (path: string) =>
      path.replace(/\{(\w+)\}/g, (_m, name: string) => (name === 'deploymentId' ? String(deploymentId) : name === 'environmentId' ? 'production' : '1'));

    beforeAll(async () => {
      t = await TestApp.create(dialect);
      doc = (await t.request({ url: '/api/v1/spec' })).json() as Doc;
      deploymentId = await t.deployment('paged');
      // Three deployments at least, three environments (production and two staging branches), three tokens.
      await t.deployment('paged two');
      await t.deployment('paged three');
      for (const name of ['stage-a', 'stage-b']) {
        expect((await t.request({ method: 'POST', url: `/build/api/v1/deployments/${deploymentId}/branches`, body: { name } })).statusCode).toBe(200);
        const staged = await t.request({
          method: 'PUT',
          url: `/build/api/v1/deployments/${deploymentId}/branches/staging-environment`,
          body: { enabled: true, branchName: name },
        });
        expect(staged.statusCode, staged.body).toBe(200);
      }
      for (const n of [1, 2, 3]) {
        const minted = await t.request({
          method: 'POST',
          url: `/api/v1/deployments/${deploymentId}/environments/production/tokens`,
          body: { security_context: { n } },
        });
        expect(minted.statusCode, minted.body).toBe(200);
      }
      const generated = await t.request({ method: 'POST', url: '/api/v1/embed/generate-session', body: { deploymentId, externalId: 'pager' } });
      expect(generated.statusCode, generated.body).toBe(200);
      const exchanged = await t.request({ method: 'POST', url: '/api/v1/embed/session/token', key: null, body: generated.json() });
      expect(exchanged.statusCode, exchanged.body).toBe(200);
      embedToken = (exchanged.json() as { token: string }).token;
    });
    afterAll(async () => t?.close());

    it('the deprecated offset and limit are declared on exactly the lists the reference gives them, with the bound of `first` (reference 0.3)', () => {
      const withLimit = lists().filter(({ op }) => queryParameter(op, 'limit'));
      expect(withLimit.map(({ path }) => path).sort()).toEqual([...LEGACY_LISTS].sort());
      for (const { path, op } of withLimit) {
        const [offset, limit, first] = [queryParameter(op, 'offset'), queryParameter(op, 'limit'), queryParameter(op, 'first')];
        expect(offset?.schema, path).toMatchObject({ type: 'integer', minimum: 0, deprecated: true });
        expect(limit?.schema, path).toMatchObject({ type: 'integer', minimum: 0, maximum: MAX_PAGE, deprecated: true });
        expect(first?.schema.maximum, path).toBe(MAX_PAGE);
      }
    });

    describe.each(LEGACY_LISTS)('%s pages by position with the deprecated offset and limit', (path) => {
      const get = (query: string) => t.request({ url: `${urlOf(path)}${query}` });
      const ids = (page: Json) => (page.items as Json[]).map((item) => JSON.stringify(item));

      it('?offset=0&limit=1 answers 200 with at most one item, the first; offset skips; limit caps', async () => {
        const all = (await get('')).json() as Json;
        expect(all.items.length, 'the list needs three items for this test').toBeGreaterThanOrEqual(3);
        const total = all.items.length;

        const head = await get('?offset=0&limit=1');
        expect(head.statusCode, head.body).toBe(200);
        const firstPage = head.json() as Json;
        expect(ids(firstPage)).toEqual(ids(all).slice(0, 1));
        expect(firstPage.data).toEqual(firstPage.items);
        expect(firstPage.pagination).toEqual({ total, offset: 0, limit: 1 });
        expect(firstPage.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });

        const second = (await get('?offset=1&limit=1')).json() as Json;
        expect(ids(second)).toEqual(ids(all).slice(1, 2));
        expect(second.pagination).toEqual({ total, offset: 1, limit: 1 });
        expect(second.pageInfo.hasPreviousPage).toBe(true);
        // offset alone: the rest of the list at the default size; limit alone: the head.
        expect(ids((await get('?offset=1')).json() as Json)).toEqual(ids(all).slice(1));
        expect(ids((await get('?limit=2')).json() as Json)).toEqual(ids(all).slice(0, 2));
        // Past the end: no items, the totals still told.
        const beyond = (await get(`?offset=${total}`)).json() as Json;
        expect(beyond.items).toEqual([]);
        expect(beyond.pagination.total).toBe(total);
        expect(beyond.pageInfo.hasNextPage).toBe(false);
        // limit=0: no items, only the totals.
        const none = (await get('?limit=0')).json() as Json;
        expect(none.items).toEqual([]);
        expect(none.pagination).toEqual({ total, offset: 0, limit: 0 });
      });

      it('an offset page continues with after = its endCursor, whose `pagination.offset` counts the items before it', async () => {
        const all = (await get('')).json() as Json;
        const second = (await get('?offset=1&limit=1')).json() as Json;
        const next = (await get(`?first=1&after=${second.pageInfo.endCursor}`)).json() as Json;
        expect(ids(next)).toEqual(ids(all).slice(2, 3));
        expect(next.pagination).toEqual({ total: all.items.length, offset: 2, limit: 1 });
      });

      it('limit wins over first; both share the maximum of 200; offset with after is 400 naming offset', async () => {
        expect(((await get('?limit=1&first=3')).json() as Json).items).toHaveLength(1);
        expect(((await get('?first=1&limit=3')).json() as Json).items).toHaveLength(3);
        expect((await get(`?limit=${MAX_PAGE}`)).statusCode).toBe(200);
        expect(problem(await get(`?limit=${MAX_PAGE + 1}`), 400, 'VALIDATION_FAILED').errors).toEqual(
          expect.arrayContaining([expect.objectContaining({ pointer: '/query/limit' })]),
        );
        problem(await get('?offset=-1'), 400, 'VALIDATION_FAILED');
        const cursor = ((await get('?first=1')).json() as Json).pageInfo.endCursor as string;
        const mixed = problem(await get(`?offset=0&after=${cursor}`), 400, 'VALIDATION_FAILED');
        expect(mixed.detail).toContain('`offset` and `after`');
        expect(mixed.errors).toEqual([{ pointer: '/query/offset', message: 'cannot be combined with after' }]);
      });
    });

    it('a list the reference gives only first and after refuses offset and limit (versions, reference 1.7)', async () => {
      const versions = `/api/v1/deployments/${deploymentId}/versions`;
      expect((await t.request({ url: `${versions}?first=1` })).statusCode).toBe(200);
      problem(await t.request({ url: `${versions}?offset=0` }), 400, 'VALIDATION_FAILED');
      problem(await t.request({ url: `${versions}?limit=1` }), 400, 'VALIDATION_FAILED');
    });

    it('every list publishes the same maximum for `first`: 200', () => {
      const found = lists();
      expect(found.length).toBeGreaterThan(30);
      for (const { path, op } of found) expect(queryParameter(op, 'first')?.schema, path).toMatchObject({ minimum: 1, maximum: MAX_PAGE });
    });

    it('a `first` above 200 is refused with 400 naming /query/first on every list, never clamped', async () => {
      for (const { path, op } of lists()) {
        const url = `${urlOf(path)}?first=${MAX_PAGE + 1}`;
        const res = EMBED_LISTS.has(op.operationId)
          ? await t.request({ url, key: null, headers: { authorization: `Bearer ${embedToken}` } })
          : await t.request({ url });
        expect(res.statusCode, `${path}: ${res.body}`).toBe(400);
        const body = res.json() as Json;
        expect(body.code, path).toBe('VALIDATION_FAILED');
        expect(body.errors, path).toEqual(expect.arrayContaining([expect.objectContaining({ pointer: '/query/first' })]));
      }
    });

    it.each([
      ['/api/v1/deployments', 3],
      ['/api/v1/deployments/{deploymentId}/environments', 3],
      ['/api/v1/deployments/{deploymentId}/environments/{environmentId}/tokens', 3],
      ['/api/v1/regions', 1],
      ['/api/v1/users', 1],
      ['/build/api/v1/deployments/{deploymentId}/branches', 3],
    ])('%s serves a page of 200 when asked, and pages of one that add up to the whole list', async (path, atLeast) => {
      const url = urlOf(path);
      const whole = await t.request({ url: `${url}?first=${MAX_PAGE}` });
      expect(whole.statusCode, whole.body).toBe(200);
      const all = (whole.json() as Json).items as Json[];
      expect(all.length).toBeGreaterThanOrEqual(atLeast);
      const walked: Json[] = [];
      let after: string | null = null;
      do {
        const page = (await t.request({ url: `${url}?first=1${after ? `&after=${after}` : ''}` })).json() as Json;
        expect(page.items.length).toBeLessThanOrEqual(1);
        walked.push(...page.items);
        after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
      } while (after !== null);
      expect(walked).toEqual(all);
    });
  });
}
