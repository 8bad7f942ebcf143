import type Database from 'better-sqlite3';
import { GRANULARITIES, type Granularity } from './dialect.js';
import { shiftWall } from './rolling.js';
import { customBucket } from './custom-granularity.js';
import { formatWall, instantOf, parseWall, storedInstant, truncateWall, wallTime } from './time-zones.js';

/** A LIKE pattern (`%`, `_`, `\` escaping them) as a regular expression. */
function likeToRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) source += pattern[++i]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    else if (c === '%') source += '[\\s\\S]*';
    else if (c === '_') source += '[\\s\\S]';
    else source += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** The functions the SQLite dialect writes (dialect.ts): SQLite has no time zones, and its LIKE ignores case. */
export function registerSqliteFunctions(db: Database.Database): void {
  db.function('mapi_like', { deterministic: true }, (value: unknown, pattern: unknown) =>
    value === null || pattern === null ? null : likeToRegExp(String(pattern)).test(String(value)) ? 1 : 0,
  );
  db.function('mapi_instant', { deterministic: true }, (value: unknown) => storedInstant(value));
  // A time moved by whole units of wall time in a zone (a multi-stage time shift), as an instant (ms).
  db.function('mapi_shift', { deterministic: true }, (value: unknown, count: unknown, unit: unknown, timeZone: unknown) => {
    const ms = storedInstant(value);
    if (ms === null || typeof count !== 'number' || !GRANULARITIES.includes(unit as Granularity)) return null;
    return instantOf(shiftWall(wallTime(ms, String(timeZone)), unit as Granularity, count), String(timeZone));
  });
  // A custom granularity's bucket (dialect.ts CustomGranularity): counted in months from the origin, else in fixed lengths.
  db.function('mapi_trunc_custom', { deterministic: true }, (value: unknown, count: unknown, unit: unknown, origin: unknown, timeZone: unknown) => {
    const ms = storedInstant(value);
    const start = parseWall(String(origin));
    if (ms === null || typeof count !== 'number' || !GRANULARITIES.includes(unit as Granularity) || !start) return null;
    return formatWall(customBucket(wallTime(ms, String(timeZone)), count, unit as Granularity, start));
  });
  db.function('mapi_trunc', { deterministic: true }, (value: unknown, granularity: unknown, timeZone: unknown) => {
    const ms = storedInstant(value);
    if (ms === null || !GRANULARITIES.includes(granularity as Granularity)) return null;
    return formatWall(truncateWall(wallTime(ms, String(timeZone)), granularity as Granularity));
  });
}
