/**
 * Missing periods of a time series, made explicit before a chart is drawn: a month with no rows is
 * a month the runtime did not answer, and a line drawn from the month before to the month after
 * would show a value that was never there. Each missing period gets a row whose measures are null
 * (the line breaks there: Vega leaves a null out of the path) or 0 (the widget's setting
 * `chart.missingValues: "zero"`). Pure, like chart-spec.ts, which the embedded page bundles.
 */

type Row = Record<string, unknown>;

/** How a chart shows a period with no rows: a break in the line (default) or a zero. */
export type MissingValues = 'gap' | 'zero';
export const MISSING_VALUES: readonly MissingValues[] = ['gap', 'zero'];

/**
 * A widget config's `chart.missingValues`: a gap unless it says zero. Publishing validates the
 * setting, but a config stored before it was checked may hold anything.
 */
export function missingValuesOf(config: unknown): MissingValues {
  const chart = typeof config === 'object' && config !== null ? (config as Record<string, unknown>).chart : undefined;
  const value = typeof chart === 'object' && chart !== null ? (chart as Record<string, unknown>).missingValues : undefined;
  return MISSING_VALUES.includes(value as MissingValues) ? (value as MissingValues) : 'gap';
}

export type Grain = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'quarter' | 'year';
const GRAINS: readonly Grain[] = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'];

/** The most rows filling may add: a date range of seconds over years is drawn as answered rather than made into millions of rows. */
export const MAX_FILLED_PERIODS = 10_000;

export interface PeriodColumn {
  /** The row key of the time column (`orders.created_at.month`). */
  name: string;
  grain: Grain;
}

/** The grain of a time column: its name's suffix (`….month`) or its annotation's `granularity.name`. */
export function grainOf(name: string, annotation: Record<string, unknown>): Grain | undefined {
  const suffix = /\.(second|minute|hour|day|week|month|quarter|year)$/.exec(name)?.[1] as Grain | undefined;
  if (suffix) return suffix;
  const times = annotation.timeDimensions as Record<string, { granularity?: { name?: unknown } }> | undefined;
  const named = times?.[name]?.granularity?.name;
  return GRAINS.includes(named as Grain) ? (named as Grain) : undefined;
}

const parse = (value: unknown): Date | undefined => {
  if (typeof value !== 'string' && !(value instanceof Date)) return undefined;
  // The runtime answers local timestamps without a zone (`2026-01-01T00:00:00.000`): read them as UTC, write them back the same way.
  const text = value instanceof Date ? value.toISOString() : /[zZ]|[+-]\d\d:?\d\d$/.test(value) || !value.includes('T') ? value : `${value}Z`;
  const date = new Date(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text);
  return Number.isNaN(date.getTime()) ? undefined : date;
};

/** The start of the period `date` falls in (weeks start on Monday, as the runtime's do). */
export function periodStart(date: Date, grain: Grain): Date {
  const d = new Date(date.getTime());
  switch (grain) {
    case 'year':
      return new Date(Date.UTC(d.getUTCFullYear(), 0, 1));
    case 'quarter':
      return new Date(Date.UTC(d.getUTCFullYear(), Math.floor(d.getUTCMonth() / 3) * 3, 1));
    case 'month':
      return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
    case 'week': {
      const day = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
      day.setUTCDate(day.getUTCDate() - ((day.getUTCDay() + 6) % 7));
      return day;
    }
    case 'day':
      return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
    case 'hour':
      d.setUTCMinutes(0, 0, 0);
      return d;
    case 'minute':
      d.setUTCSeconds(0, 0);
      return d;
    case 'second':
      d.setUTCMilliseconds(0);
      return d;
  }
}

/** The start of the period after the one starting at `start`. */
export function nextPeriod(start: Date, grain: Grain): Date {
  const d = new Date(start.getTime());
  if (grain === 'year') d.setUTCFullYear(d.getUTCFullYear() + 1);
  else if (grain === 'quarter') d.setUTCMonth(d.getUTCMonth() + 3);
  else if (grain === 'month') d.setUTCMonth(d.getUTCMonth() + 1);
  else d.setTime(d.getTime() + { week: 7 * 86_400_000, day: 86_400_000, hour: 3_600_000, minute: 60_000, second: 1_000 }[grain]);
  return d;
}

/** A period's start written as the runtime writes the column's values (with or without the zone, or as a date). */
function writeLike(date: Date, sample: unknown): string {
  const iso = date.toISOString();
  if (typeof sample !== 'string') return iso;
  if (/^\d{4}-\d{2}-\d{2}$/.test(sample)) return iso.slice(0, 10);
  return /[zZ]$/.test(sample) ? iso : iso.slice(0, -1);
}

export interface FillOptions {
  /** The time column the chart draws along, and its grain. */
  time: PeriodColumn;
  /** Other time columns holding the same period (the runtime answers `orders.created_at` beside `orders.created_at.month`). */
  aliases: string[];
  /** The measure columns: null or 0 in an added row. */
  measures: string[];
  /** Other dimensions: each combination of their values is its own series, filled on its own. */
  dimensions: string[];
  missingValues: MissingValues;
  /** The query's date range when it names two dates; else the range of the rows. */
  dateRange?: [string, string];
}

/**
 * The rows with a row added for every period between the first and the last (of the rows, or of
 * the date range) that a series has no row for; rows in period order within each series, series in
 * the order they first appear. The rows as they were when a time value does not parse, or when
 * filling would add more than MAX_FILLED_PERIODS rows.
 */
export function fillMissingPeriods(rows: Row[], options: FillOptions): Row[] {
  const { time, aliases, measures, dimensions } = options;
  const times = rows.map((row) => parse(row[time.name]));
  if (rows.length === 0 || times.some((t) => t === undefined)) return rows;
  const starts = times.map((t) => periodStart(t!, time.grain).getTime());
  const range = options.dateRange?.map(parse);
  let first = Math.min(...starts);
  let last = Math.max(...starts);
  if (range?.[0] && range[1]) {
    first = Math.min(first, periodStart(range[0], time.grain).getTime());
    last = Math.max(last, periodStart(range[1], time.grain).getTime());
  }
  const periods: number[] = [];
  for (let t = first; t <= last; t = nextPeriod(new Date(t), time.grain).getTime()) {
    periods.push(t);
    if (periods.length > MAX_FILLED_PERIODS) return rows;
  }
  const series = new Map<string, { sample: Row; byPeriod: Map<number, Row[]> }>();
  rows.forEach((row, i) => {
    const key = JSON.stringify(dimensions.map((d) => row[d] ?? null));
    let s = series.get(key);
    if (!s) series.set(key, (s = { sample: row, byPeriod: new Map() }));
    const list = s.byPeriod.get(starts[i]!) ?? [];
    list.push(row);
    s.byPeriod.set(starts[i]!, list);
  });
  if (periods.length * series.size - rows.length > MAX_FILLED_PERIODS) return rows;
  const fill = options.missingValues === 'zero' ? 0 : null;
  const out: Row[] = [];
  for (const { sample, byPeriod } of series.values()) {
    for (const period of periods) {
      const present = byPeriod.get(period);
      if (present) {
        out.push(...present);
        continue;
      }
      const added: Row = {};
      for (const d of dimensions) added[d] = sample[d];
      for (const name of [time.name, ...aliases]) added[name] = writeLike(new Date(period), sample[name]);
      for (const m of measures) added[m] = fill;
      out.push(added);
    }
  }
  return out;
}
