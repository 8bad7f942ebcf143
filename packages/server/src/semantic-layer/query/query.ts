import { GRANULARITIES, type Granularity } from './dialect.js';
import { QueryError } from './errors.js';
import { explicitRange, resolveRelativeRange } from './relative-dates.js';
import { isTimeZone } from './time-zones.js';

/** The 18 operators of the reference's DashboardFilterInput (6.0), which dashboards and notifications use. */
export const OPERATORS = [
  'equals',
  'not_equals',
  'greater_than',
  'greater_than_or_equal',
  'less_than',
  'less_than_or_equal',
  'contains',
  'not_contains',
  'starts_with',
  'not_starts_with',
  'ends_with',
  'not_ends_with',
  'is_null',
  'is_not_null',
  'is_empty',
  'is_not_empty',
  'between',
  'custom',
] as const;
export type DashboardOperator = (typeof OPERATORS)[number];

/**
 * Cube's filter operators (its query language and the model's access policies), each as the
 * operator the compiler applies. Where Cube's meaning is the dashboard operator's, it is that one;
 * where it differs (a date-only value of `gt` or `afterDate` is the start of its day, not the
 * end; `notInDateRange`), it has an operator of its own. `measureFilter` is refused for now.
 */
export const CUBE_OPERATORS = {
  equals: 'equals',
  notEquals: 'not_equals',
  in: 'equals',
  notIn: 'not_equals',
  contains: 'contains',
  notContains: 'not_contains',
  startsWith: 'starts_with',
  notStartsWith: 'not_starts_with',
  endsWith: 'ends_with',
  notEndsWith: 'not_ends_with',
  gt: 'gt',
  gte: 'gte',
  lt: 'lt',
  lte: 'lte',
  set: 'is_not_null',
  notSet: 'is_null',
  inDateRange: 'between',
  notInDateRange: 'not_between',
  onTheDate: 'between',
  beforeDate: 'lt',
  beforeOrOnDate: 'lte',
  afterDate: 'gt',
  afterOrOnDate: 'gte',
  measureFilter: null,
} as const satisfies Record<string, Operator | null>;
export type CubeOperator = keyof typeof CUBE_OPERATORS;
const isCubeOperator = (op: unknown): op is CubeOperator => typeof op === 'string' && Object.prototype.hasOwnProperty.call(CUBE_OPERATORS, op);

/** What the compiler applies: the dashboard operators, and Cube's that mean something else. */
export type Operator = DashboardOperator | 'gt' | 'gte' | 'lt' | 'lte' | 'not_between';

export interface MemberFilter {
  member: string;
  operator: Operator;
  value?: unknown;
  caseSensitive?: boolean;
  startInclusive?: boolean;
  endInclusive?: boolean;
  /** The operator as the query spelled it (Cube's or the dashboards'), echoed in the normalised query. */
  spelled?: string;
}
export type Filter = MemberFilter | { and: Filter[] } | { or: Filter[] };

export interface TimeDimension {
  dimension: string;
  /** A built-in granularity, or the name of one the dimension defines (`granularities`, checked by the compiler). */
  granularity?: string;
  dateRange?: [string, string];
  /** Set by the compiler only (a multi-stage time shift): group by the time moved by this much. */
  shift?: { count: number; unit: Granularity };
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
  /** Also count the rows the query has without its limit and offset (Cube's `total`). */
  total: boolean;
  /** Cube's `renewQuery`: read past the result cache. */
  renewQuery: boolean;
  /** Cube's `ungrouped`: the rows themselves, no aggregation (compile.ts). */
  ungrouped: boolean;
  /** No `order` was given: Cube's default order applies (`order: []` asks for none). */
  defaultOrder: boolean;
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
  for (const key of Object.keys(input))
    if (!allowed.includes(key)) throw new QueryError(`${where} has an unknown field ${JSON.stringify(key)}; it takes ${allowed.join(', ')}.`);
}

/**
 * Checks the shape of a query and fills in what it leaves out. Members are resolved by the
 * compiler; relative date ranges are resolved here, at `now`, in the query's time zone.
 */
export function normaliseQuery(input: unknown, limits: QueryLimits, now = Date.now()): Query {
  if (!isObject(input)) throw new QueryError('The query must be a JSON object.');
  known(
    input,
    ['measures', 'dimensions', 'timeDimensions', 'filters', 'segments', 'order', 'limit', 'offset', 'timezone', 'total', 'renewQuery', 'ungrouped'],
    'The query',
  );
  const timezone = input.timezone === undefined || input.timezone === null ? 'UTC' : input.timezone;
  if (typeof timezone !== 'string' || !isTimeZone(timezone))
    throw new QueryError(`timezone ${JSON.stringify(timezone)} is not an IANA time zone such as "Europe/Berlin".`);
  const limit = input.limit === undefined || input.limit === null ? limits.defaultLimit : input.limit;
  // 0 is allowed, as in Cube: no rows.
  if (!Number.isInteger(limit) || (limit as number) < 0 || (limit as number) > limits.maxLimit)
    throw new QueryError(`limit must be an integer from 0 to ${limits.maxLimit}.`);
  const offset = input.offset === undefined || input.offset === null ? 0 : input.offset;
  if (!Number.isInteger(offset) || (offset as number) < 0 || (offset as number) > 10_000_000)
    throw new QueryError('offset must be an integer from 0 to 10000000.');
  let count = 0;
  // An empty `and`/`or` group says nothing and is dropped (as Cube answers it); null stands for one.
  const filter = (value: unknown, depth: number, at: string): Filter | null => {
    if (!isObject(value)) throw new QueryError(`${at} must be an object.`);
    if (++count > MAX_FILTERS) throw new QueryError(`A query may hold at most ${MAX_FILTERS} filters.`);
    if (depth > MAX_FILTER_DEPTH) throw new QueryError(`Filters may nest at most ${MAX_FILTER_DEPTH} groups deep.`);
    for (const group of ['and', 'or'] as const) {
      if (group in value) {
        known(value, [group], at);
        const list = value[group];
        if (!Array.isArray(list)) throw new QueryError(`${at}.${group} must be a list of filters.`);
        const kept = list.map((f, i) => filter(f, depth + 1, `${at}.${group}[${i}]`)).filter((f): f is Filter => f !== null);
        return kept.length === 0 ? null : ({ [group]: kept } as Filter);
      }
    }
    known(value, ['member', 'dimension', 'operator', 'value', 'values', 'caseSensitive', 'startInclusive', 'endInclusive'], at);
    const member = value.member ?? value.dimension;
    if (typeof member !== 'string' || !/^.+\..+$/.test(member)) throw new QueryError(`${at}.member must be a member name such as "orders.status".`);
    const spelled = value.operator ?? 'equals';
    const cube = isCubeOperator(spelled) && (value.values !== undefined || !OPERATORS.includes(spelled as DashboardOperator));
    if (!cube && !OPERATORS.includes(spelled as DashboardOperator)) {
      throw new QueryError(
        `${at}.operator ${JSON.stringify(spelled)} is not one of ${Object.keys(CUBE_OPERATORS).join(', ')} (or the dashboard spellings ${OPERATORS.join(', ')}).`,
      );
    }
    const out: MemberFilter = cube
      ? cubeFilter(member, spelled as CubeOperator, value, at, now, timezone)
      : { member, operator: spelled as Operator, spelled: spelled as string };
    if (!cube) {
      const v = value.value !== undefined ? value.value : value.values;
      if (v !== undefined && v !== null) out.value = v;
    }
    for (const flag of ['caseSensitive', 'startInclusive', 'endInclusive'] as const)
      if (value[flag] !== undefined && value[flag] !== null) out[flag] = value[flag] === true;
    return out;
  };
  const filters = input.filters === undefined || input.filters === null ? [] : input.filters;
  if (!Array.isArray(filters)) throw new QueryError('filters must be a list.');
  const timeDimensions = input.timeDimensions === undefined || input.timeDimensions === null ? [] : input.timeDimensions;
  if (!Array.isArray(timeDimensions) || timeDimensions.length > 20) throw new QueryError('timeDimensions must be a list of at most 20.');
  for (const flag of ['total', 'renewQuery', 'ungrouped'] as const)
    if (input[flag] !== undefined && input[flag] !== null && typeof input[flag] !== 'boolean') throw new QueryError(`${flag} must be true or false.`);
  // `cube.created_at.month` among the dimensions is that time dimension by month (Cube's shorthand).
  const dimensions: string[] = [];
  const byGranularity: TimeDimension[] = [];
  for (const name of names(input.dimensions, 'dimensions')) {
    const parts = name.split('.');
    if (parts.length === 3 && GRANULARITIES.includes(parts[2] as Granularity))
      byGranularity.push({ dimension: `${parts[0]}.${parts[1]}`, granularity: parts[2] as Granularity });
    else dimensions.push(name);
  }
  return {
    measures: names(input.measures, 'measures'),
    dimensions,
    segments: names(input.segments, 'segments'),
    timeDimensions: [...timeDimensions.map((td, i) => timeDimension(td, `timeDimensions[${i}]`, now, timezone)), ...byGranularity],
    filters: filters.map((f, i) => filter(f, 0, `filters[${i}]`)).filter((f): f is Filter => f !== null),
    order: order(input.order),
    limit: limit as number,
    offset: offset as number,
    timezone,
    total: input.total === true,
    renewQuery: input.renewQuery === true,
    ungrouped: input.ungrouped === true,
    defaultOrder: input.order === undefined || input.order === null,
  };
}

const DATE_RANGE_OPERATORS = new Set<CubeOperator>(['inDateRange', 'notInDateRange', 'onTheDate']);
/** Of a relative phrase, single-date operators take the range's start, or its end (Cube's reading). */
const RANGE_START: Partial<Record<CubeOperator, boolean>> = { beforeDate: true, afterOrOnDate: true, beforeOrOnDate: false, afterDate: false };

/**
 * A filter in Cube's spelling: `values` a list (left out only by `set` and `notSet`), relative
 * date phrases resolved as Cube resolves them in date operators.
 */
function cubeFilter(member: string, spelled: CubeOperator, input: Record<string, unknown>, at: string, now: number, timezone: string): MemberFilter {
  const operator = CUBE_OPERATORS[spelled];
  if (operator === null) throw new QueryError(`${at}.operator "${spelled}" is not supported yet: filter on the measure's own filters by querying it.`);
  const raw = input.values !== undefined ? input.values : input.value;
  let values: unknown[] = raw === undefined || raw === null ? [] : Array.isArray(raw) ? raw : [raw];
  if (values.some((v) => v !== null && typeof v === 'object')) throw new QueryError(`${at}.values must be a list of strings, numbers, booleans or null.`);
  if (values.length === 0 && spelled !== 'set' && spelled !== 'notSet')
    throw new QueryError(`${at}.values must list at least one value for operator "${spelled}".`);
  const relative = (v: unknown) => {
    const range = typeof v === 'string' ? resolveRelativeRange(v, now, timezone) : undefined;
    return range && explicitRange(range);
  };
  if (DATE_RANGE_OPERATORS.has(spelled)) {
    const range = values.length === 1 ? (relative(values[0]) ?? [values[0], values[0]]) : values;
    if (range.length !== 2 || range.some((v) => typeof v !== 'string'))
      throw new QueryError(`${at}.values must be [from, to] dates or one relative range such as "last 7 days" for operator "${spelled}".`);
    values = range;
  } else if (RANGE_START[spelled] !== undefined) {
    const range = relative(values[0]);
    if (range) values = [RANGE_START[spelled] ? range[0] : range[1]];
  }
  return { member, operator, value: values, spelled };
}

function timeDimension(value: unknown, at: string, now: number, timezone: string): TimeDimension {
  if (!isObject(value)) throw new QueryError(`${at} must be an object.`);
  known(value, ['dimension', 'granularity', 'dateRange', 'compareDateRange'], at);
  if (value.compareDateRange !== undefined) throw new QueryError(`${at}.compareDateRange is not supported.`);
  if (typeof value.dimension !== 'string') throw new QueryError(`${at}.dimension must be a time dimension name.`);
  const td: TimeDimension = { dimension: value.dimension };
  if (value.granularity !== undefined && value.granularity !== null) {
    if (typeof value.granularity !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(value.granularity)) {
      throw new QueryError(`${at}.granularity must be one of ${GRANULARITIES.join(', ')}, or a granularity the dimension defines.`);
    }
    td.granularity = value.granularity;
  }
  if (value.dateRange !== undefined && value.dateRange !== null) {
    // One date (a string that is not a phrase, or a list of one) is that whole day, as in Cube.
    const given = value.dateRange;
    const range =
      typeof given === 'string'
        ? (resolveRelativeRange(given, now, timezone) ?? [given, given])
        : Array.isArray(given) && given.length === 1
          ? [given[0], given[0]]
          : given;
    if (!Array.isArray(range) || range.length !== 2 || range.some((r) => typeof r !== 'string'))
      throw new QueryError(
        `${at}.dateRange must be ["start", "end"] (dates or date-times, in the query's time zone) or a relative range such as "last 7 days".`,
      );
    td.dateRange = explicitRange(range as [string, string]);
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
