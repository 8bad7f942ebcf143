import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem } from './harness.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

describe.each(DIALECTS)('bulk delete: POST /workspace/bulk-delete (%s)', (dialect) => {
  let t: TestApp;
  let d: number;
  let w: WorkspaceFixtures;
  const del = (body: unknown, key?: string) =>
    t.request({ method: 'POST', url: `/api/v1/deployments/${d}/workspace/bulk-delete`, body, ...(key ? { key } : {}) });

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    d = await t.deployment('bulk-delete');
    w = new WorkspaceFixtures(t, d);
  });
  afterAll(async () => t?.close());

  it('deletes in order: children listed before their parent succeed; the contents of a deleted folder go to the root', async () => {
    const [top, mid, leaf] = await w.chain(3, 'tree');
    const workbook = await w.workbook('Kept', mid);
    const report = await w.report('Kept too', leaf);
    const res = await del({
      items: [
        { type: 'FOLDER', id: leaf },
        { type: 'FOLDER', id: mid },
        { type: 'FOLDER', id: top },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      deleted: [
        { type: 'FOLDER', id: leaf },
        { type: 'FOLDER', id: mid },
        { type: 'FOLDER', id: top },
      ],
      failed: [],
    });
    expect(await w.containerOf('WORKBOOK', workbook)).toBeNull();
    expect(await w.containerOf('REPORT', report)).toBeNull();
  });

  it('a parent listed before its children fails with 400, the children still go, and nothing else is rolled back', async () => {
    const [top, child] = await w.chain(2, 'parent-first');
    const workbook = await w.workbook('Doomed');
    const res = await del({
      items: [
        { type: 'WORKBOOK', id: workbook },
        { type: 'FOLDER', id: top },
        { type: 'FOLDER', id: child },
        { type: 'FOLDER', id: child },
      ],
    });
    const body = res.json();
    expect(body.deleted).toEqual([
      { type: 'WORKBOOK', id: workbook },
      { type: 'FOLDER', id: child },
    ]);
    expect(body.failed).toEqual([
      {
        type: 'FOLDER',
        id: top,
        error: {
          status: 400,
          message: `Cannot delete folder ${top} "parent-first-1" while it has subfolders; delete or move them first (list them before it in a bulk delete).`,
        },
      },
    ]);
    expect(await w.containerOf('FOLDER', top)).toBeNull();
    expect(await w.containerOf('WORKBOOK', workbook)).toBeUndefined();
  });

  it('each item needs MANAGE (403), must exist in this deployment (404); failures match the single delete', async () => {
    const explorer = await t.user('EXPLORER');
    const [shared] = await w.chain(1, 'shared');
    const editable = await w.report('Editable only', shared);
    const own = await w.workbook('Own', null, explorer.userId);
    await t.grant({ type: 'USER', id: explorer.userId }, { type: 'FOLDER', id: shared }, 'EDIT');
    const foreign = await new WorkspaceFixtures(t, await t.deployment('foreign')).report('Foreign');
    const res = await del(
      {
        items: [
          { type: 'REPORT', id: editable },
          { type: 'WORKBOOK', id: own },
          { type: 'REPORT', id: foreign },
        ],
      },
      explorer.key,
    );
    const body = res.json();
    expect(body.deleted).toEqual([{ type: 'WORKBOOK', id: own }]);
    expect(body.failed).toEqual([
      {
        type: 'REPORT',
        id: editable,
        error: { status: 403, message: `You need MANAGE access to delete report ${editable} "Editable only"; you have EDIT access.` },
      },
      { type: 'REPORT', id: foreign, error: { status: 404, message: `Report ${foreign} does not exist in deployment ${d}.` } },
    ]);
    expect(await w.containerOf('REPORT', editable)).toBe(shared);
    // The single folder delete reports the same status and message as the bulk entry would.
    const guarded = await w.folder('Guarded', shared);
    const single = problem(await t.request({ method: 'DELETE', url: `/api/v1/deployments/${d}/folders/${guarded}`, key: explorer.key }), 403);
    const inBulk = (await del({ items: [{ type: 'FOLDER', id: guarded }] }, explorer.key)).json();
    expect(inBulk.failed[0].error).toEqual({ status: 403, message: single.detail });
  });

  it('removes the grants and favorites of deleted items', async () => {
    const user = await t.user('EXPLORER');
    const workbook = await w.workbook('Granted');
    await t.grant({ type: 'USER', id: user.userId }, { type: 'WORKBOOK', id: workbook }, 'VIEW');
    await t.store.db
      .insertInto('favorites')
      .values({ tenant_id: t.tenantId, user_id: user.userId, item_type: 'WORKBOOK', item_id: workbook, created_at: new Date().toISOString() })
      .execute();
    expect((await del({ items: [{ type: 'WORKBOOK', id: workbook }] })).json().deleted).toHaveLength(1);
    expect(await t.store.db.selectFrom('policies').select('id').where('resource_type', '=', 'WORKBOOK').where('resource_id', '=', workbook).execute()).toEqual(
      [],
    );
    expect(await t.store.db.selectFrom('favorites').select('item_id').where('item_id', '=', workbook).execute()).toEqual([]);
  });

  it('malformed requests are 400 and delete nothing', async () => {
    const workbook = await w.workbook('Safe');
    for (const body of [
      {},
      { items: [] },
      { items: Array.from({ length: 101 }, () => ({ type: 'WORKBOOK', id: workbook })) },
      {
        items: [
          { type: 'WORKBOOK', id: workbook },
          { type: 'X', id: 1 },
        ],
      },
    ]) {
      problem(await del(body), 400);
    }
    expect(await w.containerOf('WORKBOOK', workbook)).toBeNull();
  });
});
