import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { migrate, openStore } from '../src/db/database.js';

/**
 * Several server processes, or other applications, share one PostgreSQL database, each in its own
 * schema. A store's migrations look only at its own schema: another schema dropped while they run
 * (another app's teardown, a test's) must not fail them. Kysely's stock introspector evaluated a
 * lookup by name on every schema of the database, and failed with `schema "…" does not exist`.
 */
describe.runIf(process.env.DATABASE_URL)('migrations on a database shared with other schemas (postgres)', () => {
  const url = process.env.DATABASE_URL ?? '';
  const run = async (client: pg.Client, statement: string) => client.query(statement);

  it('migrate succeeds while other schemas, with tables in them, are created and dropped meanwhile', async () => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const ours = Array.from({ length: 4 }, () => `test_${randomBytes(6).toString('hex')}`);
    let churning = true;
    // Schemas come and go as fast as one connection can make them, each with a few tables.
    const churn = (async () => {
      const other = new pg.Client({ connectionString: url });
      await other.connect();
      try {
        while (churning) {
          const name = `test_churn_${randomBytes(6).toString('hex')}`;
          await run(
            other,
            `create schema ${name}; create table ${name}.a (id serial primary key); create table ${name}.b (id serial primary key, a int references ${name}.a (id))`,
          );
          await run(other, `drop schema ${name} cascade`);
        }
      } finally {
        await other.end();
      }
    })();
    try {
      for (const schema of ours) {
        await run(admin, `create schema ${schema}`);
        const store = openStore({ dialect: 'postgres', url, schema, poolSize: 2 });
        try {
          await expect(migrate(store)).resolves.toBeUndefined();
          // And a second start finds its tables where it left them.
          await expect(migrate(store)).resolves.toBeUndefined();
        } finally {
          await store.close();
        }
      }
    } finally {
      churning = false;
      await churn;
      for (const schema of ours) await run(admin, `drop schema if exists ${schema} cascade`);
      await admin.end();
    }
  });
});
