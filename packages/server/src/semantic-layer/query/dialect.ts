/**
 * What differs between the data sources' SQL: placeholders, quoting, time truncation in a time
 * zone, and case-insensitive matching. The compiler writes everything else once.
 */
export type Granularity = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'quarter' | 'year';
export const GRANULARITIES: readonly Granularity[] = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'];

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
  shift: (expr, count, unit, timeZone) => `(((${expr})::timestamptz AT TIME ZONE ${literalZone(timeZone)} + interval '${checkedCount(count)} ${unit}') AT TIME ZONE ${literalZone(timeZone)})`,
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
};

/** A shift's count is a whole number before it is written as a literal. */
function checkedCount(count: number): number {
  if (!Number.isSafeInteger(count)) throw new Error(`Not a whole number: ${count}`);
  return count;
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
