import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

interface Workbook {
  id: number;
  deploymentId: number;
  name: string;
  type: string;
  slug: string;
  meta: Record<string, unknown>;
  calculatedFields: Record<string, unknown>;
  folderId: number | null;
  folderPath: Array<{ id: number; name: string }>;
  createdBy?: number;
  userId: number | null;
  user: { id: number; email: string } | null;
  isFavorite: boolean;
  dashboardDraft: Record<string, unknown> | null;
  dashboardPublished: Record<string, unknown> | null;
  publishedDashboard: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
}

const position = { x: 0, y: 0, w: 6, h: 4 };
const draft = {
  title: 'Sales',
  description: null,
  kind: 'CLASSIC',
  layout: { breakpoints: { lg: 1200, md: null }, cols: { lg: 12 }, containerPadding: [10, 10], margin: [8, 8], rowHeight: 30 },
  settings: { refresh: 60 },
  theme: null,
  widgets: [
    { id: 'w1', type: 'CHART', position, config: { reportId: 7 }, style: null, responsiveLayouts: { lg: position, md: null } },
    { id: 'w2', type: 'CONTAINER', position: { x: 6, y: 0, w: 6, h: 8 }, config: { layout: 'tabs' } },
  ],
};

let seq = 0;
const slug = (prefix = 'wb') => `${prefix}-${process.pid}-${++seq}`;

describe.each(DIALECTS)('workbooks (%s)', (dialect) => {
  let t: TestApp;
  let deploymentId: number;
  let otherDeploymentId: number;
  let ws: WorkspaceFixtures;
  let wsOther: WorkspaceFixtures;
  let viewer: Caller;

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    deploymentId = await t.deployment('workbooks');
    otherDeploymentId = await t.deployment('elsewhere');
    ws = new WorkspaceFixtures(t, deploymentId);
    wsOther = new WorkspaceFixtures(t, otherDeploymentId);
    viewer = await t.user('VIEWER');
  });
  afterAll(async () => t?.close());

  const url = (path: string, d = deploymentId) => `/api/v1/deployments/${d}${path}`;
  const put = (s: string, body: unknown, key?: string, d = deploymentId) =>
    t.request({ method: 'PUT', url: url(`/workbooks/by-slug/${s}`, d), body, ...(key ? { key } : {}) });
  const get = (id: number, key?: string, d = deploymentId) => t.request({ url: url(`/workbooks/${id}`, d), ...(key ? { key } : {}) });
  const duplicate = (id: number, body?: unknown, key?: string, d = deploymentId) =>
    t.request({ method: 'POST', url: url(`/workbooks/${id}/duplicate`, d), ...(body === undefined ? {} : { body }), ...(key ? { key } : {}) });
  const storedRow = (id: number) => t.store.db.selectFrom('workbooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  describe('upsert by slug', () => {
    it('spec: Other operations, upsert by slug: 201 with the Workbook when created, every field round-trips', async () => {
      const folderId = await ws.folder(`Sales ${slug()}`);
      const s = slug();
      const body = {
        name: 'Quarterly',
        folderId,
        meta: { owner: 'finance', nested: { a: [1, 2] } },
        calculatedFields: { margin: { sql: 'a - b' } },
        dashboardDraft: draft,
      };
      const res = await put(s, body);
      expect(res.statusCode, res.body).toBe(201);
      const wb = res.json() as Workbook;
      expect(wb).toMatchObject({
        deploymentId,
        name: 'Quarterly',
        type: 'WORKBOOK',
        slug: s,
        meta: body.meta,
        calculatedFields: body.calculatedFields,
        folderId,
        folderPath: [{ id: folderId, name: expect.any(String) }],
        createdBy: t.admin.userId,
        userId: t.admin.userId,
        user: { id: t.admin.userId, email: t.admin.email },
        isFavorite: false,
        dashboardDraft: draft,
        dashboardPublished: null,
        publishedDashboard: null,
      });
      expect(wb.updatedAt).toBe(wb.createdAt);
      expect((await get(wb.id)).json()).toEqual(wb);
    });

    it('spec: Other operations, upsert by slug: 200 when the slug exists, same id, changed fields stored', async () => {
      const s = slug();
      const created = (await put(s, { name: 'First', meta: { v: 1 } })).json() as Workbook;
      const res = await put(s, { name: 'Second', meta: { v: 2 }, calculatedFields: { c: 1 } });
      expect(res.statusCode, res.body).toBe(200);
      const updated = res.json() as Workbook;
      expect(updated).toMatchObject({ id: created.id, name: 'Second', meta: { v: 2 }, calculatedFields: { c: 1 }, createdAt: created.createdAt });
      expect(updated.updatedAt >= created.updatedAt).toBe(true);
      expect((await get(created.id)).json()).toEqual(updated);
    });

    it('upsert: fields left out keep their stored values on update; null clears the draft', async () => {
      const s = slug();
      const created = (await put(s, { name: 'Keep', meta: { k: 1 }, calculatedFields: { f: 1 }, dashboardDraft: draft })).json() as Workbook;
      const kept = (await put(s, { name: 'Keep' })).json() as Workbook;
      expect(kept).toEqual(created);
      const cleared = (await put(s, { name: 'Keep', dashboardDraft: null })).json() as Workbook;
      expect(cleared.dashboardDraft).toBeNull();
      expect(cleared.meta).toEqual({ k: 1 });
    });

    it('upsert: defaults on create are empty meta and calculated fields, no draft, the root', async () => {
      const wb = (await put(slug(), { name: 'Bare' })).json() as Workbook;
      expect(wb).toMatchObject({ meta: {}, calculatedFields: {}, dashboardDraft: null, folderId: null, folderPath: [] });
    });

    it('spec: DashboardWidget, a sent TABS_CONTAINER is stored and returned as a CONTAINER with config.layout tabs', async () => {
      const tabs = { id: 't', type: 'TABS_CONTAINER', position, config: { layout: 'grid', tabs: ['a', 'b'] } };
      const res = await put(slug(), { name: 'Tabs', dashboardDraft: { widgets: [tabs, { id: 'x', type: 'TABS_CONTAINER', position }] } });
      expect(res.statusCode, res.body).toBe(201);
      const expected = [
        { id: 't', type: 'CONTAINER', position, config: { layout: 'tabs', tabs: ['a', 'b'] } },
        { id: 'x', type: 'CONTAINER', position, config: { layout: 'tabs' } },
      ];
      const wb = res.json() as Workbook;
      expect(wb.dashboardDraft).toEqual({ widgets: expected });
      expect(JSON.parse((await storedRow(wb.id)).dashboard_draft!)).toEqual({ widgets: expected });
    });

    it('spec: DashboardWidget, a TABS_CONTAINER stored directly in the table is returned converted', async () => {
      const legacy = JSON.stringify({ widgets: [{ id: 'old', type: 'TABS_CONTAINER', position, config: null }] });
      const id = await ws.workbook('Legacy', null, null, { dashboard_draft: legacy });
      await t.store.db.updateTable('workbooks').set({ dashboard_published: legacy }).where('id', '=', id).execute();
      const wb = (await get(id)).json() as Workbook;
      const converted = { widgets: [{ id: 'old', type: 'CONTAINER', position, config: { layout: 'tabs' } }] };
      expect(wb.dashboardDraft).toEqual(converted);
      expect(wb.dashboardPublished).toEqual(converted);
    });

    it('spec: DashboardConfig, an invalid draft is refused with a pointer per fault, nothing stored', async () => {
      const s = slug();
      const res = await put(s, {
        name: 'Bad',
        dashboardDraft: {
          kind: 'GRID',
          app: { entry: 'x'.repeat(256) },
          layout: { rowHeight: 1.5 },
          widgets: [{ id: 'w', type: 'PIE', position: { x: 0, y: 0, w: 1 } }],
        },
      });
      const body = problem(res, 400, 'VALIDATION_FAILED');
      const pointers = body.errors!.map((e) => e.pointer);
      expect(pointers).toEqual(
        expect.arrayContaining([
          '/body/dashboardDraft/kind',
          '/body/dashboardDraft/app/entry',
          '/body/dashboardDraft/layout/rowHeight',
          '/body/dashboardDraft/widgets/0/type',
          '/body/dashboardDraft/widgets/0/position/h',
        ]),
      );
      expect(await t.store.db.selectFrom('workbooks').select('id').where('slug', '=', s).executeTakeFirst()).toBeUndefined();
    });

    it('slug format: lowercase letters, digits and hyphens, 1 to 100 characters, else 400', async () => {
      for (const bad of ['Upper', '-lead', 'under_score']) {
        const body = problem(await put(bad, { name: 'x' }), 400, 'VALIDATION_FAILED');
        expect(body.errors!.map((e) => e.pointer)).toContain('/path/slug');
      }
      problem(await put('x'.repeat(101), { name: 'x' }), 400, 'VALIDATION_FAILED');
      expect((await put(`a${'b'.repeat(99)}`, { name: 'long' })).statusCode).toBe(201);
    });

    it('upsert body: name required, unknown fields refused', async () => {
      expect(problem(await put(slug(), {}), 400).errors!.map((e) => e.pointer)).toContain('/body/name');
      expect(problem(await put(slug(), { name: 'x', colour: 'red' }), 400).errors!.map((e) => e.pointer)).toContain('/body/colour');
    });

    it('slugs are unique per deployment, not across deployments: the same slug makes two workbooks', async () => {
      const s = slug();
      const a = (await put(s, { name: 'A' })).json() as Workbook;
      const res = await put(s, { name: 'B' }, undefined, otherDeploymentId);
      expect(res.statusCode).toBe(201);
      expect((res.json() as Workbook).id).not.toBe(a.id);
    });
  });

  describe('access (DESIGN.md: Roles and access)', () => {
    it('Roles: a VIEWER cannot create a workbook, even with EDIT granted on the deployment', async () => {
      const d = await t.deployment('viewer-create');
      await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id: d }, 'EDIT');
      const s = slug();
      expect(problem(await put(s, { name: 'x' }, viewer.key, d), 403, 'FORBIDDEN').detail).toMatch(/Viewers cannot create workbooks/);
      expect(await t.store.db.selectFrom('workbooks').select('id').where('slug', '=', s).executeTakeFirst()).toBeUndefined();
    });

    it('Creating needs EDIT on the folder, or on the deployment at the root', async () => {
      const d = await t.deployment('create-rights');
      const f = new WorkspaceFixtures(t, d);
      const granted = await f.folder('granted');
      const readOnly = await f.folder('read-only');
      const user = await t.user('EXPLORER');
      await t.grant({ type: 'USER', id: user.userId }, { type: 'FOLDER', id: granted }, 'EDIT');
      await t.grant({ type: 'USER', id: user.userId }, { type: 'FOLDER', id: readOnly }, 'VIEW');
      expect(problem(await put(slug(), { name: 'root' }, user.key, d), 403).detail).toMatch(/EDIT access on deployment .* \(the workspace root\)/);
      expect(problem(await put(slug(), { name: 'ro', folderId: readOnly }, user.key, d), 403).detail).toMatch(new RegExp(`EDIT access on folder ${readOnly}`));
      expect((await put(slug(), { name: 'ok', folderId: granted }, user.key, d)).statusCode).toBe(201);
      // Through a group and on the deployment works too.
      const member = await t.user('EXPLORER');
      const group = await t.group(`editors-${slug()}`, [member.userId]);
      await t.grant({ type: 'GROUP', id: group }, { type: 'DEPLOYMENT', id: d }, 'EDIT');
      expect((await put(slug(), { name: 'root ok' }, member.key, d)).statusCode).toBe(201);
    });

    it('Creating into a folder of another deployment: 404, nothing created', async () => {
      const foreignFolder = await wsOther.folder(`foreign ${slug()}`);
      problem(await put(slug(), { name: 'x', folderId: foreignFolder }), 404, 'FOLDER_NOT_FOUND');
    });

    it('The creator gets MANAGE: an explorer may update and move what they created without any grant on it', async () => {
      const d = await t.deployment('creator-manage');
      const f = new WorkspaceFixtures(t, d);
      const from = await f.folder('from');
      const to = await f.folder('to');
      const creator = await t.user('EXPLORER');
      const editor = await t.user('EXPLORER');
      for (const folder of [from, to]) await t.grant({ type: 'USER', id: creator.userId }, { type: 'FOLDER', id: folder }, 'EDIT');
      await t.grant({ type: 'USER', id: editor.userId }, { type: 'DEPLOYMENT', id: d }, 'EDIT');
      const s = slug();
      const wb = (await put(s, { name: 'mine', folderId: from }, creator.key, d)).json() as Workbook;
      expect(wb.createdBy).toBe(creator.userId);
      // EDIT (not MANAGE) lets the other explorer update but not move: a workbook move needs MANAGE.
      expect((await put(s, { name: 'edited' }, editor.key, d)).statusCode).toBe(200);
      expect(problem(await put(s, { name: 'edited', folderId: to }, editor.key, d), 403).detail).toMatch(/MANAGE access to move workbook/);
      const moved = await put(s, { name: 'moved', folderId: to }, creator.key, d);
      expect(moved.statusCode, moved.body).toBe(200);
      expect(moved.json()).toMatchObject({ name: 'moved', folderId: to, folderPath: [{ id: to, name: 'to' }] });
    });

    it('Updating needs EDIT on the workbook: VIEW is refused with 403 and nothing changes', async () => {
      const d = await t.deployment('update-rights');
      const user = await t.user('EXPLORER');
      await t.grant({ type: 'USER', id: user.userId }, { type: 'DEPLOYMENT', id: d }, 'VIEW');
      const s = slug();
      const wb = (await put(s, { name: 'before' }, undefined, d)).json() as Workbook;
      const body = problem(await put(s, { name: 'after' }, user.key, d), 403, 'FORBIDDEN');
      expect(body.detail).toBe(`You need EDIT access to update workbook ${wb.id} "before"; you have VIEW access.`);
      expect((await storedRow(wb.id)).name).toBe('before');
      // A viewer holding EDIT by grant is capped at VIEW.
      await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id: d }, 'EDIT');
      problem(await put(s, { name: 'after' }, viewer.key, d), 403, 'FORBIDDEN');
    });

    it('GET needs VIEW (403 without, the name withheld); another deployment’s id is 404', async () => {
      const wb = (await put(slug(), { name: 'secret' })).json() as Workbook;
      const stranger = await t.user('EXPLORER');
      const body = problem(await get(wb.id, stranger.key), 403, 'FORBIDDEN');
      expect(body.detail).not.toMatch(/secret/);
      problem(await get(wb.id, undefined, otherDeploymentId), 404, 'WORKBOOK_NOT_FOUND');
      problem(await get(999_999), 404, 'WORKBOOK_NOT_FOUND');
      problem(await get(wb.id, undefined, 999_999), 404, 'DEPLOYMENT_NOT_FOUND');
    });
  });

  describe('folderId changes in an upsert obey the single move (DESIGN.md: Moves)', () => {
    it('Moves: a changed folderId moves the workbook; folderPath follows', async () => {
      const top = await ws.folder(`top ${slug()}`);
      const inner = await ws.folder('inner', top);
      const s = slug();
      await put(s, { name: 'm' });
      const res = await put(s, { name: 'm', folderId: inner });
      expect(res.statusCode, res.body).toBe(200);
      expect((res.json() as Workbook).folderPath.map((p) => p.id)).toEqual([top, inner]);
      const back = (await put(s, { name: 'm', folderId: null })).json() as Workbook;
      expect(back).toMatchObject({ folderId: null, folderPath: [] });
    });

    it('Moves: a changed folderId is checked in the single move’s order: a missing destination is 404 before access is 403', async () => {
      const viewer = await t.user('EXPLORER');
      const home = await ws.folder(`order ${slug()}`);
      const s = slug();
      const wb = (await put(s, { name: 'ordered', folderId: home })).json() as Workbook;
      await t.grant({ type: 'USER', id: viewer.userId }, { type: 'FOLDER', id: home }, 'VIEW');
      const body = { name: 'ordered', folderId: 999_999 };
      const viaUpsert = problem(
        await t.request({ method: 'PUT', url: `/api/v1/deployments/${deploymentId}/workbooks/by-slug/${s}`, key: viewer.key, body }),
        404,
      );
      const viaMove = problem(
        await t.request({
          method: 'POST',
          url: `/api/v1/deployments/${deploymentId}/workspace/move`,
          key: viewer.key,
          body: { type: 'WORKBOOK', id: wb.id, folderId: 999_999 },
        }),
        404,
      );
      expect(viaUpsert.detail).toBe(viaMove.detail);
    });

    it('Moves: a missing destination is 404 DESTINATION_NOT_FOUND, nothing changes', async () => {
      const s = slug();
      const wb = (await put(s, { name: 'stay', meta: { a: 1 } })).json() as Workbook;
      const foreign = await wsOther.folder(`dest ${slug()}`);
      const res = await put(s, { name: 'renamed', folderId: foreign, meta: { a: 2 } });
      expect(problem(res, 404, 'DESTINATION_NOT_FOUND').detail).toBe(
        `Cannot move workbook ${wb.id}: destination folder ${foreign} does not exist in deployment ${deploymentId}.`,
      );
      expect(await storedRow(wb.id)).toMatchObject({ name: 'stay', folder_id: null, meta: '{"a":1}' });
    });

    it('Moves: the 403 of an upsert that moves is the single move’s status and message', async () => {
      const d = await t.deployment('move-message');
      const f = new WorkspaceFixtures(t, d);
      const dest = await f.folder('dest');
      const user = await t.user('EXPLORER');
      await t.grant({ type: 'USER', id: user.userId }, { type: 'DEPLOYMENT', id: d }, 'EDIT');
      const s = slug();
      const wb = (await put(s, { name: 'owned by admin' }, undefined, d)).json() as Workbook;
      const viaUpsert = problem(await put(s, { name: 'owned by admin', folderId: dest }, user.key, d), 403);
      const viaMove = problem(
        await t.request({ method: 'POST', url: url('/workspace/move', d), key: user.key, body: { type: 'WORKBOOK', id: wb.id, folderId: dest } }),
        403,
      );
      expect(viaUpsert.detail).toBe(viaMove.detail);
      expect(viaUpsert.code).toBe(viaMove.code);
    });

    it('Moves: the same folderId is no move, and needs only EDIT', async () => {
      const d = await t.deployment('same-folder');
      const f = new WorkspaceFixtures(t, d);
      const folder = await f.folder('here');
      const user = await t.user('EXPLORER');
      await t.grant({ type: 'USER', id: user.userId }, { type: 'FOLDER', id: folder }, 'EDIT');
      const s = slug();
      await put(s, { name: 'a', folderId: folder }, undefined, d);
      const res = await put(s, { name: 'b', folderId: folder }, user.key, d);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ name: 'b', folderId: folder });
    });
  });

  describe('duplicate', () => {
    it('Other operations, duplicate (reference 8.G.1): "Copy of <name>" beside the source (EDIT on its folder), a fresh slug, the content, owned by the caller', async () => {
      const folder = await ws.folder(`dup ${slug()}`);
      const s = slug();
      const source = (
        await put(s, { name: 'Original', folderId: folder, meta: { m: 1 }, calculatedFields: { c: 2 }, dashboardDraft: draft })
      ).json() as Workbook;
      await t.store.db
        .updateTable('workbooks')
        .set({ dashboard_published: JSON.stringify(draft) })
        .where('id', '=', source.id)
        .execute();
      const user = await t.user('EXPLORER');
      await t.grant({ type: 'USER', id: user.userId }, { type: 'FOLDER', id: folder }, 'EDIT');
      const res = await duplicate(source.id, undefined, user.key);
      expect(res.statusCode, res.body).toBe(200);
      const copy = res.json() as Workbook;
      expect(copy).toMatchObject({
        name: 'Copy of Original',
        slug: `${s}-copy`,
        folderId: folder,
        meta: { m: 1 },
        calculatedFields: { c: 2 },
        dashboardDraft: draft,
        dashboardPublished: null,
        publishedDashboard: null,
        createdBy: user.userId,
      });
      expect(copy.id).not.toBe(source.id);
      const again = (await duplicate(source.id, {})).json() as Workbook;
      expect(again.slug).toBe(`${s}-copy-2`);
      expect((await get(source.id)).json()).toMatchObject({ slug: s, name: 'Original' });
    });

    it('duplicate: into another folder, or the root, under a given name', async () => {
      const target = await ws.folder(`target ${slug()}`);
      const source = (await put(slug(), { name: 'Src' })).json() as Workbook;
      expect((await duplicate(source.id, { folderId: target, name: 'Named' })).json()).toMatchObject({ folderId: target, name: 'Named' });
      const inFolder = (await put(slug(), { name: 'In', folderId: target })).json() as Workbook;
      expect((await duplicate(inFolder.id, { folderId: null })).json()).toMatchObject({ folderId: null, folderPath: [] });
    });

    it('duplicate: needs VIEW on the source (403) and EDIT where the copy lands (403); a VIEWER may not; 404 for unknown ids', async () => {
      const d = await t.deployment('dup-rights');
      const f = new WorkspaceFixtures(t, d);
      const readable = await f.folder('readable');
      const writable = await f.folder('writable');
      const hidden = await f.folder('hidden');
      const user = await t.user('EXPLORER');
      await t.grant({ type: 'USER', id: user.userId }, { type: 'FOLDER', id: readable }, 'VIEW');
      await t.grant({ type: 'USER', id: user.userId }, { type: 'FOLDER', id: writable }, 'EDIT');
      const visible = (await put(slug(), { name: 'visible', folderId: readable }, undefined, d)).json() as Workbook;
      const secret = (await put(slug(), { name: 'secret', folderId: hidden }, undefined, d)).json() as Workbook;
      const count = async () => (await t.store.db.selectFrom('workbooks').select('id').where('deployment_id', '=', d).execute()).length;
      const before = await count();
      expect(problem(await duplicate(secret.id, { folderId: writable }, user.key, d), 403).detail).toMatch(/VIEW access to view workbook/);
      // Without EDIT on the source's folder the copy goes to the root, which needs EDIT on the deployment.
      expect(problem(await duplicate(visible.id, {}, user.key, d), 403).detail).toMatch(
        new RegExp(`EDIT on folder ${readable}, otherwise to the workspace root with EDIT on deployment ${d}`),
      );
      problem(await duplicate(visible.id, { folderId: 999_999 }, user.key, d), 404, 'FOLDER_NOT_FOUND');
      await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id: d }, 'MANAGE');
      expect(problem(await duplicate(visible.id, {}, viewer.key, d), 403).detail).toMatch(/Viewers cannot create/);
      problem(await duplicate(visible.id, {}, undefined, otherDeploymentId), 404, 'WORKBOOK_NOT_FOUND');
      expect(await count()).toBe(before);
      expect((await duplicate(visible.id, { folderId: writable }, user.key, d)).statusCode).toBe(200);
    });

    it('duplicate: a long slug is shortened so the copy’s slug stays within 100 characters', async () => {
      const long = `l${'o'.repeat(99)}`;
      const source = (await put(long, { name: 'Long' })).json() as Workbook;
      const copy = (await duplicate(source.id)).json() as Workbook;
      expect(copy.slug.length).toBeLessThanOrEqual(100);
      expect(copy.slug).toMatch(/^[a-z0-9][a-z0-9-]{0,99}$/);
      expect(copy.slug.endsWith('-copy')).toBe(true);
    });
  });
});
