import type { SqlDialect } from './dialect.js';
import { QueryError } from './errors.js';
import type { MemberFilter } from './query.js';
import { hasTime, instantOf, parseWall } from './time-zones.js';

export interface FilterContext {
  dialect: SqlDialect;
  /** Binds a value; answers its placeholder. Every value a caller sends goes through here. */
  bind(value: unknown): string;
  timezone: string;
}

const MAX_VALUES = 10_000;

function list(f: MemberFilter): unknown[] {
  const values = Array.isArray(f.value) ? f.value : f.value === undefined ? [] : [f.value];
  if (values.length > MAX_VALUES) throw new QueryError(`A filter on ${f.member} may list at most ${MAX_VALUES} values.`);
  return values;
}

/** A value of the member's type, or a 400 naming the filter. */
function typed(value: unknown, type: string | null, f: MemberFilter): unknown {
  if (value === null) return null;
  if (type === 'number') {
    const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
    if (!Number.isFinite(n)) throw new QueryError(`The filter on ${f.member} needs numbers; ${JSON.stringify(value)} is not one.`);
    return n;
  }
  if (type === 'boolean') {
    if (value === true || value === 'true' || value === 1 || value === '1') return true;
    if (value === false || value === 'false' || value === 0 || value === '0') return false;
    throw new QueryError(`The filter on ${f.member} needs true or false; ${JSON.stringify(value)} is neither.`);
  }
  if (typeof value === 'object') throw new QueryError(`The filter on ${f.member} needs plain values, not ${JSON.stringify(value)}.`);
  return String(value);
}

/** The instant (ISO, UTC) a time value names in the query's time zone; `end` moves a date-only value to the end of its day. */
function instant(value: unknown, f: MemberFilter, timezone: string, end = false): string {
  const text = String(value);
  const wall = parseWall(text);
  if (!wall) throw new QueryError(`The filter on ${f.member} needs dates such as "2026-01-31" or "2026-01-31T09:30:00"; ${JSON.stringify(value)} is not one.`);
  const ms = instantOf(wall, timezone);
  if (end && !hasTime(text)) {
    const next = new Date(Date.UTC(wall.year, wall.month - 1, wall.day + 1));
    return new Date(
      instantOf({ year: next.getUTCFullYear(), month: next.getUTCMonth() + 1, day: next.getUTCDate(), hour: 0, minute: 0, second: 0, ms: 0 }, timezone) - 1,
    ).toISOString();
  }
  return new Date(ms).toISOString();
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * The SQL condition of one member filter over `expr` (the member's expression or its column).
 * Negative operators (`not_equals`, `not_contains`, ...) keep rows where the member is NULL, as
 * a person reading "not X" expects.
 */
export function filterSql(expr: string, type: string | null, f: MemberFilter, ctx: FilterContext): string {
  const { dialect, bind } = ctx;
  const values = list(f);
  const need = (n: 'one' | 'some' | 'two') => {
    if (n === 'one' && values.length !== 1) throw new QueryError(`The ${f.operator} filter on ${f.member} needs one value.`);
    if (n === 'some' && values.length === 0) throw new QueryError(`The ${f.operator} filter on ${f.member} needs a value.`);
    if (n === 'two' && values.length !== 2) throw new QueryError(`The between filter on ${f.member} needs [start, end].`);
  };
  const isTime = type === 'time';
  const left = isTime ? dialect.instant(expr) : expr;
  const param = (v: unknown, end = false) => (isTime ? dialect.instantParam(bind(instant(v, f, ctx.timezone, end))) : bind(typed(v, type, f)));
  const orNull = (condition: string) => `(${condition} OR ${expr} IS NULL)`;
  switch (f.operator) {
    case 'equals':
    case 'not_equals': {
      need('some');
      // A null among the values is the member being NULL (Cube's reading): equals matches those
      // rows too, and not_equals then leaves them out.
      const present = values.filter((v) => v !== null);
      const withNull = present.length < values.length;
      let condition: string;
      if (present.length === 0) {
        condition = '';
      } else if (isTime) {
        // A date names its whole day.
        condition = present
          .map((v) => (hasTime(String(v)) ? `${left} = ${param(v)}` : `(${left} >= ${param(v)} AND ${left} <= ${param(v, true)})`))
          .join(' OR ');
      } else {
        condition = present.length === 1 ? `${expr} = ${param(present[0])}` : `${expr} IN (${present.map((v) => param(v)).join(', ')})`;
      }
      if (f.operator === 'equals') return withNull ? (condition ? `(${condition} OR ${expr} IS NULL)` : `(${expr} IS NULL)`) : `(${condition})`;
      if (!withNull) return orNull(`NOT (${condition})`);
      return condition ? `(NOT (${condition}) AND ${expr} IS NOT NULL)` : `(${expr} IS NOT NULL)`;
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      // Cube's comparisons (and its beforeDate, afterDate, ...): a date-only value is the start of its day.
      need('one');
      const op = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[f.operator];
      return `(${left} ${op} ${param(values[0])})`;
    }
    case 'not_between': {
      need('two');
      return `(${left} < ${param(values[0])} OR ${left} > ${param(values[1], true)})`;
    }
    case 'greater_than':
    case 'greater_than_or_equal':
    case 'less_than':
    case 'less_than_or_equal': {
      need('one');
      const op = { greater_than: '>', greater_than_or_equal: '>=', less_than: '<', less_than_or_equal: '<=' }[f.operator];
      return `(${left} ${op} ${param(values[0], f.operator === 'greater_than' || f.operator === 'less_than_or_equal')})`;
    }
    case 'between': {
      need('two');
      const lower = f.startInclusive === false ? '>' : '>=';
      const upper = f.endInclusive === false ? '<' : '<=';
      return `(${left} ${lower} ${param(values[0])} AND ${left} ${upper} ${param(values[1], true)})`;
    }
    case 'contains':
    case 'not_contains':
    case 'starts_with':
    case 'not_starts_with':
    case 'ends_with':
    case 'not_ends_with': {
      need('some');
      const kind = f.operator.replace(/^not_/, '');
      const conditions = values.map((v) => {
        const text = escapeLike(String(typed(v, 'string', f)));
        const pattern = kind === 'contains' ? `%${text}%` : kind === 'starts_with' ? `${text}%` : `%${text}`;
        return f.caseSensitive ? dialect.like(expr, bind(pattern)) : dialect.ilike(expr, bind(pattern));
      });
      const condition = `(${conditions.join(' OR ')})`;
      return f.operator.startsWith('not_') ? orNull(`NOT ${condition}`) : condition;
    }
    case 'is_null':
      return `(${expr} IS NULL)`;
    case 'is_not_null':
      return `(${expr} IS NOT NULL)`;
    case 'is_empty':
      return `(${expr} IS NULL OR CAST(${expr} AS TEXT) = '')`;
    case 'is_not_empty':
      return `(${expr} IS NOT NULL AND CAST(${expr} AS TEXT) <> '')`;
    case 'custom':
      throw new QueryError(
        `The custom filter on ${f.member} is a dashboard control; the data API takes the other operators only (no client SQL reaches a data source).`,
      );
  }
}
