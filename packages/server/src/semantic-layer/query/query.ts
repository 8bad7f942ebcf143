import { GRANULARITIES, type Granularity } from './dialect.js';
import { QueryError } from './errors.js';
import { resolveRelativeRange } from './relative-dates.js';
import { isTimeZone } from './time-zones.js';

/** The 18 operators of the reference's DashboardFilterInput (6.0). */
export const OPERATORS = [
  'equals', 'not_equals', 'greater_than', 'greater_than_or_equal', 'less_than', 'less_than_or_equal',
  'contains', 'not_contains', 'starts_with', 'not_starts_with', 'ends_with', 'not_ends_with',
  'is_null', 'is_not_null', 'is_empty', 'is_not_empty', 'between', 'custom',
] as const;
export type Operator = (typeof OPERATORS)[number];

export interface MemberFilter {
  member: string;
  operator: Operator;
  value?: unknown;
  caseSensitive?: boolean;
  startInclusive?: boolean;
  endInclusive?: boolean;
}
export type Filter = MemberFilter | { and: Filter[] } | { or: Filter[] };

export interface TimeDimension {
  dimension: string;
  granularity?: Granularity;
  dateRange?: [string, string];
}

/** A query as `/v1/load` takes it, normalised: every list present, the order explicit. */
export interface Query {
  measures: string[];
  dimensions: string[];
  timeDimensions: TimeDimension[];
  filters: Filter[];
  segments: string[];
  order: Array<[string, 'asc' | 'desc']>;
  limit: number;
  offset: number;
  timezone: string;
}

export interface QueryLimits {
  /** Rows a query returns when it names no limit. */
  defaultLimit: number;
  /** The most rows a query may ask for. */
  maxLimit: number;
}

const MAX_MEMBERS = 200;
const MAX_FILTER_DEPTH = 10;
const MAX_FILTERS = 500;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function names(value: unknown, field: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw new QueryError(`${field} must be a list of member names.`);
  if (value.length > MAX_MEMBERS) throw new QueryError(`${field} may name at most ${MAX_MEMBERS} members.`);
  return value as string[];
}

function known(input: Record<string, unknown>, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(input)) if (!allowed.includes(key)) throw new QueryError(`${where} has an unknown field ${JSON.stringify(key)}; it takes ${allowed.join(', ')}.`);
}

/**
 * Checks the shape of a query and fills in what it leaves out. Members are resolved by the
 * compiler; relative date ranges are resolved here, at `now`, in the query's time zone.
 */
export function normaliseQuery(input: unknown, limits: QueryLimits, now = Date.now()): Query {
  if (!isObject(input)) throw new QueryError('The query must be a JSON object.');
  known(input, ['measures', 'dimensions', 'timeDimensions', 'filters', 'segments', 'order', 'limit', 'offset', 'timezone', 'total', 'renewQuery', 'ungrouped'], 'The query');
  if (input.ungrouped === true) throw new QueryError('ungrouped queries are not supported: every query aggregates.');
  const timezone = input.timezone === undefined || input.timezone === null ? 'UTC' : input.timezone;
  if (typeof timezone !== 'string' || !isTimeZone(timezone)) throw new QueryError(`timezone ${JSON.stringify(timezone)} is not an IANA time zone such as "Europe/Berlin".`);
  const limit = input.limit === undefined || input.limit === null ? limits.defaultLimit : input.limit;
  if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > limits.maxLimit) throw new QueryError(`limit must be an integer from 1 to ${limits.maxLimit}.`);
  const offset = input.offset === undefined || input.offset === null ? 0 : input.offset;
  if (!Number.isInteger(offset) || (offset as number) < 0 || (offset as number) > 10_000_000) throw new QueryError('offset must be an integer from 0 to 10000000.');
  let count = 0;
  const filter = (value: unknown, depth: number, at: string): Filter => {
    if (!isObject(value)) throw new QueryError(`${at} must be an object.`);
    if (++count > MAX_FILTERS) throw new QueryError(`A query may hold at most ${MAX_FILTERS} filters.`);
    if (depth > MAX_FILTER_DEPTH) throw new QueryError(`Filters may nest at most ${MAX_FILTER_DEPTH} groups deep.`);
    for (const group of ['and', 'or'] as const) {
      if (group in value) {
        known(value, [group], at);
        const list = value[group];
        if (!Array.isArray(list) || list.length === 0) throw new QueryError(`${at}.${group} must be a non-empty list of filters.`);
        return { [group]: list.map((f, i) => filter(f, depth + 1, `${at}.${group}[${i}]`)) } as Filter;
      }
    }
    known(value, ['member', 'dimension', 'operator', 'value', 'values', 'caseSensitive', 'startInclusive', 'endInclusive'], at);
    const member = value.member ?? value.dimension;
    if (typeof member !== 'string' || !/^.+\..+$/.test(member)) throw new QueryError(`${at}.member must be a member name such as "orders.status".`);
    const operator = value.operator ?? 'equals';
    if (!OPERATORS.includes(operator as Operator)) throw new QueryError(`${at}.operator ${JSON.stringify(operator)} is not one of ${OPERATORS.join(', ')}.`);
    const out: MemberFilter = { member, operator: operator as Operator };
    const v = value.value !== undefined ? value.value : value.values;
    if (v !== undefined && v !== null) out.value = v;
    for (const flag of ['caseSensitive', 'startInclusive', 'endInclusive'] as const) if (value[flag] !== undefined && value[flag] !== null) out[flag] = value[flag] === true;
    return out;
  };
  const filters = input.filters === undefined || input.filters === null ? [] : input.filters;
  if (!Array.isArray(filters)) throw new QueryError('filters must be a list.');
  const timeDimensions = input.timeDimensions === undefined || input.timeDimensions === null ? [] : input.timeDimensions;
  if (!Array.isArray(timeDimensions) || timeDimensions.length > 20) throw new QueryError('timeDimensions must be a list of at most 20.');
  return {
    measures: names(input.measures, 'measures'),
    dimensions: names(input.dimensions, 'dimensions'),
    segments: names(input.segments, 'segments'),
    timeDimensions: timeDimensions.map((td, i) => timeDimension(td, `timeDimensions[${i}]`, now, timezone)),
    filters: filters.map((f, i) => filter(f, 0, `filters[${i}]`)),
    order: order(input.order),
    limit: limit as number,
    offset: offset as number,
    timezone,
  };
}

function timeDimension(value: unknown, at: string, now: number, timezone: string): TimeDimension {
  if (!isObject(value)) throw new QueryError(`${at} must be an object.`);
  known(value, ['dimension', 'granularity', 'dateRange', 'compareDateRange'], at);
  if (value.compareDateRange !== undefined) throw new QueryError(`${at}.compareDateRange is not supported.`);
  if (typeof value.dimension !== 'string') throw new QueryError(`${at}.dimension must be a time dimension name.`);
  const td: TimeDimension = { dimension: value.dimension };
  if (value.granularity !== undefined && value.granularity !== null) {
    if (!GRANULARITIES.includes(value.granularity as Granularity)) throw new QueryError(`${at}.granularity must be one of ${GRANULARITIES.join(', ')}.`);
    td.granularity = value.granularity as Granularity;
  }
  if (value.dateRange !== undefined && value.dateRange !== null) {
    const range = typeof value.dateRange === 'string' ? (resolveRelativeRange(value.dateRange, now, timezone) ?? [value.dateRange, value.dateRange]) : value.dateRange;
    if (!Array.isArray(range) || range.length !== 2 || range.some((r) => typeof r !== 'string')) throw new QueryError(`${at}.dateRange must be ["start", "end"] (dates or date-times, in the query's time zone) or a relative range such as "last 7 days".`);
    td.dateRange = range as [string, string];
  }
  return td;
}

function order(value: unknown): Array<[string, 'asc' | 'desc']> {
  if (value === undefined || value === null) return [];
  const entries = Array.isArray(value) ? value : isObject(value) ? Object.entries(value) : null;
  if (!entries || entries.length > MAX_MEMBERS) throw new QueryError('order must be {"member": "asc" | "desc"} or [["member", "asc" | "desc"]].');
  return entries.map((entry) => {
    if (!Array.isArray(entry) || entry.length !== 2 || typeof entry[0] !== 'string' || (entry[1] !== 'asc' && entry[1] !== 'desc')) {
      throw new QueryError('order must be {"member": "asc" | "desc"} or [["member", "asc" | "desc"]].');
    }
    return [entry[0], entry[1]] as [string, 'asc' | 'desc'];
  });
}
