import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem } from './harness.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

describe.each(DIALECTS)('folders (%s)', (dialect) => {
  let t: TestApp;
  let d: number;
  let w: WorkspaceFixtures;
  const base = () => `/api/v1/deployments/${d}/folders`;
  const create = (body: unknown, key?: string) => t.request({ method: 'POST', url: base(), body, ...(key ? { key } : {}) });

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    d = await t.deployment('folders');
    w = new WorkspaceFixtures(t, d);
  });
  afterAll(async () => t?.close());

  describe('POST /folders', () => {
    it('creates a top-level folder and a subfolder with parentId and folderPath', async () => {
      const top = await create({ name: 'Finance' });
      expect(top.statusCode, top.body).toBe(201);
      expect(top.json()).toMatchObject({
        name: 'Finance',
        type: 'FOLDER',
        deploymentId: d,
        parentId: null,
        folderId: null,
        folderPath: [],
        createdBy: t.admin.userId,
        isFavorite: false,
      });
      const child = await create({ name: 'Q1', parentId: top.json().id });
      expect(child.statusCode, child.body).toBe(201);
      expect(child.json()).toMatchObject({ parentId: top.json().id, folderPath: [{ id: top.json().id, name: 'Finance' }] });
      expect(child.json().user).toEqual({ id: t.admin.userId, email: t.admin.email, firstName: null, picture: null });
    });

    it('names are unique within a parent: 409 on a clash, fine elsewhere', async () => {
      expect((await create({ name: 'Dup' })).statusCode).toBe(201);
      const clash = problem(await create({ name: 'Dup' }), 409, 'FOLDER_NAME_TAKEN');
      expect(clash.detail).toBe('A folder named "Dup" already exists at the workspace root; folder names are unique within their parent.');
      const parent = await w.folder('Dup parent');
      expect((await create({ name: 'Dup', parentId: parent })).statusCode).toBe(201);
    });

    it('names are 1 to 255 characters, not only blanks', async () => {
      expect((await create({ name: 'n'.repeat(255) })).statusCode).toBe(201);
      problem(await create({ name: 'n'.repeat(256) }), 400, 'VALIDATION_FAILED');
      problem(await create({ name: '' }), 400);
      problem(await create({ name: '   ' }), 400);
    });

    it('folders nest at most 10 levels: the 11th is 400', async () => {
      const levels = await w.chain(9, 'nest');
      const tenth = await create({ name: 'tenth', parentId: levels[8] });
      expect(tenth.statusCode, tenth.body).toBe(201);
      expect(tenth.json().folderPath).toHaveLength(9);
      const body = problem(await create({ name: 'eleventh', parentId: tenth.json().id }), 400, 'FOLDER_TOO_DEEP');
      expect(body.detail).toBe(`Folder ${tenth.json().id} is 10 levels deep; folders nest at most 10 levels.`);
    });

    it('a missing parent, or one in another deployment, is 404', async () => {
      problem(await create({ name: 'orphan', parentId: 999999 }), 404, 'FOLDER_NOT_FOUND');
      const foreign = await new WorkspaceFixtures(t, await t.deployment('other')).folder('foreign');
      problem(await create({ name: 'orphan', parentId: foreign }), 404, 'FOLDER_NOT_FOUND');
    });

    it('creating needs EXPLORER or above and EDIT where it lands; the creator then holds MANAGE', async () => {
      const viewer = await t.user('VIEWER');
      await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id: d }, 'MANAGE');
      problem(await create({ name: 'by viewer' }, viewer.key), 403);

      const explorer = await t.user('EXPLORER');
      problem(await create({ name: 'no rights' }, explorer.key), 403);
      const shared = await w.folder('Shared with explorer');
      await t.grant({ type: 'USER', id: explorer.userId }, { type: 'FOLDER', id: shared }, 'VIEW');
      problem(await create({ name: 'view only', parentId: shared }, explorer.key), 403);
      await t.store.db.updateTable('policies').set({ access: 'EDIT' }).where('principal_id', '=', explorer.userId).where('resource_id', '=', shared).execute();
      const made = await create({ name: 'made by explorer', parentId: shared }, explorer.key);
      expect(made.statusCode, made.body).toBe(201);
      // MANAGE on what it created: it may move it to a folder it can edit, and delete it.
      const moved = await t.request({
        method: 'POST',
        url: `/api/v1/deployments/${d}/workspace/move`,
        key: explorer.key,
        body: { type: 'FOLDER', id: made.json().id, folderId: shared },
      });
      expect(moved.statusCode, moved.body).toBe(200);
      const del = await t.request({ method: 'DELETE', url: `${base()}/${made.json().id}`, key: explorer.key });
      expect(del.statusCode, del.body).toBe(204);
    });
  });

  describe('GET, PATCH, DELETE /folders/{folderId}', () => {
    it('GET returns the folder with parentId and folderPath; another deployment’s folder is 404', async () => {
      const [a, b, c] = await w.chain(3, 'get');
      const res = await t.request({ url: `${base()}/${c}` });
      expect(res.json()).toMatchObject({
        id: c,
        parentId: b,
        folderPath: [
          { id: a, name: 'get-1' },
          { id: b, name: 'get-2' },
        ],
      });
      const foreign = await new WorkspaceFixtures(t, await t.deployment('other-get')).folder('x');
      problem(await t.request({ url: `${base()}/${foreign}` }), 404, 'FOLDER_NOT_FOUND');
    });

    it('GET needs VIEW', async () => {
      const explorer = await t.user('EXPLORER');
      const folder = await w.folder('Private');
      problem(await t.request({ url: `${base()}/${folder}`, key: explorer.key }), 403);
      await t.grant({ type: 'USER', id: explorer.userId }, { type: 'FOLDER', id: folder }, 'VIEW');
      expect((await t.request({ url: `${base()}/${folder}`, key: explorer.key })).statusCode).toBe(200);
    });

    it('PATCH renames only; a clash with a sibling is 409; renaming needs EDIT', async () => {
      const parent = await w.folder('Rename parent');
      const folder = await w.folder('Old', parent);
      await w.folder('Taken', parent);
      const res = await t.request({ method: 'PATCH', url: `${base()}/${folder}`, body: { name: 'New' } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ name: 'New', parentId: parent });
      problem(await t.request({ method: 'PATCH', url: `${base()}/${folder}`, body: { name: 'Taken' } }), 409, 'FOLDER_NAME_TAKEN');
      problem(await t.request({ method: 'PATCH', url: `${base()}/${folder}`, body: { name: 'X', parentId: null } }), 400);
      const viewer = await t.user('EXPLORER');
      await t.grant({ type: 'USER', id: viewer.userId }, { type: 'FOLDER', id: parent }, 'VIEW');
      problem(await t.request({ method: 'PATCH', url: `${base()}/${folder}`, key: viewer.key, body: { name: 'Nope' } }), 403);
    });

    it('DELETE is refused while the folder has subfolders; its workbooks and reports go to the root (DESIGN.md, Deleting folders)', async () => {
      const [top, sub] = await w.chain(2, 'delete');
      const workbook = await w.workbook('Survivor', top);
      const report = await w.report('Survivor report', top);
      const refused = problem(await t.request({ method: 'DELETE', url: `${base()}/${top}` }), 400, 'FOLDER_HAS_SUBFOLDERS');
      expect(refused.detail).toContain(`folder ${top}`);
      expect(await w.containerOf('FOLDER', top)).toBeNull();
      expect((await t.request({ method: 'DELETE', url: `${base()}/${sub}` })).statusCode).toBe(204);
      expect((await t.request({ method: 'DELETE', url: `${base()}/${top}` })).statusCode).toBe(204);
      expect(await w.containerOf('FOLDER', top)).toBeUndefined();
      expect(await w.containerOf('WORKBOOK', workbook)).toBeNull();
      expect(await w.containerOf('REPORT', report)).toBeNull();
      problem(await t.request({ method: 'DELETE', url: `${base()}/${top}` }), 404, 'FOLDER_NOT_FOUND');
    });

    it('DELETE needs MANAGE, and removes the policies granted on the folder', async () => {
      const explorer = await t.user('EXPLORER');
      const folder = await w.folder('Managed elsewhere');
      await t.grant({ type: 'USER', id: explorer.userId }, { type: 'FOLDER', id: folder }, 'EDIT');
      problem(await t.request({ method: 'DELETE', url: `${base()}/${folder}`, key: explorer.key }), 403);
      expect((await t.request({ method: 'DELETE', url: `${base()}/${folder}` })).statusCode).toBe(204);
      const left = await t.store.db.selectFrom('policies').select('id').where('resource_type', '=', 'FOLDER').where('resource_id', '=', folder).execute();
      expect(left).toEqual([]);
    });
  });

  describe('GET /folders/{folderId}/ancestors', () => {
    const ancestors = (folder: number | string, key?: string) => t.request({ url: `${base()}/${folder}/ancestors`, ...(key ? { key } : {}) });
    const ids = (res: { json(): unknown }) => (res.json() as Array<{ id: number }>).map((f) => f.id);

    it('answers the path from the top-level folder down to the folder itself, each as GET returns it', async () => {
      const [a, b, c] = await w.chain(3, 'anc');
      expect((await t.request({ method: 'PUT', url: `/api/v1/deployments/${d}/workspace/favorites/FOLDER/${b}` })).statusCode).toBe(204);
      const res = await ancestors(c);
      expect(res.statusCode, res.body).toBe(200);
      expect(ids(res)).toEqual([a, b, c]);
      const each = await Promise.all([a, b, c].map(async (id) => (await t.request({ url: `${base()}/${id}` })).json()));
      expect(res.json()).toEqual(each);
      expect(res.json()[1]).toMatchObject({ name: 'anc-2', parentId: a, folderPath: [{ id: a, name: 'anc-1' }], isFavorite: true });
      // The last entry's path is the folderPath an item in the folder names.
      const last = res.json()[2];
      expect([...last.folderPath, { id: last.id, name: last.name }]).toEqual([
        { id: a, name: 'anc-1' },
        { id: b, name: 'anc-2' },
        { id: c, name: 'anc-3' },
      ]);
      expect(ids(await ancestors(a))).toEqual([a]);
    });

    it('follows a move at once: the path is read from the tree as it is now', async () => {
      const [a, b] = await w.chain(2, 'anc-move');
      const other = await w.folder('anc-move-dest');
      const moved = await t.request({ method: 'POST', url: `/api/v1/deployments/${d}/workspace/move`, body: { type: 'FOLDER', id: b, folderId: other } });
      expect(moved.statusCode, moved.body).toBe(200);
      expect(ids(await ancestors(b))).toEqual([other, b]);
      expect(ids(await ancestors(a))).toEqual([a]);
    });

    it('a folder of another deployment, or none, is 404; a malformed id is 400', async () => {
      const foreign = await new WorkspaceFixtures(t, await t.deployment('other-ancestors')).folder('x');
      problem(await ancestors(foreign), 404, 'FOLDER_NOT_FOUND');
      problem(await ancestors(999999), 404, 'FOLDER_NOT_FOUND');
      problem(await t.request({ url: `/api/v1/deployments/999999/folders/${foreign}/ancestors` }), 404, 'DEPLOYMENT_NOT_FOUND');
      problem(await ancestors('abc'), 400, 'VALIDATION_FAILED');
      problem(await ancestors(0), 400, 'VALIDATION_FAILED');
    });

    it('needs VIEW on the folder, as GET does; folders above it the caller may not view are left out', async () => {
      const [a, b, c] = await w.chain(3, 'anc-access');
      const explorer = await t.user('EXPLORER');
      problem(await ancestors(c, explorer.key), 403, 'FORBIDDEN');
      await t.grant({ type: 'USER', id: explorer.userId }, { type: 'FOLDER', id: c }, 'VIEW');
      const own = await ancestors(c, explorer.key);
      expect(own.statusCode, own.body).toBe(200);
      expect(ids(own)).toEqual([c]);
      // Its path still names the folders above, as GET's folderPath does.
      expect(own.json()[0].folderPath).toEqual([
        { id: a, name: 'anc-access-1' },
        { id: b, name: 'anc-access-2' },
      ]);
      await t.grant({ type: 'USER', id: explorer.userId }, { type: 'FOLDER', id: b }, 'VIEW');
      expect(ids(await ancestors(c, explorer.key))).toEqual([b, c]);
    });
  });

  describe('GET /folders', () => {
    it('pages through every folder by cursor without gaps or repeats, with the deprecated data, and count and totalCount the total', async () => {
      const own = await t.deployment('paging');
      const pw = new WorkspaceFixtures(t, own);
      const made: number[] = [];
      for (let i = 0; i < 7; i++) made.push(await pw.folder(`p${i}`, i > 3 ? made[0]! : null));
      const seen: number[] = [];
      let after: string | null = null;
      for (let round = 0; round < 10; round++) {
        const res = await t.request({ url: `/api/v1/deployments/${own}/folders?first=3${after ? `&after=${after}` : ''}` });
        expect(res.statusCode, res.body).toBe(200);
        const body = res.json();
        expect(body.data).toEqual(body.items);
        // issue 11 (reference shapes 0.3): count is the whole list's total on every page, totalCount its alias.
        expect(body.count).toBe(made.length);
        expect(body.totalCount).toBe(made.length);
        seen.push(...body.items.map((f: { id: number }) => f.id));
        if (!body.pageInfo.hasNextPage) break;
        after = body.pageInfo.endCursor;
      }
      expect(seen).toEqual(made);
      const children = await t.request({ url: `/api/v1/deployments/${own}/folders?parentId=${made[0]}` });
      expect(children.json().items.map((f: { id: number }) => f.id)).toEqual(made.slice(4));
      const roots = await t.request({ url: `/api/v1/deployments/${own}/folders?parentId=root` });
      expect(roots.json().items.map((f: { id: number }) => f.id)).toEqual(made.slice(0, 4));
      problem(await t.request({ url: `/api/v1/deployments/${own}/folders?after=garbage` }), 400, 'INVALID_CURSOR');
      problem(await t.request({ url: `/api/v1/deployments/${own}/folders?parentId=-1` }), 400);
    });

    it('lists only what the caller may see: granted folders and everything below them', async () => {
      const own = await t.deployment('visibility');
      const vw = new WorkspaceFixtures(t, own);
      const [a, b] = await vw.chain(2, 'vis');
      await vw.folder('hidden');
      const explorer = await t.user('EXPLORER');
      const group = await t.group(`vis-${explorer.userId}`, [explorer.userId]);
      await t.grant({ type: 'GROUP', id: group }, { type: 'FOLDER', id: a }, 'VIEW');
      const res = await t.request({ url: `/api/v1/deployments/${own}/folders`, key: explorer.key });
      expect(res.json().items.map((f: { id: number }) => f.id)).toEqual([a, b]);
    });
  });
});
