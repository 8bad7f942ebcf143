import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

/*
 * Extensions named in reference section 9: canonical-text editing of a report
 * (GET/PATCH …/reports/{reportId}/file) and of a workbook's dashboard draft
 * (GET/PATCH …/workbooks/{workbookId}/dashboard/file), and the optimistic report update
 * (`expectedVersion` on the report update body).
 */

type Json = Record<string, any>;
interface TextFile {
  content: string;
  hash: string;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const STALE = 'f'.repeat(64);
let seq = 0;

describe.each(DIALECTS)('canonical text of reports and dashboard drafts (%s)', (dialect) => {
  let t: TestApp;
  let d: number;
  let ws: WorkspaceFixtures;
  let viewer: Caller;
  let stranger: Caller;

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    d = await t.deployment('canonical');
    ws = new WorkspaceFixtures(t, d);
    viewer = await t.user('VIEWER');
    stranger = await t.user('EXPLORER');
    await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id: d }, 'VIEW');
  });
  afterAll(async () => t?.close());

  const reportUrl = (reportId: number) => `/api/v1/deployments/${d}/reports/${reportId}`;
  const upsert = (publicId: string, body: Json, key?: string) =>
    t.request({ method: 'PUT', url: `/api/v1/deployments/${d}/reports/by-public-id/${publicId}`, body, ...(key ? { key } : {}) });
  const newReport = async (body: Json = {}) => {
    const publicId = `canonical-${++seq}`;
    const res = await upsert(publicId, { name: `Report ${seq}`, kind: 'table', sqlQuery: 'SELECT 1', spec: { b: 1, a: [2, 1] }, ...body });
    expect(res.statusCode, res.body).toBe(201);
    return { ...(res.json() as Json), publicId } as Json & { id: number; publicId: string };
  };
  const readReportFile = (reportId: number, key?: string) => t.request({ url: `${reportUrl(reportId)}/file`, ...(key ? { key } : {}) });
  const editReportFile = (reportId: number, body: unknown, key?: string) =>
    t.request({ method: 'PATCH', url: `${reportUrl(reportId)}/file`, body, ...(key ? { key } : {}) });
  const reportFile = async (reportId: number) => {
    const res = await readReportFile(reportId);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as TextFile;
  };
  const row = (reportId: number) => t.store.db.selectFrom('reports').selectAll().where('id', '=', reportId).executeTakeFirstOrThrow();

  describe('report text', () => {
    it('extension (reference 9, canonical text): GET answers the report as sorted, indented JSON and the SHA-256 of that text', async () => {
      const report = await newReport({ meta: { z: 1, a: { y: true, b: null } } });
      const res = await readReportFile(report.id);
      expect(res.statusCode, res.body).toBe(200);
      const file = res.json() as TextFile;
      expect(file.hash).toBe(sha256(file.content));
      expect(res.headers.etag).toBe(`"${file.hash}"`);
      expect(file.content.endsWith('}\n')).toBe(true);
      const parsed = JSON.parse(file.content) as Json;
      expect(Object.keys(parsed)).toEqual([...Object.keys(parsed)].sort());
      expect(Object.keys(parsed.meta)).toEqual(['a', 'z']);
      expect(parsed).toEqual({
        name: report.name,
        kind: 'table',
        title: null,
        description: null,
        sqlQuery: 'SELECT 1',
        pythonCode: null,
        spec: { a: [2, 1], b: 1 },
        meta: { a: { b: null, y: true }, z: 1 },
        preferences: null,
        periodComparisons: null,
        fillMissingRows: null,
      });
      expect(file.content).toContain('\n  "kind": "table",\n');
      // The same report gives the same text, and reading it is not viewing the report.
      expect(await reportFile(report.id)).toEqual(file);
      expect((await row(report.id)).last_viewed_at).toBeNull();
    });

    it('extension (reference 9, canonical text): reading needs VIEW on the report, as GET report does', async () => {
      const report = await newReport();
      expect((await readReportFile(report.id, viewer.key)).statusCode).toBe(200);
      problem(await readReportFile(report.id, stranger.key), 403, 'FORBIDDEN');
      problem(await readReportFile(999_999), 404, 'REPORT_NOT_FOUND');
    });

    it('extension (reference 9, canonical text): PATCH replaces exact text, saves it as the report update and answers the new text and hash', async () => {
      const report = await newReport();
      const before = await reportFile(report.id);
      const res = await editReportFile(report.id, {
        hash: before.hash,
        edits: [
          { oldText: '"sqlQuery": "SELECT 1"', newText: '"sqlQuery": "SELECT 2"' },
          { oldText: '"title": null', newText: '"title": "Revenue"' },
        ],
      });
      expect(res.statusCode, res.body).toBe(200);
      const after = res.json() as TextFile;
      expect(after.hash).toBe(sha256(after.content));
      expect(after.hash).not.toBe(before.hash);
      expect(await reportFile(report.id)).toEqual(after);
      const got = (await t.request({ url: reportUrl(report.id) })).json() as Json;
      expect(got).toMatchObject({ sqlQuery: 'SELECT 2', title: 'Revenue', version: 2 });
      expect(got.currentQueryChecksum).not.toBe(report.currentQueryChecksum);
    });

    it('extension (reference 9, canonical text): a field the edited text leaves out is cleared, since the text is the whole report', async () => {
      const report = await newReport({ description: 'gone soon' });
      const file = await reportFile(report.id);
      const res = await editReportFile(report.id, { hash: file.hash, edits: [{ oldText: '  "description": "gone soon",\n', newText: '' }] });
      expect(res.statusCode, res.body).toBe(200);
      expect((await row(report.id)).description).toBeNull();
      expect(JSON.parse((res.json() as TextFile).content)).toMatchObject({ description: null });
    });

    it('extension (reference 9, canonical text): a stale hash is 409 naming the current hash, and changes nothing', async () => {
      const report = await newReport();
      const file = await reportFile(report.id);
      const stored = await row(report.id);
      const res = await editReportFile(report.id, { hash: STALE, edits: [{ oldText: 'SELECT 1', newText: 'SELECT 9' }] });
      const body = problem(res, 409, 'FILE_HASH_MISMATCH');
      expect(body.detail).toContain(file.hash);
      expect(res.headers.etag).toBe(`"${file.hash}"`);
      expect(await row(report.id)).toEqual(stored);
    });

    it('extension (reference 9, canonical text): of concurrent PATCHes with the same hash exactly one wins; the other is 409 and its edit is not applied', async () => {
      const report = await newReport();
      const file = await reportFile(report.id);
      const results = await Promise.all(
        ['SELECT 10', 'SELECT 20', 'SELECT 30'].map((query) =>
          editReportFile(report.id, { hash: file.hash, edits: [{ oldText: '"SELECT 1"', newText: JSON.stringify(query) }] }),
        ),
      );
      const statuses = results.map((r) => r.statusCode).sort();
      expect(statuses).toEqual([200, 409, 409]);
      const winner = results.findIndex((r) => r.statusCode === 200);
      for (const loser of results.filter((r) => r.statusCode === 409)) problem(loser, 409, 'FILE_HASH_MISMATCH');
      expect((await row(report.id)).sql_query).toBe(['SELECT 10', 'SELECT 20', 'SELECT 30'][winner]);
      expect((await row(report.id)).version).toBe(2);
    });

    it.each([
      ['text that is not JSON', [{ oldText: '"name": ', newText: '"name" ' }], '/body/edits'],
      ['an unknown kind', [{ oldText: '"kind": "table"', newText: '"kind": "pie"' }], '/content/kind'],
      ['an unknown field', [{ oldText: '"kind": "table",', newText: '"kind": "table", "colour": "red",' }], '/content/colour'],
      ['an empty name', [{ oldText: /"name": "[^"]*"/, newText: '"name": ""' }], '/content/name'],
      ['a name left out', [{ oldText: /"name": "[^"]*",/, newText: '' }], '/content/name'],
      ['not an object', 'whole', '/content'],
      ['an oldText that occurs nowhere', [{ oldText: 'SELECT 42', newText: 'SELECT 43' }], '/body/edits/0/oldText'],
      ['an oldText that occurs twice', [{ oldText: 'null', newText: '"x"' }], '/body/edits/0/oldText'],
      [
        'a second edit that no longer matches',
        [
          { oldText: 'SELECT 1', newText: 'SELECT 2' },
          { oldText: 'SELECT 1', newText: 'SELECT 3' },
        ],
        '/body/edits/1/oldText',
      ],
      ['a __proto__ key', [{ oldText: '"meta": null', newText: '"meta": {"__proto__": {"x": 1}}' }], '/body/edits'],
    ])('extension (reference 9, canonical text): %s is 400 pointing at it, and changes nothing', async (_name, edits, pointer) => {
      const report = await newReport();
      const file = await reportFile(report.id);
      const stored = await row(report.id);
      const resolved =
        edits === 'whole'
          ? [{ oldText: file.content, newText: '[1, 2]' }]
          : (edits as Array<{ oldText: string | RegExp; newText: string }>).map((e) => ({
              oldText: typeof e.oldText === 'string' ? e.oldText : e.oldText.exec(file.content)![0],
              newText: e.newText,
            }));
      const res = await editReportFile(report.id, { hash: file.hash, edits: resolved });
      const body = problem(res, 400, 'VALIDATION_FAILED');
      expect(
        body.errors?.map((e) => e.pointer),
        res.body,
      ).toContain(pointer);
      expect(body.detail).toContain('Nothing was written');
      expect(await row(report.id)).toEqual(stored);
    });

    it('extension (reference 9, canonical text): a bad JSON edit is 400 quoting the parser on the text around it', async () => {
      const report = await newReport();
      const file = await reportFile(report.id);
      const res = await editReportFile(report.id, { hash: file.hash, edits: [{ oldText: '"pythonCode": null', newText: '"pythonCode": nul' }] });
      expect(problem(res, 400, 'VALIDATION_FAILED').detail).toMatch(/not valid JSON.*nul/s);
    });

    it('extension (reference 9, canonical text): PATCH needs EDIT on the report, as the report update; a viewer or a stranger changes nothing', async () => {
      const report = await newReport();
      const file = await reportFile(report.id);
      const stored = await row(report.id);
      const body = { hash: file.hash, edits: [{ oldText: 'SELECT 1', newText: 'SELECT 2' }] };
      problem(await editReportFile(report.id, body, viewer.key), 403, 'FORBIDDEN');
      problem(await editReportFile(report.id, body, stranger.key), 403, 'FORBIDDEN');
      // Access comes before the hash: a stale hash tells nothing to whom may not edit.
      problem(await editReportFile(report.id, { ...body, hash: STALE }, viewer.key), 403, 'FORBIDDEN');
      expect(await row(report.id)).toEqual(stored);
      const editor = await t.user('EXPLORER');
      await t.grant({ type: 'USER', id: editor.userId }, { type: 'REPORT', id: report.id }, 'EDIT');
      expect((await editReportFile(report.id, body, editor.key)).statusCode).toBe(200);
    });

    it('extension (reference 9, canonical text): an edit that leaves the same report (formatting only) changes nothing and keeps the hash', async () => {
      const report = await newReport();
      const file = await reportFile(report.id);
      const res = await editReportFile(report.id, { hash: file.hash, edits: [{ oldText: '"kind": "table"', newText: '"kind":    "table"' }] });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual(file);
      expect((await row(report.id)).version).toBe(1);
    });
  });

  describe('optimistic report update', () => {
    it('extension (reference 9, optimistic update): a report starts at version 1, and each update that changes it adds one; one that changes nothing does not', async () => {
      const report = await newReport();
      expect(report.version).toBe(1);
      const same = await upsert(report.publicId, { name: report.name });
      expect(same.json()).toMatchObject({ version: 1 });
      const changed = await upsert(report.publicId, { name: report.name, title: 'New' });
      expect(changed.json()).toMatchObject({ version: 2, title: 'New' });
    });

    it('extension (reference 9, optimistic update): expectedVersion equal to the stored version updates', async () => {
      const report = await newReport();
      const res = await upsert(report.publicId, { name: report.name, title: 'v2', expectedVersion: 1 });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ version: 2, title: 'v2' });
    });

    it('extension (reference 9, optimistic update): an expectedVersion mismatch is 409 naming the current version, and writes nothing', async () => {
      const report = await newReport();
      await upsert(report.publicId, { name: report.name, title: 'first' });
      const stored = await row(report.id);
      const res = await upsert(report.publicId, { name: 'Renamed', title: 'second', folderId: null, expectedVersion: 1 });
      const body = problem(res, 409, 'REPORT_VERSION_MISMATCH');
      expect(body.detail).toContain('version 2');
      expect(await row(report.id)).toEqual(stored);
    });

    it('extension (reference 9, optimistic update): of concurrent updates made from the same version, exactly one is applied; the others are 409', async () => {
      const report = await newReport();
      const titles = ['a', 'b', 'c'];
      const results = await Promise.all(titles.map((title) => upsert(report.publicId, { name: report.name, title, expectedVersion: 1 })));
      expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409, 409]);
      const winner = titles[results.findIndex((r) => r.statusCode === 200)];
      expect(await row(report.id)).toMatchObject({ title: winner, version: 2 });
    });

    it('extension (reference 9, optimistic update): a move by folderId is refused too on a mismatch', async () => {
      const report = await newReport();
      await upsert(report.publicId, { name: report.name, title: 'first' });
      const folder = await ws.folder(`target-${++seq}`);
      problem(await upsert(report.publicId, { name: report.name, folderId: folder, expectedVersion: 1 }), 409, 'REPORT_VERSION_MISMATCH');
      expect((await row(report.id)).folder_id).toBeNull();
    });

    it('extension (reference 9, optimistic update): expectedVersion where no report has the public id is 409 and creates nothing', async () => {
      const res = await upsert(`missing-${++seq}`, { name: 'Nope', expectedVersion: 1 });
      problem(res, 409, 'REPORT_VERSION_MISMATCH');
      expect(await t.store.db.selectFrom('reports').select('id').where('public_id', '=', `missing-${seq}`).execute()).toEqual([]);
    });

    it('extension (reference 9, optimistic update): a caller without EDIT gets 403, not the version', async () => {
      const report = await newReport();
      const res = await upsert(report.publicId, { name: report.name, expectedVersion: 5 }, viewer.key);
      problem(res, 403, 'FORBIDDEN');
    });
  });

  describe('dashboard draft text', () => {
    const draftUrl = (workbookId: number) => `/api/v1/deployments/${d}/workbooks/${workbookId}/dashboard/file`;
    const readDraft = (workbookId: number, key?: string) => t.request({ url: draftUrl(workbookId), ...(key ? { key } : {}) });
    const editDraft = (workbookId: number, body: unknown, key?: string) =>
      t.request({ method: 'PATCH', url: draftUrl(workbookId), body, ...(key ? { key } : {}) });
    const draftFile = async (workbookId: number) => {
      const res = await readDraft(workbookId);
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as TextFile;
    };
    const draftRow = async (workbookId: number) =>
      (await t.store.db.selectFrom('workbooks').select(['dashboard_draft', 'updated_at']).where('id', '=', workbookId).executeTakeFirstOrThrow()) as Json;
    const position = { x: 0, y: 0, w: 6, h: 4 };
    const withDraft = async () => {
      const workbookId = await ws.workbook(`draft-${++seq}`);
      const res = await t.request({
        method: 'PUT',
        url: `/api/v1/deployments/${d}/workbooks/${workbookId}/dashboard`,
        body: { dashboardDraft: { title: 'Sales', widgets: [{ id: 'w1', type: 'TEXT', position, config: { text: 'hello' } }] } },
      });
      expect(res.statusCode, res.body).toBe(200);
      return workbookId;
    };

    it('extension (reference 9, canonical text): a workbook without a draft reads as `null`, and replacing it saves a draft whose widgets get ids', async () => {
      const workbookId = await ws.workbook(`draft-${++seq}`);
      const file = await draftFile(workbookId);
      expect(file).toEqual({ content: 'null\n', hash: sha256('null\n') });
      const draft = { title: 'New', widgets: [{ type: 'TEXT', position, config: { text: 'hi' } }] };
      const res = await editDraft(workbookId, { hash: file.hash, edits: [{ oldText: 'null', newText: JSON.stringify(draft) }] });
      expect(res.statusCode, res.body).toBe(200);
      const saved = JSON.parse((res.json() as TextFile).content) as Json;
      expect(saved.title).toBe('New');
      expect(typeof saved.widgets[0].id).toBe('string');
      expect(JSON.parse(String((await draftRow(workbookId)).dashboard_draft))).toEqual(saved);
    });

    it('extension (reference 9, canonical text): the draft text is the draft save’s answer, keys sorted, with its SHA-256', async () => {
      const workbookId = await withDraft();
      const file = await draftFile(workbookId);
      expect(file.hash).toBe(sha256(file.content));
      expect(file.content).toBe(
        `${JSON.stringify({ title: 'Sales', widgets: [{ config: { text: 'hello' }, id: 'w1', position: { h: 4, w: 6, x: 0, y: 0 }, type: 'TEXT' }] }, null, 2)}\n`,
      );
      expect((await readDraft(workbookId, viewer.key)).statusCode).toBe(200);
      problem(await readDraft(workbookId, stranger.key), 403, 'FORBIDDEN');
    });

    it('extension (reference 9, canonical text): a stale draft hash is 409 naming the current hash, and changes nothing', async () => {
      const workbookId = await withDraft();
      const file = await draftFile(workbookId);
      const stored = await draftRow(workbookId);
      const res = await editDraft(workbookId, { hash: STALE, edits: [{ oldText: 'Sales', newText: 'Costs' }] });
      expect(problem(res, 409, 'FILE_HASH_MISMATCH').detail).toContain(file.hash);
      expect(await draftRow(workbookId)).toEqual(stored);
    });

    it('extension (reference 9, canonical text): of concurrent draft PATCHes with the same hash exactly one wins', async () => {
      const workbookId = await withDraft();
      const file = await draftFile(workbookId);
      const titles = ['One', 'Two', 'Three'];
      const results = await Promise.all(
        titles.map((title) => editDraft(workbookId, { hash: file.hash, edits: [{ oldText: '"Sales"', newText: `"${title}"` }] })),
      );
      expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409, 409]);
      const winner = titles[results.findIndex((r) => r.statusCode === 200)];
      expect(JSON.parse(String((await draftRow(workbookId)).dashboard_draft))).toMatchObject({ title: winner });
    });

    it.each([
      ['an unknown widget type', { oldText: '"type": "TEXT"', newText: '"type": "PIE"' }, '/content/widgets/0/type'],
      ['a widget without a position', { oldText: /"position": \{[^}]*\},\n\s*/, newText: '' }, '/content/widgets/0/position'],
      [
        'a duplicate widget id',
        { oldText: '"type": "TEXT"\n    }', newText: '"type": "TEXT"\n    }, {"id": "w1", "type": "TEXT", "position": {"x": 0, "y": 0, "w": 1, "h": 1}}' },
        '/content/widgets/1/id',
      ],
      ['text that is not JSON', { oldText: '"title": "Sales"', newText: '"title": Sales' }, '/body/edits'],
    ])('extension (reference 9, canonical text): a draft with %s is 400 pointing at it, and changes nothing', async (_name, edit, pointer) => {
      const workbookId = await withDraft();
      const file = await draftFile(workbookId);
      const stored = await draftRow(workbookId);
      const oldText = typeof edit.oldText === 'string' ? edit.oldText : edit.oldText.exec(file.content)![0];
      const res = await editDraft(workbookId, { hash: file.hash, edits: [{ oldText, newText: edit.newText }] });
      const body = problem(res, 400, 'VALIDATION_FAILED');
      expect(
        body.errors?.map((e) => e.pointer),
        res.body,
      ).toContain(pointer);
      expect(await draftRow(workbookId)).toEqual(stored);
    });

    it('extension (reference 9, canonical text): a draft edit that changes only spacing writes nothing', async () => {
      const workbookId = await withDraft();
      const file = await draftFile(workbookId);
      const stored = await draftRow(workbookId);
      const res = await editDraft(workbookId, { hash: file.hash, edits: [{ oldText: '"title": "Sales"', newText: '"title":   "Sales"' }] });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual(file);
      expect(await draftRow(workbookId)).toEqual(stored);
    });

    it('extension (reference 9, canonical text): replacing the draft by `null` clears it', async () => {
      const workbookId = await withDraft();
      const file = await draftFile(workbookId);
      const res = await editDraft(workbookId, { hash: file.hash, edits: [{ oldText: file.content, newText: 'null' }] });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ content: 'null\n', hash: sha256('null\n') });
      expect((await draftRow(workbookId)).dashboard_draft).toBeNull();
    });

    it('extension (reference 9, canonical text): editing the draft needs EDIT on the workbook, as the draft save', async () => {
      const workbookId = await withDraft();
      const file = await draftFile(workbookId);
      const stored = await draftRow(workbookId);
      const body = { hash: file.hash, edits: [{ oldText: 'Sales', newText: 'Costs' }] };
      problem(await editDraft(workbookId, body, viewer.key), 403, 'FORBIDDEN');
      problem(await editDraft(workbookId, body, stranger.key), 403, 'FORBIDDEN');
      problem(await editDraft(999_999, body), 404, 'WORKBOOK_NOT_FOUND');
      expect(await draftRow(workbookId)).toEqual(stored);
    });
  });
});
