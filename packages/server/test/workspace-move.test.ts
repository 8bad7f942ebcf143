import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem } from './harness.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

type ItemType = 'FOLDER' | 'WORKBOOK' | 'REPORT';

describe.each(DIALECTS)('single move: POST /workspace/move (%s)', (dialect) => {
  let t: TestApp;
  let d: number;
  let w: WorkspaceFixtures;
  const move = (body: unknown, key?: string, deploymentId = d) =>
    t.request({ method: 'POST', url: `/api/v1/deployments/${deploymentId}/workspace/move`, body, ...(key ? { key } : {}) });

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    d = await t.deployment('moves');
    w = new WorkspaceFixtures(t, d);
  });
  afterAll(async () => t?.close());

  it('moves a workbook into a folder and returns it in the Workbook shape with its folderPath', async () => {
    const [top, mid] = await w.chain(2, 'shape');
    const workbook = await w.workbook('Revenue', null, t.admin.userId);
    const res = await move({ type: 'WORKBOOK', id: workbook, folderId: mid });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      id: workbook,
      deploymentId: d,
      name: 'Revenue',
      type: 'WORKBOOK',
      meta: {},
      calculatedFields: {},
      createdBy: t.admin.userId,
      userId: t.admin.userId,
      user: { id: t.admin.userId, email: t.admin.email },
      folderId: mid,
      folderPath: [
        { id: top, name: 'shape-1' },
        { id: mid, name: 'shape-2' },
      ],
      isFavorite: false,
      dashboardDraft: null,
      dashboardPublished: null,
      publishedDashboard: null,
    });
    expect(typeof body.slug).toBe('string');
    expect(await w.containerOf('WORKBOOK', workbook)).toBe(mid);
  });

  it('moves a folder: the destination becomes its parent (spec: States and transitions)', async () => {
    const [target] = await w.chain(1, 'new-parent');
    const folder = await w.folder('Moving folder');
    const res = await move({ type: 'FOLDER', id: folder, folderId: target });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: folder, type: 'FOLDER', folderId: target, folderPath: [{ id: target, name: 'new-parent-1' }] });
    expect(await w.containerOf('FOLDER', folder)).toBe(target);
  });

  it('moves a report, and folderId null moves to the root with an empty folderPath', async () => {
    const [f] = await w.chain(1, 'report-home');
    const report = await w.report('Churn', f);
    const res = await move({ type: 'REPORT', id: report, folderId: null });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: report, type: 'REPORT', folderId: null, folderPath: [] });
    expect(await w.containerOf('REPORT', report)).toBeNull();
  });

  it('moving an item to where it already is succeeds and changes nothing', async () => {
    const [f] = await w.chain(1, 'stay');
    const workbook = await w.workbook('Stays', f);
    const before = await t.store.db.selectFrom('workbooks').selectAll().where('id', '=', workbook).executeTakeFirstOrThrow();
    const res = await move({ type: 'WORKBOOK', id: workbook, folderId: f });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().updatedAt).toBe(before.updated_at);
    const after = await t.store.db.selectFrom('workbooks').selectAll().where('id', '=', workbook).executeTakeFirstOrThrow();
    expect(after).toEqual(before);
  });

  it('moving a folder writes one row: what is inside keeps its own folder (DESIGN.md, Trees)', async () => {
    const [a, b] = await w.chain(2, 'subtree');
    const inside = await w.workbook('Inside', b);
    const [dest] = await w.chain(1, 'subtree-dest');
    const res = await move({ type: 'FOLDER', id: a, folderId: dest });
    expect(res.statusCode, res.body).toBe(200);
    expect(await w.containerOf('FOLDER', b)).toBe(a);
    expect(await w.containerOf('WORKBOOK', inside)).toBe(b);
    const folder = await t.request({ url: `/api/v1/deployments/${d}/folders/${b}` });
    expect(folder.json().folderPath.map((e: { id: number }) => e.id)).toEqual([dest, a]);
  });

  describe('404: the item or the destination is not in this deployment', () => {
    it.each<ItemType>(['FOLDER', 'WORKBOOK', 'REPORT'])('a missing %s is 404 naming it', async (type) => {
      const body = problem(await move({ type, id: 999999, folderId: null }), 404);
      expect(body.detail).toBe(`${type[0]}${type.slice(1).toLowerCase()} 999999 does not exist in deployment ${d}.`);
    });

    it("another deployment's item is 404 too", async () => {
      const other = await t.deployment('other');
      const foreign = await new WorkspaceFixtures(t, other).workbook('Foreign');
      problem(await move({ type: 'WORKBOOK', id: foreign, folderId: null }), 404, 'WORKBOOK_NOT_FOUND');
      expect(await new WorkspaceFixtures(t, other).containerOf('WORKBOOK', foreign)).toBeNull();
    });

    it("a missing destination, or another deployment's folder, is 404", async () => {
      const workbook = await w.workbook('Nowhere');
      const missing = problem(await move({ type: 'WORKBOOK', id: workbook, folderId: 888888 }), 404, 'DESTINATION_NOT_FOUND');
      expect(missing.detail).toBe(`Cannot move workbook ${workbook}: destination folder 888888 does not exist in deployment ${d}.`);
      const otherFolder = await new WorkspaceFixtures(t, await t.deployment('other-2')).folder('Elsewhere');
      problem(await move({ type: 'WORKBOOK', id: workbook, folderId: otherFolder }), 404, 'DESTINATION_NOT_FOUND');
      expect(await w.containerOf('WORKBOOK', workbook)).toBeNull();
    });

    it('the item is checked before the destination (DESIGN.md, Moves: order)', async () => {
      problem(await move({ type: 'REPORT', id: 777777, folderId: 888888 }), 404, 'REPORT_NOT_FOUND');
    });

    it('a missing deployment is 404 for the whole request', async () => {
      problem(await move({ type: 'WORKBOOK', id: 1, folderId: null }, undefined, 999999), 404, 'DEPLOYMENT_NOT_FOUND');
    });
  });

  describe('403: access to the item and to the destination', () => {
    it('a workbook needs MANAGE: EDIT through its folder is not enough', async () => {
      const explorer = await t.user('EXPLORER');
      const [home] = await w.chain(1, 'edit-only');
      const [dest] = await w.chain(1, 'edit-dest');
      const workbook = await w.workbook('Guarded', home);
      await t.grant({ type: 'USER', id: explorer.userId }, { type: 'FOLDER', id: home }, 'EDIT');
      await t.grant({ type: 'USER', id: explorer.userId }, { type: 'FOLDER', id: dest }, 'EDIT');
      const body = problem(await move({ type: 'WORKBOOK', id: workbook, folderId: dest }, explorer.key), 403, 'FORBIDDEN');
      expect(body.detail).toBe(`You need MANAGE access to move workbook ${workbook} "Guarded"; you have EDIT access.`);
      expect(await w.containerOf('WORKBOOK', workbook)).toBe(home);
    });

    it('a report needs EDIT, and EDIT on the destination lets it in', async () => {
      const explorer = await t.user('EXPLORER');
      const [home] = await w.chain(1, 'report-edit');
      const [dest] = await w.chain(1, 'report-edit-dest');
      const report = await w.report('Editable', home);
      await t.grant({ type: 'USER', id: explorer.userId }, { type: 'FOLDER', id: home }, 'EDIT');
      await t.grant({ type: 'USER', id: explorer.userId }, { type: 'FOLDER', id: dest }, 'EDIT');
      const res = await move({ type: 'REPORT', id: report, folderId: dest }, explorer.key);
      expect(res.statusCode, res.body).toBe(200);
      expect(await w.containerOf('REPORT', report)).toBe(dest);
    });

    it('a folder needs MANAGE; access through a group on an ancestor folder counts', async () => {
      const explorer = await t.user('EXPLORER');
      const group = await t.group(`movers-${explorer.userId}`, [explorer.userId]);
      const [top, child] = await w.chain(2, 'group-managed');
      const [dest] = await w.chain(1, 'group-dest');
      await t.grant({ type: 'GROUP', id: group }, { type: 'FOLDER', id: top }, 'MANAGE');
      await t.grant({ type: 'GROUP', id: group }, { type: 'FOLDER', id: dest }, 'EDIT');
      const res = await move({ type: 'FOLDER', id: child, folderId: dest }, explorer.key);
      expect(res.statusCode, res.body).toBe(200);
    });

    it('the destination needs EDIT; the root needs EDIT on the deployment', async () => {
      const explorer = await t.user('EXPLORER');
      const workbook = await w.workbook('Mine', null, explorer.userId);
      const [dest] = await w.chain(1, 'view-only-dest');
      await t.grant({ type: 'USER', id: explorer.userId }, { type: 'FOLDER', id: dest }, 'VIEW');
      const into = problem(await move({ type: 'WORKBOOK', id: workbook, folderId: dest }, explorer.key), 403);
      expect(into.detail).toBe(`You need EDIT access on folder ${dest} to move workbook ${workbook} "Mine" there; you have VIEW access.`);
      const [home] = await w.chain(1, 'root-test');
      await t.store.db.updateTable('workbooks').set({ folder_id: home }).where('id', '=', workbook).execute();
      await t.grant({ type: 'USER', id: explorer.userId }, { type: 'FOLDER', id: home }, 'EDIT');
      const toRoot = problem(await move({ type: 'WORKBOOK', id: workbook, folderId: null }, explorer.key), 403);
      expect(toRoot.detail).toBe(`You need EDIT access on deployment ${d} (the workspace root) to move workbook ${workbook} "Mine" there; you have no access.`);
      await t.grant({ type: 'USER', id: explorer.userId }, { type: 'DEPLOYMENT', id: d }, 'EDIT');
      expect((await move({ type: 'WORKBOOK', id: workbook, folderId: null }, explorer.key)).statusCode).toBe(200);
    });

    it('a caller without any access is not told the item’s name', async () => {
      const stranger = await t.user('EXPLORER');
      const workbook = await w.workbook('Secret plans');
      const body = problem(await move({ type: 'WORKBOOK', id: workbook, folderId: null }, stranger.key), 403);
      expect(body.detail).not.toContain('Secret plans');
      expect(body.detail).toContain(`workbook ${workbook}`);
    });

    it('a VIEWER never moves anything, whatever policies say (role cap)', async () => {
      const viewer = await t.user('VIEWER');
      const workbook = await w.workbook('Viewed');
      await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id: d }, 'MANAGE');
      problem(await move({ type: 'WORKBOOK', id: workbook, folderId: null }, viewer.key), 403);
    });

    it('403 comes before 400 (DESIGN.md, Moves: order)', async () => {
      const explorer = await t.user('EXPLORER');
      const [a, b] = await w.chain(2, 'order');
      await t.grant({ type: 'USER', id: explorer.userId }, { type: 'FOLDER', id: b }, 'EDIT');
      problem(await move({ type: 'FOLDER', id: a, folderId: b }, explorer.key), 403);
    });
  });

  describe('400: invalid moves', () => {
    it('a folder cannot move into itself', async () => {
      const [a] = await w.chain(1, 'self');
      const body = problem(await move({ type: 'FOLDER', id: a, folderId: a }), 400, 'INVALID_MOVE');
      expect(body.detail).toBe(`Cannot move folder ${a} "self-1" into itself.`);
    });

    it('a folder cannot move into its own descendant', async () => {
      const [a, , c] = await w.chain(3, 'cycle');
      const body = problem(await move({ type: 'FOLDER', id: a, folderId: c }), 400, 'INVALID_MOVE');
      expect(body.detail).toBe(`Cannot move folder ${a} "cycle-1" into folder ${c}, which is inside it.`);
      expect(await w.containerOf('FOLDER', a)).toBeNull();
    });

    it('the moved subtree must stay within 10 levels (subtree height + depth of the destination)', async () => {
      const deep = await w.chain(7, 'deep');
      const subtree = await w.chain(3, 'tall');
      // 7 + 3 = 10 levels: allowed.
      const ok = await move({ type: 'FOLDER', id: subtree[0], folderId: deep[6] });
      expect(ok.statusCode, ok.body).toBe(200);
      const deeper = await w.chain(8, 'deeper');
      const tall = await w.chain(3, 'tall-2');
      const body = problem(await move({ type: 'FOLDER', id: tall[0], folderId: deeper[7] }), 400, 'FOLDER_TOO_DEEP');
      expect(body.detail).toBe(`Cannot move folder ${tall[0]} "tall-2-1" into folder ${deeper[7]}: its folders would nest deeper than 10 levels.`);
    });

    it('a sibling folder of the same name blocks the move, at the root too', async () => {
      const [dest] = await w.chain(1, 'names');
      await w.folder('Twin', dest);
      const twin = await w.folder('Twin');
      const body = problem(await move({ type: 'FOLDER', id: twin, folderId: dest }), 400, 'FOLDER_NAME_CONFLICT');
      expect(body.detail).toBe(`Cannot move folder ${twin} "Twin" into folder ${dest}: it already holds a folder named "Twin".`);
      const nested = await w.folder('Rooted', dest);
      await w.folder('Rooted');
      problem(await move({ type: 'FOLDER', id: nested, folderId: null }), 400, 'FOLDER_NAME_CONFLICT');
    });

    it('workbooks and reports may share names; only folders are unique within a parent', async () => {
      const [dest] = await w.chain(1, 'shared-names');
      await w.workbook('Same', dest);
      const second = await w.workbook('Same');
      expect((await move({ type: 'WORKBOOK', id: second, folderId: dest })).statusCode).toBe(200);
    });
  });

  describe('malformed requests: 400, nothing applied', () => {
    it.each([
      ['no body', undefined],
      ['a missing type', { id: 1, folderId: null }],
      ['a bad type', { type: 'DASHBOARD', id: 1, folderId: null }],
      ['a string id', { type: 'WORKBOOK', id: '1', folderId: null }],
      ['a zero id', { type: 'WORKBOOK', id: 0, folderId: null }],
      ['a missing folderId', { type: 'WORKBOOK', id: 1 }],
      ['an unknown field', { type: 'WORKBOOK', id: 1, folderId: null, extra: true }],
    ])('%s', async (_name, body) => {
      const res = await t.request({ method: 'POST', url: `/api/v1/deployments/${d}/workspace/move`, ...(body === undefined ? {} : { body }) });
      problem(res, 400);
    });
  });
});
