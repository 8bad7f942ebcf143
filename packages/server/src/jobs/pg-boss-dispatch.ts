import { AsyncLocalStorage } from 'node:async_hooks';
import { CompiledQuery, sql } from 'kysely';
import PgBoss from 'pg-boss';
import type { Store } from '../db/database.js';
import type { Executor, JobRow } from '../db/tables.js';
import type { Dispatch } from './dispatch.js';
import { claimIds } from './jobs.store.js';

/** What a pg-boss job carries: our job's id, nothing else (the row holds the rest). */
interface Ticket {
  jobId: number;
}

/**
 * PostgreSQL: pg-boss delivers job ids to whichever process sharing the database fetches them
 * first (its fetch is SELECT … FOR UPDATE SKIP LOCKED). One pg-boss queue per job kind, so a
 * worker fetches only kinds it can run.
 *
 * Every pg-boss call runs on the store's own pool through Kysely (its `db` option), inside our
 * transactions where it matters: a job row and its pg-boss job are created together, and a fetch,
 * the claim of our rows and the deletion of the fetched pg-boss jobs commit together. So a
 * process killed at any point leaves either a queued row with its pg-boss job, or a running row
 * with a heartbeat that stops (taken back by a worker's stale sweep), never a row nobody will run.
 * pg-boss jobs are deleted once claimed, so none stays active and its expiry, retries and
 * archive are never needed: its supervisor and scheduler are off and add no timers or queries.
 */
export function pgBossDispatch(store: Store, options: { schema?: string | undefined; onError: (error: unknown) => void }): Dispatch {
  // Where pg-boss's statements go: the executor `within` names for the call (a transaction, one
  // connection), else the store's pool. pg-boss takes a `db` per call for some methods only.
  const scope = new AsyncLocalStorage<Executor>();
  const within = <T>(db: Executor, fn: () => Promise<T>): Promise<T> => scope.run(db, fn);
  const db = on(() => scope.getStore() ?? store.db);
  let booting: Promise<{ boss: PgBoss; schema: string }> | undefined;
  const queues = new Map<string, Promise<void>>();
  let next = 0;

  function boss(): Promise<{ boss: PgBoss; schema: string }> {
    booting ??= install().catch((error: unknown) => {
      booting = undefined;
      throw error;
    });
    return booting;
  }

  async function install(): Promise<{ boss: PgBoss; schema: string }> {
    const schema = checked(options.schema ?? (await queueSchemaOf(store)));
    const instance = new PgBoss({ db, schema, supervise: false, schedule: false, migrate: true });
    instance.on('error', options.onError);
    // pg-boss creates its schema in one multi-statement transaction: two processes starting on a
    // fresh database raced into "already exists", which leaves the loser's pooled connection in
    // an aborted transaction. Under our lock, the second finds the schema installed instead.
    await store.db.connection().execute(async (connection) => {
      await sql`select pg_advisory_lock(hashtextextended(${lockKey(schema)}, 0))`.execute(connection);
      try {
        await within(connection, () => instance.start());
      } catch (error) {
        await sql`rollback`.execute(connection).catch(() => undefined);
        throw error;
      } finally {
        await sql`select pg_advisory_unlock(hashtextextended(${lockKey(schema)}, 0))`.execute(connection);
      }
    });
    return { boss: instance, schema };
  }

  /**
   * pg-boss 10 needs a queue before it takes jobs for it; one per kind, made on first use. Its
   * create_queue inserts the queue's row, then adds a foreign key to that table: two processes
   * making the same queue at once deadlocked. Made one at a time, under the same lock, after a look.
   */
  function queueOf(kind: string): Promise<void> {
    let made = queues.get(kind);
    if (!made) {
      made = (async () => {
        const { boss: b, schema } = await boss();
        if (await b.getQueue(kind)) return;
        await store.db.transaction().execute(async (trx) => {
          await sql`select pg_advisory_xact_lock(hashtextextended(${lockKey(schema)}, 0))`.execute(trx);
          await within(trx, async () => {
            if (!(await b.getQueue(kind))) await b.createQueue(kind, { name: kind, retryLimit: 0 });
          });
        });
      })().catch((error: unknown) => {
        queues.delete(kind);
        throw error;
      });
      queues.set(kind, made);
    }
    return made;
  }

  return {
    async queue(kind, change) {
      await queueOf(kind);
      const { boss: b } = await boss();
      return store.db.transaction().execute(async (trx) => {
        const row = await change(trx);
        if (row?.state === 'queued') {
          const sent = await within(trx, () => b.send(kind, { jobId: row.id } satisfies Ticket));
          if (sent === null) throw new Error(`pg-boss has no queue for job kind ${kind}`);
        }
        return row;
      });
    },

    async claim(kinds, limit, owner, at) {
      if (kinds.length === 0 || limit <= 0) return [];
      await Promise.all(kinds.map(queueOf));
      const { boss: b } = await boss();
      // Kinds take turns being fetched first, so a busy kind does not starve the others.
      const start = next++ % kinds.length;
      const order = [...kinds.slice(start), ...kinds.slice(0, start)];
      return store.db.transaction().execute((trx) =>
        within(trx, async () => {
          const claimed: JobRow[] = [];
          for (const kind of order) {
            while (claimed.length < limit) {
              const tickets = await b.fetch<Ticket>(kind, { batchSize: limit - claimed.length });
              if (tickets.length === 0) break;
              await b.deleteJob(
                kind,
                tickets.map((t) => t.id),
              );
              // A cancelled job's pg-boss job is still delivered; its row is no longer queued.
              const ids = tickets.map((t) => t.data.jobId).filter((id) => Number.isSafeInteger(id));
              if (ids.length > 0) claimed.push(...(await claimIds(trx, ids, owner, at)));
            }
          }
          return claimed;
        }),
      );
    },

    async stop() {
      const started = booting;
      booting = undefined;
      queues.clear();
      if (started) await (await started.catch(() => undefined))?.boss.stop({ graceful: true, wait: true });
    },
  };
}

/** One lock per pg-boss schema, for installing it and making its queues. */
const lockKey = (schema: string) => `mapi.jobs.${schema}`;

/** pg-boss's `db`: its statements run through Kysely on `executor()` (the pool, a transaction, a connection). */
function on(executor: () => Executor): PgBoss.Db {
  return {
    async executeSql(text: string, values?: unknown[]) {
      const result = await executor().executeQuery(CompiledQuery.raw(text, values ?? []));
      return { rows: result.rows as any[] };
    },
  };
}

/**
 * The pg-boss schema `createJobs` uses for `store` unless told otherwise: the store's schema +
 * `_jobs`, or pg-boss's own default `pgboss` beside `public`. A schema of its own keeps pg-boss's
 * tables apart from ours, and beside the store's so that each store (a test's) has its own.
 */
export async function queueSchemaOf(store: Store): Promise<string> {
  const { rows } = await sql<{ name: string | null }>`select current_schema() as name`.execute(store.db);
  const current = rows[0]?.name;
  if (!current) throw new Error('The database connection has no current schema for the jobs queue');
  return current === 'public' ? 'pgboss' : `${current}_jobs`;
}

/** pg-boss writes the name into its SQL unquoted, where PostgreSQL folds it to lower case; it allows 50 characters. */
function checked(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,49}$/.test(schema)) {
    throw new Error(`The jobs queue schema ${JSON.stringify(schema)} is not a lower-case name of at most 50 characters; set the queueSchema option`);
  }
  return schema;
}
