/**
 * The two measuring instruments of bench:bulk-move besides the HTTPS client: the floor, run on the
 * database driver itself, and the per-item breakdown of the moves, from the query log of an
 * in-process app over the same database.
 */
import { performance } from 'node:perf_hooks';
import SQLite from 'better-sqlite3';
import type { LogEvent } from 'kysely';
import pg from 'pg';
import type { ItemType } from '../../src/db/tables.js';
import { stamp } from './workspace-seed.js';

export interface Ref {
  type: ItemType;
  id: number;
}

/** Where each floor statement's time went, summed over a round. */
export interface FloorTimes {
  begin: number;
  update: number;
  commit: number;
}

/**
 * The floor: what the spec's rules need per item and nothing else, one transaction per item
 * around the one `UPDATE` that moves it, sent on the driver itself (no query builder, no pool),
 * each statement as its own call, the way a plain client of the database sends them. SQLite: a
 * connection of its own to the same file, configured as the server's (WAL, synchronous=NORMAL,
 * foreign keys), with every statement prepared once. PostgreSQL: one client, parameters bound.
 */
export interface Floor {
  round(deploymentId: number, to: number, items: Ref[]): Promise<FloorTimes>;
  close(): Promise<void>;
}

const COLUMN: Record<ItemType, { table: string; column: string }> = {
  FOLDER: { table: 'folders', column: 'parent_id' },
  WORKBOOK: { table: 'workbooks', column: 'folder_id' },
  REPORT: { table: 'reports', column: 'folder_id' },
};
const updateSql = (type: ItemType, placeholder: (n: number) => string) =>
  `update ${COLUMN[type].table} set ${COLUMN[type].column} = ${placeholder(1)}, updated_at = ${placeholder(2)} where deployment_id = ${placeholder(3)} and id = ${placeholder(4)}`;

export function sqliteFloor(file: string): Floor {
  const db = new SQLite(file);
  db.pragma('busy_timeout = 10000');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  const begin = db.prepare('begin immediate');
  const commit = db.prepare('commit');
  const update = Object.fromEntries((Object.keys(COLUMN) as ItemType[]).map((type) => [type, db.prepare(updateSql(type, () => '?'))])) as Record<
    ItemType,
    SQLite.Statement
  >;
  return {
    async round(deploymentId, to, items) {
      const times: FloorTimes = { begin: 0, update: 0, commit: 0 };
      for (const { type, id } of items) {
        const t0 = performance.now();
        begin.run();
        const t1 = performance.now();
        update[type].run(to, stamp(), deploymentId, id);
        const t2 = performance.now();
        commit.run();
        const t3 = performance.now();
        times.begin += t1 - t0;
        times.update += t2 - t1;
        times.commit += t3 - t2;
      }
      return times;
    },
    async close() {
      db.close();
    },
  };
}

export async function postgresFloor(url: string): Promise<Floor> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    async round(deploymentId, to, items) {
      const times: FloorTimes = { begin: 0, update: 0, commit: 0 };
      for (const { type, id } of items) {
        const t0 = performance.now();
        await client.query('begin');
        const t1 = performance.now();
        await client.query(
          updateSql(type, (n) => `$${n}`),
          [to, stamp(), deploymentId, id],
        );
        const t2 = performance.now();
        await client.query('commit');
        const t3 = performance.now();
        times.begin += t1 - t0;
        times.update += t2 - t1;
        times.commit += t3 - t2;
      }
      return times;
    },
    close: () => client.end(),
  };
}

/** The kinds of statement a bulk move sends, by their SQL, in the order a move sends them. */
const KINDS = [
  { kind: 'begin (and lock)', test: (s: string) => /^\s*(begin|start transaction)\b/i.test(s) },
  { kind: 'lock', test: (s: string) => s.includes('pg_advisory_xact_lock') },
  { kind: 'read item and chains', test: (s: string) => s.includes('move_chains') },
  {
    kind: 'read item',
    test: (s: string) => /^select \* from "(folders|workbooks|reports)" where "tenant_id" = \S+ and "deployment_id" = \S+ and "id" = \S+$/.test(s.trim()),
  },
  { kind: 'read chains', test: (s: string) => /with recursive up/i.test(s) },
  { kind: 'read sibling name', test: (s: string) => /^select \* from "folders" .*"name" = /s.test(s.trim()) },
  { kind: 'read subtree depth', test: (s: string) => /with recursive down/i.test(s) },
  { kind: 'update', test: (s: string) => /^\s*update\b/i.test(s) },
  { kind: 'commit or rollback', test: (s: string) => /^\s*(commit|rollback)\b/i.test(s) },
  { kind: 'per request (key, grants, paths, owners)', test: () => true },
] as const;

/** Statement counts and times by kind, from a store's query log (Kysely's `log` option). */
export class StatementTally {
  recording = false;
  readonly count = new Map<string, number>();
  readonly millis = new Map<string, number>();
  /** When each recorded statement ran, to tell time in the database from time outside it. */
  readonly #spans: Array<[number, number]> = [];

  readonly log = (event: LogEvent) => {
    if (!this.recording || event.level !== 'query') return;
    const kind = KINDS.find((k) => k.test(event.query.sql))!.kind;
    this.count.set(kind, (this.count.get(kind) ?? 0) + 1);
    this.millis.set(kind, (this.millis.get(kind) ?? 0) + event.queryDurationMillis);
    const end = performance.now();
    this.#spans.push([end - event.queryDurationMillis, end]);
  };

  /** Rows of [kind, statements per item, µs per item], in the order a move sends them. */
  perItem(items: number): Array<[string, number, number]> {
    return KINDS.filter((k) => this.count.has(k.kind)).map((k) => [k.kind, this.count.get(k.kind)! / items, (this.millis.get(k.kind)! * 1000) / items]);
  }

  get statements(): number {
    return [...this.count.values()].reduce((a, b) => a + b, 0);
  }

  /**
   * Time with at least one statement in flight, and how many round trips that took: a statement
   * sent while another is still out (pipelined) shares its round trip.
   */
  get inDatabase(): { millis: number; roundTrips: number } {
    const spans = [...this.#spans].sort((a, b) => a[0] - b[0]);
    let millis = 0;
    let roundTrips = 0;
    let until = -Infinity;
    for (const [start, end] of spans) {
      if (start >= until) {
        roundTrips++;
        millis += end - start;
        until = end;
      } else if (end > until) {
        millis += end - until;
        until = end;
      }
    }
    return { millis, roundTrips };
  }
}
