import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem } from './harness.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

/*
 * Issue 11: listing the contents of a folder that does not exist is 404 FOLDER_NOT_FOUND, not an
 * empty 200, on every list filtered by a folder: the workspace listing (`folderId`), folders
 * (`parentId`) and reports (`folderId`).
 */
describe.each(DIALECTS)('lists of one folder’s contents (%s)', (dialect) => {
  let t: TestApp;
  let d: number;
  let w: WorkspaceFixtures;
  let empty: number;
  let foreign: number;

  const lists = (folder: number | string) => [
    `/api/v1/deployments/${d}/workspace?folderId=${folder}`,
    `/api/v1/deployments/${d}/folders?parentId=${folder}`,
    `/api/v1/deployments/${d}/reports?folderId=${folder}`,
  ];

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    d = await t.deployment('lists');
    w = new WorkspaceFixtures(t, d);
    empty = await w.folder('empty');
    const other = await t.deployment('other');
    foreign = await new WorkspaceFixtures(t, other).folder('elsewhere');
  });
  afterAll(async () => t?.close());

  it('a folder id that does not exist is 404 FOLDER_NOT_FOUND on the workspace, folders and reports lists', async () => {
    for (const url of lists(999_999)) {
      const body = problem(await t.request({ url }), 404, 'FOLDER_NOT_FOUND');
      expect(body.detail, url).toBe(`Folder 999999 does not exist in deployment ${d}.`);
    }
  });

  it('a folder of another deployment counts as not existing: 404', async () => {
    for (const url of lists(foreign)) problem(await t.request({ url }), 404, 'FOLDER_NOT_FOUND');
  });

  it('an existing empty folder, and the root, are an empty 200 with a total of 0', async () => {
    for (const url of lists(empty)) {
      const res = await t.request({ url });
      expect(res.statusCode, url).toBe(200);
      expect(res.json(), url).toMatchObject({ items: [], data: [], count: 0, totalCount: 0 });
    }
    for (const url of lists('root')) expect((await t.request({ url })).statusCode, url).toBe(200);
  });

  it('a cursor past the end of an existing folder is an empty page, not a 404', async () => {
    const full = await w.folder('full');
    await w.workbook('only', full);
    const first = (await t.request({ url: `/api/v1/deployments/${d}/workspace?folderId=${full}&first=1` })).json() as { pageInfo: { endCursor: string } };
    const res = await t.request({ url: `/api/v1/deployments/${d}/workspace?folderId=${full}&first=1&after=${first.pageInfo.endCursor}` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ items: [], count: 1 });
  });

  it('a folder the caller may not see is listed like any other, with only what they may see inside it (the item routes answer 403 for it, not 404)', async () => {
    const hidden = await w.folder('hidden');
    await w.folder('hidden child', hidden);
    const granted = await w.report('granted inside', hidden);
    await w.workbook('not granted', hidden);
    const explorer = await t.user('EXPLORER');
    await t.grant({ type: 'USER', id: explorer.userId }, { type: 'REPORT', id: granted }, 'VIEW');

    problem(await t.request({ url: `/api/v1/deployments/${d}/folders/${hidden}`, key: explorer.key }), 403, 'FORBIDDEN');
    const [workspace, folders, reports] = await Promise.all(lists(hidden).map((url) => t.request({ url, key: explorer.key })));
    expect(workspace!.json()).toMatchObject({ items: [{ type: 'REPORT', id: granted }], count: 1 });
    expect(folders!.json()).toMatchObject({ items: [], count: 0 });
    expect(reports!.json()).toMatchObject({ items: [{ id: granted }], count: 1 });
    // A folder that does not exist stays a 404 for them too.
    for (const url of lists(999_998)) problem(await t.request({ url, key: explorer.key }), 404, 'FOLDER_NOT_FOUND');
  });

  it('a search ignores folderId, so it is never a 404', async () => {
    const res = await t.request({ url: `/api/v1/deployments/${d}/workspace?folderId=999999&search=nothing-matches` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ items: [], count: 0 });
  });
});
