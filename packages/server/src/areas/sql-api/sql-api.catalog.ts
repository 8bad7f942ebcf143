import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
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
    const cols = catalogColumns(cube)
      .map(([name, type]) => `${ident(name)} ${type}`)
      .join(', ');
    statements.push(`CREATE TABLE public.${ident(cube.name)} (${cols})`);
    if (cube.type === 'view') statements.push(`COMMENT ON TABLE public.${ident(cube.name)} IS 'view'`);
  }
  return statements.join(';\n');
}

/** The worker's file: compiled JavaScript beside this module, or its TypeScript source (tests, through tsx). */
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const WORKER = new URL(FROM_SOURCE ? './sql-api.catalog-worker.ts' : './sql-api.catalog-worker.js', import.meta.url);

/**
 * PGlite's WebAssembly, compiled once per process and shared by every catalog's thread, which then
 * instantiates it rather than compiling it again (seconds of CPU each).
 */
let compiled: Promise<{ pgliteWasmModule: WasmModule; initdbWasmModule: WasmModule }> | null = null;
/** A compiled WebAssembly.Module (the server's TypeScript settings carry no WebAssembly types). */
type WasmModule = object;
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> } }).WebAssembly;
function wasmModules() {
  compiled ??= (async () => {
    const dir = path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
    const [pglite, initdb] = await Promise.all([fs.readFile(path.join(dir, 'pglite.wasm')), fs.readFile(path.join(dir, 'initdb.wasm'))]);
    return { pgliteWasmModule: await wasm.compile(pglite), initdbWasmModule: await wasm.compile(initdb) };
  })();
  compiled.catch(() => (compiled = null));
  return compiled;
}

async function spawn(ddl: string): Promise<Worker> {
  const workerData = { ddl, ...(await wasmModules()) };
  if (!FROM_SOURCE) return new Worker(WORKER, { workerData });
  // Node 20 does not apply --import loaders to worker threads: the source is loaded through tsx's API.
  const href = JSON.stringify(WORKER.href);
  return new Worker(`import('tsx/esm/api').then(({ tsImport }) => tsImport(${href}, ${href}))`, { eval: true, workerData });
}

/** A catalog statement ran past its time: its thread was stopped (SQLSTATE 57014). */
export class CatalogTimeout extends Error {
  constructor(ms: number) {
    super(`canceling statement due to statement timeout (catalog statements may run ${ms} ms)`);
    this.name = 'CatalogTimeout';
  }
}

/**
 * The model's catalog in an in-process PostgreSQL (PGlite, on a worker thread of its own): empty
 * tables with the model's columns, so pg_catalog and information_schema answer as PostgreSQL does.
 * One per model shape, shared by its connections; each statement runs alone, in a read-only
 * transaction rolled back at once, so nothing one connection does is seen by another. A statement
 * past `timeoutMs` stops the thread: the catalog is then `broken`, and the next use makes another.
 */
export class Catalog {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly pending = new Map<number, { resolve: (output: Uint8Array) => void; reject: (error: Error) => void }>();
  private next = 1;
  users = 0;
  lastUsed = Date.now();
  broken = false;

  private constructor(
    readonly key: string,
    private readonly worker: Worker,
    private readonly timeoutMs: number,
  ) {
    worker.on('message', (answer: { id: number; output?: Uint8Array; error?: string }) => {
      const waiting = this.pending.get(answer.id);
      if (!waiting) return;
      this.pending.delete(answer.id);
      if (answer.output) waiting.resolve(answer.output);
      else waiting.reject(new Error(answer.error ?? 'the catalog answered nothing'));
    });
    const died = (error: Error) => {
      this.broken = true;
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new Error(`the catalog's thread exited (${code})`)));
  }

  static async open(key: string, ddl: string, timeoutMs: number): Promise<Catalog> {
    const worker = await spawn(ddl);
    return new Promise((resolve, reject) => {
      const failed = (error: Error) => {
        void worker.terminate();
        reject(error);
      };
      const exited = (code: number) => reject(new Error(`the catalog's thread exited (${code}) before it started`));
      worker.once('error', failed);
      worker.once('exit', exited);
      worker.once('message', (first: { ready: boolean; error?: string }) => {
        worker.off('error', failed);
        worker.off('exit', exited);
        if (!first.ready) return failed(new Error(`the catalog did not start: ${first.error ?? 'no reason given'}`));
        // Idle, the thread does not keep the process alive.
        worker.unref();
        resolve(new Catalog(key, worker, timeoutMs));
      });
    });
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private wrapped(messages: Buffer[]): Promise<Message[]> {
    return this.exclusive(async () => {
      if (this.broken) throw new Error('the catalog was stopped');
      const id = this.next++;
      const output = await new Promise<Uint8Array>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.pending.delete(id);
          this.broken = true;
          void this.worker.terminate();
          reject(new CatalogTimeout(this.timeoutMs));
        }, this.timeoutMs);
        this.pending.set(id, {
          resolve: (answer) => (clearTimeout(timer), resolve(answer)),
          reject: (error) => (clearTimeout(timer), reject(error)),
        });
        this.worker.postMessage({ id, payload: Buffer.concat(messages) });
      });
      return splitMessages(output).filter((m) => m.type !== 'Z' && m.type !== '1' && m.type !== '2');
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
    return this.wrapped([
      frontend.parse({ ...parse, name: '' }),
      frontend.bind({ ...bind, portal: '', statement: '' }),
      frontend.describe('P', ''),
      frontend.execute(''),
      frontend.sync(),
    ]);
  }

  async close(): Promise<void> {
    this.broken = true;
    await this.worker.terminate();
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
 * The catalogs of the models in use, by model shape (each a PGlite of about 450 MB): past `maxIdle`,
 * those no connection uses are closed, oldest first; no more than `maxOpen` are ever open.
 */
export class Catalogs {
  private readonly open = new Map<string, Promise<Catalog>>();
  constructor(
    private readonly maxIdle = 2,
    private readonly maxOpen = 8,
    private readonly timeoutMs = 10_000,
  ) {}

  async acquire(scope: string, cubes: MetaCube[]): Promise<Catalog> {
    const ddl = catalogDdl(cubes);
    const key = `${scope}:${createHash('sha256').update(ddl).digest('hex')}`;
    let pending = this.open.get(key);
    // A catalog stopped mid-statement is replaced.
    if (pending && (await pending.catch(() => null))?.broken) {
      this.open.delete(key);
      pending = undefined;
    }
    if (!pending) {
      if (this.open.size >= this.maxOpen) await this.evict(this.maxOpen - 1);
      if (this.open.size >= this.maxOpen) throw new CatalogsFull(this.maxOpen);
      pending = Catalog.open(key, ddl, this.timeoutMs);
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
