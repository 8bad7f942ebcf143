import type { Filter, MemberFilter, Query } from './query.js';

type CubeFilter = { member: string; operator: string; values?: Array<string | null> } | { and: CubeFilter[] } | { or: CubeFilter[] };

/** A normalised query as Cube writes it in an answer (`query` of a result, `normalizedQueries` of a dry run). */
export interface CubeQuery {
  measures: string[];
  dimensions: string[];
  segments?: string[];
  timeDimensions: Array<{ dimension: string; granularity?: string; dateRange?: [string, string] }>;
  filters: CubeFilter[];
  order?: Array<{ id: string; desc: boolean }>;
  limit: number;
  rowLimit: number;
  offset?: number;
  total?: boolean;
  renewQuery?: boolean;
  ungrouped?: boolean;
  timezone: string;
}

/** Values as Cube echoes them: text, null kept. */
const text = (v: unknown): string | null => (v === null || v === undefined ? null : typeof v === 'string' ? v : String(v));

function cubeFilter(f: Filter): CubeFilter {
  if ('and' in f) return { and: f.and.map(cubeFilter) };
  if ('or' in f) return { or: f.or.map(cubeFilter) };
  const leaf = f as MemberFilter;
  const values = leaf.value === undefined ? undefined : (Array.isArray(leaf.value) ? leaf.value : [leaf.value]).map(text);
  return { member: leaf.member, operator: leaf.spelled ?? leaf.operator, ...(values === undefined ? {} : { values }) };
}

/**
 * Cube's form of a normalised query: `rowLimit` beside `limit`, `order` as `[{id, desc}]` and only
 * when the query gave one, optional flags only when set, filter values as text.
 */
export function cubeQuery(query: Query): CubeQuery {
  return {
    measures: query.measures,
    dimensions: query.dimensions,
    ...(query.segments.length > 0 ? { segments: query.segments } : {}),
    timeDimensions: query.timeDimensions.map((td) => ({
      dimension: td.dimension,
      ...(td.granularity ? { granularity: td.granularity } : {}),
      ...(td.dateRange ? { dateRange: td.dateRange } : {}),
    })),
    filters: query.filters.map(cubeFilter),
    ...(query.defaultOrder ? {} : { order: query.order.map(([id, direction]) => ({ id, desc: direction === 'desc' })) }),
    limit: query.limit,
    rowLimit: query.limit,
    ...(query.offset > 0 ? { offset: query.offset } : {}),
    ...(query.total ? { total: true } : {}),
    ...(query.renewQuery ? { renewQuery: true } : {}),
    ...(query.ungrouped ? { ungrouped: true } : {}),
    timezone: query.timezone,
  };
}
