import { Ajv, type ValidateFunction } from 'ajv';
import { Type, type Static, type TProperties, type TSchema } from 'typebox';

/**
 * The shape of a YAML model file, in the model language's documented (snake_case) vocabulary:
 * every key a cube, view or member may carry is listed, so a misspelt key is an error rather
 * than silently ignored. What one key allows depending on another (`sql` unless the type is
 * `count`, `latitude` on geo dimensions) is checked in rules.ts, with messages that name both.
 */

const Strict = <T extends TProperties>(properties: T) => Type.Object(properties, { additionalProperties: false });
const Optional = <T extends TSchema>(schema: T) => Type.Optional(schema);

export const IDENTIFIER = '^[A-Za-z_][A-Za-z0-9_]*$';
const Identifier = Type.String({ pattern: IDENTIFIER });
/** A member reference as lists write it: `status`, `CUBE.status`, `orders.status`, `orders.customers.name`. */
const MemberName = Type.String({ minLength: 1 });
const MemberNames = Type.Array(MemberName);
const Sql = Type.String();
const Flag = Type.Boolean();
const Text = Type.String();
/** Free-form metadata the runtime passes through to clients. */
const Anything = Type.Unknown();
const Format = Type.Union([Type.String(), Strict({ type: Optional(Text), label: Optional(Text) })], {
  'x-expected': 'a format name, a d3-format string or {type, label}',
});
const SqlOnly = Strict({ sql: Sql });

export const MEASURE_TYPES = [
  'count',
  'count_distinct',
  'count_distinct_approx',
  'sum',
  'avg',
  'min',
  'max',
  'number',
  'number_agg',
  'string',
  'time',
  'boolean',
  'running_total',
  'rank',
] as const;
export const DIMENSION_TYPES = ['string', 'number', 'time', 'boolean', 'geo', 'switch'] as const;
/** The canonical names first: they are what the compiled model says. */
export const RELATIONSHIPS = [
  'one_to_one',
  'one_to_many',
  'many_to_one',
  'has_one',
  'has_many',
  'belongs_to',
  'hasOne',
  'hasMany',
  'belongsTo',
  'oneToOne',
  'oneToMany',
  'manyToOne',
] as const;
export const PRE_AGGREGATION_TYPES = ['rollup', 'original_sql', 'rollup_join', 'rollup_lambda', 'auto_rollup'] as const;
const GRANULARITIES = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'] as const;
const FILTER_OPERATORS = [
  'equals',
  'notEquals',
  'contains',
  'notContains',
  'startsWith',
  'notStartsWith',
  'endsWith',
  'notEndsWith',
  'in',
  'notIn',
  'gt',
  'gte',
  'lt',
  'lte',
  'set',
  'notSet',
  'inDateRange',
  'notInDateRange',
  'onTheDate',
  'beforeDate',
  'beforeOrOnDate',
  'afterDate',
  'afterOrOnDate',
  'measureFilter',
] as const;

const Label = Type.Union([Text, SqlOnly], { 'x-expected': 'a label or {sql}' });
const TimeShift = Strict({
  name: Optional(Type.String()),
  time_dimension: Optional(MemberName),
  interval: Optional(Text),
  type: Optional(Type.Enum(['prior', 'next'])),
  sql: Optional(Sql),
});
const Common = {
  name: Identifier,
  title: Optional(Text),
  description: Optional(Text),
  public: Optional(Flag),
  shown: Optional(Flag),
  meta: Optional(Anything),
  aliases: Optional(Type.Array(Text)),
};

export const MeasureSchema = Strict({
  ...Common,
  type: Type.Enum(MEASURE_TYPES),
  sql: Optional(Sql),
  format: Optional(Format),
  visible: Optional(Flag),
  cumulative: Optional(Flag),
  filters: Optional(Type.Array(SqlOnly)),
  drill_filters: Optional(Type.Array(SqlOnly)),
  drill_members: Optional(MemberNames),
  rolling_window: Optional(
    Strict({
      type: Optional(Type.Enum(['fixed', 'year_to_date', 'quarter_to_date', 'month_to_date', 'to_date'])),
      trailing: Optional(Text),
      leading: Optional(Text),
      offset: Optional(Type.Enum(['start', 'end'])),
      granularity: Optional(Text),
    }),
  ),
  multi_stage: Optional(Flag),
  group_by: Optional(MemberNames),
  reduce_by: Optional(MemberNames),
  add_group_by: Optional(MemberNames),
  time_shift: Optional(Type.Array(TimeShift)),
  order_by: Optional(Type.Array(Strict({ sql: Sql, dir: Optional(Type.Enum(['asc', 'desc'])) }))),
  case: Optional(Strict({ switch: Sql, when: Type.Array(Strict({ value: Anything, sql: Sql })), else: Optional(SqlOnly) })),
  mask: Optional(Anything),
});
export type RawMeasure = Static<typeof MeasureSchema>;

export const DimensionSchema = Strict({
  ...Common,
  type: Type.Enum(DIMENSION_TYPES),
  sql: Optional(Sql),
  format: Optional(Format),
  primary_key: Optional(Flag),
  sub_query: Optional(Flag),
  propagate_filters_to_sub_query: Optional(Flag),
  case: Optional(Strict({ when: Type.Array(Strict({ sql: Sql, label: Label })), else: Optional(Strict({ label: Label })) })),
  latitude: Optional(SqlOnly),
  longitude: Optional(SqlOnly),
  granularities: Optional(
    Type.Array(
      Strict({ name: Identifier, title: Optional(Text), interval: Optional(Text), offset: Optional(Text), origin: Optional(Text), sql: Optional(Sql) }),
    ),
  ),
  time_shift: Optional(Type.Array(TimeShift)),
  order: Optional(Type.Enum(['asc', 'desc'])),
  values: Optional(Type.Array(Anything)),
  multi_stage: Optional(Flag),
  add_group_by: Optional(MemberNames),
  mask: Optional(Anything),
  suggest_filter_values: Optional(Flag),
  enable_suggestions: Optional(Flag),
  values_as_segments: Optional(Flag),
  field_type: Optional(Text),
});
export type RawDimension = Static<typeof DimensionSchema>;

export const SegmentSchema = Strict({ ...Common, sql: Sql });
export type RawSegment = Static<typeof SegmentSchema>;

export const JoinSchema = Strict({
  name: Identifier,
  sql: Sql,
  relationship: Type.Enum(RELATIONSHIPS, { 'x-expected': 'one_to_one, one_to_many, many_to_one (or has_one, has_many, belongs_to)' }),
});
export type RawJoin = Static<typeof JoinSchema>;

const RefreshKey = Strict({
  every: Optional(Text),
  sql: Optional(Sql),
  timezone: Optional(Text),
  immutable: Optional(Flag),
  incremental: Optional(Flag),
  update_window: Optional(Text),
});

export const PreAggregationSchema = Strict({
  name: Identifier,
  type: Optional(Type.Enum(PRE_AGGREGATION_TYPES)),
  measures: Optional(MemberNames),
  dimensions: Optional(MemberNames),
  segments: Optional(MemberNames),
  time_dimension: Optional(MemberName),
  time_dimensions: Optional(Type.Array(Strict({ dimension: MemberName, granularity: Optional(Text) }))),
  granularity: Optional(Text),
  partition_granularity: Optional(Type.Enum(GRANULARITIES)),
  rollups: Optional(MemberNames),
  refresh_key: Optional(RefreshKey),
  build_range_start: Optional(SqlOnly),
  build_range_end: Optional(SqlOnly),
  refresh_range_start: Optional(SqlOnly),
  refresh_range_end: Optional(SqlOnly),
  indexes: Optional(
    Type.Array(Strict({ name: Identifier, columns: Optional(MemberNames), sql: Optional(Sql), type: Optional(Type.Enum(['regular', 'aggregate'])) })),
  ),
  scheduled_refresh: Optional(Flag),
  external: Optional(Flag),
  use_original_sql_pre_aggregations: Optional(Flag),
  union_with_source_data: Optional(Flag),
  allow_non_strict_date_range_match: Optional(Flag),
  unique_key_columns: Optional(Type.Array(Text)),
  read_only: Optional(Flag),
  stream_offset: Optional(Type.Enum(['earliest', 'latest'])),
  output_column_types: Optional(Type.Array(Strict({ member: MemberName, type: Text }))),
  sql_alias: Optional(Text),
  max_pre_aggregations: Optional(Type.Number()),
});
export type RawPreAggregation = Static<typeof PreAggregationSchema>;

export const HierarchySchema = Strict({ name: Identifier, title: Optional(Text), public: Optional(Flag), levels: MemberNames });

/** Row-level filters nest through `or` and `and`; four levels deep is far more than any policy needs. */
function policyFilter(depth: number): TSchema {
  const leaf = {
    member: Optional(MemberName),
    operator: Optional(Type.Enum(FILTER_OPERATORS)),
    values: Optional(Type.Union([Type.Array(Anything), Text], { 'x-expected': 'a list of values' })),
  };
  if (depth === 0) return Strict(leaf);
  return Strict({ ...leaf, or: Optional(Type.Array(policyFilter(depth - 1))), and: Optional(Type.Array(policyFilter(depth - 1))) });
}
export interface RawPolicyFilter {
  member?: string;
  operator?: string;
  values?: unknown;
  or?: RawPolicyFilter[];
  and?: RawPolicyFilter[];
}

const MemberSelection = Type.Union([Type.Literal('*'), MemberNames], { 'x-expected': '"*" or a list of member names' });
const MemberLevel = Strict({ includes: Optional(MemberSelection), excludes: Optional(MemberSelection) });
export const AccessPolicySchema = Strict({
  role: Optional(Text),
  group: Optional(Text),
  groups: Optional(Type.Array(Text)),
  conditions: Optional(Type.Array(Strict({ if: Type.Union([Text, Flag], { 'x-expected': 'an expression' }) }))),
  member_level: Optional(MemberLevel),
  member_masking: Optional(MemberLevel),
  row_level: Optional(Strict({ filters: Optional(Type.Array(policyFilter(3))), allow_all: Optional(Flag) })),
});
export type RawAccessPolicy = Omit<Static<typeof AccessPolicySchema>, 'row_level'> & { row_level?: { filters?: RawPolicyFilter[]; allow_all?: boolean } };

const Members = {
  measures: Optional(Type.Array(MeasureSchema)),
  dimensions: Optional(Type.Array(DimensionSchema)),
  segments: Optional(Type.Array(SegmentSchema)),
  access_policy: Optional(Type.Array(AccessPolicySchema)),
};

export const CubeSchema = Strict({
  ...Common,
  ...Members,
  sql: Optional(Sql),
  sql_table: Optional(Text),
  sql_alias: Optional(Text),
  extends: Optional(Identifier),
  data_source: Optional(Text),
  refresh_key: Optional(RefreshKey),
  calendar: Optional(Flag),
  rewrite_queries: Optional(Flag),
  joins: Optional(Type.Array(JoinSchema)),
  pre_aggregations: Optional(Type.Array(PreAggregationSchema)),
  hierarchies: Optional(Type.Array(HierarchySchema)),
});

/** View folders nest; four levels deep, as with policy filters. */
function viewFolder(depth: number): TSchema {
  const item = depth === 0 ? Text : Type.Union([Text, viewFolder(depth - 1)], { 'x-expected': 'a member name or a folder' });
  return Strict({ name: Text, includes: Type.Union([Type.Literal('*'), Type.Array(item)], { 'x-expected': '"*" or a list of member names and folders' }) });
}
export interface RawFolder {
  name: string;
  includes: '*' | Array<string | RawFolder>;
}

const IncludedMember = Strict({
  name: Identifier,
  alias: Optional(Identifier),
  title: Optional(Text),
  description: Optional(Text),
  format: Optional(Format),
  meta: Optional(Anything),
});
export type RawIncludedMember = Static<typeof IncludedMember>;
export const ViewCubeSchema = Strict({
  join_path: Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*$' }),
  includes: Type.Union([Type.Literal('*'), Type.Array(Type.Union([Identifier, IncludedMember], { 'x-expected': 'a member name or {name, alias}' }))], {
    'x-expected': '"*" or a list of member names and {name, alias} objects',
  }),
  excludes: Optional(Type.Array(Identifier)),
  prefix: Optional(Flag),
  split: Optional(Flag),
  alias: Optional(Identifier),
});
export type RawViewCube = Static<typeof ViewCubeSchema>;

export const ViewSchema = Strict({
  ...Common,
  ...Members,
  extends: Optional(Identifier),
  cubes: Optional(Type.Array(ViewCubeSchema)),
  folders: Optional(Type.Array(viewFolder(3))),
});

type WithPolicies<T> = Omit<T, 'access_policy'> & { access_policy?: RawAccessPolicy[] };
export type RawCube = WithPolicies<Static<typeof CubeSchema>>;
export type RawView = WithPolicies<Omit<Static<typeof ViewSchema>, 'folders'>> & { folders?: RawFolder[] };

export const ModelFileContentSchema = Strict({ cubes: Optional(Type.Array(CubeSchema)), views: Optional(Type.Array(ViewSchema)) });
export interface RawModelFile {
  cubes?: RawCube[];
  views?: RawView[];
}

/**
 * Compiled once, on first use (a server start that builds no model does not pay for it): every
 * build and every file validation reuses it. `verbose` keeps each error's schema, so messages can
 * list what a key accepts; `x-expected` is an annotation naming the accepted forms of a union in words.
 */
let compiled: ValidateFunction<RawModelFile> | undefined;
export function modelFileValidator(): ValidateFunction<RawModelFile> {
  if (!compiled) {
    const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, allowUnionTypes: true });
    ajv.addKeyword({ keyword: 'x-expected', schemaType: 'string' });
    compiled = ajv.compile<RawModelFile>(ModelFileContentSchema);
  }
  return compiled;
}
