import { QueryError } from './errors.js';
import { truncateWall, wallTime } from './time-zones.js';

/**
 * Relative date ranges (`"last 7 days"`, `"this month"`, `"from 3 months ago to now"`), resolved
 * to absolute dates in the query's time zone at the moment the query is normalised. The resolved
 * range replaces the phrase in the normalised query, so the answer says which days it covered and
 * the result cache never serves yesterday's "today".
 *
 * The phrases and what they cover (whole calendar units, weeks starting on Monday):
 * - `today`, `yesterday`, `tomorrow`;
 * - `this|last|next day|week|month|quarter|year`: the current, previous or following unit;
 * - `last N days|weeks|months|quarters|years`: the N whole units before the current one (today
 *   not included, as a report of "the last 7 days" is usually read on complete days);
 * - `next N ...`: the N whole units after the current one;
 * - `from X to Y`, each `now`, `today`, `yesterday`, `tomorrow`, `N units ago`, `N units from now` or a
 *   date: whole days, from the start of X's day to the end of Y's (Cube's reading);
 * - `week|month|quarter|year to date`: from the start of the current unit up to and including now.
 */

type Unit = 'day' | 'week' | 'month' | 'quarter' | 'year';
const UNITS: readonly Unit[] = ['day', 'week', 'month', 'quarter', 'year'];
const MAX_COUNT = 10_000;

interface Day {
  year: number;
  month: number;
  day: number;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const dateText = (d: Day) => `${pad(d.year, 4)}-${pad(d.month)}-${pad(d.day)}`;

/** `d` moved by `n` calendar units. */
function shift(d: Day, unit: Unit, n: number): Day {
  const date = new Date(Date.UTC(d.year, d.month - 1, d.day));
  if (unit === 'day') date.setUTCDate(date.getUTCDate() + n);
  else if (unit === 'week') date.setUTCDate(date.getUTCDate() + 7 * n);
  else {
    // A day past the end of the month it lands in is that month's last day (31 March less a month is 28 February).
    date.setUTCDate(1);
    date.setUTCMonth(date.getUTCMonth() + n * (unit === 'month' ? 1 : unit === 'quarter' ? 3 : 12));
    const last = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
    date.setUTCDate(Math.min(d.day, last));
  }
  return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
}

/** The first day of the unit holding `d`. */
function startOf(d: Day, unit: Unit): Day {
  const w = truncateWall({ ...d, hour: 0, minute: 0, second: 0, ms: 0 }, unit);
  return { year: w.year, month: w.month, day: w.day };
}

/** The range of `count` whole units starting `from` units after the current one (negative: before). */
function units(today: Day, unit: Unit, from: number, count: number): [string, string] {
  const start = shift(startOf(today, unit), unit, from);
  const end = shift(shift(start, unit, count), 'day', -1);
  return [dateText(start), dateText(end)];
}

function unitOf(word: string): Unit | undefined {
  const singular = word.endsWith('s') ? word.slice(0, -1) : word;
  return UNITS.includes(singular as Unit) ? (singular as Unit) : undefined;
}

function count(text: string, phrase: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_COUNT) throw new QueryError(`dateRange "${phrase}" needs a whole number from 1 to ${MAX_COUNT}.`);
  return n;
}

/** The day a term of `from ... to ...` names: `now`, `today`, `yesterday`, `tomorrow`, `N units ago`, `N units from now`, or a date. */
function dayOf(term: string, today: Day, phrase: string): Day | undefined {
  if (term === 'now' || term === 'today') return today;
  if (term === 'yesterday') return shift(today, 'day', -1);
  if (term === 'tomorrow') return shift(today, 'day', 1);
  const m = /^(\d+) ([a-z]+) (ago|from now)$/.exec(term);
  if (m && unitOf(m[2]!)) return shift(today, unitOf(m[2]!)!, (m[3] === 'ago' ? -1 : 1) * count(m[1]!, phrase));
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(term);
  return date ? { year: Number(date[1]), month: Number(date[2]), day: Number(date[3]) } : undefined;
}

/**
 * The absolute `[start, end]` a relative phrase names at `now` in `timezone`: dates for whole
 * units, the current wall time (to the millisecond) as the end of a "to now"/"to date" range.
 * Undefined when `phrase` is not a relative range (it may then be a date); a phrase that starts
 * like one but is malformed is a 400 naming it.
 */
export function resolveRelativeRange(phrase: string, now: number, timezone: string): [string, string] | undefined {
  const text = phrase.trim().toLowerCase().replace(/\s+/g, ' ');
  if (!/^[a-z]/.test(text)) return undefined;
  const wall = wallTime(now, timezone);
  const today: Day = { year: wall.year, month: wall.month, day: wall.day };
  const nowText = `${dateText(today)}T${pad(wall.hour)}:${pad(wall.minute)}:${pad(wall.second)}.${pad(wall.ms, 3)}`;
  if (text === 'today') return units(today, 'day', 0, 1);
  if (text === 'yesterday') return units(today, 'day', -1, 1);
  if (text === 'tomorrow') return units(today, 'day', 1, 1);
  let m = /^(this|last|next) ([a-z]+)$/.exec(text);
  if (m && unitOf(m[2]!) && !m[2]!.endsWith('s')) return units(today, unitOf(m[2]!)!, m[1] === 'this' ? 0 : m[1] === 'last' ? -1 : 1, 1);
  m = /^(last|next) (\d+) ([a-z]+)$/.exec(text);
  if (m && unitOf(m[3]!)) {
    const n = count(m[2]!, phrase);
    return units(today, unitOf(m[3]!)!, m[1] === 'last' ? -n : 1, n);
  }
  m = /^from (.+) to (.+)$/.exec(text);
  if (m) {
    // As Cube reads it: whole days, from the start of the first day to the end of the second.
    const from = dayOf(m[1]!, today, phrase);
    const to = dayOf(m[2]!, today, phrase);
    if (from && to) return [dateText(from), dateText(to)];
  }
  m = /^([a-z]+) to date$/.exec(text);
  if (m && unitOf(m[1]!) && m[1] !== 'day') return [dateText(startOf(today, unitOf(m[1]!)!)), nowText];
  throw new QueryError(
    `dateRange "${phrase}" is not a range this engine reads: give ["start", "end"] dates, or one of today, yesterday, this|last|next week|month|quarter|year, last|next N days|weeks|months|quarters|years, from N days ago to now, month to date.`,
  );
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A range with both ends as wall times to the millisecond, as Cube writes them in a normalised
 * query: a date-only start is the start of its day, a date-only end the last millisecond of its
 * day (`["2026-01-01", "2026-01-31"]` → `["2026-01-01T00:00:00.000", "2026-01-31T23:59:59.999"]`).
 * Other values stay as given.
 */
export function explicitRange([from, to]: [string, string]): [string, string] {
  return [DATE_ONLY.test(from) ? `${from}T00:00:00.000` : from, DATE_ONLY.test(to) ? `${to}T23:59:59.999` : to];
}
