import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_FILE } from '../scripts/write-openapi.js';
import { DIALECTS, TestApp, problem } from './harness.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

type ItemType = 'FOLDER' | 'WORKBOOK' | 'REPORT';
interface Failure {
  type: ItemType;
  id: number;
  error: { status: number; message: string };
}
interface BulkResponse {
  moved: Array<{ id: number; type: ItemType; folderId: number | null; folderPath: Array<{ id: number; name: string }> }>;
  failed: Failure[];
}

describe('bulk move in the OpenAPI document (spec: Endpoints, Bulk move; Versioning)', () => {
  const doc = JSON.parse(fs.readFileSync(OPENAPI_FILE, 'utf8')) as {
    paths: Record<string, Record<string, { operationId: string; requestBody?: { required: boolean; content: Record<string, { schema: unknown }> } }>>;
    components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
  };
  it('is operation bulkMoveWorkspaceObjects with an optional body of BulkMoveWorkspaceObjectsInput', () => {
    const op = doc.paths['/api/v1/deployments/{deploymentId}/workspace/bulk-move']?.post;
    expect(op?.operationId).toBe('bulkMoveWorkspaceObjects');
    expect(op?.requestBody?.required).toBe(false);
    expect(op?.requestBody?.content['application/json']?.schema).toEqual({ $ref: '#/components/schemas/BulkMoveWorkspaceObjectsInput' });
  });
  it('names the schemas as the spec does, with items required inside the body', () => {
    const s = doc.components.schemas;
    for (const name of [
      'BulkMoveWorkspaceObjectsInput',
      'BulkMoveWorkspaceObjectsResponse',
      'WorkspaceItemRefInput',
      'WorkspaceBulkFailure',
      'BulkActionError',
      'Workbook',
      'ResourceOwner',
      'WorkspaceFolderPathEntry',
      'DashboardConfig',
      'Dashboard',
      'ReportSnapshot',
    ]) {
      expect(s[name], name).toBeDefined();
    }
    expect(s.BulkMoveWorkspaceObjectsInput?.required).toEqual(['items']);
    expect(s.BulkMoveWorkspaceObjectsResponse?.required).toEqual(['moved', 'failed']);
    expect(s.Workbook?.required).toEqual(['id', 'deploymentId', 'name', 'type', 'meta', 'calculatedFields', 'createdAt', 'updatedAt']);
  });
});

describe.each(DIALECTS)('bulk move: POST /workspace/bulk-move (%s)', (dialect) => {
  let t: TestApp;
  let d: number;
  let w: WorkspaceFixtures;
  const url = () => `/api/v1/deployments/${d}/workspace/bulk-move`;
  const bulk = (body: unknown, key?: string) => t.request({ method: 'POST', url: url(), body, ...(key ? { key } : {}) });
  const single = (body: unknown, key?: string) => t.request({ method: 'POST', url: `/api/v1/deployments/${d}/workspace/move`, body, ...(key ? { key } : {}) });
  async function ok(body: unknown, key?: string): Promise<BulkResponse> {
    const res = await bulk(body, key);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as BulkResponse;
  }

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    d = await t.deployment('bulk');
    w = new WorkspaceFixtures(t, d);
  });
  afterAll(async () => t?.close());

  it('moves folders, workbooks and reports together, each as the single move returns it', async () => {
    const [top, dest] = await w.chain(2, 'mixed');
    const folder = await w.folder('Mixed folder');
    const workbook = await w.workbook('Mixed workbook');
    const report = await w.report('Mixed report');
    const body = await ok({
      items: [
        { type: 'FOLDER', id: folder },
        { type: 'WORKBOOK', id: workbook },
        { type: 'REPORT', id: report },
      ],
      folderId: dest,
    });
    expect(body.failed).toEqual([]);
    expect(body.moved.map((m) => [m.type, m.id])).toEqual([
      ['FOLDER', folder],
      ['WORKBOOK', workbook],
      ['REPORT', report],
    ]);
    for (const m of body.moved) {
      expect(m.folderId).toBe(dest);
      expect(m.folderPath).toEqual([
        { id: top, name: 'mixed-1' },
        { id: dest, name: 'mixed-2' },
      ]);
    }
    // A moved item looks exactly as the single move (a no-op now) returns it.
    const again = await single({ type: 'WORKBOOK', id: workbook, folderId: dest });
    expect(body.moved[1]).toEqual(again.json());
  });

  it('rule 1: a well-formed request is 200 even when every item fails', async () => {
    const workbook = await w.workbook('Rule 1');
    const body = await ok({
      items: [
        { type: 'WORKBOOK', id: workbook },
        { type: 'REPORT', id: 987654 },
      ],
      folderId: 876543,
    });
    expect(body.moved).toEqual([]);
    expect(body.failed).toEqual([
      {
        type: 'WORKBOOK',
        id: workbook,
        error: { status: 404, message: `Cannot move workbook ${workbook}: destination folder 876543 does not exist in deployment ${d}.` },
      },
      { type: 'REPORT', id: 987654, error: { status: 404, message: `Report 987654 does not exist in deployment ${d}.` } },
    ]);
  });

  it('rule 2: repeated (type, id) references collapse to one entry; a FOLDER and a WORKBOOK with the same id are different items', async () => {
    const [dest] = await w.chain(1, 'rule-2');
    // A folder and a workbook that share an id number, far above what the sequences hand out.
    const shared = 7_000_000 + Math.floor(Math.random() * 1_000_000);
    await t.store.db
      .updateTable('folders')
      .set({ id: shared })
      .where('id', '=', await w.folder('Rule 2 folder'))
      .execute();
    await t.store.db
      .updateTable('workbooks')
      .set({ id: shared })
      .where('id', '=', await w.workbook('Rule 2 workbook'))
      .execute();
    const items = [
      { type: 'WORKBOOK', id: shared },
      { type: 'WORKBOOK', id: shared },
      { type: 'FOLDER', id: shared },
      { type: 'REPORT', id: shared },
      { type: 'WORKBOOK', id: shared },
      { type: 'FOLDER', id: shared },
      { type: 'REPORT', id: shared },
    ];
    const body = await ok({ items, folderId: dest });
    expect(body.moved.map((m) => `${m.type}:${m.id}`)).toEqual([`WORKBOOK:${shared}`, `FOLDER:${shared}`]);
    expect(body.failed).toEqual([{ type: 'REPORT', id: shared, error: { status: 404, message: `Report ${shared} does not exist in deployment ${d}.` } }]);
  });

  it('rule 3: items apply one at a time in the given order', async () => {
    const [dest] = await w.chain(1, 'rule-3');
    const first = await w.folder('Same name', await w.folder('rule-3-a'));
    const second = await w.folder('Same name', await w.folder('rule-3-b'));
    // Only the first of two same-named folders fits; order decides which.
    const body = await ok({
      items: [
        { type: 'FOLDER', id: second },
        { type: 'FOLDER', id: first },
      ],
      folderId: dest,
    });
    expect(body.moved.map((m) => m.id)).toEqual([second]);
    expect(body.failed).toEqual([
      {
        type: 'FOLDER',
        id: first,
        error: { status: 400, message: `Cannot move folder ${first} "Same name" into folder ${dest}: it already holds a folder named "Same name".` },
      },
    ]);
    // The check of `first` saw the move of `second` that came before it.
    expect(await w.containerOf('FOLDER', second)).toBe(dest);
  });

  it('rule 4: a later failure does not roll back earlier moves', async () => {
    const [dest] = await w.chain(1, 'rule-4');
    const a = await w.workbook('Rule 4 a');
    const b = await w.report('Rule 4 b');
    const body = await ok({
      items: [
        { type: 'WORKBOOK', id: a },
        { type: 'REPORT', id: b },
        { type: 'FOLDER', id: dest },
      ],
      folderId: dest,
    });
    expect(body.moved.map((m) => m.id)).toEqual([a, b]);
    expect(body.failed).toEqual([{ type: 'FOLDER', id: dest, error: { status: 400, message: `Cannot move folder ${dest} "rule-4-1" into itself.` } }]);
    expect(await w.containerOf('WORKBOOK', a)).toBe(dest);
    expect(await w.containerOf('REPORT', b)).toBe(dest);
  });

  it('rule 5: access is checked per item; permitted items apply, the rest fail with 403', async () => {
    const explorer = await t.user('EXPLORER');
    const [dest] = await w.chain(1, 'rule-5');
    await t.grant({ type: 'USER', id: explorer.userId }, { type: 'FOLDER', id: dest }, 'EDIT');
    const mine = await w.workbook('Rule 5 mine', null, explorer.userId);
    const theirs = await w.workbook('Rule 5 theirs');
    const body = await ok(
      {
        items: [
          { type: 'WORKBOOK', id: theirs },
          { type: 'WORKBOOK', id: mine },
        ],
        folderId: dest,
      },
      explorer.key,
    );
    expect(body.moved.map((m) => m.id)).toEqual([mine]);
    expect(body.failed).toEqual([
      { type: 'WORKBOOK', id: theirs, error: { status: 403, message: `You need MANAGE access to move workbook ${theirs}; you have no access.` } },
    ]);
    expect(await w.containerOf('WORKBOOK', theirs)).toBeNull();
  });

  it('rule 6: each failed entry carries the status and message the single move returns for that item', async () => {
    const explorer = await t.user('EXPLORER');
    const [dest, below] = await w.chain(2, 'rule-6');
    await t.grant({ type: 'USER', id: explorer.userId }, { type: 'FOLDER', id: dest }, 'MANAGE');
    const forbidden = await w.workbook('Rule 6 forbidden');
    const cycle = dest;
    const items = [
      { type: 'WORKBOOK' as const, id: forbidden },
      { type: 'REPORT' as const, id: 999999 },
      { type: 'FOLDER' as const, id: cycle },
    ];
    const body = await ok({ items, folderId: below }, explorer.key);
    expect(body.failed.map((f) => f.error.status)).toEqual([403, 404, 400]);
    for (const failure of body.failed) {
      const res = await single({ type: failure.type, id: failure.id, folderId: below }, explorer.key);
      const detail = problem(res, failure.error.status);
      expect(failure.error.message).toBe(detail.detail);
    }
  });

  it('rule 7: failed is empty if and only if the whole batch applied', async () => {
    const [dest] = await w.chain(1, 'rule-7');
    const items = [
      { type: 'WORKBOOK', id: await w.workbook('Rule 7 a') },
      { type: 'REPORT', id: await w.report('Rule 7 b') },
    ];
    const all = await ok({ items, folderId: dest });
    expect(all.failed).toEqual([]);
    expect(all.moved).toHaveLength(2);
    const some = await ok({ items: [...items, { type: 'FOLDER', id: 999999 }], folderId: dest });
    expect(some.failed).toHaveLength(1);
    expect(some.moved).toHaveLength(2);
  });

  it('rule 8: folderId null moves every item to the workspace root; an absent folderId does too', async () => {
    const [home] = await w.chain(1, 'rule-8');
    const a = await w.workbook('Rule 8 a', home);
    const b = await w.folder('Rule 8 b', home);
    const body = await ok({
      items: [
        { type: 'WORKBOOK', id: a },
        { type: 'FOLDER', id: b },
      ],
      folderId: null,
    });
    expect(body.moved.map((m) => [m.folderId, m.folderPath])).toEqual([
      [null, []],
      [null, []],
    ]);
    const c = await w.report('Rule 8 c', home);
    const absent = await ok({ items: [{ type: 'REPORT', id: c }] });
    expect(absent.moved[0]).toMatchObject({ id: c, folderId: null });
  });

  it('exactly one entry per distinct item, in moved or failed, in request order', async () => {
    const [dest] = await w.chain(1, 'one-entry');
    const ids = [];
    for (let i = 0; i < 10; i++)
      ids.push({ type: i % 2 ? 'WORKBOOK' : 'REPORT', id: i % 3 === 0 ? 900000 + i : i % 2 ? await w.workbook(`e${i}`) : await w.report(`e${i}`) });
    const body = await ok({ items: [...ids, ...ids], folderId: dest });
    const all = [...body.moved.map((m) => `${m.type}:${m.id}`), ...body.failed.map((f) => `${f.type}:${f.id}`)];
    expect(all.sort()).toEqual(ids.map((r) => `${r.type}:${r.id}`).sort());
  });

  it('takes 100 items in one request', async () => {
    const [dest] = await w.chain(1, 'hundred');
    const items = [];
    for (let i = 0; i < 100; i++) items.push({ type: 'WORKBOOK', id: await w.workbook(`h${i}`) });
    const body = await ok({ items, folderId: dest });
    expect(body.moved).toHaveLength(100);
    expect(body.failed).toEqual([]);
  });

  describe('malformed requests: 400 problem details, nothing applied', () => {
    let workbook: number;
    let dest: number;
    beforeAll(async () => {
      [dest] = await w.chain(1, 'malformed');
      workbook = await w.workbook('Untouched');
    });
    const good = () => ({ type: 'WORKBOOK', id: workbook });
    it.each<[string, () => unknown, string]>([
      ['a missing body (optional at the HTTP level, but items is required inside it)', () => undefined, '/body/items'],
      ['a missing items', () => ({ folderId: null }), '/body/items'],
      ['an empty items', () => ({ items: [], folderId: null }), '/body/items'],
      ['101 items', () => ({ items: Array.from({ length: 101 }, good), folderId: null }), '/body/items'],
      ['a bad type', () => ({ items: [good(), { type: 'DASHBOARD', id: 1 }], folderId: null }), '/body/items/1/type'],
      ['a string id', () => ({ items: [good(), { type: 'REPORT', id: '7' }], folderId: null }), '/body/items/1/id'],
      ['a negative id', () => ({ items: [good(), { type: 'REPORT', id: -7 }], folderId: null }), '/body/items/1/id'],
      ['a fractional id', () => ({ items: [good(), { type: 'REPORT', id: 1.5 }], folderId: null }), '/body/items/1/id'],
      ['a string folderId', () => ({ items: [good()], folderId: 'root' }), '/body/folderId'],
      ['items not an array', () => ({ items: good(), folderId: null }), '/body/items'],
      ['an unknown field', () => ({ items: [good()], folderId: null, force: true }), '/body/force'],
    ])('%s', async (_name, body, pointer) => {
      const payload = body();
      const res = await t.request({ method: 'POST', url: url(), ...(payload === undefined ? {} : { body: payload }) });
      const details = problem(res, 400);
      if (pointer !== '/body') expect(details.errors?.map((e) => e.pointer)).toContain(pointer);
      expect(await w.containerOf('WORKBOOK', workbook)).toBeNull();
      expect(dest).toBeGreaterThan(0);
    });

    it('a body that is not a JSON object is 400; a body that is not JSON at all is 415', async () => {
      problem(await t.request({ method: 'POST', url: url(), body: '{"items": [', headers: { 'content-type': 'application/json' } }), 400, 'MALFORMED_JSON');
      problem(await t.request({ method: 'POST', url: url(), body: 'items', headers: { 'content-type': 'text/plain' } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
      problem(await t.request({ method: 'POST', url: url(), body: '[]', headers: { 'content-type': 'application/json' } }), 400, 'VALIDATION_FAILED');
    });
  });

  it('a key scoped to other deployments gets 403 for the whole request, and nothing moves (spec: Authentication 4)', async () => {
    const elsewhere = await t.deployment('scoped-elsewhere');
    const scoped = await t.key(t.admin.userId, { deploymentIds: [elsewhere] });
    const workbook = await w.workbook('Scoped');
    const [dest] = await w.chain(1, 'scoped');
    problem(await bulk({ items: [{ type: 'WORKBOOK', id: workbook }], folderId: dest }, scoped), 403, 'KEY_SCOPE_FORBIDDEN');
    expect(await w.containerOf('WORKBOOK', workbook)).toBeNull();
  });

  it('another deployment’s items fail with 404 and stay where they are', async () => {
    const other = new WorkspaceFixtures(t, await t.deployment('bulk-other'));
    const foreign = await other.workbook('Foreign');
    const [dest] = await w.chain(1, 'foreign-dest');
    const body = await ok({ items: [{ type: 'WORKBOOK', id: foreign }], folderId: dest });
    expect(body.failed).toEqual([{ type: 'WORKBOOK', id: foreign, error: { status: 404, message: `Workbook ${foreign} does not exist in deployment ${d}.` } }]);
    expect(await other.containerOf('WORKBOOK', foreign)).toBeNull();
  });
});
