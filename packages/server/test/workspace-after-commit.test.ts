import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp } from './harness.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

/*
 * Issue 11, "No lost record": the response of a write is built inside the same error handling as
 * the write. Rendering is made to fail for real, after the commit: the favorites table the view
 * reads is renamed away in this test's own store, or a stored value no longer parses.
 */

interface LogLine {
  level: number;
  reqId?: string;
  msg: string;
  committed?: string[];
}

interface Moved {
  type: string;
  id: number;
  folderId: number | null;
  folderPath: Array<{ id: number; name: string }>;
  user: { id: number } | null;
  isFavorite: boolean;
  meta: Record<string, unknown>;
}

describe.each(DIALECTS)('a write whose response cannot be fully read after it committed (%s)', (dialect) => {
  let t: TestApp;
  let d: number;
  let w: WorkspaceFixtures;
  let author: number;
  const lines: LogLine[] = [];

  beforeAll(async () => {
    t = await TestApp.create(dialect, {
      logger: { level: 'error', stream: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) } },
    });
    d = await t.deployment('after-commit');
    w = new WorkspaceFixtures(t, d);
    author = (await t.user('EXPLORER')).userId;
  });
  afterAll(async () => t?.close());
  beforeEach(() => {
    lines.length = 0;
  });

  /** Runs `during` while the favorites table the views read is not there, then puts it back. */
  async function withoutFavorites<T>(during: () => Promise<T>): Promise<T> {
    await sql`alter table favorites rename to favorites_away`.execute(t.store.db);
    try {
      return await during();
    } finally {
      await sql`alter table favorites_away rename to favorites`.execute(t.store.db);
    }
  }

  const favorite = (type: string, id: number) => t.request({ method: 'PUT', url: `/api/v1/deployments/${d}/workspace/favorites/${type}/${id}` });
  const bulkMove = (items: Array<{ type: string; id: number }>, folderId: number | null) =>
    t.request({ method: 'POST', url: `/api/v1/deployments/${d}/workspace/bulk-move`, body: { items, folderId } });
  const listing = async (folderId: number) => {
    const res = await t.request({ url: `/api/v1/deployments/${d}/workspace?folderId=${folderId}` });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { items: Array<{ type: string; id: number; isFavorite: boolean }> }).items;
  };
  /** The error lines logged for the request that answered `res`. */
  const loggedFor = (res: { headers: Record<string, unknown> }) => lines.filter((l) => l.level >= 50 && l.reqId === res.headers['x-request-id']);

  it('a bulk move whose rendering fails still returns 200 with its moved and failed entries (spec rules 1 and 4), and the tree shows the moves', async () => {
    const [top, dest] = await w.chain(2, 'archive');
    const folder = await w.folder('q1', null, author);
    const book = await w.workbook('revenue', null, author);
    const report = await w.report('costs', null, author);
    expect((await favorite('WORKBOOK', book)).statusCode).toBe(204);

    const items = [
      { type: 'FOLDER', id: folder },
      { type: 'WORKBOOK', id: book },
      { type: 'REPORT', id: 999_999 },
      { type: 'REPORT', id: report },
    ];
    const res = await withoutFavorites(() => bulkMove(items, dest));

    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { moved: Moved[]; failed: Array<{ type: string; id: number; error: { status: number } }> };
    expect(body.moved.map((m) => [m.type, m.id])).toEqual([
      ['FOLDER', folder],
      ['WORKBOOK', book],
      ['REPORT', report],
    ]);
    expect(body.failed).toEqual([{ type: 'REPORT', id: 999_999, error: { status: 404, message: expect.any(String) } }]);
    // Built from what the moves read themselves: the destination and its path; the owner still
    // loads; only the favorite, which could not be read, is left out.
    for (const m of body.moved) {
      expect(m.folderId).toBe(dest);
      expect(m.folderPath).toEqual([
        { id: top, name: 'archive-1' },
        { id: dest, name: 'archive-2' },
      ]);
      expect(m.user?.id).toBe(author);
      expect(m.isFavorite).toBe(false);
    }

    const logged = loggedFor(res);
    expect(logged).toHaveLength(1);
    expect(logged[0]!.msg).toMatch(/bulk move in deployment \d+: committed 3 item/);
    expect(logged[0]!.committed).toEqual([`FOLDER:${folder}`, `WORKBOOK:${book}`, `REPORT:${report}`]);

    // What the answer recorded is what applied; with the table back, the favorite shows again.
    const inDest = await listing(dest);
    expect(inDest.map((e) => [e.type, e.id])).toEqual([
      ['FOLDER', folder],
      ['REPORT', report],
      ['WORKBOOK', book],
    ]);
    expect(inDest.find((e) => e.id === book && e.type === 'WORKBOOK')?.isFavorite).toBe(true);
  });

  it('an item whose stored content cannot be read is answered without that content; the rest of the batch keeps theirs', async () => {
    const dest = await w.folder('broken-dest');
    const broken = await w.workbook('broken', null, author);
    const fine = await w.workbook('fine', null, author);
    await t.store.db.updateTable('workbooks').set({ meta: '{"fine": true}' }).where('id', '=', fine).execute();
    expect((await favorite('WORKBOOK', broken)).statusCode).toBe(204);
    // A stored value the view cannot parse: the move itself never reads it.
    await t.store.db.updateTable('workbooks').set({ meta: '{not json' }).where('id', '=', broken).execute();

    const res = await bulkMove(
      [
        { type: 'WORKBOOK', id: broken },
        { type: 'WORKBOOK', id: fine },
      ],
      dest,
    );
    expect(res.statusCode, res.body).toBe(200);
    const { moved, failed } = res.json() as { moved: Moved[]; failed: unknown[] };
    expect(failed).toEqual([]);
    expect(moved.map((m) => [m.id, m.folderId])).toEqual([
      [broken, dest],
      [fine, dest],
    ]);
    // The broken item keeps everything but its content, its favorite included.
    expect(moved[0]).toMatchObject({ meta: {}, isFavorite: true, user: { id: author } });
    expect(moved[1]).toMatchObject({ meta: { fine: true }, isFavorite: false });
    expect(loggedFor(res)[0]?.committed).toEqual([`WORKBOOK:${broken}`, `WORKBOOK:${fine}`]);
    expect((await listing(dest)).map((e) => e.id)).toEqual([broken, fine]);

    // The single move answers the same way.
    const single = await t.request({ method: 'POST', url: `/api/v1/deployments/${d}/workspace/move`, body: { type: 'WORKBOOK', id: broken, folderId: null } });
    expect(single.statusCode, single.body).toBe(200);
    expect(single.json()).toMatchObject({ id: broken, folderId: null, folderPath: [], meta: {} });
    expect(loggedFor(single)[0]?.committed).toEqual([`WORKBOOK:${broken}`]);
  });

  it('creates, renames, upserts and duplicates whose rendering fails still answer with what they stored, logged', async () => {
    const base = `/api/v1/deployments/${d}`;
    const parent = await w.folder('made-under');
    const answers = await withoutFavorites(async () => ({
      folder: await t.request({ method: 'POST', url: `${base}/folders`, body: { name: 'made', parentId: parent } }),
      workbook: await t.request({ method: 'PUT', url: `${base}/workbooks/by-slug/made-book`, body: { name: 'Made book', folderId: parent, meta: { a: 1 } } }),
      report: await t.request({ method: 'PUT', url: `${base}/reports/by-public-id/made-report`, body: { name: 'Made report', title: 'Kept' } }),
    }));
    expect(answers.folder.statusCode, answers.folder.body).toBe(201);
    expect(answers.folder.json()).toMatchObject({ name: 'made', parentId: parent, folderPath: [{ id: parent, name: 'made-under' }], isFavorite: false });
    expect(answers.workbook.statusCode, answers.workbook.body).toBe(201);
    expect(answers.workbook.json()).toMatchObject({ slug: 'made-book', folderId: parent, meta: { a: 1 }, isFavorite: false });
    expect(answers.report.statusCode, answers.report.body).toBe(201);
    expect(answers.report.json()).toMatchObject({ publicId: 'made-report', title: 'Kept', isFavorite: false });
    const folderId = (answers.folder.json() as { id: number }).id;
    const workbookId = (answers.workbook.json() as { id: number }).id;
    const reportId = (answers.report.json() as { id: number }).id;
    expect(loggedFor(answers.folder)[0]?.committed).toEqual([`FOLDER:${folderId}`]);
    expect(loggedFor(answers.workbook)[0]?.committed).toEqual([`WORKBOOK:${workbookId}`]);
    expect(loggedFor(answers.report)[0]?.committed).toEqual([`REPORT:${reportId}`]);

    const later = await withoutFavorites(async () => ({
      rename: await t.request({ method: 'PATCH', url: `${base}/folders/${folderId}`, body: { name: 'renamed' } }),
      copy: await t.request({ method: 'POST', url: `${base}/workbooks/${workbookId}/duplicate`, body: {} }),
    }));
    expect(later.rename.statusCode, later.rename.body).toBe(200);
    expect(later.rename.json()).toMatchObject({ id: folderId, name: 'renamed' });
    expect(later.copy.statusCode, later.copy.body).toBe(200);
    expect(later.copy.json()).toMatchObject({ slug: 'made-book-copy', meta: { a: 1 } });

    // Everything answered was stored: a repeated upsert updates (200) instead of creating again.
    expect((await t.request({ method: 'PUT', url: `${base}/workbooks/by-slug/made-book`, body: { name: 'Made book' } })).statusCode).toBe(200);
    expect((await t.request({ method: 'PUT', url: `${base}/reports/by-public-id/made-report`, body: { name: 'Made report' } })).statusCode).toBe(200);
    // By name: "Copy of Made book" before "Made book".
    expect((await listing(parent)).map((e) => [e.type, e.id])).toEqual([
      ['FOLDER', folderId],
      ['WORKBOOK', (later.copy.json() as { id: number }).id],
      ['WORKBOOK', workbookId],
    ]);
  });
});
