/**
 * What differs between the data sources' SQL: placeholders, quoting, time truncation in a time
 * zone, and case-insensitive matching. The compiler writes everything else once.
 */
export type Granularity = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'quarter' | 'year';
export const GRANULARITIES: readonly Granularity[] = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'];

/** An interval of the model language (`7 day`, `30 minutes`, `1 year`, `-1 month`): a whole number of units. */
export interface Interval {
  count: number;
  unit: Granularity;
}

const INTERVAL = /^\s*(-?\d{1,6})\s*(second|minute|hour|day|week|month|quarter|year)s?\s*$/i;

/** The interval `text` names; undefined when it is not one (the caller says why in its terms). */
export function parseInterval(text: string | undefined): Interval | undefined {
  const m = text === undefined ? null : INTERVAL.exec(text);
  return m ? { count: Number(m[1]), unit: m[2]!.toLowerCase() as Granularity } : undefined;
}

/** Units of a fixed length, in milliseconds; months, quarters and years vary and are counted in months. */
export const UNIT_MS: Partial<Record<Granularity, number>> = { second: 1_000, minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 604_800_000 };
export const UNIT_MONTHS: Partial<Record<Granularity, number>> = { month: 1, quarter: 3, year: 12 };

export interface SqlDialect {
  readonly name: 'postgres' | 'sqlite';
  /** The placeholder of the `index`-th parameter (1-based). */
  placeholder(index: number): string;
  /** The local wall time of `expr` in `timeZone`, truncated to `granularity`, as an ISO-like text (`2026-01-05T00:00:00.000`). */
  truncate(expr: string, granularity: Granularity, timeZone: string): string;
  /** `expr` as an instant comparable with `instant(param)` (the ISO instant a filter value names). */
  instant(expr: string): string;
  /** A parameter holding an ISO instant, comparable with `instant(expr)`. */
  instantParam(placeholder: string): string;
  /** Case-insensitive LIKE, with `\` escaping `%` and `_` in the pattern. */
  ilike(expr: string, pattern: string): string;
  /** Case-sensitive LIKE, with the same escapes. */
  like(expr: string, pattern: string): string;
  /** A NULL that unions with any numeric aggregate (count, sum, avg). */
  readonly numericNull: string;
  /** `a` and `b` are equal, or both NULL. */
  sameValue(a: string, b: string): string;
  /** The time `expr` moved by `count` units of wall time in `timeZone` (a multi-stage time shift); `count` and `unit` are checked by the caller. */
  shift(expr: string, count: number, unit: Granularity, timeZone: string): string;
  /** The local wall time of `expr` truncated to a custom granularity (buckets of `count` units from `origin`), as `truncate` writes it. */
  truncateCustom(expr: string, custom: CustomGranularity, timeZone: string): string;
}

/**
 * A granularity a time dimension defines (`granularities`): buckets of `count` units starting at
 * `origin` (a wall time, `YYYY-MM-DDTHH:MM:SS.mmm`), 1970-01-01 moved by the `offset` unless given.
 */
export interface CustomGranularity {
  name: string;
  count: number;
  unit: Granularity;
  origin: string;
}

export const quote = (identifier: string) => `"${identifier.replace(/"/g, '""')}"`;

export const postgresDialect: SqlDialect = {
  name: 'postgres',
  placeholder: (i) => `$${i}`,
  truncate: (expr, granularity, timeZone) =>
    `to_char(date_trunc('${granularity}', (${expr})::timestamptz AT TIME ZONE ${literalZone(timeZone)}), 'YYYY-MM-DD"T"HH24:MI:SS.MS')`,
  instant: (expr) => `(${expr})::timestamptz`,
  instantParam: (p) => `(${p})::timestamptz`,
  ilike: (expr, pattern) => `CAST(${expr} AS TEXT) ILIKE ${pattern}`,
  like: (expr, pattern) => `CAST(${expr} AS TEXT) LIKE ${pattern}`,
  numericNull: 'CAST(NULL AS NUMERIC)',
  sameValue: (a, b) => `${a} IS NOT DISTINCT FROM ${b}`,
  shift: (expr, count, unit, timeZone) =>
    `(((${expr})::timestamptz AT TIME ZONE ${literalZone(timeZone)} + interval '${checkedCount(count)} ${unit}') AT TIME ZONE ${literalZone(timeZone)})`,
  truncateCustom: (expr, custom, timeZone) => {
    const local = `((${expr})::timestamptz AT TIME ZONE ${literalZone(timeZone)})`;
    const origin = `timestamp '${checkedOrigin(custom.origin)}'`;
    const months = UNIT_MONTHS[custom.unit];
    // Months vary in length: count them from the origin (a month's start); other units are fixed, for date_bin.
    const start =
      months === undefined
        ? `date_bin(interval '${checkedCount(custom.count)} ${custom.unit}', ${local}, ${origin})`
        : `(${origin} + make_interval(months => (floor(((extract(year from ${local}) - extract(year from ${origin})) * 12 + extract(month from ${local}) - extract(month from ${origin})) / ${checkedCount(custom.count * months)}) * ${checkedCount(custom.count * months)})::int))`;
    return `to_char(${start}, 'YYYY-MM-DD"T"HH24:MI:SS.MS')`;
  },
};

/**
 * SQLite has no time zones: the runtime registers `mapi_trunc` and `mapi_instant` (sqlite-functions.ts),
 * JavaScript functions that read stored times as text or epoch numbers.
 */
export const sqliteDialect: SqlDialect = {
  name: 'sqlite',
  // Numbered, not `?`: a statement may use a parameter twice (the WHERE of each stacked group), and
  // `?` would need it bound again at each place. The data source binds them by name (sqliteParams).
  placeholder: (i) => `@p${i}`,
  truncate: (expr, granularity, timeZone) => `mapi_trunc(${expr}, '${granularity}', ${literalZone(timeZone)})`,
  instant: (expr) => `mapi_instant(${expr})`,
  instantParam: (p) => `mapi_instant(${p})`,
  ilike: (expr, pattern) => `lower(${expr}) LIKE lower(${pattern}) ESCAPE '\\'`,
  // SQLite's LIKE ignores ASCII case; mapi_like (sqlite-functions.ts) does not.
  like: (expr, pattern) => `mapi_like(${expr}, ${pattern})`,
  numericNull: 'NULL',
  sameValue: (a, b) => `${a} IS ${b}`,
  shift: (expr, count, unit, timeZone) => `mapi_shift(${expr}, ${checkedCount(count)}, '${unit}', ${literalZone(timeZone)})`,
  truncateCustom: (expr, custom, timeZone) =>
    `mapi_trunc_custom(${expr}, ${checkedCount(custom.count)}, '${custom.unit}', '${checkedOrigin(custom.origin)}', ${literalZone(timeZone)})`,
};

/** A shift's count is a whole number before it is written as a literal. */
function checkedCount(count: number): number {
  if (!Number.isSafeInteger(count)) throw new Error(`Not a whole number: ${count}`);
  return count;
}

/** An origin is a wall time of digits before it is written as a literal. */
function checkedOrigin(origin: string): string {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/.test(origin)) throw new Error(`Not a wall time: ${origin}`);
  return origin.replace('T', ' ');
}

/** A time zone is checked against the runtime's zone database before it is written as a literal. */
function literalZone(timeZone: string): string {
  if (!/^[A-Za-z0-9_+\-/]+$/.test(timeZone)) throw new Error(`Not a time zone: ${timeZone}`);
  return `'${timeZone}'`;
}

/** Parameters as SQLite's numbered placeholders (`@p1`, ...) take them: by name; booleans as 1 and 0, which SQLite stores. */
export function sqliteParams(params: unknown[]): Record<string, unknown> {
  const named: Record<string, unknown> = {};
  params.forEach((p, i) => (named[`p${i + 1}`] = typeof p === 'boolean' ? (p ? 1 : 0) : p));
  return named;
}
