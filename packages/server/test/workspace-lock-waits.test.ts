import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Store } from '../src/db/database.js';
import { advisoryLockId, configureLockWaits, DEFAULT_LOCK_TIMEOUT_MS, lockKey, lockQueueOf, lockWithin } from '../src/db/transactions.js';
import { DIALECTS, TestApp, problem } from './harness.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

/*
 * Issue: "Waiters on a deployment's lock do not hold pool connections without bound: a
 * lock_timeout (answered as 503 with Retry-After for that item or request) and a pool that other
 * deployments' requests can still use." The test harness gives PostgreSQL a pool of 5 connections.
 * Every assertion about what happens while a deployment is busy rests on the order of events
 * (who is waiting, who has answered), never on how long something took.
 */

type LightAnswer = Awaited<ReturnType<TestApp['request']>>;

/** A deployment with an id of its own, so no other test of this file shares its lock. */
async function lonelyDeployment(t: TestApp, name: string): Promise<number> {
  const at = new Date().toISOString();
  const id = 1_000_000_000 + Math.floor(Math.random() * 1_000_000_000);
  const row = await t.store.db
    .insertInto('deployments')
    .values({ id, tenant_id: t.tenantId, name, settings: '{}', created_by: null, created_at: at, updated_at: at })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * Holds a deployment's lock from another connection, as another server process in the middle of
 * a change would: PostgreSQL's advisory lock on the deployment, SQLite's write lock (BEGIN IMMEDIATE).
 */
async function holdLock(t: TestApp, deploymentId: number): Promise<{ release(): Promise<void> }> {
  const other: Store = t.store.reopen();
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const holder = other.db.connection().execute(async (conn) => {
    if (other.dialect === 'postgres') {
      await sql`begin`.execute(conn);
      await lockWithin(conn, lockKey.deployment(deploymentId));
    } else {
      await sql`begin immediate`.execute(conn);
    }
    locked();
    await released;
    await sql`rollback`.execute(conn);
  });
  await isLocked;
  return {
    async release() {
      release();
      await holder;
      await other.close();
    },
  };
}

/** PostgreSQL: how many transactions wait for `key`'s advisory lock in the database (a bigint key is classid, objid). */
async function waitersInDatabase(t: TestApp, key: string): Promise<number> {
  const { rows } = await sql<{ waiting: number | string }>`
    select count(*) as waiting
      from pg_locks l, (select ${advisoryLockId(key)} as h) k
     where l.locktype = 'advisory' and not l.granted and l.objsubid = 1
       and l.classid::bigint = ((k.h >> 32) & 4294967295) and l.objid::bigint = (k.h & 4294967295)`.execute(t.store.db);
  return Number(rows[0]!.waiting);
}

/** Resolves with the answers and notes each as it comes, so a test can ask which have come back yet. */
function tracked(requests: Array<Promise<LightAnswer>>) {
  const back = requests.map(() => false);
  const all = Promise.all(requests.map((r, i) => r.finally(() => (back[i] = true))));
  return { all, settled: () => back.filter(Boolean).length, back: (i: number) => back[i]! };
}

describe.each(DIALECTS)('lock waits on a busy deployment (%s)', (dialect) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await TestApp.create(dialect);
  });
  afterAll(async () => t?.close());
  afterEach(async () => {
    configureLockWaits(t.store, { timeoutMs: DEFAULT_LOCK_TIMEOUT_MS });
    if (dialect === 'sqlite') await sql`pragma busy_timeout = 10000`.execute(t.store.db);
  });

  const move = (deploymentId: number, body: unknown) => t.request({ method: 'POST', url: `/api/v1/deployments/${deploymentId}/workspace/move`, body });
  const bulkMove = (deploymentId: number, body: unknown) => t.request({ method: 'POST', url: `/api/v1/deployments/${deploymentId}/workspace/bulk-move`, body });
  const createFolder = (deploymentId: number, name: string) =>
    t.request({ method: 'POST', url: `/api/v1/deployments/${deploymentId}/folders`, body: { name } });

  /** Another deployment's reads and a write, which must answer whatever the busy one is doing. */
  async function bystanderAnswers(deploymentId: number, folderId: number, workbookId: number, label: string) {
    const answers = await Promise.all([
      t.request({ url: `/api/v1/deployments/${deploymentId}/workspace` }),
      t.request({ url: `/api/v1/deployments/${deploymentId}/folders/${folderId}` }),
      move(deploymentId, { type: 'WORKBOOK', id: workbookId, folderId }),
      createFolder(deploymentId, `written while busy ${label}`),
    ]);
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 201]);
  }

  if (dialect === 'postgres') {
    it('more writers wait on one deployment than the pool has connections, and another deployment still reads and writes', async () => {
      // Nobody gives up during this test: every waiter is still waiting when the bystander answers.
      configureLockWaits(t.store, { timeoutMs: 60_000 });
      const busy = await lonelyDeployment(t, 'hammered');
      const calm = await lonelyDeployment(t, 'calm');
      const bw = new WorkspaceFixtures(t, busy);
      const target = await bw.folder('target');
      const workbooks = await Promise.all(Array.from({ length: 8 }, (_, i) => bw.workbook(`hammered ${i}`)));
      const cw = new WorkspaceFixtures(t, calm);
      const calmFolder = await cw.folder('calm folder');
      const calmWorkbook = await cw.workbook('calm workbook');

      const held = await holdLock(t, busy);
      const writers = 12;
      const hammering = tracked([
        ...workbooks.map((id) => move(busy, { type: 'WORKBOOK', id, folderId: target })),
        ...Array.from({ length: writers - workbooks.length }, (_, i) => createFolder(busy, `created ${i}`)),
      ]);
      // Every writer has reached the deployment's lock: one holds a connection and waits in the
      // database, the others wait in this process's queue, holding nothing.
      const key = lockKey.deployment(busy);
      await vi.waitFor(() => expect(lockQueueOf(t.store).depth(key)).toBe(writers), { timeout: 20_000, interval: 10 });
      await vi.waitFor(async () => expect(await waitersInDatabase(t, key)).toBe(1), { timeout: 20_000, interval: 10 });

      await bystanderAnswers(calm, calmFolder, calmWorkbook, 'on postgres');
      expect(hammering.settled()).toBe(0);

      await held.release();
      const answers = await hammering.all;
      expect(answers.map((a) => a.statusCode)).toEqual([...workbooks.map(() => 200), ...Array.from({ length: writers - workbooks.length }, () => 201)]);
      for (const id of workbooks) expect(await bw.containerOf('WORKBOOK', id)).toBe(target);
      expect(lockQueueOf(t.store).depth(key)).toBe(0);
    });

    it('a read in a move sees what committed while it waited for the lock (lock first, then a fresh statement reads)', async () => {
      const d = await lonelyDeployment(t, 'fresh reads');
      const w = new WorkspaceFixtures(t, d);
      const [a, b] = [await w.folder('a'), await w.folder('b')];
      // Another process, holding the lock, puts b inside a and commits only after our move asked.
      const other = t.store.reopen();
      let commit!: () => void;
      const committing = new Promise<void>((resolve) => (commit = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const writer = other.db.transaction().execute(async (trx) => {
        await lockWithin(trx, lockKey.deployment(d));
        await trx.updateTable('folders').set({ parent_id: a }).where('id', '=', b).execute();
        locked();
        await committing;
      });
      await isLocked;
      const moving = move(d, { type: 'FOLDER', id: a, folderId: b });
      // The move's transaction has begun and waits in the database for the lock.
      await vi.waitFor(async () => expect(await waitersInDatabase(t, lockKey.deployment(d))).toBe(1), { timeout: 20_000, interval: 10 });
      commit();
      await writer;
      await other.close();
      // Read before the lock, a would go into b, which is now inside a: a cycle.
      const body = problem(await moving, 400, 'INVALID_MOVE');
      expect(body.detail).toContain(`into folder ${b}, which is inside it`);
      expect(await w.containerOf('FOLDER', a)).toBeNull();
    });
  }

  if (dialect === 'sqlite') {
    it('many concurrent writers on one deployment, and another deployment still reads and writes while they run', async () => {
      const busy = await lonelyDeployment(t, 'hammered');
      const calm = await lonelyDeployment(t, 'calm');
      const bw = new WorkspaceFixtures(t, busy);
      const targets = [await bw.folder('target one'), await bw.folder('target two')];
      const workbooks = await Promise.all(Array.from({ length: 240 }, (_, i) => bw.workbook(`hammered ${i}`)));
      const cw = new WorkspaceFixtures(t, calm);
      const calmFolder = await cw.folder('calm folder');
      const calmWorkbook = await cw.workbook('calm workbook');

      const bulks = 6;
      const per = workbooks.length / bulks;
      const hammering = tracked([
        ...Array.from({ length: bulks }, (_, i) =>
          bulkMove(busy, { items: workbooks.slice(i * per, (i + 1) * per).map((id) => ({ type: 'WORKBOOK', id })), folderId: targets[i % 2] }),
        ),
        ...Array.from({ length: 10 }, (_, i) => createFolder(busy, `created ${i}`)),
      ]);
      // The other deployment's requests start while every writer is in flight (SQLite's driver is
      // synchronous: the requests move on in turns, and each turn of the busy deployment is one item).
      await bystanderAnswers(calm, calmFolder, calmWorkbook, 'on sqlite');
      // Some bulk move of the busy deployment is still in flight when the other one has answered.
      expect(Array.from({ length: bulks }, (_, i) => hammering.back(i))).toContain(false);

      const answers = await hammering.all;
      expect(answers.map((a) => a.statusCode)).toEqual([...Array.from({ length: bulks }, () => 200), ...Array.from({ length: 10 }, () => 201)]);
      for (const answer of answers.slice(0, bulks)) expect(answer.json().failed).toEqual([]);
    });
  }

  it('a lock held past the timeout: 503 DEPLOYMENT_BUSY with Retry-After for a single move and a create, a 503 item in a bulk move, and nothing changed', async () => {
    const d = await lonelyDeployment(t, 'locked');
    const w = new WorkspaceFixtures(t, d);
    const [from, to] = [await w.folder('from'), await w.folder('to')];
    const workbook = await w.workbook('stays', from);
    const report = await w.report('stays too', from);
    const folder = await w.folder('stays as well', from);
    // Short waits: PostgreSQL's lock_timeout and the queue come from the setting, SQLite waits for
    // its write lock as long as the connection's busy timeout.
    configureLockWaits(t.store, { timeoutMs: 300 });
    if (dialect === 'sqlite') await sql`pragma busy_timeout = 300`.execute(t.store.db);

    const held = await holdLock(t, d);
    try {
      const single = await move(d, { type: 'WORKBOOK', id: workbook, folderId: to });
      const body = problem(single, 503, 'DEPLOYMENT_BUSY');
      expect(single.headers['retry-after']).toBe('1');
      expect(body.detail).toBe(`Deployment ${d} is busy with other changes to its workspace; nothing was changed. Retry after 1 second.`);
      problem(await createFolder(d, 'not now'), 503, 'DEPLOYMENT_BUSY');

      const bulk = await bulkMove(d, {
        items: [
          { type: 'REPORT', id: report },
          { type: 'FOLDER', id: folder },
          { type: 'WORKBOOK', id: workbook },
        ],
        folderId: to,
      });
      expect(bulk.statusCode, bulk.body).toBe(200);
      // Spec: Endpoints, bulk move, rules 1 and 6: 200, and each item carries what the single move answered.
      expect(bulk.json()).toEqual({
        moved: [],
        failed: [
          { type: 'REPORT', id: report, error: { status: 503, message: body.detail } },
          { type: 'FOLDER', id: folder, error: { status: 503, message: body.detail } },
          { type: 'WORKBOOK', id: workbook, error: { status: 503, message: body.detail } },
        ],
      });
    } finally {
      await held.release();
    }
    expect(await w.containerOf('WORKBOOK', workbook)).toBe(from);
    expect(await w.containerOf('REPORT', report)).toBe(from);
    expect(await w.containerOf('FOLDER', folder)).toBe(from);
    expect(await t.store.db.selectFrom('folders').select('id').where('deployment_id', '=', d).where('name', '=', 'not now').execute()).toEqual([]);

    // Free again: the same request applies.
    expect((await move(d, { type: 'WORKBOOK', id: workbook, folderId: to })).statusCode).toBe(200);
    expect(await w.containerOf('WORKBOOK', workbook)).toBe(to);
  });

  if (dialect === 'postgres') {
    it('waiters in this process give up after the timeout too, holding no connection while they wait', async () => {
      const d = await lonelyDeployment(t, 'queued');
      const w = new WorkspaceFixtures(t, d);
      const to = await w.folder('to');
      const workbooks = await Promise.all(Array.from({ length: 4 }, (_, i) => w.workbook(`queued ${i}`)));
      configureLockWaits(t.store, { timeoutMs: 300 });
      const held = await holdLock(t, d);
      try {
        // One waits in the database, three in the queue; all four are answered 503, none changed anything.
        const answers = await Promise.all(workbooks.map((id) => move(d, { type: 'WORKBOOK', id, folderId: to })));
        for (const answer of answers) {
          problem(answer, 503, 'DEPLOYMENT_BUSY');
          expect(answer.headers['retry-after']).toBe('1');
        }
      } finally {
        await held.release();
      }
      for (const id of workbooks) expect(await w.containerOf('WORKBOOK', id)).toBeNull();
      expect(lockQueueOf(t.store).depth(lockKey.deployment(d))).toBe(0);
    });
  }
});
