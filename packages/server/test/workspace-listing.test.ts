import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem } from './harness.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

interface Entry {
  type: string;
  id: number;
  name: string;
  folderId: number | null;
  folderPath: Array<{ id: number; name: string }>;
}

describe.each(DIALECTS)('GET /workspace (%s)', (dialect) => {
  let t: TestApp;
  let d: number;
  let w: WorkspaceFixtures;
  let home: number;
  const list = async (
    query: string,
    key?: string,
  ): Promise<{ items: Entry[]; pageInfo: { endCursor: string | null; hasNextPage: boolean }; data: Entry[]; count: number }> => {
    const res = await t.request({ url: `/api/v1/deployments/${d}/workspace${query}`, ...(key ? { key } : {}) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  /** Every page of a listing, following endCursor. */
  async function all(query: string, first: number, key?: string): Promise<Entry[]> {
    const out: Entry[] = [];
    let after: string | null = null;
    for (let i = 0; i < 50; i++) {
      const sep = query.includes('?') ? '&' : '?';
      const page = await list(`${query}${sep}first=${first}${after ? `&after=${after}` : ''}`, key);
      out.push(...page.items);
      if (!page.pageInfo.hasNextPage) return out;
      after = page.pageInfo.endCursor;
    }
    throw new Error('too many pages');
  }

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    d = await t.deployment('listing');
    w = new WorkspaceFixtures(t, d);
    home = await w.folder('Home');
    await w.folder('beta', home);
    await w.folder('Alpha', home);
    await w.workbook('delta', home);
    await w.report('Charlie', home);
    await w.workbook('alpha book', home);
    await w.report('Echo', null);
  });
  afterAll(async () => t?.close());

  it('lists a folder: folders first, then workbooks and reports by name, case-insensitively', async () => {
    const page = await list(`?folderId=${home}`);
    expect(page.items.map((e) => `${e.type}:${e.name}`)).toEqual(['FOLDER:Alpha', 'FOLDER:beta', 'WORKBOOK:alpha book', 'REPORT:Charlie', 'WORKBOOK:delta']);
    expect(page.items.every((e) => e.folderId === home && e.folderPath.length === 1 && e.folderPath[0]!.name === 'Home')).toBe(true);
    expect(page.data).toEqual(page.items);
    expect(page.count).toBe(5);
  });

  it('lists the root by default, and sorts descending on request (folders still first)', async () => {
    expect((await list('')).items.map((e) => e.name)).toEqual(['Home', 'Echo']);
    const desc = await list(`?folderId=${home}&sortOrder=desc`);
    expect(desc.items.map((e) => e.name)).toEqual(['beta', 'Alpha', 'delta', 'Charlie', 'alpha book']);
  });

  it('filters by types', async () => {
    const page = await list(`?folderId=${home}&types=REPORT,WORKBOOK`);
    expect(page.items.map((e) => e.type).sort()).toEqual(['REPORT', 'WORKBOOK', 'WORKBOOK']);
    problem(await t.request({ url: `/api/v1/deployments/${d}/workspace?types=DASHBOARD` }), 400);
  });

  it('search is case-insensitive and covers the whole workspace, with each entry’s path', async () => {
    const page = await list('?search=ALPHA');
    expect(page.items.map((e) => e.name)).toEqual(['Alpha', 'alpha book']);
    expect(page.items[0]!.folderPath).toEqual([{ id: home, name: 'Home' }]);
    expect((await list('?search=%25')).items).toEqual([]);
  });

  it('pages round-trip without gaps or repeats, for every ordering and direction', async () => {
    const big = await w.folder('Big');
    for (let i = 0; i < 6; i++) await w.folder(`f${i % 3}${i}`, big);
    for (let i = 0; i < 8; i++) await (i % 2 ? w.workbook(`Item ${i % 4}`, big) : w.report(`item ${i % 4}`, big));
    for (const sortBy of ['name', 'createdAt', 'updatedAt']) {
      for (const sortOrder of ['asc', 'desc']) {
        const q = `?folderId=${big}&sortBy=${sortBy}&sortOrder=${sortOrder}`;
        const whole = (await list(`${q}&first=200`)).items.map((e) => `${e.type}:${e.id}`);
        expect(whole).toHaveLength(14);
        for (const size of [1, 3, 5]) {
          expect(
            (await all(q, size)).map((e) => `${e.type}:${e.id}`),
            `${sortBy} ${sortOrder} by ${size}`,
          ).toEqual(whole);
        }
        expect(whole.slice(0, 6).every((k) => k.startsWith('FOLDER:'))).toBe(true);
      }
    }
    problem(await t.request({ url: `/api/v1/deployments/${d}/workspace?after=bm9wZQ` }), 400, 'INVALID_CURSOR');
  });

  it('refuses a tampered cursor, or one from another ordering or folder, with 400 rather than a wrong page', async () => {
    const page = await list(`?folderId=${home}&first=2`);
    const cursor = page.pageInfo.endCursor!;
    const [grp, key, rank, id, listing] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as [number, string, number, number, string];
    const forged = (value: unknown[]) => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const bad of [
      [0.5, key, rank, id, listing],
      [grp, key, 1.5, id, listing],
      [grp, key, rank, 1e300, listing],
      [grp, key, rank, 2 ** 63, listing],
      [grp, 7, rank, id, listing],
      [grp, key, rank, id],
    ]) {
      problem(await t.request({ url: `/api/v1/deployments/${d}/workspace?folderId=${home}&after=${forged(bad)}` }), 400, 'INVALID_CURSOR');
    }
    for (const other of ['sortBy=createdAt', 'sortOrder=desc', 'folderId=root', 'types=WORKBOOK', 'search=a']) {
      const q = other.startsWith('folderId') ? other : `folderId=${home}&${other}`;
      problem(await t.request({ url: `/api/v1/deployments/${d}/workspace?${q}&after=${cursor}` }), 400, 'INVALID_CURSOR');
    }
    expect((await list(`?folderId=${home}&first=2&after=${cursor}`)).items.length).toBeGreaterThan(0);
  });

  it('the creator of a deployment sees everything in it and may open and move what it lists', async () => {
    const dev = await t.user('DEVELOPER');
    const own = await t.deployment('created-by-dev', { createdBy: dev.userId });
    const ow = new WorkspaceFixtures(t, own);
    const dest = await ow.folder('dest');
    const workbook = await ow.workbook('made by someone else');
    const listed = await t.request({ url: `/api/v1/deployments/${own}/workspace`, key: dev.key });
    expect(listed.json().items.map((e: Entry) => e.id)).toContain(workbook);
    expect((await t.request({ url: `/api/v1/deployments/${own}/workbooks/${workbook}`, key: dev.key })).statusCode).toBe(200);
    const moved = await t.request({
      method: 'POST',
      url: `/api/v1/deployments/${own}/workspace/move`,
      key: dev.key,
      body: { type: 'WORKBOOK', id: workbook, folderId: dest },
    });
    expect(moved.statusCode, moved.body).toBe(200);
  });

  it('shows only what the caller may see', async () => {
    const explorer = await t.user('EXPLORER');
    const shared = await w.folder('Shared', home);
    const inside = await w.workbook('Inside shared', shared);
    await w.workbook('Mine', home, explorer.userId);
    await t.grant({ type: 'USER', id: explorer.userId }, { type: 'FOLDER', id: shared }, 'VIEW');
    expect((await list(`?folderId=${home}`, explorer.key)).items.map((e) => e.name)).toEqual(['Shared', 'Mine']);
    expect((await list(`?folderId=${shared}`, explorer.key)).items.map((e) => e.id)).toEqual([inside]);
    expect((await list('?search=a', explorer.key)).items.map((e) => e.name).sort()).toEqual(['Inside shared', 'Shared']);
  });

  it('isFavorite is per calling user, set with PUT and cleared with DELETE /workspace/favorites/{type}/{id}', async () => {
    const explorer = await t.user('EXPLORER');
    const workbook = await w.workbook('Starred', home);
    await t.grant({ type: 'USER', id: explorer.userId }, { type: 'FOLDER', id: home }, 'VIEW');
    const fav = (method: 'PUT' | 'DELETE', key?: string) =>
      t.request({ method, url: `/api/v1/deployments/${d}/workspace/favorites/WORKBOOK/${workbook}`, ...(key ? { key } : {}) });
    expect((await fav('PUT', explorer.key)).statusCode).toBe(204);
    expect((await fav('PUT', explorer.key)).statusCode).toBe(204);
    const starred = (e: Entry & { isFavorite?: boolean }) => e.id === workbook && e.type === 'WORKBOOK';
    const mine = (await list(`?folderId=${home}`, explorer.key)).items.find(starred) as Entry & { isFavorite: boolean };
    const admins = (await list(`?folderId=${home}`)).items.find(starred) as Entry & { isFavorite: boolean };
    expect([mine.isFavorite, admins.isFavorite]).toEqual([true, false]);
    const moved = await t.request({ method: 'POST', url: `/api/v1/deployments/${d}/workspace/move`, body: { type: 'WORKBOOK', id: workbook, folderId: home } });
    expect(moved.json().isFavorite).toBe(false);
    expect((await fav('DELETE', explorer.key)).statusCode).toBe(204);
    expect(((await list(`?folderId=${home}`, explorer.key)).items.find(starred) as Entry & { isFavorite: boolean }).isFavorite).toBe(false);
    const stranger = await t.user('EXPLORER');
    problem(await fav('PUT', stranger.key), 403);
    problem(await t.request({ method: 'PUT', url: `/api/v1/deployments/${d}/workspace/favorites/REPORT/999999` }), 404, 'REPORT_NOT_FOUND');
  });
});
