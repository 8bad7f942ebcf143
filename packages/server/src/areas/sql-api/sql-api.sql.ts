/**
 * What the SQL API reads of a statement's text before running it: where one statement ends, what
 * kind it is (a session command answered at once, a catalog read, a query over cubes and views),
 * and the text with bound parameters written in as literals. Tokens are read with SQL's quoting
 * rules (strings, quoted identifiers, dollar quotes, comments), so a parameter or a keyword inside
 * a string is never mistaken for one outside.
 */

type Token = { kind: 'word' | 'quoted' | 'string' | 'param' | 'symbol' | 'space'; text: string; start: number; end: number };

/** A dollar quote's tag, as PostgreSQL's lexer reads it: `$$`, `$tag$`, `$tag_1$`. */
const DOLLAR_TAG = /^\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/;

function tokens(sql: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const start = i;
    const c = sql[i]!;
    if (c === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i);
      i = nl === -1 ? sql.length : nl + 1;
      out.push({ kind: 'space', text: sql.slice(start, i), start, end: i });
    } else if (c === '/' && sql[i + 1] === '*') {
      let depth = 1;
      i += 2;
      while (i < sql.length && depth > 0) {
        if (sql[i] === '/' && sql[i + 1] === '*') {
          depth += 1;
          i += 2;
        } else if (sql[i] === '*' && sql[i + 1] === '/') {
          depth -= 1;
          i += 2;
        } else i += 1;
      }
      out.push({ kind: 'space', text: sql.slice(start, i), start, end: i });
    } else if (/\s/.test(c)) {
      while (i < sql.length && /\s/.test(sql[i]!)) i += 1;
      out.push({ kind: 'space', text: sql.slice(start, i), start, end: i });
    } else if (c === "'" || ((c === 'E' || c === 'e') && sql[i + 1] === "'")) {
      const escapes = c !== "'";
      i += escapes ? 2 : 1;
      while (i < sql.length) {
        if (escapes && sql[i] === '\\') i += 2;
        else if (sql[i] === "'" && sql[i + 1] === "'") i += 2;
        else if (sql[i] === "'") break;
        else i += 1;
      }
      i = Math.min(i + 1, sql.length);
      out.push({ kind: 'string', text: sql.slice(start, i), start, end: i });
    } else if (c === '"') {
      i += 1;
      while (i < sql.length) {
        if (sql[i] === '"' && sql[i + 1] === '"') i += 2;
        else if (sql[i] === '"') break;
        else i += 1;
      }
      i = Math.min(i + 1, sql.length);
      out.push({ kind: 'quoted', text: sql.slice(start, i), start, end: i });
    } else if (c === '$' && /[0-9]/.test(sql[i + 1] ?? '')) {
      i += 1;
      while (i < sql.length && /[0-9]/.test(sql[i]!)) i += 1;
      out.push({ kind: 'param', text: sql.slice(start, i), start, end: i });
    } else if (c === '$' && DOLLAR_TAG.test(sql.slice(i, i + 256))) {
      const tag = DOLLAR_TAG.exec(sql.slice(i, i + 256))![0];
      const close = sql.indexOf(tag, i + tag.length);
      i = close === -1 ? sql.length : close + tag.length;
      out.push({ kind: 'string', text: sql.slice(start, i), start, end: i });
    } else if (/[A-Za-z_\u0080-\uffff]/.test(c)) {
      while (i < sql.length && /[A-Za-z0-9_$\u0080-\uffff]/.test(sql[i]!)) i += 1;
      out.push({ kind: 'word', text: sql.slice(start, i), start, end: i });
    } else {
      i += 1;
      out.push({ kind: 'symbol', text: c, start, end: i });
    }
  }
  return out;
}

/** The statements of a simple-protocol query string, each trimmed; empty ones dropped unless all are. */
export function splitStatements(sql: string): string[] {
  const parts: string[] = [];
  let from = 0;
  for (const t of tokens(sql)) {
    if (t.kind === 'symbol' && t.text === ';') {
      parts.push(sql.slice(from, t.start));
      from = t.end;
    }
  }
  parts.push(sql.slice(from));
  const statements = parts.map((p) => p.trim()).filter((p) => tokens(p).some((t) => t.kind !== 'space'));
  return statements;
}

const SESSION = new Set([
  'SET',
  'RESET',
  'BEGIN',
  'START',
  'COMMIT',
  'END',
  'ROLLBACK',
  'ABORT',
  'DISCARD',
  'DEALLOCATE',
  'CLOSE',
  'SAVEPOINT',
  'RELEASE',
  'LISTEN',
  'UNLISTEN',
]);
const READS = new Set(['SELECT', 'WITH', 'VALUES', 'TABLE', 'SHOW', 'EXPLAIN']);

export type StatementKind = { kind: 'empty' } | { kind: 'session'; tag: string } | { kind: 'catalog' } | { kind: 'data' } | { kind: 'refused'; reason: string };

const unquote = (t: Token) => (t.kind === 'quoted' ? t.text.slice(1, -1).replace(/""/g, '"') : t.text.toLowerCase());

/** The relations a statement reads after FROM or JOIN, as `[schema, name]` (schema null when unqualified). */
function relations(list: Token[]): Array<[string | null, string]> {
  const out: Array<[string | null, string]> = [];
  const words = list.filter((t) => t.kind !== 'space');
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const fromList = w.kind === 'word' && /^(from|join)$/i.test(w.text);
    if (!fromList) continue;
    // FROM a, b, c: each item of the list (stopping at a keyword that ends it).
    let j = i + 1;
    for (;;) {
      const first = words[j];
      if (!first || !(first.kind === 'word' || first.kind === 'quoted')) break;
      if (words[j + 1]?.text === '.' && words[j + 2] && (words[j + 2]!.kind === 'word' || words[j + 2]!.kind === 'quoted')) {
        out.push([unquote(first), unquote(words[j + 2]!)]);
        j += 3;
      } else {
        out.push([null, unquote(first)]);
        j += 1;
      }
      // An alias, then a comma for the next item.
      while (
        words[j] &&
        words[j]!.text !== ',' &&
        !(
          words[j]!.kind === 'word' &&
          /^(where|group|order|limit|offset|having|join|inner|left|right|full|cross|on|union|except|intersect|window|fetch|for)$/i.test(words[j]!.text)
        ) &&
        words[j]!.text !== ')' &&
        words[j]!.text !== '('
      )
        j += 1;
      if (words[j]?.text !== ',') break;
      j += 1;
    }
  }
  return out;
}

/**
 * What a statement is: a session command (SET, BEGIN ...: answered, changes nothing), a catalog
 * read (run on the in-process catalog), a read of a cube or a view (`tables`: their names; null
 * when the model could not be read: then any relation outside pg_catalog and
 * information_schema is taken for one), or something the SQL API does not run.
 */
export function classify(sql: string, tables: ReadonlySet<string> | null): StatementKind {
  const list = tokens(sql);
  const first = list.find((t) => t.kind !== 'space');
  if (!first) return { kind: 'empty' };
  const keyword = first.text.toUpperCase();
  if (first.kind === 'word' && SESSION.has(keyword)) {
    const words = list.filter((t) => t.kind === 'word').map((t) => t.text.toUpperCase());
    const tag =
      keyword === 'START'
        ? 'START TRANSACTION'
        : keyword === 'END' || keyword === 'COMMIT'
          ? 'COMMIT'
          : keyword === 'ABORT'
            ? 'ROLLBACK'
            : keyword === 'DISCARD'
              ? `DISCARD ${words[1] ?? 'ALL'}`
              : keyword === 'CLOSE'
                ? 'CLOSE CURSOR'
                : keyword;
    return { kind: 'session', tag };
  }
  if (first.kind !== 'word' && !(first.kind === 'symbol' && first.text === '(')) return { kind: 'refused', reason: 'syntax' };
  const head = first.kind === 'symbol' ? (list.find((t) => t.kind === 'word')?.text.toUpperCase() ?? '') : keyword;
  if (!READS.has(head)) return { kind: 'refused', reason: head };
  for (const [schema, name] of relations(list)) {
    if (schema === 'pg_catalog' || schema === 'information_schema') continue;
    if (schema !== null && schema !== 'public') continue;
    if (tables === null ? !name.startsWith('pg_') && !['information_schema', 'generate_series', 'unnest'].includes(name) : tables.has(name))
      return { kind: 'data' };
  }
  return { kind: 'catalog' };
}

/** The highest `$n` a statement uses. */
export function parameterCount(sql: string): number {
  let max = 0;
  for (const t of tokens(sql)) if (t.kind === 'param') max = Math.max(max, Number(t.text.slice(1)));
  return max;
}

/** A bound value that cannot be written into the statement (no such `$n`, a NUL character). */
export class BindError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BindError';
  }
}

const NUMERIC_TYPES = new Set([20, 21, 23, 700, 701, 1700]);
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** A bound value as an SQL literal: NULL, a number (for a numeric parameter, or an untyped one that is one), else a quoted string. */
export function literal(value: string | null, type: number): string {
  if (value === null) return 'NULL';
  if ((NUMERIC_TYPES.has(type) || type === 0) && NUMBER.test(value.trim())) return value.trim();
  if (type === 16 && /^(t|true|f|false)$/i.test(value.trim())) return /^t/i.test(value.trim()) ? 'TRUE' : 'FALSE';
  if (value.includes('\0')) throw new BindError('a parameter holds a NUL character');
  return `'${value.replace(/'/g, "''")}'`;
}

/**
 * The statement with `$n` replaced by each value's literal (a token of its own: a value can only
 * ever be one literal, whatever it holds). A `$n` without a value is an error.
 */
export function bindParameters(sql: string, values: Array<string | null>, types: number[]): string {
  let out = '';
  for (const t of tokens(sql)) {
    if (t.kind !== 'param') {
      out += t.text;
      continue;
    }
    const n = Number(t.text.slice(1));
    if (n < 1 || n > values.length) throw new BindError(`there is no parameter $${n}`);
    out += ` ${literal(values[n - 1]!, types[n - 1] ?? 0)} `;
  }
  return out;
}

/**
 * A query over a cube or view as BI tools write it, in the runtime's subset: the `public` schema
 * named (`"public"."orders"`, `"public"."orders"."status"`) is dropped, and `SELECT *` lists the
 * table's columns (`columns`: each table's, the caller's choice of them). Tokens are removed or put in place
 * of `*`; nothing else of the text changes.
 */
export function normalize(sql: string, columns: ReadonlyMap<string, string[]>): string {
  const list = tokens(sql);
  const solid = list.map((t, i) => ({ t, i })).filter(({ t }) => t.kind !== 'space');
  const drop = new Set<number>();
  for (let k = 0; k + 2 < solid.length; k++) {
    const [a, dot, b] = [solid[k]!, solid[k + 1]!, solid[k + 2]!];
    const isPublic = (a.t.kind === 'word' && a.t.text.toLowerCase() === 'public') || (a.t.kind === 'quoted' && a.t.text === '"public"');
    const previous = solid[k - 1];
    if (isPublic && dot.t.text === '.' && (b.t.kind === 'word' || b.t.kind === 'quoted') && previous?.t.text !== '.') {
      drop.add(a.i);
      drop.add(dot.i);
    }
  }
  let star: number | null = null;
  let expansion = '';
  let groupAt: number | null = null;
  let grouping = '';
  if (
    solid[0]?.t.kind === 'word' &&
    solid[0].t.text.toUpperCase() === 'SELECT' &&
    solid[1]?.t.text === '*' &&
    solid[2]?.t.kind === 'word' &&
    solid[2].t.text.toUpperCase() === 'FROM'
  ) {
    const names = relations(list.filter((_, i) => !drop.has(i)));
    const table = names.length === 1 && names[0]![0] === null ? columns.get(names[0]![1]) : undefined;
    if (table && table.length > 0) {
      star = solid[1].i;
      expansion = table.map((c) => `"${c.replace(/"/g, '""')}"`).join(', ');
      // Every selected dimension is grouped by (the runtime's rule): GROUP BY 1, 2, ... before
      // ORDER BY, LIMIT or OFFSET at the top level, unless the statement groups already.
      let depth = 0;
      let grouped = false;
      for (const { t, i } of solid.slice(3)) {
        if (t.text === '(') depth += 1;
        else if (t.text === ')') depth -= 1;
        else if (depth === 0 && t.kind === 'word' && /^group$/i.test(t.text)) grouped = true;
        else if (depth === 0 && t.kind === 'word' && groupAt === null && /^(order|limit|offset|fetch)$/i.test(t.text)) groupAt = i;
      }
      if (!grouped) {
        grouping = ` GROUP BY ${table.map((_, n) => n + 1).join(', ')} `;
        if (groupAt === null) {
          // At the end: after a newline (a trailing -- comment ends there), and before no `;`.
          groupAt = list.length;
          grouping = `\n${grouping}`;
          const last = solid[solid.length - 1]!;
          if (last.t.text === ';') drop.add(last.i);
        }
      } else groupAt = null;
    }
  }
  const out = list.map((t, i) => (drop.has(i) ? '' : i === star ? expansion : i === groupAt ? `${grouping}${t.text}` : t.text)).join('');
  return groupAt === list.length ? `${out}${grouping}` : out;
}
