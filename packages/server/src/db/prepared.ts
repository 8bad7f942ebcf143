import type { CompiledQuery, QueryResult } from 'kysely';
import type { Executor } from './tables.js';

interface Template {
  compiled: CompiledQuery;
  /** For each compiled parameter: which argument fills it, or -1 for a constant of the query. */
  slots: number[];
}

/**
 * A query built and compiled once per dialect, then run with new arguments. Building and compiling
 * a Kysely query costs about as much as SQLite takes to run a primary-key lookup, and a bulk move
 * runs the same few queries for every item. `build` receives stand-ins for its arguments and must
 * produce the same SQL whatever they are (no branching on them); each stand-in is then replaced,
 * wherever it landed among the compiled parameters, by the real argument.
 */
/** A query builder or a raw `sql` template: both compile against an executor. */
interface Compiles<R> {
  compile(db: Executor): CompiledQuery<R>;
}

export function prepared<A extends unknown[], R>(arity: A['length'], build: (db: Executor, ...args: A) => Compiles<R>) {
  const templates = new WeakMap<object, Template>();
  return async (db: Executor, ...args: A): Promise<QueryResult<R>> => {
    const adapter = db.getExecutor().adapter;
    let template = templates.get(adapter);
    if (!template) {
      const standIns = Array.from({ length: arity }, (_, i) => ({ standIn: i }));
      const compiled = build(db, ...(standIns as unknown as A)).compile(db);
      const slots = compiled.parameters.map((p) => standIns.indexOf(p as (typeof standIns)[number]));
      template = { compiled, slots };
      templates.set(adapter, template);
    }
    const { compiled, slots } = template;
    const parameters = slots.map((slot, i) => (slot === -1 ? compiled.parameters[i] : args[slot]));
    return db.executeQuery<R>({ ...compiled, parameters });
  };
}
