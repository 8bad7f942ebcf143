import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Executor } from '../../db/tables.js';
import { USAGE_DATA_DIR } from '../env-vars/index.js';
import { usageEventsAfter } from './usage-analytics.store.js';

export { USAGE_DATA_DIR };

/** Events that committed out of id order (PostgreSQL hands out ids before commit) are caught by looking back this far. */
const LOOK_BACK_MS = 10 * 60_000;
const BATCH = 5_000;

/**
 * Brings the tenant's usage data source up to date: the SQLite file `file` (inside the
 * data-sources directory `dir`) receives the tenant's audit events it does not hold yet. Only that
 * tenant's events are ever written to it, so whatever a query asks, it sees no other account's.
 * Rows are inserted in place, never replaced by a new file, so a runtime that has the file open
 * sees them on its next query. Repeating it, or running it on two processes at once, adds nothing twice.
 */
export async function syncUsageData(db: Executor, tenantId: number, dir: string, file: string, now: Date): Promise<void> {
  const target = path.join(dir, file);
  fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
  const out = new Database(target);
  try {
    out.pragma('busy_timeout = 5000');
    out.exec(`CREATE TABLE IF NOT EXISTS audit_events (
      id INTEGER PRIMARY KEY,
      occurred_at TEXT NOT NULL,
      action TEXT NOT NULL,
      actor_user_id INTEGER,
      actor_email TEXT,
      credential_kind TEXT,
      method TEXT,
      route TEXT,
      status INTEGER
    )`);
    const last = (out.prepare('SELECT max(id) AS id FROM audit_events').get() as { id: number | null }).id ?? 0;
    const since = new Date(now.getTime() - LOOK_BACK_MS).toISOString();
    const insert = out.prepare(
      'INSERT OR IGNORE INTO audit_events (id, occurred_at, action, actor_user_id, actor_email, credential_kind, method, route, status) VALUES (@id, @occurred_at, @action, @actor_user_id, @actor_email, @credential_kind, @method, @route, @status)',
    );
    const write = out.transaction((rows: object[]) => {
      for (const row of rows) insert.run(row);
    });
    let after = 0;
    for (;;) {
      const rows = await usageEventsAfter(db, tenantId, after, last, since, BATCH);
      if (rows.length === 0) break;
      write(rows.map((row) => ({ ...row, id: Number(row.id) })));
      after = Number(rows[rows.length - 1]!.id);
      if (rows.length < BATCH) break;
    }
  } finally {
    out.close();
  }
}
