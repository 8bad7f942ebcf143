import { parseInterval, UNIT_MONTHS, UNIT_MS, type Granularity, type Interval } from './dialect.js';
import { QueryError } from './errors.js';
import { formatWall, instantOf, parseWall, truncateWall } from './time-zones.js';

/**
 * Rolling-window measures as Cube computes them: the query's date range cut into buckets of its
 * granularity (a time series, made here in the query's time zone), and for each bucket the
 * measure aggregated over the rows whose time falls in the bucket's window:
 *
 * - `trailing` (default: the bucket itself) reaches back from the bucket's end (`offset: end`, the
 *   default) or its start (`offset: start`); `unbounded` reaches back to the first row;
 * - `leading` reaches forward from the bucket's end (or start); `unbounded` to the last row.
 *
 * With the default offset a window is `time > end - trailing AND time <= end + leading`; with
 * `offset: start`, `time >= start - trailing AND time < start + leading` (Cube's
 * `rollingWindowDateJoinCondition`). Without a granularity the date range is one bucket, from its
 * start to its end.
 */

export interface RollingWindow {
  /** `fixed` (trailing/leading), or period to date: `to_date` with a `granularity`, or `year_to_date`, `quarter_to_date`, `month_to_date`. */
  type?: string;
  trailing?: string;
  leading?: string;
  offset?: 'start' | 'end';
  granularity?: string;
}

const TO_DATE: Record<string, Granularity> = { year_to_date: 'year', quarter_to_date: 'quarter', month_to_date: 'month' };
const GRANULARITY_NAMES: readonly Granularity[] = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'];

type Wall = NonNullable<ReturnType<typeof parseWall>>;
type Unit = Granularity;

/** The most buckets a query's time series may have: each is three bound values. */
export const MAX_BUCKETS = 5_000;

function interval(text: string | undefined, measure: string): Interval | 'unbounded' | undefined {
  if (text === undefined) return undefined;
  if (text.trim().toLowerCase() === 'unbounded') return 'unbounded';
  const parsed = parseInterval(text);
  if (!parsed || parsed.count < 0)
    throw new QueryError(`The rolling window of ${measure} has an interval "${text}" the engine does not read: write it as "7 day", "1 month" or "unbounded".`);
  return parsed;
}

/** A wall time moved by `n` units in calendar terms (a month from 31 January is the last day of February). */
export function shiftWall(w: Wall, unit: Unit, n: number): Wall {
  const perUnit = UNIT_MONTHS[unit];
  if (perUnit !== undefined) {
    const months = n * perUnit;
    const first = new Date(Date.UTC(w.year, w.month - 1 + months, 1));
    const last = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + 1, 0)).getUTCDate();
    return { ...w, year: first.getUTCFullYear(), month: first.getUTCMonth() + 1, day: Math.min(w.day, last) };
  }
  const d = new Date(Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second, w.ms) + n * UNIT_MS[unit]!);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    ms: d.getUTCMilliseconds(),
  };
}

/** A wall time one millisecond earlier. */
const justBefore = (w: Wall): Wall => {
  const d = new Date(Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second, w.ms) - 1);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    ms: d.getUTCMilliseconds(),
  };
};

const before = (a: Wall, b: Wall) => formatWall(a) <= formatWall(b);

/** One bucket of the series and its window: the label rows carry, and the bounds of the rows it aggregates (instants, ISO). */
export interface Bucket {
  /** The bucket's start as the query's truncated time reads (`2026-01-05T00:00:00.000`); null without a granularity. */
  label: string | null;
  lower?: { at: string; inclusive: boolean };
  upper?: { at: string; inclusive: boolean };
}

/**
 * The buckets of `range` at `granularity` (none: the range is one bucket) in `timeZone`, each with
 * the window `window` gives it.
 */
export function rollingBuckets(
  range: [string, string],
  granularity: Granularity | undefined,
  timeZone: string,
  window: RollingWindow,
  measure: string,
): Bucket[] {
  const from = parseWall(range[0]);
  const to = parseWall(range[1]);
  if (!from || !to) throw new QueryError(`The date range of ${measure}'s rolling window is not a pair of dates or times.`);
  const trailing = interval(window.trailing, measure);
  const leading = interval(window.leading, measure);
  const offset = window.offset ?? 'end';
  const iso = (w: Wall) => new Date(instantOf(w, timeZone)).toISOString();
  // Period to date: from the start of the period (year, quarter, ...) the bucket's end is in, to that end.
  const toDate = window.type === 'to_date' ? (window.granularity as Granularity | undefined) : window.type ? TO_DATE[window.type] : undefined;
  if (window.type === 'to_date' && (toDate === undefined || !GRANULARITY_NAMES.includes(toDate)))
    throw new QueryError(`The rolling window of ${measure} is to_date: give it a granularity such as year, quarter or month.`);
  const bucket = (start: Wall, end: Wall, label: string | null, wholeRange: boolean): Bucket => {
    const out: Bucket = { label };
    if (toDate) return { label, lower: { at: iso(truncateWall(end, toDate)), inclusive: true }, upper: { at: iso(end), inclusive: true } };
    if (trailing !== 'unbounded') {
      const base = wholeRange || offset === 'start' ? start : end;
      out.lower = { at: iso(trailing ? shiftWall(base, trailing.unit, -trailing.count) : base), inclusive: offset === 'start' };
    }
    if (leading !== 'unbounded') {
      const base = wholeRange || offset === 'end' ? end : start;
      out.upper = { at: iso(leading ? shiftWall(base, leading.unit, leading.count) : base), inclusive: offset === 'end' };
    }
    return out;
  };
  if (!granularity) return [bucket(from, to, null, true)];
  const buckets: Bucket[] = [];
  for (let start = truncateWall(from, granularity); before(start, to); start = shiftWall(start, granularity, 1)) {
    if (buckets.length >= MAX_BUCKETS)
      throw new QueryError(
        `The time series of ${measure} would have more than ${MAX_BUCKETS} ${granularity}s: narrow the date range or choose a coarser granularity.`,
      );
    buckets.push(bucket(start, justBefore(shiftWall(start, granularity, 1)), formatWall(start), false));
  }
  return buckets;
}
