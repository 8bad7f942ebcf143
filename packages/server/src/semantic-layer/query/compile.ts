import type { CompiledCube, CompiledDimension, CompiledMeasure } from '../../model/artifact.js';
import { GRANULARITIES, parseInterval, quote, type CustomGranularity, type Granularity, type SqlDialect } from './dialect.js';
import { customGranularity } from './custom-granularity.js';
import { QueryError } from './errors.js';
import { applyAccess, isNoRows, NOBODY, type SecurityContext } from './access.js';
import { filterSql } from './filters.js';
import { multiplies, planJoins } from './joins.js';
import type { ModelIndex, ResolvedMember } from './members.js';
import type { Filter, MemberFilter, Query, TimeDimension } from './query.js';
import { referencedCubes, referencedMeasures, Renderer, type RenderContext } from './render.js';
import { rollingBuckets, shiftWall, type Bucket, type RollingWindow } from './rolling.js';
import { formatWall, parseWall } from './time-zones.js';

/** One column of the compiled query's result, and the keys it fills in each row. */
export interface OutputColumn {
  alias: string;
  keys: string[];
  member: ResolvedMember;
  granularity?: string;
  /** The granularity the dimension defines, when it is not a built-in one. */
  custom?: CustomGranularity;
  /** A time dimension's values as wall time in this zone (Cube: when the query's time zone filters it by date). */
  localZone?: string;
}

const DATE_OPERATORS = new Set(['inDateRange', 'notInDateRange', 'onTheDate', 'beforeDate', 'beforeOrOnDate', 'afterDate', 'afterOrOnDate']);

export interface CompiledQuery {
  sql: string;
  params: unknown[];
  columns: OutputColumn[];
  /** The order the rows come in (the query's, or the default), by member. */
  order: Array<[string, 'asc' | 'desc']>;
  /** The cubes the statement reads (for their refresh keys). */
  cubes?: string[];
}

/** Aggregations whose result a repeated row changes: these need de-duplication across one-to-many joins. */
const REPEAT_SENSITIVE = new Set(['count', 'sum', 'avg']);
const AGGREGATES = new Set(['count', 'count_distinct', 'count_distinct_approx', 'sum', 'avg', 'min', 'max']);
const UNSUPPORTED = new Set(['running_total']);
/** Aggregates whose result is a number whatever they aggregate. */
const NUMERIC_AGGREGATES = new Set(['count', 'count_distinct', 'count_distinct_approx', 'sum', 'avg']);

const isGroup = (f: Filter): f is { and: Filter[] } | { or: Filter[] } => 'and' in f || 'or' in f;
function leaves(f: Filter): MemberFilter[] {
  if ('and' in f) return f.and.flatMap(leaves);
  if ('or' in f) return f.or.flatMap(leaves);
  return [f];
}

/**
 * A normalised query as one SQL statement for the data source. The shape:
 *
 *   SELECT <dimensions>, <measures> FROM (
 *     <one group per set of measures that aggregate together>, FULL JOINed on the dimensions
 *   ) AS q WHERE <measure filters> ORDER BY … LIMIT ? OFFSET ?
 *
 * Measures of a cube whose rows the query's joins repeat (it is on the "one" side of a one-to-many
 * join) aggregate in a group of their own over rows made distinct by the cube's primary key, so a
 * count or a sum is never inflated by the join. Every value from the query is bound.
 */
export function compileQuery(
  index: ModelIndex,
  query: Query,
  dialect: SqlDialect,
  security: SecurityContext = NOBODY,
  /** `access: false`: the model's access policies are not applied (a subquery, whose caller checks the cubes it reads; a pre-aggregation's build). */
  options: { total?: boolean; params?: unknown[]; access?: false } = {},
): CompiledQuery {
  // A multi-stage measure's inner query is compiled into the same statement: it shares the parameters.
  const params: unknown[] = options.params ?? [];
  const bind = (value: unknown) => {
    params.push(value);
    return dialect.placeholder(params.length);
  };

  const measures = query.measures.map((m) => index.resolve(m, 'measure', 'measures'));
  const dimensions = query.dimensions.map((d) => index.resolve(d, 'dimension', 'dimensions'));
  const segments = query.segments.map((s) => index.resolve(s, 'segment', 'segments'));
  const timeDimensions = query.timeDimensions.map((td, i) => {
    const member = index.resolve(td.dimension, 'dimension', `timeDimensions[${i}]`);
    if (member.type !== 'time') throw new QueryError(`timeDimensions[${i}]: ${td.dimension} is a ${member.type} dimension, not a time dimension.`);
    return { td, member };
  });
  const grouped = timeDimensions.filter((t) => t.td.granularity !== undefined);
  if (measures.length === 0 && dimensions.length === 0 && grouped.length === 0)
    throw new QueryError('The query needs at least one measure, dimension or time dimension with a granularity.');
  const filterMembers = new Map<string, ResolvedMember>();
  for (const f of query.filters.flatMap(leaves)) filterMembers.set(f.member, index.resolve(f.member, 'measure-or-dimension', 'filters'));

  // The model's access policies: members the caller may not use are refused (403), and its row
  // filters join the query's conditions below, ANDed with the client's.
  const used = [...measures, ...dimensions, ...segments, ...timeDimensions.map((t) => t.member), ...filterMembers.values()];
  const referencedByUsed = new Set(
    used.flatMap((m) =>
      (m.member as CompiledDimension).sub_query ? [] : [...referencedCubes(index, index.cube(m.cube), m.member as { sql?: string | null })],
    ),
  );
  // Not applied to a subquery (its caller checks the cubes it reads) or a pre-aggregation's build (each caller's row filters apply when it is read).
  const { rowFilters } = options.access === false ? { rowFilters: [] } : applyAccess(index, used, security, referencedByUsed);
  const policyMembers = new Map<string, ResolvedMember>();
  for (const f of rowFilters.filter((r) => !isNoRows(r)).flatMap(leaves)) {
    policyMembers.set(f.member, index.resolve(f.member, 'dimension', "an access policy's row filter"));
  }

  // Joins: every cube a member lives in, and every cube its SQL refers to (`{customers.region}` in
  // a dimension of orders joins customers, as in Cube); a view's members bring their join paths.
  const all = [...used, ...policyMembers.values()];
  const viewMembers = all.filter((m) => m.joinPath !== null);
  // (A sub_query dimension's references are joined inside its own subquery, not here.)
  const cubes = all.flatMap((m) => [
    m.cube,
    ...((m.member as CompiledDimension).sub_query ? [] : referencedCubes(index, index.cube(m.cube), m.member as { sql?: string | null })),
  ]);
  const plan = planJoins(
    index,
    cubes,
    viewMembers.map((m) => m.joinPath!),
  );
  const joined = new Set([plan.root, ...plan.steps.map((s) => s.far)]);
  const cubeOf = (name: string): CompiledCube => index.cube(name);
  // Model SQL may read the caller's context and the query's filters on a member (render.ts).
  const filterCtx = { dialect, bind, timezone: query.timezone };
  const subQueries = new Map<string, string>();
  const context: RenderContext = {
    bind,
    security,
    subQuery: (cube, dimension) => subQueries.get(`${cube}.${dimension}`),
    filterParams: (member, expr) => {
      const conditions: string[] = [];
      const visit = (f: Filter) => {
        if ('and' in f) return f.and.forEach(visit);
        if ('or' in f) return;
        const m = filterMembers.get(f.member);
        if (m && `${m.cube}.${m.member.name}` === member) conditions.push(filterSql(expr, m.type, f, filterCtx));
      };
      query.filters.forEach(visit);
      for (const { td, member: m } of timeDimensions) {
        if (td.dateRange && `${m.cube}.${m.member.name}` === member)
          conditions.push(filterSql(expr, 'time', { member: td.dimension, operator: 'between', value: td.dateRange }, filterCtx));
      }
      return conditions.length === 0 ? null : conditions.join(' AND ');
    },
  };
  const renderer = new Renderer(index, (cube) => (joined.has(cube) ? cube : undefined), undefined, context);

  /**
   * A `sub_query` dimension's subquery, as Cube writes it (BaseQuery's subQueryJoin): a query of its
   * own whose measures are those the dimension's SQL refers to, by its cube's primary key, and whose
   * column is that SQL over them (`{orders.count}` on customers: each customer's order count). Its
   * joins are those of that query (rooted, as Cube roots them, at the first measure's cube: a
   * customer without orders has NULL, not 0). With `propagate_filters_to_sub_query`, the query's
   * filters hold inside it too, as in Cube: its top-level filters on dimensions (not and/or groups,
   * nor filters on subquery dimensions), its segments and its time dimensions' date ranges, the
   * cubes they name joined in it; their values bound as everywhere else.
   */
  function subQuerySql(cube: CompiledCube, dimension: CompiledDimension, pk: CompiledDimension): string {
    const key = `${cube.name}.${dimension.name}`;
    if (dimension.sql === null) throw new QueryError(`Dimension ${key} is a subquery dimension without SQL.`);
    const referenced = referencedMeasures(index, cube, dimension.sql);
    if (referenced.length === 0)
      throw new QueryError(`Dimension ${key} is a subquery dimension: its SQL must refer to the measures it reads, such as "{orders.count}".`);
    const isSubQuery = (name: string) => {
      const m = index.resolve(name, 'measure-or-dimension', 'filters');
      return m.kind === 'dimension' && (m.member as CompiledDimension).sub_query === true;
    };
    const propagate = dimension.propagate_filters_to_sub_query === true;
    const inner: Query = {
      ...query,
      measures: referenced,
      dimensions: [`${cube.name}.${pk.name}`],
      filters: propagate ? query.filters.filter((f) => !isGroup(f) && filterMembers.get(f.member)!.kind === 'dimension' && !isSubQuery(f.member)) : [],
      segments: propagate ? query.segments : [],
      timeDimensions: propagate
        ? query.timeDimensions.flatMap((td) => (td.dateRange && !isSubQuery(td.dimension) ? [{ dimension: td.dimension, dateRange: td.dateRange }] : []))
        : [],
      order: [],
      defaultOrder: false,
      limit: 2_147_483_647,
      offset: 0,
      total: false,
      ungrouped: false,
    };
    // The subquery reads its cubes whole: the query's own row filters hold for the dimension's cube
    // (its rows meet the subquery by primary key), but no other cube's policies would; a subquery
    // that reads a cube with access policies is refused rather than read past them.
    const compiled = compileQuery(index, inner, dialect, security, { params, access: false });
    for (const name of compiled.cubes ?? []) {
      if (name !== cube.name && (index.cube(name).access_policy ?? []).length > 0) {
        throw new QueryError(
          `Dimension ${key} is a subquery dimension over cube ${name}, whose access policies queries cannot apply inside a subquery yet.`,
          403,
        );
      }
    }
    const column = (name: string) => `${quote('i')}.${quote(compiled.columns.find((c) => c.keys.includes(name))!.alias)}`;
    // Its SQL is over measures (each a column of the subquery's rows); the alias is never written.
    const over = new Renderer(
      index,
      (c) => c,
      (c, m): string => column(`${c}.${m.name}`),
      context,
    );
    return `SELECT ${column(`${cube.name}.${pk.name}`)} AS ${quote('pk')}, (${over.expand(dimension.sql, cube, 0)}) AS ${quote('val')} FROM (${compiled.sql}) AS ${quote('i')}`;
  }

  let from = `${renderer.table(cubeOf(plan.root))} AS ${quote(plan.root)}`;
  for (const step of plan.steps)
    from += ` LEFT JOIN ${renderer.table(cubeOf(step.far))} AS ${quote(step.far)} ON ${renderer.join(cubeOf(step.edge.from), step.edge.sql)}`;
  // `sub_query` dimensions: each a subquery per row of its cube, joined by the cube's primary key.
  for (const m of all) {
    const dimension = m.member as CompiledDimension;
    const key = `${m.cube}.${dimension.name}`;
    if (m.kind !== 'dimension' || !dimension.sub_query || subQueries.has(key)) continue;
    const alias = `sq_${subQueries.size}`;
    const cube = cubeOf(m.cube);
    const pk = cube.dimensions.find((d) => d.primary_key);
    if (!pk) throw new QueryError(`Dimension ${key} is a subquery dimension: cube ${m.cube} needs a primary key to join it by.`);
    from += ` LEFT JOIN (${subQuerySql(cube, dimension, pk)}) AS ${quote(alias)} ON ${quote(alias)}.${quote('pk')} = ${renderer.dimension(cube, pk)}`;
    subQueries.set(key, `${quote(alias)}.${quote('val')}`);
  }

  const dimensionSql = (m: ResolvedMember) => renderer.dimension(cubeOf(m.cube), m.member as CompiledDimension);

  // The grouping columns: dimensions, then time dimensions truncated in the query's time zone.
  const groupColumns: Array<{ sql: string; column: OutputColumn }> = [];
  // Cube applies the query's time zone to a time dimension among the dimensions only where the
  // query filters it by date (a date operator, or a date range of the same dimension).
  const dateFiltered = (m: ResolvedMember) =>
    query.filters.flatMap(leaves).some((f) => f.member === m.name && DATE_OPERATORS.has(f.spelled ?? '')) ||
    query.timeDimensions.some((td) => td.dimension === m.name && td.dateRange !== undefined);
  dimensions.forEach((m, i) =>
    groupColumns.push({
      sql: dimensionSql(m),
      column: {
        alias: `d${i}`,
        keys: [m.name],
        member: m,
        ...(m.type === 'time' && query.timezone !== 'UTC' && dateFiltered(m) ? { localZone: query.timezone } : {}),
      },
    }),
  );
  grouped.forEach(({ td, member }, i) => {
    const time = td.shift ? dialect.shift(dimensionSql(member), td.shift.count, td.shift.unit, query.timezone) : dimensionSql(member);
    const custom = customGranularity(member.member as CompiledDimension, td.granularity!, td.dimension);
    groupColumns.push({
      sql: custom ? dialect.truncateCustom(time, custom, query.timezone) : dialect.truncate(time, td.granularity as Granularity, query.timezone),
      column: {
        alias: `t${i}`,
        keys: [`${td.dimension}.${td.granularity}`, td.dimension],
        member,
        granularity: td.granularity!,
        ...(custom ? { custom } : {}),
      },
    });
  });

  // WHERE: segments, date ranges, and filters over dimensions; filters over measures apply to the result.
  const where: string[] = segments.map((s) => renderer.segment(cubeOf(s.cube), (s.member as { sql: string }).sql));
  const ctx = { dialect, bind, timezone: query.timezone };
  // Each date range's condition, by its time dimension: a rolling window reads past it (rolling.ts).
  const rangeAt = new Map<unknown, number>();
  for (const { td, member } of timeDimensions) {
    if (!td.dateRange) continue;
    rangeAt.set(td, where.length);
    where.push(filterSql(dimensionSql(member), 'time', { member: td.dimension, operator: 'between', value: td.dateRange }, ctx));
  }
  for (const f of rowFilters) {
    where.push(
      isNoRows(f)
        ? '1 = 0'
        : filterTree(f, (leaf) => filterSql(dimensionSql(policyMembers.get(leaf.member)!), policyMembers.get(leaf.member)!.type, leaf, ctx)),
    );
  }
  const measureFilters: Filter[] = [];
  for (const f of query.filters) {
    const kinds = new Set(leaves(f).map((l) => filterMembers.get(l.member)!.kind));
    if (kinds.size > 1)
      throw new QueryError('A filter group may not mix measures and dimensions: filter measures and dimensions in separate top-level filters.');
    if (kinds.has('measure')) measureFilters.push(f);
    else where.push(filterTree(f, (leaf) => filterSql(dimensionSql(filterMembers.get(leaf.member)!), filterMembers.get(leaf.member)!.type, leaf, ctx)));
  }

  if (query.ungrouped) return ungroupedQuery();

  /**
   * Cube's `ungrouped` query: the joined rows themselves, no GROUP BY: dimensions as they are, a
   * measure as its value on each row (a `count` is 1, or 0 where its SQL or filters do not hold),
   * filters on measures over those values. The primary key of every cube the query joins must be
   * among its dimensions, as Cube requires, so that no row stands for several.
   */
  function ungroupedQuery(): CompiledQuery {
    const named = new Set(dimensions.map((m) => `${m.cube}.${m.member.name}`));
    for (const cube of joined) {
      const key = cubeOf(cube).dimensions.find((d) => d.primary_key);
      if (key && !named.has(`${cube}.${key.name}`))
        throw new QueryError(`An ungrouped query needs the primary key of every cube it reads among its dimensions: add ${cube}.${key.name}.`);
    }
    const rowMeasure = (cube: string, measure: CompiledMeasure, depth = 0): string => {
      if (depth > 24) throw new QueryError(`Measure ${cube}.${measure.name} refers to itself.`);
      if (UNSUPPORTED.has(measure.type) || measure.multi_stage || measure.rolling_window)
        throw new QueryError(`Measure ${cube}.${measure.name} cannot be read row by row in an ungrouped query.`);
      const owner = cubeOf(cube);
      if (AGGREGATES.has(measure.type)) {
        const conditions = renderer.measureFilters(owner, measure);
        const input = renderer.measureInput(owner, measure);
        if (measure.type === 'count') {
          const holds = [...(input === null ? [] : [`${input} IS NOT NULL`]), ...conditions];
          return holds.length === 0 ? '1' : `(CASE WHEN ${holds.join(' AND ')} THEN 1 ELSE 0 END)`;
        }
        if (input === null) throw new QueryError(`Measure ${cube}.${measure.name} (${measure.type}) has no SQL.`);
        return conditions.length > 0 ? `(CASE WHEN ${conditions.join(' AND ')} THEN ${input} END)` : input;
      }
      const over: Renderer = new Renderer(
        index,
        (c) => (joined.has(c) ? c : undefined),
        (c, m): string => rowMeasure(c, m, depth + 1),
        context,
      );
      if (measure.sql === null) throw new QueryError(`Measure ${cube}.${measure.name} has no SQL.`);
      return `(${over.expand(measure.sql, owner, 0)})`;
    };
    const selected = [...groupColumns.map((g) => g.sql), ...measures.map((m) => rowMeasure(m.cube, m.member as CompiledMeasure))];
    const rowWhere = [
      ...where,
      ...measureFilters.map((f) =>
        filterTree(f, (leaf) => {
          const m = filterMembers.get(leaf.member)!;
          const type = m.type === 'string' || m.type === 'time' || m.type === 'boolean' ? m.type : 'number';
          return filterSql(rowMeasure(m.cube, m.member as CompiledMeasure), type, leaf, ctx);
        }),
      ),
    ];
    const columns: OutputColumn[] = [
      ...groupColumns.map((g, i) => ({ ...g.column, alias: `c${i}` })),
      ...measures.map((m, i) => ({ alias: `c${groupColumns.length + i}`, keys: [m.name], member: m })),
    ];
    const rows = `SELECT ${selected.map((sql, i) => `${sql} AS ${quote(`c${i}`)}`).join(', ')} FROM ${from}${rowWhere.length > 0 ? ` WHERE ${rowWhere.join(' AND ')}` : ''}`;
    if (options.total)
      return { sql: `SELECT count(*) AS ${quote('total_count')} FROM (${rows}) AS ${quote('original_query')}`, params, columns: [], order: [] };
    const order = query.order.length === 0 && !query.defaultOrder ? [] : orderOf(query, columns, grouped.length > 0);
    const orderSql = order.map(({ column, direction }) => `${quote(column.alias)} ${direction === 'asc' ? 'ASC NULLS LAST' : 'DESC NULLS FIRST'}`).join(', ');
    return {
      sql: `SELECT * FROM (${rows}) AS q${orderSql ? ` ORDER BY ${orderSql}` : ''} LIMIT ${bind(query.limit)} OFFSET ${bind(query.offset)}`,
      params,
      columns,
      order: order.map(({ name, direction }) => [name, direction]),
      cubes: [...joined],
    };
  }

  // Measures: base aggregations placed in groups, derived ones (`number` over other measures) computed on top.
  interface Base {
    key: string;
    cube: string;
    measure: CompiledMeasure;
    alias: string;
  }
  const bases = new Map<string, Base>();
  const baseOf = (cube: string, measure: CompiledMeasure): Base => {
    const key = `${cube}.${measure.name}`;
    let base = bases.get(key);
    if (!base) {
      base = { key, cube, measure, alias: `m${bases.size}` };
      bases.set(key, base);
    }
    return base;
  };
  const outerMeasure = (cube: string, measure: CompiledMeasure, depth = 0): string => {
    if (depth > 24) throw new QueryError(`Measure ${cube}.${measure.name} refers to itself.`);
    if (measure.type === 'rank') return rankOf(cube, measure, depth);
    if (measure.multi_stage && AGGREGATES.has(measure.type)) return stageOf(cube, measure);
    if (UNSUPPORTED.has(measure.type) || (measure.rolling_window && !AGGREGATES.has(measure.type))) {
      throw new QueryError(
        `Measure ${cube}.${measure.name} (${measure.rolling_window ? `rolling window over a ${measure.type} measure` : measure.type}) is not supported by queries yet.`,
      );
    }
    if (AGGREGATES.has(measure.type)) return `q.${quote(baseOf(cube, measure).alias)}`;
    // number, string, time, boolean: an expression over other measures, or over the cube's rows with its own aggregates.
    let refersToMeasures = false;
    const over = new Renderer(
      index,
      (c) => (joined.has(c) ? c : undefined),
      (c, m) => {
        refersToMeasures = true;
        return outerMeasure(c, m, depth + 1);
      },
      context,
    );
    const sql = measure.sql === null ? null : over.expand(measure.sql, cubeOf(cube), 0);
    if (sql === null) throw new QueryError(`Measure ${cube}.${measure.name} has no SQL.`);
    if (refersToMeasures) return `(${sql})`;
    return `q.${quote(baseOf(cube, measure).alias)}`;
  };
  /** Whether a grouping column is named (by its cube member or its own name) in a multi-stage list. */
  const listed = (list: string[] | undefined, member: ResolvedMember) =>
    (list ?? []).some((name) => name === member.name || name === `${member.cube}.${member.member.name}`);
  /**
   * A `rank` measure (Cube's multi-stage ranking): rank() over the query's rows, ordered by its
   * `order_by` (over measures), within the groups of the query's dimensions less its `reduce_by`.
   */
  function rankOf(cube: string, measure: CompiledMeasure, depth: number): string {
    const over = new Renderer(
      index,
      (c) => (joined.has(c) ? c : undefined),
      (c, m): string => outerMeasure(c, m, depth + 1),
      context,
    );
    const order = (measure.order_by ?? []).map((o) => `${over.expand(o.sql, cubeOf(cube), 0)} ${o.dir === 'asc' ? 'ASC' : 'DESC'}`);
    if (order.length === 0) throw new QueryError(`Measure ${cube}.${measure.name} is a rank: give it order_by, such as [{sql: "{revenue}", dir: desc}].`);
    const partition = groupColumns
      .map((g, i) => ({ g, i }))
      .filter(({ g }) => !listed(measure.reduce_by, g.column.member))
      .map(({ i }) => `q.${quote(`g${i}`)}`);
    return `rank() OVER (${partition.length > 0 ? `PARTITION BY ${partition.join(', ')} ` : ''}ORDER BY ${order.join(', ')})`;
  }
  /** Joins of multi-stage subqueries to the grouped rows `q`, and their aliases by measure. */
  const stageJoins: string[] = [];
  const stageAliases = new Map<string, string>();
  /**
   * A multi-stage measure (Cube's `multi_stage: true` with `group_by`, `reduce_by` or
   * `add_group_by`): an inner query of the measures its SQL refers to, grouped by the query's
   * dimensions kept by those lists (`group_by`: only the listed; `reduce_by`: all but the listed;
   * `add_group_by`: all and the listed), with the query's filters; the measure's own aggregation of
   * its SQL over those rows, by the kept dimensions; joined to the query's rows by them.
   */
  function stageOf(cube: string, measure: CompiledMeasure): string {
    const key = `${cube}.${measure.name}`;
    const known = stageAliases.get(key);
    if (known) return known;
    if (measure.sql === null) throw new QueryError(`Measure ${key} is multi-stage: give it SQL over the measures it aggregates, such as "{revenue}".`);
    const keeps = (member: ResolvedMember) =>
      measure.group_by ? listed(measure.group_by, member) : measure.reduce_by ? !listed(measure.reduce_by, member) : true;
    const keptDimensions = dimensions.filter(keeps);
    const keptTimes = grouped.filter(({ member }) => keeps(member));
    const inner: Query = {
      ...query,
      measures: referencedMeasures(index, cubeOf(cube), measure.sql),
      dimensions: [...keptDimensions.map((m) => m.name), ...(measure.add_group_by ?? [])],
      // Date ranges stay as filters; a granularity only where the time dimension is kept.
      timeDimensions: query.timeDimensions.flatMap((td) =>
        keptTimes.some((t) => t.td === td) ? [td] : td.dateRange ? [{ dimension: td.dimension, dateRange: td.dateRange }] : [],
      ),
      order: [],
      defaultOrder: false,
      limit: 2_147_483_647,
      offset: 0,
      total: false,
      ungrouped: false,
    };
    if (inner.measures.length === 0)
      throw new QueryError(`Measure ${key} is multi-stage: its SQL must refer to the measures it aggregates, such as "{revenue}".`);
    // time_shift: the inner rows are those of the shifted date range, each grouped at the time it
    // shifts to, so that a row of the query meets the value of its prior (or next) period.
    for (const shift of (measure.time_shift ?? []) as Array<{ time_dimension?: string; interval?: string; type?: 'prior' | 'next' }>) {
      const interval = parseInterval(shift.interval);
      if (!interval || interval.count < 0)
        throw new QueryError(`Measure ${key} has a time_shift whose interval "${shift.interval ?? ''}" is not a number of units such as "1 year".`);
      const count = interval.count * (shift.type === 'next' ? -1 : 1);
      const { unit } = interval;
      const applies = (td: TimeDimension) => {
        if (shift.time_dimension === undefined) return true;
        const member = timeDimensions.find((t) => t.td.dimension === td.dimension)?.member;
        // `cube.member` (as builds write it), or the member's own name in its cube.
        return member !== undefined && (listed([shift.time_dimension], member) || shift.time_dimension === member.member.name);
      };
      inner.timeDimensions = inner.timeDimensions.map((td) =>
        applies(td) ? { ...td, ...(td.dateRange ? { dateRange: shiftRange(td.dateRange, -count, unit) } : {}), shift: { count, unit } } : td,
      );
    }
    const compiled = compileQuery(index, inner, dialect, security, { params });
    const innerColumn = (name: string) => `${quote('i')}.${quote(compiled.columns.find((c) => c.keys.includes(name))!.alias)}`;
    const kept = groupColumns
      .map((g, i) => ({ g, i }))
      .filter(
        ({ g }) => keptDimensions.includes(g.column.member) || keptTimes.some((t) => t.member === g.column.member && g.column.granularity === t.td.granularity),
      );
    // Its SQL is over measures only (each a column of the inner rows); the alias is never written.
    const over = new Renderer(
      index,
      (c) => c,
      (c, m): string => innerColumn(`${c}.${m.name}`),
      context,
    );
    const value = over.expand(measure.sql, cubeOf(cube), 0);
    const aggregated = measure.type === 'count_distinct' || measure.type === 'count_distinct_approx' ? `count(DISTINCT ${value})` : `${measure.type}(${value})`;
    const alias = `ms${stageJoins.length}`;
    const keys = kept.map(({ g }, j) => `${innerColumn(g.column.keys[0]!)} AS ${quote(`k${j}`)}`);
    const stage = `SELECT ${[...keys, `${aggregated} AS ${quote('v')}`].join(', ')} FROM (${compiled.sql}) AS ${quote('i')}${kept.length > 0 ? ` GROUP BY ${kept.map((_, j) => j + 1).join(', ')}` : ''}`;
    const on = kept.map(({ i }, j) => dialect.sameValue(`q.${quote(`g${i}`)}`, `${quote(alias)}.${quote(`k${j}`)}`));
    stageJoins.push(` LEFT JOIN (${stage}) AS ${quote(alias)} ON ${on.join(' AND ') || '1 = 1'}`);
    const column = `${quote(alias)}.${quote('v')}`;
    stageAliases.set(key, column);
    return column;
  }
  const measureColumns: Array<{ sql: string; column: OutputColumn }> = measures.map((m, i) => ({
    sql: outerMeasure(m.cube, m.member as CompiledMeasure),
    column: { alias: `c${groupColumns.length + i}`, keys: [m.name], member: m },
  }));
  const having = measureFilters.map((f) =>
    filterTree(f, (leaf) => {
      const m = filterMembers.get(leaf.member)!;
      // Measures aggregate to numbers, unless the model types them as text, a time or a boolean.
      const type = m.type === 'string' || m.type === 'time' || m.type === 'boolean' ? m.type : 'number';
      return filterSql(outerMeasure(m.cube, m.member as CompiledMeasure), type, leaf, ctx);
    }),
  );

  // Groups: the measures that aggregate over the joined rows as they are, and one per cube whose rows the joins repeat.
  const groups = new Map<string, Base[]>();
  // A rolling window over the query's time dimension (by granularity, else its date range as one bucket).
  const rollingOver = grouped.length > 0 ? grouped : timeDimensions.filter((t) => t.td.dateRange);
  for (const base of bases.values()) {
    const repeated = REPEAT_SENSITIVE.has(base.measure.type) && multiplies(plan, base.cube);
    if (base.measure.rolling_window && rollingOver.length > 0) {
      if (repeated)
        throw new QueryError(
          `Measure ${base.key} has a rolling window and the query's joins repeat rows of cube ${base.cube}; query it without members of the cubes joined to it one-to-many.`,
        );
      groups.set(`rolling:${base.key}`, [base]);
      continue;
    }
    if (!AGGREGATES.has(base.measure.type) && multiplies(plan, base.cube)) {
      throw new QueryError(
        `Measure ${base.key} aggregates in its own SQL and the query's joins repeat rows of cube ${base.cube}; query it without members of the cubes joined to it one-to-many.`,
      );
    }
    const group = repeated ? base.cube : '';
    groups.set(group, [...(groups.get(group) ?? []), base]);
  }
  if (groups.size === 0) groups.set('', []);
  const dims = groupColumns.map((g, i) => `${g.sql} AS ${quote(`g${i}`)}`);
  const groupBy = groupColumns.length > 0 ? ` GROUP BY ${groupColumns.map((_, i) => i + 1).join(', ')}` : '';
  const whereSql = where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '';
  /**
   * A rolling-window measure's group: the time series (rolling.ts) LEFT JOINed to the query's rows
   * (every condition but its time dimension's date range) inside each bucket's window, aggregated
   * per bucket and dimension values; a bucket without rows still has its row.
   */
  const rollingGroup = (base: Base): string => {
    if (rollingOver.length > 1) throw new QueryError(`Measure ${base.key} has a rolling window: the query may group by one time dimension only.`);
    const [{ td, member }] = rollingOver as [(typeof rollingOver)[number]];
    if (!td.dateRange)
      throw new QueryError(
        `Measure ${base.key} has a rolling window: give the time dimension ${td.dimension} a dateRange (time series queries without one aren't supported, as in Cube).`,
      );
    if (td.granularity && !GRANULARITIES.includes(td.granularity as Granularity))
      throw new QueryError(`Measure ${base.key} has a rolling window, which queries cannot yet read by the custom granularity ${td.granularity}.`);
    const buckets = rollingBuckets(
      td.dateRange,
      td.granularity as Granularity | undefined,
      query.timezone,
      base.measure.rolling_window as RollingWindow,
      base.key,
    );
    const [first] = buckets as [Bucket];
    const series = buckets
      .map((b) => {
        const columns = [
          ...(b.label === null ? [] : [`${bind(b.label)} AS ${quote('label')}`]),
          `${b.lower ? dialect.instantParam(bind(b.lower.at)) : 'NULL'} AS ${quote('lo')}`,
          `${b.upper ? dialect.instantParam(bind(b.upper.at)) : 'NULL'} AS ${quote('hi')}`,
        ];
        return `SELECT ${columns.join(', ')}`;
      })
      .join(' UNION ALL ');
    const range = rangeAt.get(td);
    // The window replaces the date range's condition; it stays written, always true, so that every
    // bound parameter appears in the statement (PostgreSQL must see each one to type it).
    const rest = where.map((condition, i) => (i === range ? `(${condition} OR 1 = 1)` : condition));
    const cube = cubeOf(base.cube);
    const inner = [
      ...dimensions.map((m, i) => `${dimensionSql(m)} AS ${quote(`d${i}`)}`),
      `${dialect.instant(dimensionSql(member))} AS ${quote('t')}`,
      `${rowValue(renderer, cube, base.measure)} AS ${quote('v')}`,
    ];
    const window = [
      ...(first.lower ? [`${quote('f')}.${quote('t')} ${first.lower.inclusive ? '>=' : '>'} ${quote('w')}.${quote('lo')}`] : []),
      ...(first.upper ? [`${quote('f')}.${quote('t')} ${first.upper.inclusive ? '<=' : '<'} ${quote('w')}.${quote('hi')}`] : []),
    ];
    const value = `${quote('f')}.${quote('v')}`;
    const aggregated =
      base.measure.type === 'count'
        ? `count(${value})`
        : base.measure.type.startsWith('count_distinct')
          ? `count(DISTINCT ${value})`
          : `${base.measure.type}(${value})`;
    const columns = [
      ...dimensions.map((_, i) => `${quote('f')}.${quote(`d${i}`)} AS ${quote(`g${i}`)}`),
      ...(first.label === null ? [] : [`${quote('w')}.${quote('label')} AS ${quote(`g${dimensions.length}`)}`]),
      `${aggregated} AS ${quote(base.alias)}`,
    ];
    return `SELECT ${columns.join(', ')} FROM (${series}) AS ${quote('w')} LEFT JOIN (SELECT ${inner.join(', ')} FROM ${from}${rest.length > 0 ? ` WHERE ${rest.join(' AND ')}` : ''}) AS ${quote('f')} ON ${window.join(' AND ') || '1 = 1'}${groupBy}`;
  };
  const groupSql: string[] = [];
  for (const [cubeName, list] of groups) {
    if (cubeName.startsWith('rolling:')) {
      groupSql.push(rollingGroup(list[0]!));
      continue;
    }
    const cube = cubeName === '' ? null : cubeOf(cubeName);
    if (cube === null) {
      const aggs = list.map((b) => `${aggregate(renderer, cubeOf(b.cube), b.measure)} AS ${quote(b.alias)}`);
      groupSql.push(`SELECT ${[...dims, ...aggs].join(', ') || '1 AS "one"'} FROM ${from}${whereSql}${groupBy}`);
      continue;
    }
    const keys = cube.dimensions.filter((d) => d.primary_key);
    if (keys.length === 0)
      throw new QueryError(
        `Cube ${cube.name} needs a primary key: the query's joins repeat its rows, and ${list.map((b) => b.key).join(', ')} must count each row once.`,
      );
    const inner = [
      ...groupColumns.map((g, i) => `${g.sql} AS ${quote(`g${i}`)}`),
      ...keys.map((k, i) => `${renderer.dimension(cube, k)} AS ${quote(`k${i}`)}`),
      ...list.map((b) => `${rowValue(renderer, cube, b.measure)} AS ${quote(b.alias)}`),
    ];
    const outer = [
      ...groupColumns.map((_, i) => quote(`g${i}`)),
      ...list.map((b) => `${b.measure.type === 'count' ? 'count' : b.measure.type}(${quote(b.alias)}) AS ${quote(b.alias)}`),
    ];
    groupSql.push(`SELECT ${outer.join(', ')} FROM (SELECT DISTINCT ${inner.join(', ')} FROM ${from}${whereSql}) AS ${quote(`u_${cube.name}`)}${groupBy}`);
  }

  // One group is the result. Several are stacked (UNION ALL, each filling its own measures) and
  // folded by the grouping columns: each group has one row per combination, so max() picks it;
  // GROUP BY takes NULLs as equal on both data sources, which a FULL JOIN's condition would not.
  let combined: string;
  const groupLists = [...groups.values()];
  if (groupSql.length === 1) {
    combined = groupSql[0]!;
  } else {
    const allBases = groupLists.flat();
    const branches = groupSql.map((sql, i) => {
      const own = new Set(groupLists[i]!.map((b) => b.alias));
      // PostgreSQL types a chain of UNIONs pair by pair: two untyped NULLs of a column become text,
      // which a third branch's count cannot join; numeric aggregates' NULLs are typed (dialect.ts).
      const nullOf = (b: Base) => (NUMERIC_AGGREGATES.has(b.measure.type) ? dialect.numericNull : 'NULL');
      const cols = [
        ...groupColumns.map((_, g) => quote(`g${g}`)),
        ...allBases.map((b) => (own.has(b.alias) ? quote(b.alias) : `${nullOf(b)} AS ${quote(b.alias)}`)),
      ];
      return `SELECT ${cols.join(', ')} FROM (${sql}) AS ${quote(`s${i}`)}`;
    });
    const select = [...groupColumns.map((_, g) => quote(`g${g}`)), ...allBases.map((b) => `max(${quote(b.alias)}) AS ${quote(b.alias)}`)];
    combined = `SELECT ${select.join(', ')} FROM (${branches.join(' UNION ALL ')}) AS ${quote('stacked')}${groupBy}`;
  }

  const columns: OutputColumn[] = [...groupColumns.map((g, i) => ({ ...g.column, alias: `c${i}` })), ...measureColumns.map((m) => m.column)];
  const select = [
    ...groupColumns.map((_, i) => `q.${quote(`g${i}`)} AS ${quote(`c${i}`)}`),
    ...measureColumns.map((m) => `${m.sql} AS ${quote(m.column.alias)}`),
  ];
  const rows = `SELECT ${select.join(', ')} FROM (${combined}) AS q${stageJoins.join('')}` + (having.length > 0 ? ` WHERE ${having.join(' AND ')}` : '');
  // `order: []` asks for no order at all (Cube's opt-out of its default order).
  const order = query.order.length === 0 && !query.defaultOrder ? [] : orderOf(query, columns, grouped.length > 0);
  // Cube's `total`: the rows the query has without its order, limit and offset.
  if (options.total) return { sql: `SELECT count(*) AS ${quote('total_count')} FROM (${rows}) AS ${quote('original_query')}`, params, columns: [], order: [] };
  const orderSql = order.map(({ column, direction }) => `${quote(column.alias)} ${direction === 'asc' ? 'ASC NULLS LAST' : 'DESC NULLS FIRST'}`).join(', ');
  const sql = rows + (orderSql ? ` ORDER BY ${orderSql}` : '') + ` LIMIT ${bind(query.limit)} OFFSET ${bind(query.offset)}`;
  return { sql, params, columns, order: order.map(({ name, direction }) => [name, direction]), cubes: [...joined] };
}

function filterTree(f: Filter, leaf: (f: MemberFilter) => string): string {
  if (!isGroup(f)) return leaf(f);
  const [op, list] = 'and' in f ? ['AND', f.and] : ['OR', f.or];
  return `(${list.map((x) => filterTree(x, leaf)).join(` ${op} `)})`;
}

/** The aggregate of a measure over the joined rows, its `filters` applied. */
function aggregate(renderer: Renderer, cube: CompiledCube, measure: CompiledMeasure): string {
  if (!AGGREGATES.has(measure.type)) {
    // A `number` (or string, time, boolean) measure with aggregates of its own in its SQL.
    return renderer.expand(measure.sql ?? 'NULL', cube, 0);
  }
  const input = renderer.measureInput(cube, measure);
  const conditions = renderer.measureFilters(cube, measure);
  // A count of rows counts the cube's keys: a cube joined from another has NULL keys where it has no row.
  const value = input ?? (measure.type === 'count' ? rowKey(renderer, cube) : null);
  if (value === null) throw new QueryError(`Measure ${cube.name}.${measure.name} (${measure.type}) has no SQL.`);
  const guarded = conditions.length > 0 ? `CASE WHEN ${conditions.join(' AND ')} THEN ${value} END` : value;
  switch (measure.type) {
    case 'count':
      return `count(${guarded})`;
    case 'count_distinct':
    case 'count_distinct_approx':
      return `count(DISTINCT ${guarded})`;
    default:
      return `${measure.type}(${guarded})`;
  }
}

/** What one row contributes to a measure aggregated over de-duplicated rows (count, sum, avg). */
function rowValue(renderer: Renderer, cube: CompiledCube, measure: CompiledMeasure): string {
  const input = renderer.measureInput(cube, measure) ?? rowKey(renderer, cube);
  const conditions = renderer.measureFilters(cube, measure);
  return conditions.length > 0 ? `CASE WHEN ${conditions.join(' AND ')} THEN ${input} END` : input;
}

/** What is non-NULL exactly where the cube has a row: its first primary key, else a constant (the cube is the query's root). */
function rowKey(renderer: Renderer, cube: CompiledCube): string {
  const key = cube.dimensions.find((d) => d.primary_key);
  return key ? renderer.dimension(cube, key) : '1';
}

/**
 * The query's order, or the default: time ascending, else the first measure descending, else the
 * first dimension. A name in the order that the query does not select (a measure, a dimension, an
 * unknown one) is left out, as Cube's SQL leaves it out: no ORDER BY at all when none is left. NULLs sort as PostgreSQL sorts them by default (last ascending, first
 * descending), written out so SQLite sorts them the same.
 */
function orderOf(query: Query, columns: OutputColumn[], hasTime: boolean): Array<{ name: string; column: OutputColumn; direction: 'asc' | 'desc' }> {
  if (query.order.length > 0) {
    return query.order.flatMap(([name, direction]) => {
      const column = columns.find((c) => c.keys.includes(name));
      return column ? [{ name, column, direction }] : [];
    });
  }
  const time = hasTime ? columns.find((c) => c.granularity !== undefined) : undefined;
  if (time) return [{ name: time.keys[0]!, column: time, direction: 'asc' }];
  const measure = columns.find((c) => c.member.kind === 'measure');
  if (measure) return [{ name: measure.keys[0]!, column: measure, direction: 'desc' }];
  const first = columns[0];
  return first ? [{ name: first.keys[0]!, column: first, direction: 'asc' }] : [];
}

/** A date range moved by `count` units of wall time. */
function shiftRange(range: [string, string], count: number, unit: Granularity): [string, string] {
  const move = (text: string) => {
    const wall = parseWall(text);
    if (!wall) throw new QueryError(`The date range ${JSON.stringify(range)} cannot be shifted: its ends are not dates or times.`);
    return formatWall(shiftWall(wall, unit, count));
  };
  return [move(range[0]), move(range[1])];
}
