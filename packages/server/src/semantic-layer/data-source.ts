import Database from 'better-sqlite3';
import pg from 'pg';

/**
 * The data source a runtime queries, chosen by the environment's variables:
 * - `DB_TYPE` unset or `sqlite`: SQLite; `DB_NAME` a database file, or unset for the sample
 *   dataset in memory (the starter experience needs no outside service);
 * - `DB_TYPE=postgres`: `DB_HOST`, `DB_PORT`, `DB_NAME`, `DB_USER`, `DB_PASS`, `DB_SSL`.
 * Anything else stops the runtime at start, with the reason in its log.
 */
export interface DataSource {
  /** What it is, for the log: never a password. */
  describe: string;
  /** Throws when the data source cannot answer (the runtime is then not ready). */
  check(): Promise<void>;
  close(): Promise<void>;
}

export const SAMPLE_ROWS = [
  { id: 1, status: 'completed', amount: 10 },
  { id: 2, status: 'processing', amount: 20 },
  { id: 3, status: 'completed', amount: 30 },
];

export function openDataSource(env: NodeJS.ProcessEnv): DataSource {
  const type = env.DB_TYPE ?? 'sqlite';
  if (type === 'sqlite') return sqlite(env.DB_NAME);
  if (type === 'postgres') return postgres(env);
  throw new Error(`Unknown data source type DB_TYPE=${JSON.stringify(type)}: set it to sqlite or postgres.`);
}

function sqlite(file: string | undefined): DataSource {
  const db = new Database(file ?? ':memory:', file === undefined ? {} : { fileMustExist: true, readonly: true });
  if (file === undefined) {
    // The sample dataset: the starter model's orders as a table too, for a first model of one's own.
    db.exec('CREATE TABLE starter_orders (id INTEGER PRIMARY KEY, status TEXT NOT NULL, amount INTEGER NOT NULL)');
    const insert = db.prepare('INSERT INTO starter_orders (id, status, amount) VALUES (@id, @status, @amount)');
    for (const row of SAMPLE_ROWS) insert.run(row);
  }
  return {
    describe: file === undefined ? `the sample SQLite dataset (starter_orders, ${SAMPLE_ROWS.length} rows)` : `SQLite ${file}`,
    async check() {
      db.prepare('SELECT 1').get();
    },
    async close() {
      db.close();
    },
  };
}

function postgres(env: NodeJS.ProcessEnv): DataSource {
  const port = env.DB_PORT === undefined ? 5432 : Number(env.DB_PORT);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`DB_PORT=${JSON.stringify(env.DB_PORT)} is not a port number.`);
  const pool = new pg.Pool({
    host: env.DB_HOST ?? 'localhost',
    port,
    database: env.DB_NAME,
    user: env.DB_USER,
    password: env.DB_PASS,
    ssl: env.DB_SSL === 'true' ? {} : undefined,
    max: 4,
    connectionTimeoutMillis: 2_000,
  });
  // An idle client's error (the server restarted) must not crash the runtime; the next check reports it.
  pool.on('error', () => undefined);
  return {
    describe: `PostgreSQL ${env.DB_HOST ?? 'localhost'}:${port}/${env.DB_NAME ?? ''}`,
    async check() {
      await pool.query('SELECT 1');
    },
    async close() {
      await pool.end();
    },
  };
}
