import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TenantCache } from '../src/cache/tenant-cache.js';
import { TestApp } from './harness.js';

/*
 * On SQLite the prepared reads of the store's own executor go to the driver directly when its one
 * connection is outside any transaction (db/prepared.ts `readDirectly`). They must never read
 * inside another request's transaction: what it changed may never commit.
 */
describe('SQLite reads straight on the driver (sqlite)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create('sqlite');
  });
  afterAll(async () => t?.close());

  it('a read while another request’s transaction is open waits for it, and never sees what it rolled back', async () => {
    const cache = new TenantCache(t.store.db);
    const before = (await cache.snapshot(t.tenantId)).version;
    let release!: () => void;
    const hold = new Promise<void>((resolve) => (release = resolve));
    let changed!: () => void;
    const inside = new Promise<void>((resolve) => (changed = resolve));
    const transaction = t.store.db.transaction().execute(async (trx) => {
      await sql`update tenants set auth_version = auth_version + 100 where id = ${t.tenantId}`.execute(trx);
      changed();
      await hold;
      throw new Error('rolled back');
    });
    await inside;
    const during = cache.snapshot(t.tenantId);
    release();
    await expect(transaction).rejects.toThrow('rolled back');
    expect((await during).version, 'the read saw only what was committed').toBe(before);
  });

  it('a read outside any transaction sees what was just committed', async () => {
    const cache = new TenantCache(t.store.db);
    const before = (await cache.snapshot(t.tenantId)).version;
    await t.store.db.transaction().execute(async (trx) => {
      await sql`update tenants set auth_version = auth_version + 1 where id = ${t.tenantId}`.execute(trx);
    });
    expect((await cache.snapshot(t.tenantId)).version).toBe(before + 1);
  });
});
