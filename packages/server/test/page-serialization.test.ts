import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp } from './harness.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

/*
 * Issue: "the deprecated `data` field stays (the spec keeps it) but the page is serialised once,
 * not twice." The page's text carries the items' text twice, written once (http/page-serializer.ts);
 * the shape is the schema's, as before.
 */
describe.each(DIALECTS)('pages are serialised once, with `data` the same as `items` (%s)', (dialect) => {
  let t: TestApp;
  let d: number;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
    d = await t.deployment('pages');
    const w = new WorkspaceFixtures(t, d);
    const folder = await w.folder('Folder');
    await w.workbook('Workbook', folder, t.admin.userId);
    await w.report('Report', folder);
  });
  afterAll(async () => t?.close());

  for (const [name, url] of [
    ['deployments', () => '/api/v1/deployments'],
    ['folders', () => `/api/v1/deployments/${d}/folders`],
    ['workspace search', () => `/api/v1/deployments/${d}/workspace?search=o`],
    ['reports', () => `/api/v1/deployments/${d}/reports`],
  ] as const) {
    it(`${name}: "data" is the very text of "items", and the page has the documented fields only`, async () => {
      const res = await t.request({ url: url() });
      expect(res.statusCode, res.body).toBe(200);
      const match = /^\{"items":(\[.*\]),"data":(\[.*\]),"pageInfo":/.exec(res.body);
      expect(match, res.body).not.toBeNull();
      const page = res.json() as Record<string, unknown> & { items: unknown[] };
      expect(JSON.stringify(page.items)).toBe(JSON.stringify(page.data));
      expect(page.items.length).toBeGreaterThan(0);
      const expected = ['items', 'data', 'pageInfo', 'count', 'totalCount', ...(name === 'reports' || name === 'deployments' ? ['pagination'] : [])];
      expect(Object.keys(page).sort()).toEqual(expected.sort());
      expect(page.count).toBe(page.items.length);
    });
  }
});
