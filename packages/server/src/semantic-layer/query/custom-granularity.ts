import type { CompiledDimension } from '../../model/index.js';
import { GRANULARITIES, parseInterval, UNIT_MONTHS, UNIT_MS, type CustomGranularity, type Granularity } from './dialect.js';
import { QueryError } from './errors.js';
import { shiftWall } from './rolling.js';
import { formatWall, parseWall } from './time-zones.js';

/**
 * Custom granularities, as a time dimension defines them (`granularities: [{name: fiscal_year,
 * interval: 1 year, offset: 3 months}, {name: half_hour, interval: 30 minutes}]`): buckets of the
 * interval starting at `origin`, or at 1970-01-01 moved by `offset`, in the query's time zone.
 */

type Wall = NonNullable<ReturnType<typeof parseWall>>;

const asUtc = (w: Wall) => Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second, w.ms);

/** The granularity `name` of `dimension` (`owner` names it in errors); undefined for a built-in one. */
export function customGranularity(dimension: CompiledDimension, name: string, owner: string): CustomGranularity | undefined {
  if (GRANULARITIES.includes(name as Granularity)) return undefined;
  const spec = ((dimension.granularities ?? []) as Array<{ name: string; interval?: string; offset?: string; origin?: string }>).find((g) => g.name === name);
  if (!spec)
    throw new QueryError(
      `${owner} has no granularity "${name}": use one of ${GRANULARITIES.join(', ')}${(dimension.granularities ?? []).length > 0 ? `, ${(dimension.granularities as Array<{ name: string }>).map((g) => g.name).join(', ')}` : ''}.`,
    );
  const interval = parseInterval(spec.interval);
  if (!interval || interval.count < 1) throw new QueryError(`The granularity ${name} of ${owner} needs an interval such as "30 minutes" or "1 year".`);
  const { unit } = interval;
  let origin: Wall | undefined;
  if (spec.origin !== undefined) {
    origin = parseWall(spec.origin);
    if (!origin) throw new QueryError(`The granularity ${name} of ${owner} has an origin "${spec.origin}" that is not a date or a time.`);
  } else {
    origin = { year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0, ms: 0 };
    if (spec.offset !== undefined) {
      const offset = parseInterval(spec.offset);
      if (!offset) throw new QueryError(`The granularity ${name} of ${owner} has an offset "${spec.offset}" that is not a number of units.`);
      origin = shiftWall(origin, offset.unit, offset.count);
    }
  }
  if (UNIT_MONTHS[unit] !== undefined && (origin.day !== 1 || origin.hour !== 0 || origin.minute !== 0 || origin.second !== 0 || origin.ms !== 0)) {
    throw new QueryError(`The granularity ${name} of ${owner} counts months: its origin must be the start of a month.`);
  }
  return { name, count: interval.count, unit, origin: formatWall(origin) };
}

/** The start of the bucket of `wall` (both wall times in the query's zone). */
export function customBucket(wall: Wall, count: number, unit: Granularity, origin: Wall): Wall {
  const months = UNIT_MONTHS[unit];
  if (months !== undefined) {
    const n = count * months;
    const since = (wall.year - origin.year) * 12 + (wall.month - origin.month);
    return shiftWall(origin, 'month', Math.floor(since / n) * n);
  }
  const length = count * UNIT_MS[unit]!;
  const start = asUtc(origin) + Math.floor((asUtc(wall) - asUtc(origin)) / length) * length;
  const d = new Date(start);
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
