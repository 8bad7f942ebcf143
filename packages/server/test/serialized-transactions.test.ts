import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepared } from '../src/db/prepared.js';
import { CompiledQuery } from 'kysely';
import { configureLockWaits, serialized } from '../src/db/transactions.js';
import { createTestStore, DIALECTS, TestApp, type TestStore } from './harness.js';

/*
 * A serialized transaction's last write may be handed over without waiting for its answer
 * (`Trailing`): on PostgreSQL the COMMIT then leaves in the same round trip, which is what brings
 * a move to two round trips. Whatever the write's outcome, the transaction must end as if the
 * COMMIT had waited for it: committed with it, or rolled back whole with its error as the answer.
 */

const at = '2026-01-01T00:00:00.000Z';
/** A deployment row with a chosen id: a second insert of the same id fails on the primary key. */
const insertDeployment = prepared(3, (db, id: number, tenantId: number, name: string) =>
  db.insertInto('deployments').values({ id, tenant_id: tenantId, name, settings: '{}', created_by: null, created_at: at, updated_at: at }),
);

describe.each(DIALECTS)('serialized transactions with a trailing write (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
  });
  afterAll(async () => {
    await t.close();
  });

  const freshId = () => 1_000_000_000 + Math.floor(Math.random() * 1_000_000_000);
  const names = async (ids: number[]) =>
    (await t.store.db.selectFrom('deployments').select('name').where('id', 'in', ids).orderBy('id').execute()).map((r) => r.name);
  const key = (id: number) => `deployment:${id}`;

  it('a trailing write that succeeds commits with the writes before it', async () => {
    const [a, b] = [freshId(), freshId()].sort((x, y) => x - y) as [number, number];
    const answer = await serialized(t.store, key(a), async (trx, trailing) => {
      await insertDeployment(trx, a, t.tenantId, 'first');
      trailing(insertDeployment(trx, b, t.tenantId, 'trailing'));
      return 'done';
    });
    expect(answer).toBe('done');
    expect(await names([a, b])).toEqual(['first', 'trailing']);
  });

  it('a trailing write that fails is the answer, and nothing of the transaction is kept', async () => {
    const a = freshId();
    await expect(
      serialized(t.store, key(a), async (trx, trailing) => {
        await insertDeployment(trx, a, t.tenantId, 'first');
        // The same id again: the primary key refuses it.
        trailing(insertDeployment(trx, a, t.tenantId, 'again'));
        return 'done';
      }),
    ).rejects.toMatchObject({ code: dialect === 'postgres' ? '23505' : 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    expect(await names([a])).toEqual([]);
    // The connection is left usable, outside any transaction.
    const b = freshId();
    await serialized(t.store, key(b), async (trx) => {
      await insertDeployment(trx, b, t.tenantId, 'after');
    });
    expect(await names([b])).toEqual(['after']);
  });

  it('a write through the query builder cannot trail: it could reach the database after the COMMIT', async () => {
    const a = freshId();
    await expect(
      serialized(t.store, key(a), async (trx, trailing) => {
        trailing(
          trx
            .insertInto('deployments')
            .values({ id: a, tenant_id: t.tenantId, name: 'late', settings: '{}', created_by: null, created_at: at, updated_at: at })
            .execute(),
        );
        return 'done';
      }),
    ).rejects.toThrow(/trailing write must be a prepared statement/);
    expect(await names([a])).toEqual([]);
  });
});

describe.runIf(DIALECTS.includes('postgres'))('lock keys are the store’s own (postgres)', () => {
  let first: TestStore;
  let second: TestStore;
  beforeAll(async () => {
    [first, second] = await Promise.all([createTestStore('postgres'), createTestStore('postgres')]);
  });
  afterAll(async () => {
    await Promise.all([first?.destroy(), second?.destroy()]);
  });

  it('two stores in schemas of one database hold the same key at once; servers of one store take turns', async () => {
    // Advisory locks belong to the database: unscoped, `deployment:1` of one installation waited
    // for `deployment:1` of another, and a held key made the other's requests 503 after the wait.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const holder = serialized(first, 'deployment:1', async (trx) => {
      await trx.executeQuery(CompiledQuery.raw('select 1'));
      entered();
      await held;
    });
    await inside;
    try {
      await expect(serialized(second, 'deployment:1', async () => 'other store')).resolves.toBe('other store');
      // A second process of the same store (its own pool) still waits, and gives up at its limit.
      const sameStore = first.reopen();
      try {
        configureLockWaits(sameStore, { timeoutMs: 200 });
        await expect(serialized(sameStore, 'deployment:1', async () => 'same store')).rejects.toMatchObject({ status: 503, code: 'DEPLOYMENT_BUSY' });
      } finally {
        await sameStore.close();
      }
    } finally {
      release();
      await holder;
    }
  });
});
