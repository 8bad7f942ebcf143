import type { Granularity } from './dialect.js';

/** Zones the zone database was found to know. */
const known = new Set<string>();

/** Whether the runtime's zone database knows `timeZone` (an IANA name such as `Europe/Berlin`, or `UTC`). */
export function isTimeZone(timeZone: string): boolean {
  // Every query names a zone, and making a formatter costs more than compiling a small query: known zones are remembered.
  if (known.has(timeZone)) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
  } catch {
    return false;
  }
  // The zone database has a few hundred names; the bound only matters for invented ones that happen to be valid aliases.
  if (known.size < 2_000) known.add(timeZone);
  return true;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  ms: number;
}

/** The wall-clock time at instant `ms` in `timeZone`, from the zone database. */
function zoneWallTime(ms: number, timeZone: string): Wall {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(ms))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return {
    year: parts.year!,
    month: parts.month!,
    day: parts.day!,
    hour: parts.hour! % 24,
    minute: parts.minute!,
    second: parts.second!,
    ms: ((ms % 1000) + 1000) % 1000,
  };
}

const wallAsUtc = (w: Wall) => Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second, w.ms);

const DAY = 86_400_000;
const DAY_OFFSETS_LIMIT = 100_000;
/** Per zone and UTC day: the zone's offset when it is the same all day, null on a day its clocks change. */
const dayOffsets = new Map<string, number | null>();

/**
 * The wall-clock time at instant `ms` in `timeZone`. Asking the zone database costs microseconds
 * and a query asks once per row, so the offset of each UTC day is asked for once (at its first and
 * last second): on a day without a change, every instant's wall time is the instant plus it.
 */
export function wallTime(ms: number, timeZone: string): Wall {
  const day = Math.floor(ms / DAY);
  const key = `${timeZone}|${day}`;
  let offset = dayOffsets.get(key);
  if (offset === undefined) {
    const first = day * DAY;
    const last = first + DAY - 1000;
    const a = wallAsUtc(zoneWallTime(first, timeZone)) - first;
    const b = wallAsUtc(zoneWallTime(last, timeZone)) - last;
    offset = a === b ? a : null;
    if (dayOffsets.size >= DAY_OFFSETS_LIMIT) dayOffsets.clear();
    dayOffsets.set(key, offset);
  }
  if (offset === null) return zoneWallTime(ms, timeZone);
  const d = new Date(ms + offset);
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

/** The zone database's answer, for tests that check the fast path against it. */
export const wallTimeFromZoneDatabase = zoneWallTime;

/**
 * The instant at which `timeZone`'s clocks show `wall`. A wall time skipped by a daylight-saving
 * change maps to the instant just after the gap; a repeated one to its first occurrence.
 */
export function instantOf(wall: Wall, timeZone: string): number {
  const target = wallAsUtc(wall);
  let guess = target;
  for (let i = 0; i < 3; i++) {
    const offset = wallAsUtc(wallTime(guess, timeZone)) - guess;
    const next = target - offset;
    if (next === guess) break;
    guess = next;
  }
  return guess;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

export function formatWall(w: Wall): string {
  return `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}.${pad(w.ms, 3)}`;
}

/** `wall` truncated to the start of its `granularity` (weeks start on Monday, as ISO 8601 has them). */
export function truncateWall(w: Wall, granularity: Granularity): Wall {
  const t = { ...w, ms: 0 };
  switch (granularity) {
    case 'year':
      return { ...t, month: 1, day: 1, hour: 0, minute: 0, second: 0 };
    case 'quarter':
      return { ...t, month: Math.floor((w.month - 1) / 3) * 3 + 1, day: 1, hour: 0, minute: 0, second: 0 };
    case 'month':
      return { ...t, day: 1, hour: 0, minute: 0, second: 0 };
    case 'week': {
      const date = new Date(Date.UTC(w.year, w.month - 1, w.day));
      date.setUTCDate(date.getUTCDate() - ((date.getUTCDay() + 6) % 7));
      return { ...t, year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate(), hour: 0, minute: 0, second: 0 };
    }
    case 'day':
      return { ...t, hour: 0, minute: 0, second: 0 };
    case 'hour':
      return { ...t, minute: 0, second: 0 };
    case 'minute':
      return { ...t, second: 0 };
    case 'second':
      return t;
  }
}

const LOCAL = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?$/;

/** A wall time as a filter value writes it (`2026-01-31`, `2026-01-31T10:00:00`); undefined when it is none. */
export function parseWall(text: string): Wall | undefined {
  const m = LOCAL.exec(text.trim());
  if (!m) return undefined;
  const wall = {
    year: +m[1]!,
    month: +m[2]!,
    day: +m[3]!,
    hour: +(m[4] ?? 0),
    minute: +(m[5] ?? 0),
    second: +(m[6] ?? 0),
    ms: m[7] ? Math.floor(+`0.${m[7]}` * 1000) : 0,
  };
  const check = new Date(wallAsUtc(wall));
  if (check.getUTCMonth() + 1 !== wall.month || check.getUTCDate() !== wall.day || wall.hour > 23 || wall.minute > 59 || wall.second > 59) return undefined;
  return wall;
}

/** Whether the text gives a time of day (`2026-01-31` does not: it means the whole day). */
export const hasTime = (text: string) => /[T ]\d{2}:/.test(text.trim());

/**
 * A stored time as an instant (ms since the epoch): ISO text with or without a zone (none means
 * UTC, as data sources store times), `YYYY-MM-DD HH:MM:SS`, or a number of seconds (milliseconds
 * when it is too large to be seconds). Null for anything else.
 */
export function storedInstant(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'bigint') {
    const n = Number(value);
    return Math.abs(n) < 1e11 ? n * 1000 : n;
  }
  if (value instanceof Date) return value.getTime();
  const text = String(value).trim();
  const local = parseWall(text);
  if (local) return wallAsUtc(local);
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}
