import { sql, type RawBuilder } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { AttrType } from './scim.attributes.js';
import { invalidFilter } from './scim.errors.js';

/**
 * The SQL pieces a compiled SCIM filter is made of: JSON read the way each dialect reads it, and
 * comparisons of one value with one bound parameter, typed by the attribute. scim.filter.ts
 * decides which attribute an expression reads; this file decides how it is compared.
 */
export type Cond = RawBuilder<unknown>;
export type CompareOp = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le';

/** A comparable scalar: a text expression and how to compare it. */
export interface Scalar {
  expr: RawBuilder<unknown>;
  type: AttrType;
  caseExact: boolean;
}

/** Reads JSON stored as text, in each dialect's own functions. */
export class Json {
  constructor(readonly dialect: Dialect) {}

  /** The text of the value at `path` in `source` (booleans read as 'true' / 'false'). */
  text(source: RawBuilder<unknown>, path: string[], type: AttrType): RawBuilder<unknown> {
    if (this.dialect === 'postgres') return sql`(${source} #>> cast(${path} as text[]))`;
    const jsonPath = `$${path.map((p) => `.${JSON.stringify(p)}`).join('')}`;
    // json_extract gives 1/0 for JSON booleans; json_type names them, matching PostgreSQL's text.
    return type === 'boolean' ? sql`json_type(${source}, ${jsonPath})` : sql`json_extract(${source}, ${jsonPath})`;
  }

  /** The document column, as the JSON type each dialect's functions take. */
  document(table: 'scim_users' | 'scim_groups'): RawBuilder<unknown> {
    return this.dialect === 'postgres' ? sql`${sql.ref(`${table}.document`)}::jsonb` : sql.ref(`${table}.document`);
  }

  /** EXISTS over the elements of the array at `path`; `cond` reads one element through `element`. */
  anyElement(source: RawBuilder<unknown>, path: string[], cond: (element: RawBuilder<unknown>) => Cond): Cond {
    if (this.dialect === 'postgres') {
      const array = sql`(${source} #> cast(${path} as text[]))`;
      return sql`exists (select 1 from jsonb_array_elements(case when jsonb_typeof(${array}) = 'array' then ${array} else '[]'::jsonb end) as el(v) where ${cond(sql`el.v`)})`;
    }
    const jsonPath = `$${path.map((p) => `.${JSON.stringify(p)}`).join('')}`;
    return sql`exists (select 1 from json_each(${source}, ${jsonPath}) as el where json_type(${source}, ${jsonPath}) = 'array' and ${cond(sql`el.value`)})`;
  }
}

/** Present: assigned and not empty (RFC 7644 section 3.4.2.2). */
export function hasValue(scalar: Scalar): Cond {
  // A number is never empty, and comparing one with '' would fail on PostgreSQL.
  if (scalar.type === 'decimal' || scalar.type === 'integer') return sql`${scalar.expr} is not null`;
  return sql`(${scalar.expr} is not null and ${scalar.expr} <> '')`;
}

/** One comparison, with the value bound as a parameter and normalised to the attribute's type. */
export function compareScalar(scalar: Scalar, op: CompareOp, raw: unknown, dialect: Dialect): Cond {
  if (scalar.type === 'decimal' || scalar.type === 'integer') return compareNumber(scalar, op, raw, dialect);
  let value: string;
  if (scalar.type === 'boolean') {
    if (op !== 'eq' && op !== 'ne') throw invalidFilter(`Booleans compare only with eq and ne, not ${op}.`);
    const b = typeof raw === 'string' ? raw.toLowerCase() : raw;
    if (b !== true && b !== false && b !== 'true' && b !== 'false') throw invalidFilter(`Expected true or false, got ${JSON.stringify(raw)}.`);
    value = String(b);
  } else if (scalar.type === 'dateTime') {
    const time = typeof raw === 'string' ? Date.parse(raw) : NaN;
    if (Number.isNaN(time)) throw invalidFilter(`Expected a date-time string, got ${JSON.stringify(raw)}.`);
    value = new Date(time).toISOString();
  } else {
    if (raw === null || typeof raw === 'object') throw invalidFilter(`Cannot compare with ${JSON.stringify(raw)}; use "pr" to test for presence.`);
    value = String(raw);
  }
  const expr = scalar.caseExact ? scalar.expr : sql`lower(${scalar.expr})`;
  // An explicit type keeps PostgreSQL from guessing the parameter's type inside functions.
  const v = sql`cast(${scalar.caseExact ? value : value.toLowerCase()} as text)`;
  const ordered = dialect === 'postgres' ? sql`${expr} collate "C"` : expr;
  switch (op) {
    case 'eq':
      return sql`${expr} = ${v}`;
    case 'ne':
      return sql`(${expr} is null or ${expr} <> ${v})`;
    case 'co':
      return dialect === 'postgres' ? sql`strpos(${expr}, ${v}) > 0` : sql`instr(${expr}, ${v}) > 0`;
    case 'sw':
      return sql`substr(${expr}, 1, length(${v})) = ${v}`;
    case 'ew':
      // One expression for both stores: SQLite's substr(x, -0) is the whole string, so a negative
      // start would make `ew ""` match nothing there, while `sw ""` matches every value.
      return sql`(length(${expr}) >= length(${v}) and substr(${expr}, length(${expr}) - length(${v}) + 1) = ${v})`;
    case 'gt':
      return sql`${ordered} > ${v}`;
    case 'ge':
      return sql`${ordered} >= ${v}`;
    case 'lt':
      return sql`${ordered} < ${v}`;
    case 'le':
      return sql`${ordered} <= ${v}`;
  }
}

const NUMBER_OPERATORS = new Map<string, string>([
  ['eq', '='],
  ['ne', '<>'],
  ['gt', '>'],
  ['ge', '>='],
  ['lt', '<'],
  ['le', '<='],
]);

/** Numbers compare as numbers in both stores, not as their text; `scalar.expr` is already numeric. */
function compareNumber(scalar: Scalar, op: CompareOp, raw: unknown, dialect: Dialect): Cond {
  if (typeof raw !== 'number') throw invalidFilter(`Expected a number, got ${JSON.stringify(raw)}.`);
  // 1e400 parses as Infinity, which no stored value (always finite JSON) can be compared with.
  if (!Number.isFinite(raw)) throw invalidFilter('The number in the filter is out of range.');
  const expr = scalar.expr;
  const v = dialect === 'postgres' ? sql`cast(${String(raw)} as numeric)` : sql`${raw}`;
  const symbol = NUMBER_OPERATORS.get(op);
  if (!symbol) throw invalidFilter(`Numbers compare with eq, ne, gt, ge, lt and le, not ${op}.`);
  return op === 'ne' ? sql`(${expr} is null or ${expr} <> ${v})` : sql`${expr} ${sql.raw(symbol)} ${v}`;
}
