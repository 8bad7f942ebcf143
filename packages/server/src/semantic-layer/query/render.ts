import type { CompiledCube, CompiledDimension, CompiledMeasure } from '../../model/artifact.js';
import { quote } from './dialect.js';
import { QueryError } from './errors.js';
import { valueAt, type SecurityContext } from './access.js';
import type { ModelIndex } from './members.js';

const BRACED = /\$?\{([^{}]*)\}/g;
const DOTTED = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;
const CONTEXT = new Set([
  'FILTER_PARAMS',
  'FILTER_GROUP',
  'SECURITY_CONTEXT',
  'COMPILE_CONTEXT',
  'SQL_UTILS',
  'securityContext',
  'security_context',
  'userAttributes',
  'user_attributes',
]);
const MAX_DEPTH = 24;
const BARE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** What model SQL may read of the query and its caller: `{SECURITY_CONTEXT...}`, `{FILTER_PARAMS...}`. */
export interface RenderContext {
  /** Binds a value; answers its placeholder. Every value from the caller's context goes through here. */
  bind(value: unknown): string;
  security: SecurityContext;
  /** The query's filters on the cube member `member`, written over the SQL `expr`; null when it has none. */
  filterParams(member: string, expr: string): string | null;
  /** A `sub_query` dimension's column in the query (its subquery joined by the compiler); undefined where it has none. */
  subQuery?(cube: string, dimension: string): string | undefined;
}

const SECURITY =
  /^(SECURITY_CONTEXT|securityContext|security_context|userAttributes|user_attributes)\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*?)(?:\.(filter|unsafeValue)\(\s*(?:(['"])([^'"]*)\4)?\s*\))?$/;
const FILTER_PARAMS = /^FILTER_PARAMS\.([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)\.filter\(\s*(['"])([^'"]*)\3\s*\)$/;

/**
 * Writes the model's SQL expressions for one query: `{CUBE}` becomes the cube's alias in the
 * query, `{member}` and `{cube.member}` the member's own expression (recursively), `{cube}` that
 * cube's alias. The model's SQL is the developers' code, trusted as written; nothing a caller
 * sends is ever put into it (their values are bound as parameters by the compiler).
 */
export class Renderer {
  constructor(
    private readonly index: ModelIndex,
    /** The alias of a joined cube; undefined for a cube this query does not join. */
    private readonly aliasOf: (cube: string) => string | undefined,
    /** A measure referenced from a `number` measure's SQL: its expression in the query. */
    private readonly measureRef: (cube: string, measure: CompiledMeasure) => string = (cube, m) => {
      throw new QueryError(`The model refers to measure ${cube}.${m.name} where only dimensions can be used.`);
    },
    /** The query and its caller, for context references; without it they are refused. */
    private readonly context?: RenderContext,
  ) {}

  /** The cube's table: `sql_table` as written, or its `sql` as a subquery. */
  table(cube: CompiledCube): string {
    if (cube.sql !== undefined) return `(${this.expand(cube.sql, cube, 0)})`;
    if (cube.sql_table !== undefined) return this.expand(cube.sql_table, cube, 0);
    throw new QueryError(`Cube ${cube.name} has neither sql nor sql_table.`);
  }

  dimension(cube: CompiledCube, dimension: CompiledDimension, depth = 0): string {
    if (dimension.case) return this.#case(cube, dimension, depth);
    if (dimension.sql === null) throw new QueryError(`Dimension ${cube.name}.${dimension.name} has no SQL that queries can use yet.`);
    if (dimension.sub_query) {
      const column = this.context?.subQuery?.(cube.name, dimension.name);
      if (column === undefined)
        throw new QueryError(
          `Dimension ${cube.name}.${dimension.name} is a subquery dimension, which can only be used as a member of the query (not from another member's SQL).`,
        );
      return column;
    }
    return `(${this.#column(dimension.sql, cube, depth)})`;
  }

  /** The expression a measure aggregates (null for a `count` of rows). */
  measureInput(cube: CompiledCube, measure: CompiledMeasure): string | null {
    return measure.sql === null ? null : `(${this.#column(measure.sql, cube, 0)})`;
  }

  /** A measure's `filters` (SQL conditions, all of which must hold). */
  measureFilters(cube: CompiledCube, measure: CompiledMeasure): string[] {
    return (measure.filters ?? []).map((f) => `(${this.expand(f, cube, 0)})`);
  }

  segment(cube: CompiledCube, sql: string): string {
    return `(${this.expand(sql, cube, 0)})`;
  }

  /** A join's condition, in the context of the cube that defines it. */
  join(from: CompiledCube, sql: string): string {
    return `(${this.expand(sql, from, 0)})`;
  }

  /**
   * A member's SQL that is a bare column name (`sql: status`) is that column of the member's cube,
   * so it stays unambiguous when the query joins other cubes with a column of the same name.
   */
  #column(sql: string, cube: CompiledCube, depth: number): string {
    const text = sql.trim();
    return BARE.test(text) ? `${quote(this.#alias(cube.name))}.${quote(text)}` : this.expand(sql, cube, depth);
  }

  expand(sql: string, cube: CompiledCube, depth: number): string {
    if (depth > MAX_DEPTH) throw new QueryError(`The SQL of cube ${cube.name} refers to itself through its members.`);
    return sql.replace(BRACED, (whole, inner: string) => {
      const text = inner.trim();
      const contextual = this.context && this.#contextual(text, cube, depth);
      if (contextual !== undefined) return contextual;
      if (CONTEXT.has(text.split(/[.(\s]/)[0]!)) {
        throw new QueryError(
          `The model uses {${text}} in cube ${cube.name}, which queries cannot use: the forms are {SECURITY_CONTEXT.x.filter('column')}, {securityContext.x}, {userAttributes.x} and {FILTER_PARAMS.cube.member.filter('column')}.`,
        );
      }
      if (!DOTTED.test(text)) return whole;
      const parts = text.split('.');
      if (CONTEXT.has(parts[0]!)) throw new QueryError(`The model uses {${text}} in cube ${cube.name}, which queries cannot use yet.`);
      if (parts[0] === 'CUBE') {
        if (parts.length === 1) return quote(this.#alias(cube.name));
        return this.#member(cube, parts.slice(1), depth, `${quote(this.#alias(cube.name))}.${parts.slice(1).join('.')}`);
      }
      if (parts.length === 1) {
        const own = this.index.own(cube, parts[0]!);
        if (own) return this.#member(cube, parts, depth, whole);
        if (this.index.cubes.has(parts[0]!)) return quote(this.#alias(parts[0]!));
        throw new QueryError(`The SQL of cube ${cube.name} refers to {${text}}, which is neither its member nor a cube.`);
      }
      const other = this.index.cubes.get(parts[0]!);
      if (!other) throw new QueryError(`The SQL of cube ${cube.name} refers to {${text}}: no cube ${parts[0]}.`);
      return this.#member(other, parts.slice(1), depth, whole);
    });
  }

  /**
   * A reference to the caller's context or the query's filters, as Cube writes them in model SQL:
   * `{SECURITY_CONTEXT.tenant.filter('tenant_id')}` (`tenant_id = <value>`, `IN` for a list, `1 = 1`
   * when the context has no value), `{securityContext.tenant}` or `.unsafeValue()` (the value; NULL
   * when missing), `{userAttributes.region}`, and `{FILTER_PARAMS.orders.created_at.filter('created_at')}`
   * (the query's filters on that member over the given SQL, `1 = 1` when it has none). Values are
   * always bound, never written into the SQL. Undefined for any other reference.
   */
  #contextual(text: string, cube: CompiledCube, depth: number): string | undefined {
    const context = this.context!;
    const security = SECURITY.exec(text);
    if (security) {
      const [, source, path, method, , column] = security;
      const root = source!.toLowerCase().startsWith('user') ? context.security.userAttributes : context.security.securityContext;
      const value = valueAt(root, path!);
      const values = Array.isArray(value) ? value : [value];
      if (values.some((v) => v !== null && v !== undefined && typeof v === 'object'))
        throw new QueryError(`The model uses {${text}} in cube ${cube.name}, and the caller's value there is not plain.`);
      if (method === 'filter') {
        if (column === undefined || column.trim() === '')
          throw new QueryError(`The model uses {${text}} in cube ${cube.name}: filter() needs the column, as in filter('tenant_id').`);
        if (value === undefined || value === null) return '1 = 1';
        const target = this.expand(column, cube, depth + 1);
        return values.length === 1 ? `${target} = ${context.bind(values[0])}` : `${target} IN (${values.map((v) => context.bind(v)).join(', ')})`;
      }
      if (value === undefined || value === null) return 'NULL';
      return values.map((v) => context.bind(v)).join(', ');
    }
    const params = FILTER_PARAMS.exec(text);
    if (params) {
      const [, owner, member, , expr] = params;
      if (!this.index.cubes.has(owner!)) throw new QueryError(`The model uses {${text}} in cube ${cube.name}: no cube ${owner}.`);
      return context.filterParams(`${owner}.${member}`, this.expand(expr!, cube, depth + 1)) ?? '1 = 1';
    }
    return undefined;
  }

  #alias(cube: string): string {
    const alias = this.aliasOf(cube);
    if (alias === undefined)
      throw new QueryError(`The model refers to cube ${cube}, which this query does not join; add one of its members or query through a view.`);
    return alias;
  }

  #member(cube: CompiledCube, path: string[], depth: number, fallback: string): string {
    const own = path.length === 1 ? this.index.own(cube, path[0]!) : undefined;
    if (!own) {
      if (fallback.startsWith('"')) return fallback;
      throw new QueryError(`The SQL refers to ${cube.name}.${path.join('.')}, which is not a member.`);
    }
    this.#alias(cube.name);
    if (own.kind === 'dimension') return this.dimension(cube, own.member as CompiledDimension, depth + 1);
    if (own.kind === 'measure') return this.measureRef(cube.name, own.member as CompiledMeasure);
    return this.segment(cube, (own.member as { sql: string }).sql);
  }

  #case(cube: CompiledCube, dimension: CompiledDimension, depth: number): string {
    const spec = dimension.case as { when?: Array<{ sql: string; label: unknown }>; else?: { label: unknown } };
    const label = (value: unknown) => {
      const text = typeof value === 'string' ? value : typeof value === 'object' && value !== null && 'sql' in value ? null : String(value);
      if (text === null) return `(${this.expand(String((value as { sql: string }).sql), cube, depth + 1)})`;
      return `'${text.replace(/'/g, "''")}'`;
    };
    const whens = (spec.when ?? []).map((w) => `WHEN ${this.expand(w.sql, cube, depth + 1)} THEN ${label(w.label)}`).join(' ');
    return `(CASE ${whens}${spec.else ? ` ELSE ${label(spec.else.label)}` : ''} END)`;
  }
}

/**
 * The cubes a member's SQL reaches through its references (`{customers.region}`, `{amount}` that
 * itself reads another cube, `{line_items}`), beside its own: a query that uses the member joins
 * them, as Cube does. Context references (`{securityContext...}`) and unknown names are left to
 * the renderer, which refuses them with their reason.
 */
export function referencedCubes(index: ModelIndex, cube: CompiledCube, member: { sql?: string | null; filters?: string[]; case?: unknown }): Set<string> {
  const found = new Set<string>();
  const seen = new Set<string>();
  const walk = (sql: string, at: CompiledCube, depth: number) => {
    if (depth > MAX_DEPTH) return;
    for (const match of sql.matchAll(BRACED)) {
      const text = match[1]!.trim();
      if (!DOTTED.test(text)) continue;
      const parts = text.split('.');
      if (CONTEXT.has(parts[0]!)) continue;
      let target: CompiledCube | undefined;
      let name: string | undefined;
      if (parts[0] === 'CUBE') [target, name] = [at, parts[1]];
      else if (parts.length === 1 && index.own(at, parts[0]!)) [target, name] = [at, parts[0]];
      else [target, name] = [index.cubes.get(parts[0]!), parts[1]];
      if (!target) continue;
      found.add(target.name);
      if (name === undefined) continue;
      const key = `${target.name}.${name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const own = index.own(target, name);
      if (own) for (const text of sqlOf(own.member)) walk(text, target, depth + 1);
    }
  };
  for (const text of sqlOf(member)) walk(text, cube, 0);
  found.delete(cube.name);
  return found;
}

/** Every SQL text of a member: its `sql`, its measure `filters`, its `case` conditions and labels. */
function sqlOf(member: { sql?: string | null; filters?: string[]; case?: unknown }): string[] {
  const texts: string[] = [];
  if (typeof member.sql === 'string') texts.push(member.sql);
  for (const f of member.filters ?? []) texts.push(f);
  const spec = member.case as { when?: Array<{ sql: string; label: unknown }>; else?: { label: unknown } } | undefined;
  for (const w of spec?.when ?? []) {
    texts.push(w.sql);
    if (typeof w.label === 'object' && w.label !== null && 'sql' in w.label) texts.push(String((w.label as { sql: unknown }).sql));
  }
  return texts;
}

/** The measures (`cube.member`) a measure's SQL refers to directly: `{revenue}`, `{CUBE.revenue}`, `{orders.revenue}`. */
export function referencedMeasures(index: ModelIndex, cube: CompiledCube, sql: string): string[] {
  const found: string[] = [];
  for (const match of sql.matchAll(BRACED)) {
    const text = match[1]!.trim();
    if (!DOTTED.test(text)) continue;
    const parts = text.split('.');
    const [owner, name] = parts[0] === 'CUBE' ? [cube, parts[1]] : parts.length === 1 ? [cube, parts[0]] : [index.cubes.get(parts[0]!), parts[1]];
    if (!owner || name === undefined) continue;
    if (index.own(owner, name)?.kind === 'measure' && !found.includes(`${owner.name}.${name}`)) found.push(`${owner.name}.${name}`);
  }
  return found;
}
