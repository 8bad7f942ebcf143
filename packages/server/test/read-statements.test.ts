import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp } from './harness.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

/*
 * Issue: "Statement counts are the tested part: with warm caches, a GET of one item runs at most 2
 * statements and a page of 100 at most 4 (a total count included where the response carries one;
 * a cache-validation check such as `PRAGMA data_version` not counted), whatever the item's depth;
 * a test counts them per route." The validation check here is the read of the tenant's auth
 * version (cache/tenant-cache.ts).
 */
const VALIDATION = /select auth_version from tenants/i;

describe.each(DIALECTS)('statements per read, with warm caches (%s)', (dialect) => {
  let t: TestApp;
  let d: number;
  let w: WorkspaceFixtures;
  let statements: string[] = [];
  let recording = false;
  const ids: Record<string, number> = {};
  let explorerKey: string;

  /** The statements one request runs, the cache validation left out; asserts a 200. */
  async function statementsOf(url: string, key?: string): Promise<string[]> {
    // Once to warm the caches, once to count.
    expect((await t.request({ url, ...(key ? { key } : {}) })).statusCode).toBe(200);
    statements = [];
    recording = true;
    const res = await t.request({ url, ...(key ? { key } : {}) });
    recording = false;
    expect(res.statusCode, res.body).toBe(200);
    return statements.filter((s) => !VALIDATION.test(s));
  }

  beforeAll(async () => {
    // Host names are cached for seconds in production (http/tenant.ts): warm, like the rest.
    t = await TestApp.create(dialect, {
      tenantCacheMs: 60_000,
      log: (event) => {
        if (recording && event.level === 'query') statements.push(event.query.sql);
      },
    });
    d = await t.deployment('reads');
    w = new WorkspaceFixtures(t, d);
    const chain = await w.chain(9, 'deep');
    const deepest = chain.at(-1)!;
    ids.folder = deepest;
    ids.workbook = await w.workbook('deep workbook', deepest, t.admin.userId);
    ids.report = await w.report('deep report', deepest);
    for (let i = 0; i < 120; i++) {
      await w.folder(`listed ${i}`, chain[0]);
      await w.workbook(`listed ${i}`, deepest, t.admin.userId);
      await w.report(`listed ${i}`, deepest);
    }
    for (let i = 0; i < 3; i++) await t.deployment(`other ${i}`);
    for (let i = 0; i < 110; i++) await t.user('VIEWER');
    const explorer = await t.user('EXPLORER');
    explorerKey = explorer.key;
    await t.grant({ type: 'USER', id: explorer.userId }, { type: 'FOLDER', id: chain[2] }, 'VIEW');
  });
  afterAll(async () => t?.close());

  const item = (name: string, url: () => string) =>
    it(`GET ${name} of an item nine folders deep runs at most 2 statements (admin and granted explorer)`, async () => {
      for (const key of [undefined, explorerKey]) {
        const sqls = await statementsOf(url(), key);
        expect(sqls.length, sqls.join('\n')).toBeLessThanOrEqual(2);
      }
    });
  item('.../workbooks/{id}', () => `/api/v1/deployments/${d}/workbooks/${ids.workbook}`);
  item('.../reports/{id}', () => `/api/v1/deployments/${d}/reports/${ids.report}`);
  item('.../folders/{id}', () => `/api/v1/deployments/${d}/folders/${ids.folder}`);

  const page = (name: string, url: () => string, keys: Array<() => string | undefined> = [() => undefined]) =>
    it(`GET ${name} (a page of 100) runs at most 4 statements, its total count included`, async () => {
      for (const key of keys) {
        const sqls = await statementsOf(url(), key());
        expect(sqls.length, sqls.join('\n')).toBeLessThanOrEqual(4);
      }
    });
  const both = [() => undefined, () => explorerKey];
  page('/api/v1/deployments', () => '/api/v1/deployments?first=100', both);
  page('.../folders?first=100', () => `/api/v1/deployments/${d}/folders?first=100`, both);
  page('.../workspace?first=100 in a folder', () => `/api/v1/deployments/${d}/workspace?folderId=${ids.folder}&first=100`, both);
  page('.../workspace?search=...', () => `/api/v1/deployments/${d}/workspace?search=listed&first=100`, both);
  page('.../reports?first=100&sortBy=name', () => `/api/v1/deployments/${d}/reports?first=100&sortBy=name`, both);
  page('/api/v1/users?first=100', () => '/api/v1/users?first=100');
  page('/api/scim/v2/Users?count=100', () => '/api/scim/v2/Users?count=100');
});
