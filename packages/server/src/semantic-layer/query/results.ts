import type { OutputColumn } from './compile.js';

const NUMERIC_MEASURES = new Set(['count', 'count_distinct', 'count_distinct_approx', 'sum', 'avg', 'min', 'max', 'number']);

/** A data source's value as JSON: numbers for numeric members (PostgreSQL sends bigint and numeric as text), text for times. */
function valueOf(value: unknown, column: OutputColumn): unknown {
  if (value === null || value === undefined) return null;
  const numeric = column.member.kind === 'measure' ? NUMERIC_MEASURES.has(column.member.type ?? '') : column.member.type === 'number';
  if (numeric && (typeof value === 'string' || typeof value === 'bigint')) {
    const n = Number(value);
    return Number.isFinite(n) ? n : String(value);
  }
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return Number(value);
  if (column.member.type === 'boolean' && typeof value === 'number') return value !== 0;
  return value;
}

/** Rows keyed by member name (`orders.count`; a time dimension both as `orders.created_at.day` and `orders.created_at`). */
export function rowsOf(rows: Array<Record<string, unknown>>, columns: OutputColumn[]): Array<Record<string, unknown>> {
  return rows.map((row) => {
    const out: Record<string, unknown> = {};
    for (const column of columns) {
      const value = valueOf(row[column.alias], column);
      for (const key of column.keys) out[key] = value;
    }
    return out;
  });
}

export interface MemberAnnotation {
  title: string;
  shortTitle: string;
  type: string | null;
}

/** What each returned member is: titles and types, by kind. */
export function annotationOf(columns: OutputColumn[], segments: Array<{ name: string; title: string; shortTitle: string }>) {
  const annotation = { measures: {} as Record<string, MemberAnnotation>, dimensions: {} as Record<string, MemberAnnotation>, segments: {} as Record<string, MemberAnnotation>, timeDimensions: {} as Record<string, MemberAnnotation> };
  for (const column of columns) {
    const info = { title: column.member.title, shortTitle: column.member.shortTitle, type: column.member.type };
    if (column.granularity) for (const key of column.keys) annotation.timeDimensions[key] = info;
    else annotation[column.member.kind === 'measure' ? 'measures' : 'dimensions'][column.keys[0]!] = info;
  }
  for (const s of segments) annotation.segments[s.name] = { title: s.title, shortTitle: s.shortTitle, type: null };
  return annotation;
}
