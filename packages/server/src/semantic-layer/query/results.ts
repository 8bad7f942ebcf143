import { titled } from './members.js';
import { formatWall, wallTime } from './time-zones.js';
import type { OutputColumn } from './compile.js';

const NUMERIC_MEASURES = new Set(['count', 'count_distinct', 'count_distinct_approx', 'sum', 'avg', 'min', 'max', 'number', 'rank']);

/** A time value as `2026-01-31T09:30:00.000` in UTC (or as wall time in `zone`); text that is not a time stays as it is. */
function cubeTime(value: unknown, zone?: string): unknown {
  const date =
    value instanceof Date
      ? value
      : typeof value === 'number'
        ? new Date(value)
        : typeof value === 'string'
          ? new Date(/(Z|[+-]\d\d:?\d\d)$/.test(value) || !/\d[T ]\d/.test(value) ? value.replace(' ', 'T') : `${value.replace(' ', 'T')}Z`)
          : null;
  if (date === null || Number.isNaN(date.getTime())) return value;
  return zone ? formatWall(wallTime(date.getTime(), zone)) : date.toISOString().slice(0, 23);
}

/** A data source's value as JSON: numbers for numeric members (PostgreSQL sends bigint and numeric as text), text for times. */
function valueOf(value: unknown, column: OutputColumn): unknown {
  if (value === null || value === undefined) return null;
  const numeric = column.member.kind === 'measure' ? NUMERIC_MEASURES.has(column.member.type ?? '') : column.member.type === 'number';
  if (numeric && (typeof value === 'string' || typeof value === 'bigint')) {
    const n = Number(value);
    return Number.isFinite(n) ? n : String(value);
  }
  // Times as Cube sends them: UTC wall time to the millisecond, without a zone (truncated times already are).
  if (column.member.type === 'time' && !column.granularity) return cubeTime(value, column.localZone);
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return Number(value);
  if (column.member.type === 'boolean' && typeof value === 'number') return value !== 0;
  return value;
}

/**
 * Rows keyed by member name (`orders.count`; a time dimension both as `orders.created_at.day` and
 * `orders.created_at`, the bare key only when the dimension itself is not among the query's
 * dimensions, whose value it would otherwise overwrite, as in Cube).
 */
export function rowsOf(rows: Array<Record<string, unknown>>, columns: OutputColumn[]): Array<Record<string, unknown>> {
  const plain = new Set(columns.filter((c) => !c.granularity).map((c) => c.keys[0]));
  const keysOf = columns.map((c) => (c.granularity ? c.keys.filter((key, i) => i === 0 || !plain.has(key)) : c.keys));
  return rows.map((row) => {
    const out: Record<string, unknown> = {};
    columns.forEach((column, c) => {
      const value = valueOf(row[column.alias], column);
      for (const key of keysOf[c]!) out[key] = value;
    });
    return out;
  });
}

/** A member's data type as Cube's meta and annotations give it: aggregations are numbers. */
export function dataTypeOf(type: string | null): string {
  return type === 'string' || type === 'time' || type === 'boolean' || type === 'number' ? type : type === null ? 'string' : 'number';
}

const GRANULARITY_TITLES: Record<string, string> = {
  second: 'Second',
  minute: 'Minute',
  hour: 'Hour',
  day: 'Day',
  week: 'Week',
  month: 'Month',
  quarter: 'Quarter',
  year: 'Year',
};

interface Described {
  description?: string;
  format?: unknown;
  meta?: unknown;
  drill_members?: string[];
}

/** What each returned member is, as Cube's annotation says it: titles, data types, formats, drill members; by kind. */
export function annotationOf(columns: OutputColumn[], segments: Array<{ name: string; title: string; shortTitle: string; member: unknown }>) {
  const annotation = {
    measures: {} as Record<string, object>,
    dimensions: {} as Record<string, object>,
    segments: {} as Record<string, object>,
    timeDimensions: {} as Record<string, object>,
  };
  const plain = new Set(columns.filter((c) => !c.granularity).map((c) => c.keys[0]));
  for (const column of columns) {
    const member = column.member.member as Described;
    const described = {
      title: column.member.title,
      shortTitle: column.member.shortTitle,
      ...(member.description ? { description: member.description } : {}),
      type: dataTypeOf(column.member.type),
      ...(member.format !== undefined ? { format: member.format } : {}),
      ...(member.meta !== undefined ? { meta: member.meta } : {}),
    };
    if (column.granularity) {
      const [withGranularity, bare] = column.keys as [string, string];
      const granularity = column.custom
        ? {
            name: column.custom.name,
            title: titled(column.custom.name),
            interval: `${column.custom.count} ${column.custom.unit}`,
            origin: column.custom.origin,
          }
        : { name: column.granularity, title: GRANULARITY_TITLES[column.granularity] ?? column.granularity, interval: `1 ${column.granularity}` };
      annotation.timeDimensions[withGranularity] = { ...described, granularity };
      // The bare key too, unless the dimension itself is among the query's dimensions.
      if (!plain.has(bare)) annotation.timeDimensions[bare] = described;
    } else if (column.member.kind === 'measure') {
      const owner = column.keys[0]!.slice(0, column.keys[0]!.indexOf('.'));
      const drillMembers = (member.drill_members ?? []).map((m) => (m.includes('.') ? m : `${owner}.${m}`));
      annotation.measures[column.keys[0]!] = { ...described, drillMembers, drillMembersGrouped: { measures: [], dimensions: drillMembers } };
    } else {
      annotation.dimensions[column.keys[0]!] = described;
    }
  }
  for (const s of segments) {
    const member = s.member as Described;
    annotation.segments[s.name] = {
      title: s.title,
      shortTitle: s.shortTitle,
      ...(member.description ? { description: member.description } : {}),
      ...(member.meta !== undefined ? { meta: member.meta } : {}),
    };
  }
  return annotation;
}
