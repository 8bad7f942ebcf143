import { createHash } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import { frontend, splitMessages, type Bind, type Message, type Parse } from './sql-api.protocol.js';

/** A member of the model, as `/v1/meta` lists it. */
export interface MetaMember {
  name: string;
  type: string;
  aggType?: string;
}
export interface MetaCube {
  name: string;
  type?: string;
  measures?: MetaMember[];
  dimensions?: MetaMember[];
}

const COUNTS = new Set(['count', 'countDistinct', 'count_distinct', 'countDistinctApprox', 'count_distinct_approx']);

/** The PostgreSQL type of a member: numbers numeric (int8 for counts), strings text, times timestamp, booleans bool. */
export function pgType(member: { type: string; aggType?: string | undefined }, measure: boolean): { name: string; oid: number } {
  if (member.type === 'time') return { name: 'timestamp', oid: 1114 };
  if (member.type === 'boolean') return { name: 'boolean', oid: 16 };
  if (member.type === 'number') return measure && COUNTS.has(member.aggType ?? '') ? { name: 'bigint', oid: 20 } : { name: 'numeric', oid: 1700 };
  return { name: 'text', oid: 25 };
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** A cube's or view's columns: its dimensions, then its measures, by their names in it, with their PostgreSQL types. */
export function catalogColumns(cube: MetaCube): Array<[string, string]> {
  const columns = new Map<string, string>();
  for (const [list, measure] of [
    [cube.dimensions ?? [], false],
    [cube.measures ?? [], true],
  ] as const) {
    for (const m of list) {
      const local = m.name.slice(m.name.indexOf('.') + 1);
      if (!columns.has(local)) columns.set(local, pgType(m, measure).name);
    }
  }
  return [...columns];
}

/** The DDL of the model's tables: one empty table per cube and view, a column per measure and dimension. */
export function catalogDdl(cubes: MetaCube[]): string {
  const statements: string[] = [];
  for (const cube of cubes) {
    const cols = catalogColumns(cube).map(([name, type]) => `${ident(name)} ${type}`).join(', ');
    statements.push(`CREATE TABLE public.${ident(cube.name)} (${cols})`);
    if (cube.type === 'view') statements.push(`COMMENT ON TABLE public.${ident(cube.name)} IS 'view'`);
  }
  return statements.join(';\n');
}

/** What a catalog statement answered, message by message (ReadyForQuery and the wrapper's own left out). */
export interface CatalogAnswer {
  messages: Message[];
}

/**
 * The model's catalog in an in-process PostgreSQL (PGlite): empty tables with the model's columns,
 * so pg_catalog and information_schema answer as PostgreSQL does. One per model shape, shared by
 * its connections; each statement runs alone, in a read-only transaction rolled back at once, so
 * nothing one connection does is seen by another.
 */
export class Catalog {
  private queue: Promise<unknown> = Promise.resolve();
  users = 0;
  lastUsed = Date.now();
  constructor(
    readonly key: string,
    private readonly db: PGlite,
  ) {}

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async wrapped(messages: Buffer[]): Promise<Message[]> {
    return this.exclusive(async () => {
      await this.db.execProtocolRaw(frontend.query('BEGIN READ ONLY'));
      try {
        const out = await this.db.execProtocolRaw(Buffer.concat(messages));
        return splitMessages(out).filter((m) => m.type !== 'Z' && m.type !== '1' && m.type !== '2');
      } finally {
        await this.db.execProtocolRaw(frontend.query('ROLLBACK'));
      }
    });
  }

  /**
   * A statement of the simple protocol, run through the extended one: PostgreSQL parses it as one
   * statement or refuses it, so nothing can follow it in the wrapper's transaction.
   */
  query(sql: string): Promise<Message[]> {
    return this.execute({ name: '', sql, paramTypes: [] }, { portal: '', statement: '', paramFormats: [], params: [], resultFormats: [] });
  }

  /** A statement's parameters and columns (ParameterDescription, then RowDescription or NoData), or its ErrorResponse. */
  describe(parse: Parse): Promise<Message[]> {
    return this.wrapped([frontend.parse({ ...parse, name: '' }), frontend.describe('S', ''), frontend.sync()]);
  }

  /** A bound statement run: RowDescription or NoData, DataRows, CommandComplete; or an ErrorResponse. */
  execute(parse: Parse, bind: Bind): Promise<Message[]> {
    return this.wrapped([frontend.parse({ ...parse, name: '' }), frontend.bind({ ...bind, portal: '', statement: '' }), frontend.describe('P', ''), frontend.execute(''), frontend.sync()]);
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

/** Every catalog the server may hold is in use: a new one would take memory nobody gave it. */
export class CatalogsFull extends Error {
  constructor(max: number) {
    super(`The SQL API holds the catalogs of ${max} models in use, its most; retry when a connection to another deployment or environment has closed.`);
    this.name = 'CatalogsFull';
  }
}

/**
 * The catalogs of the models in use, by model shape (each a PGlite of about 250 MB): past `maxIdle`,
 * those no connection uses are closed, oldest first; no more than `maxOpen` are ever open.
 */
export class Catalogs {
  private readonly open = new Map<string, Promise<Catalog>>();
  constructor(
    private readonly maxIdle = 4,
    private readonly maxOpen = 16,
  ) {}

  async acquire(scope: string, cubes: MetaCube[]): Promise<Catalog> {
    const ddl = catalogDdl(cubes);
    const key = `${scope}:${createHash('sha256').update(ddl).digest('hex')}`;
    let pending = this.open.get(key);
    if (!pending) {
      if (this.open.size >= this.maxOpen) await this.evict(this.maxOpen - 1);
      if (this.open.size >= this.maxOpen) throw new CatalogsFull(this.maxOpen);
      pending = create(key, ddl);
      this.open.set(key, pending);
      pending.catch(() => this.open.delete(key));
    }
    const catalog = await pending;
    catalog.users += 1;
    catalog.lastUsed = Date.now();
    await this.evict(this.maxIdle);
    return catalog;
  }

  release(catalog: Catalog): void {
    catalog.users = Math.max(0, catalog.users - 1);
    catalog.lastUsed = Date.now();
  }

  /** Closes catalogs no connection uses, oldest first, until at most `keep` are open. */
  private async evict(keep: number): Promise<void> {
    if (this.open.size <= keep) return;
    const settled = await Promise.all([...this.open.values()].map((p) => p.catch(() => null)));
    const idle = settled.filter((c): c is Catalog => c !== null && c.users === 0).sort((a, b) => a.lastUsed - b.lastUsed);
    for (const catalog of idle.slice(0, this.open.size - keep)) {
      this.open.delete(catalog.key);
      await catalog.close().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    const all = [...this.open.values()];
    this.open.clear();
    for (const pending of all) await (await pending.catch(() => null))?.close().catch(() => undefined);
  }
}

async function create(key: string, ddl: string): Promise<Catalog> {
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create();
  if (ddl !== '') await db.exec(ddl);
  return new Catalog(key, db);
}
