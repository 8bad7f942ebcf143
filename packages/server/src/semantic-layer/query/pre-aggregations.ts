import type { CompiledCube, CompiledDimension, CompiledMeasure, CompiledPreAggregation, ModelArtifact } from '../../model/artifact.js';
import { applyAccess, isNoRows, type SecurityContext } from './access.js';
import { GRANULARITIES, type Granularity } from './dialect.js';
import { multiplies, planJoins } from './joins.js';
import { ModelIndex, type ResolvedMember } from './members.js';
import type { Filter, MemberFilter, Query } from './query.js';
import { referencedCubes } from './render.js';

/**
 * Which pre-aggregation can answer a query, and the query that reads it instead of the source
 * (Cube's matching, https://cube.dev/docs/product/caching/matching-pre-aggregations): a
 * `rollup` holds the query's members, grouped at a granularity the query's can be made of, so
 * the answer read from it is the answer the source gives. Building and refreshing the tables is
 * pre-aggregation-tables.ts; this module is pure.
 *
 * The one rule kept stricter than Cube's: a date range must fall on the rollup's bucket edges
 * (Cube's `allow_non_strict_date_range_match` lets others match, and answers whole buckets). A
 * pre-aggregation here only ever makes an answer faster, never different.
 */

/** A pre-aggregation of a cube, named as Cube names it (`cube.name`). */
export interface PreAggregationDef extends CompiledPreAggregation {
  cube: string;
  id: string;
}

/** Measure types whose values over a rollup's rows combine into the value over the rows they stand for. */
const ADDITIVE = new Set(['count', 'sum', 'min', 'max']);
/** Model SQL a pre-aggregation cannot hold: it differs per caller or per query. */
const PER_QUERY_SQL = /SECURITY_CONTEXT|securityContext|security_context|userAttributes|user_attributes|FILTER_PARAMS|COMPILE_CONTEXT/;

/** Every pre-aggregation of the build, in the order Cube tries them: a cube's rollups before its `original_sql` ones. */
export function preAggregationsOf(artifact: ModelArtifact): PreAggregationDef[] {
  return artifact.cubes.flatMap((cube) => {
    const defs = (cube.pre_aggregations ?? []).map((p) => ({ ...p, cube: cube.name, id: `${cube.name}.${p.name}` }));
    return [...defs.filter((d) => d.type === 'rollup'), ...defs.filter((d) => d.type !== 'rollup')];
  });
}

/** The query that builds a rollup: its members grouped at its granularity, every row, no order, read as no caller (its rows are filtered per caller when read). */
export function rollupBuildQuery(def: PreAggregationDef, timezone: string): Query {
  return {
    measures: def.measures,
    dimensions: def.dimensions,
    timeDimensions: def.time_dimension ? [{ dimension: def.time_dimension, ...(def.granularity ? { granularity: def.granularity } : {}) }] : [],
    filters: [],
    segments: def.segments,
    order: [],
    limit: 2_147_483_647,
    offset: 0,
    timezone,
    total: false,
    renewQuery: false,
    ungrouped: false,
    defaultOrder: false,
  };
}

/**
 * Why a pre-aggregation cannot be built, or null: a type this engine does not build, members it
 * cannot group, or model SQL that reads the caller or the query (a table built once would answer
 * every caller with one caller's rows).
 */
export function unbuildable(index: ModelIndex, def: PreAggregationDef): string | null {
  if (def.type !== 'rollup' && def.type !== 'original_sql') return `pre-aggregations of type ${def.type} are not built (rollup and original_sql are)`;
  if (def.type === 'rollup' && def.measures.length === 0 && def.dimensions.length === 0 && !def.time_dimension)
    return 'it names no measures, dimensions or time dimension';
  if (def.granularity && !GRANULARITIES.includes(def.granularity as Granularity))
    return `its granularity ${def.granularity} is not one of ${GRANULARITIES.join(', ')}`;
  const cubes = new Set<string>([def.cube]);
  const sqls: string[] = [];
  const cube = index.cube(def.cube);
  sqls.push(cube.sql ?? '', cube.sql_table ?? '');
  for (const name of [...def.measures, ...def.dimensions, ...def.segments, ...(def.time_dimension ? [def.time_dimension] : [])]) {
    const member = memberOf(index, name);
    if (!member) return `${name} is not a member of this build`;
    const { owner, value } = member;
    cubes.add(owner.name);
    sqls.push(value.sql ?? '', ...((value as CompiledMeasure).filters ?? []));
    if ((value as CompiledMeasure).multi_stage || (value as CompiledMeasure).rolling_window || (value as CompiledDimension).sub_query)
      return `${name} is a multi-stage, rolling-window or subquery member, which a rollup cannot hold`;
    for (const referenced of referencedCubes(index, owner, value as { sql?: string | null })) cubes.add(referenced);
  }
  for (const name of cubes) {
    const c = index.cube(name);
    sqls.push(c.sql ?? '', c.sql_table ?? '');
  }
  if (sqls.some((sql) => PER_QUERY_SQL.test(sql))) return 'its SQL reads the caller’s context or the query’s filters, which differ from one query to the next';
  return null;
}

function memberOf(
  index: ModelIndex,
  name: string,
): { owner: CompiledCube; value: CompiledMeasure | CompiledDimension | { name: string; sql: string } } | undefined {
  const dot = name.indexOf('.');
  const owner = index.cubes.get(name.slice(0, dot));
  const found = owner && index.own(owner, name.slice(dot + 1));
  return owner && found ? { owner, value: found.member as CompiledMeasure } : undefined;
}

/** Coarser granularities a rollup's granularity can be summed into (and itself). */
const DERIVABLE: Record<Granularity, Granularity[]> = {
  second: ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'],
  minute: ['minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'],
  hour: ['hour', 'day', 'week', 'month', 'quarter', 'year'],
  day: ['day', 'week', 'month', 'quarter', 'year'],
  week: ['week'],
  month: ['month', 'quarter', 'year'],
  quarter: ['quarter', 'year'],
  year: ['year'],
};

const WALL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?$/;

/** Whether a wall time is the first (`edge: 'start'`) or last millisecond (`'end'`) of a bucket of `granularity`. */
export function onBucketEdge(wall: string, granularity: Granularity, edge: 'start' | 'end'): boolean {
  const m = WALL.exec(wall);
  if (!m) return false;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const ms = Number((m[7] ?? '0').padEnd(3, '0'));
  const start = edge === 'start';
  const [lastH, lastMi, lastS, lastMs] = start ? [0, 0, 0, 0] : [23, 59, 59, 999];
  const timeAt = (level: number) => [ms === lastMs, s === lastS, mi === lastMi, h === lastH].slice(0, level).every(Boolean);
  const weekday = new Date(Date.UTC(y, mo - 1, d)).getUTCDay();
  const lastDay = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  const dayEdge = start ? d === 1 : d === lastDay;
  const monthIn = (months: number) => (start ? (mo - 1) % months === 0 : mo % months === 0);
  switch (granularity) {
    case 'second':
      return timeAt(1);
    case 'minute':
      return timeAt(2);
    case 'hour':
      return timeAt(3);
    case 'day':
      return timeAt(4);
    case 'week':
      return timeAt(4) && weekday === (start ? 1 : 0);
    case 'month':
      return timeAt(4) && dayEdge;
    case 'quarter':
      return timeAt(4) && dayEdge && monthIn(3);
    case 'year':
      return timeAt(4) && dayEdge && monthIn(12);
  }
}

const leavesOf = (f: Filter): MemberFilter[] => ('and' in f ? f.and.flatMap(leavesOf) : 'or' in f ? f.or.flatMap(leavesOf) : [f]);
const underlying = (m: ResolvedMember) => `${m.cube}.${m.member.name}`;

/** The query over a rollup's table that answers a query, and the rollup's column each member reads. */
export interface RollupMatch {
  def: PreAggregationDef;
  /** The query as the rollup table answers it (members renamed to the table's, the caller's row filters added as filters). */
  query: Query;
  /** The cube that stands for the table, given the table's name. */
  cube: (table: string) => CompiledCube;
}

/** The rollup table's columns, by the `cube.member` they hold (the time dimension as `cube.member.granularity`). */
export type RollupColumns = Map<string, { alias: string; type: string | null }>;

/**
 * The first rollup of `defs` that answers `query` for `security` exactly, given each rollup's
 * table columns (`columnsOf`, from its build statement); null when none does.
 */
export function matchRollup(
  index: ModelIndex,
  defs: PreAggregationDef[],
  query: Query,
  security: SecurityContext,
  columnsOf: (def: PreAggregationDef) => RollupColumns | null,
): RollupMatch | null {
  if (query.ungrouped || query.timeDimensions.some((td) => td.shift)) return null;
  const measures = query.measures.map((m) => index.resolve(m, 'measure', 'measures'));
  const dimensions = query.dimensions.map((d) => index.resolve(d, 'dimension', 'dimensions'));
  const filterMembers = new Map(query.filters.flatMap(leavesOf).map((f) => [f.member, index.resolve(f.member, 'measure-or-dimension', 'filters')] as const));
  const orderMembers = new Map(
    query.order.flatMap(([name]) => {
      try {
        return [[name, index.resolve(name, 'measure-or-dimension', 'order')] as const];
      } catch {
        return [];
      }
    }),
  );
  const times = query.timeDimensions.map((td) => ({ td, member: index.resolve(td.dimension, 'dimension', 'timeDimensions') }));
  const segments = query.segments.map((s) => index.resolve(s, 'segment', 'segments'));
  const used = [...measures, ...dimensions, ...segments, ...times.map((t) => t.member), ...filterMembers.values(), ...orderMembers.values()];
  const referenced = new Set(used.flatMap((m) => [...referencedCubes(index, index.cube(m.cube), m.member as { sql?: string | null })]));
  // The caller's row filters are filters the rollup must be able to apply (compiling the query as
  // it is has checked the caller may read these members at all).
  const { rowFilters } = applyAccess(index, used, security, referenced);
  const policyMembers = new Map(
    rowFilters
      .filter((f) => !isNoRows(f))
      .flatMap(leavesOf)
      .map((f) => [f.member, index.resolve(f.member, 'dimension', 'policy')] as const),
  );
  // A caller who may see no rows gets none from the source, at no cost.
  if (rowFilters.some(isNoRows)) return null;
  const queryCubes = new Set([...used, ...policyMembers.values()].map((m) => m.cube));

  candidates: for (const def of defs) {
    if (def.type !== 'rollup' || !queryCubes.has(def.cube)) continue;
    const columns = columnsOf(def);
    if (!columns) continue;
    const granularity = def.granularity as Granularity | null;
    const dims = new Set(def.dimensions);
    const rollupMeasures = new Set(def.measures);
    // Every measure the query reads must be in the rollup; all additive, or the query exactly the rollup's grain.
    const queryMeasures = [...measures, ...[...filterMembers.values(), ...orderMembers.values()].filter((m) => m.kind === 'measure')];
    if (!queryMeasures.every((m) => rollupMeasures.has(underlying(m)))) continue;
    const plan = planJoins(index, [def.cube, ...[...dims, ...rollupMeasures].map((n) => n.slice(0, n.indexOf('.')))], []);
    const multiplied = queryMeasures.some((m) => multiplies(plan, m.cube));
    const additive = !multiplied && queryMeasures.every((m) => ADDITIVE.has((m.member as CompiledMeasure).type) && !(m.member as CompiledMeasure).multi_stage);
    // View members must reach their cubes the way the rollup joined them.
    for (const m of used) {
      if (!m.joinPath || m.joinPath.length <= 1) continue;
      const path = pathTo(plan, m.cube);
      if (!path || path.join('.') !== m.joinPath.join('.')) continue candidates;
    }
    if (query.segments.length !== def.segments.length || !segments.every((s) => def.segments.includes(underlying(s)))) continue;
    const queryDims = new Set(dimensions.map(underlying));
    if (![...queryDims].every((d) => dims.has(d))) continue;
    const filterDims = [...filterMembers.values(), ...policyMembers.values()].filter((m) => m.kind === 'dimension');
    if (!filterDims.every((m) => dims.has(underlying(m)) && !(m.type === 'time' && query.timezone !== 'UTC'))) continue;
    // Time: the rollup's time dimension, at a granularity its own sums into, over a range on its bucket edges.
    let grouped: Granularity | undefined;
    for (const { td, member } of times) {
      if (!def.time_dimension || underlying(member) !== def.time_dimension || !granularity) continue candidates;
      if (td.granularity !== undefined) {
        if (!DERIVABLE[granularity].includes(td.granularity as Granularity)) continue candidates;
        if (grouped !== undefined) continue candidates;
        grouped = td.granularity as Granularity;
      }
      if (td.dateRange && !(onBucketEdge(td.dateRange[0], granularity, 'start') && onBucketEdge(td.dateRange[1], granularity, 'end'))) continue candidates;
    }
    if (!additive) {
      // Each of the query's rows is one of the rollup's: the same dimensions, the same grain, filters on those dimensions only.
      if (queryDims.size !== dims.size || (def.time_dimension ? grouped !== granularity : grouped !== undefined)) continue;
      if (!filterDims.every((m) => queryDims.has(underlying(m)))) continue;
    }
    return rewrite(def, columns, query, rowFilters, { measures, dimensions, filterMembers, orderMembers, policyMembers, additive });
  }
  return null;
}

/** The cubes from a join plan's root to `cube`, or null when it does not join it. */
function pathTo(plan: ReturnType<typeof planJoins>, cube: string): string[] | null {
  if (cube === plan.root) return [cube];
  const step = plan.steps.find((s) => s.far === cube);
  if (!step) return null;
  const before = pathTo(plan, step.near);
  return before && [...before, cube];
}

const VIRTUAL = 'rollup';

function rewrite(
  def: PreAggregationDef,
  columns: RollupColumns,
  query: Query,
  rowFilters: Filter[],
  resolved: {
    measures: ResolvedMember[];
    dimensions: ResolvedMember[];
    filterMembers: Map<string, ResolvedMember>;
    orderMembers: Map<string, ResolvedMember>;
    policyMembers: Map<string, ResolvedMember>;
    additive: boolean;
  },
): RollupMatch {
  const measureDefs = new Map<string, CompiledMeasure>();
  const dimensionDefs = new Map<string, CompiledDimension>();
  const nameOf = (m: ResolvedMember): string => {
    const column = columns.get(underlying(m))!;
    const name = `${m.kind === 'measure' ? 'm' : 'd'}_${column.alias}`;
    if (m.kind === 'measure') {
      const type = (m.member as CompiledMeasure).type;
      // A count over no rows is 0, where a sum over none is NULL; an exact match reads its one row.
      const value = `{CUBE}.${column.alias}`;
      const sql = resolved.additive
        ? type === 'count'
          ? `coalesce(sum(${value}), 0)`
          : `${type === 'min' ? 'min' : type === 'max' ? 'max' : 'sum'}(${value})`
        : `max(${value})`;
      measureDefs.set(name, { name, type: 'number', sql, public: true } as unknown as CompiledMeasure);
    } else {
      dimensionDefs.set(name, { name, type: m.type ?? 'string', sql: column.alias, public: true } as unknown as CompiledDimension);
    }
    return `${VIRTUAL}.${name}`;
  };
  const timeColumn = def.time_dimension ? columns.get(`${def.time_dimension}.${def.granularity}`) : undefined;
  if (timeColumn) dimensionDefs.set('time', { name: 'time', type: 'time', sql: timeColumn.alias, public: true } as unknown as CompiledDimension);
  const renameFilter = (f: Filter, members: Map<string, ResolvedMember>): Filter => {
    if ('and' in f) return { and: f.and.map((x) => renameFilter(x, members)) };
    if ('or' in f) return { or: f.or.map((x) => renameFilter(x, members)) };
    if (f.member === '__none__') return f;
    return { ...f, member: nameOf(members.get(f.member)!) };
  };
  const rewritten: Query = {
    ...query,
    measures: resolved.measures.map(nameOf),
    dimensions: resolved.dimensions.map(nameOf),
    timeDimensions: query.timeDimensions.map((td) => ({ ...td, dimension: `${VIRTUAL}.time` })),
    filters: [...query.filters.map((f) => renameFilter(f, resolved.filterMembers)), ...rowFilters.map((f) => renameFilter(f, resolved.policyMembers))],
    segments: [],
    order: query.order.flatMap(([name, dir]): Array<[string, 'asc' | 'desc']> => {
      // A time dimension is ordered by its name or by its name and granularity, as the query groups it.
      const td = query.timeDimensions.find((t) => t.granularity && (name === t.dimension || name === `${t.dimension}.${t.granularity}`));
      if (td) return [[name === td.dimension ? `${VIRTUAL}.time` : `${VIRTUAL}.time.${td.granularity}`, dir]];
      const m = resolved.orderMembers.get(name);
      // Anything else the query does not select is dropped, as compiling drops it.
      return m && columns.has(underlying(m)) ? [[nameOf(m), dir]] : [];
    }),
    // The table holds wall times of the query's zone already.
    timezone: 'UTC',
  };
  return {
    def,
    query: rewritten,
    cube: (table) =>
      ({
        name: VIRTUAL,
        file: '',
        public: true,
        sql_table: table,
        data_source: 'default',
        measures: [...measureDefs.values()],
        dimensions: [...dimensionDefs.values()],
        segments: [],
        joins: [],
        pre_aggregations: [],
      }) as CompiledCube,
  };
}

/** The index a rollup match compiles against: the rollup's table as its one cube. */
export function rollupIndex(match: RollupMatch, table: string): ModelIndex {
  return new ModelIndex({ cubes: [match.cube(table)], views: [] });
}

/** The build's index with one cube's SQL replaced by its `original_sql` pre-aggregation's table. */
export function withOriginalSql(artifact: ModelArtifact, tables: Map<string, string>): ModelIndex {
  return new ModelIndex({ ...artifact, cubes: artifact.cubes.map((c) => (tables.has(c.name) ? { ...c, sql: undefined, sql_table: tables.get(c.name)! } : c)) });
}
