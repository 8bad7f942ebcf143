import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp } from './harness.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

/*
 * Issue: "Moving a folder costs the same whatever is inside it (no rewrite of the subtree).
 * Computing folderPath and access for an item costs in proportion to its depth, not to the
 * workspace's size; a page of 100 items does not make 100 separate ancestry queries." Proved by
 * the statements each request runs, not by timings.
 */
describe.each(DIALECTS)('what workspace requests cost in statements (%s)', (dialect) => {
  let t: TestApp;
  let d: number;
  let w: WorkspaceFixtures;
  let statements: string[] = [];
  let recording = false;

  /** The SQL of every statement one request runs. */
  async function statementsOf(request: () => Promise<{ statusCode: number; body: string }>): Promise<string[]> {
    statements = [];
    recording = true;
    const res = await request();
    recording = false;
    expect(res.statusCode, res.body).toBe(200);
    return statements;
  }
  const ancestryWalks = (sqls: string[]) => sqls.filter((s) => /with recursive up/i.test(s));
  const writes = (sqls: string[]) => sqls.filter((s) => /^\s*(update|insert|delete)/i.test(s));

  beforeAll(async () => {
    t = await TestApp.create(dialect, {
      log: (event) => {
        if (recording && event.level === 'query') statements.push(event.query.sql);
      },
    });
    d = await t.deployment('costs');
    w = new WorkspaceFixtures(t, d);
  });
  afterAll(async () => t?.close());

  it('a page of 100 items in 100 folders gets every folderPath from one ancestry query', async () => {
    for (let top = 0; top < 10; top++) {
      const [, parent] = await w.chain(2, `top-${top}`);
      for (let leaf = 0; leaf < 10; leaf++) {
        const folder = await w.folder(`leaf-${leaf}`, parent);
        await w.workbook(`spread ${top}-${leaf}`, folder);
        await w.report(`spread ${top}-${leaf}`, folder);
      }
    }
    const explorer = await t.user('EXPLORER');
    await t.grant({ type: 'USER', id: explorer.userId }, { type: 'DEPLOYMENT', id: d }, 'VIEW');
    for (const [url, key] of [
      [`/api/v1/deployments/${d}/workspace?search=spread&types=WORKBOOK&first=100`, undefined],
      [`/api/v1/deployments/${d}/reports?search=spread&first=100`, undefined],
      [`/api/v1/deployments/${d}/workspace?search=spread&types=REPORT&first=100`, explorer.key],
    ] as const) {
      let body: { items: Array<{ folderPath: unknown[] }> } = { items: [] };
      const sqls = await statementsOf(async () => {
        const res = await t.request({ url, ...(key ? { key } : {}) });
        body = res.json();
        return res;
      });
      expect(body.items).toHaveLength(100);
      expect(body.items.every((item) => item.folderPath.length === 3)).toBe(true);
      expect(ancestryWalks(sqls), url).toHaveLength(1);
      // Authentication, grants, the deployment, the page, paths, owners, favorites: a constant.
      expect(sqls.length, `${url}\n${sqls.join('\n')}`).toBeLessThanOrEqual(10);
    }
  });

  it('moving a folder runs the same statements and writes one row, whether it is empty or holds a large subtree', async () => {
    const [from, to] = [await w.folder('move-from'), await w.folder('move-to')];
    const empty = await w.folder('empty', from);
    const full = await w.folder('full', from);
    let parents = [full];
    for (let level = 0; level < 4; level++) {
      const next: number[] = [];
      for (const parent of parents) for (let i = 0; i < 4; i++) next.push(await w.folder(`sub-${level}-${i}`, parent));
      for (const parent of parents) await w.workbook(`inside ${parent}`, parent);
      parents = next;
    }
    const move = (id: number, folderId: number) => () =>
      t.request({ method: 'POST', url: `/api/v1/deployments/${d}/workspace/move`, body: { type: 'FOLDER', id, folderId } });
    // Warm: the caller, its grants and the account's settings cached, as for every later request.
    await statementsOf(move(empty, to));
    await statementsOf(move(empty, from));
    const forEmpty = await statementsOf(move(empty, to));
    const forFull = await statementsOf(move(full, to));
    expect(forFull).toEqual(forEmpty);
    expect(writes(forFull)).toHaveLength(1);
    expect(await w.containerOf('FOLDER', full)).toBe(to);
  });
});
