import type { RawCube, RawDimension, RawMeasure, RawPreAggregation, RawSegment, RawView } from './model-schema.js';
import { resolve } from './references.js';
import type { EntitySymbol, MemberSymbol, Model } from './symbols.js';

/**
 * The compiled model a build stores and the runtime and clients read: every cube with its
 * members (inherited ones included), joins with one spelling of each relationship, and every
 * view with the members it exposes and the cube member behind each. Plain JSON.
 */

export type Relationship = 'one_to_one' | 'one_to_many' | 'many_to_one';

interface Described {
  name: string;
  title?: string;
  description?: string;
  public: boolean;
  meta?: unknown;
}

export interface CompiledMeasure extends Described {
  type: string;
  /** Null for a `count` of rows, a `rank` or a `case` measure. */
  sql: string | null;
  format?: unknown;
  filters?: string[];
  rolling_window?: RawMeasure['rolling_window'];
  drill_members?: string[];
  multi_stage?: boolean;
  /** Multi-stage: the dimensions (`cube.member`) the inner stage groups by only, without, or besides the query's. */
  group_by?: string[];
  reduce_by?: string[];
  add_group_by?: string[];
  /** A `rank` measure's order. */
  order_by?: RawMeasure['order_by'];
  time_shift?: RawMeasure['time_shift'];
}

export interface CompiledDimension extends Described {
  type: string;
  /** Null for geo (latitude and longitude), case and switch dimensions. */
  sql: string | null;
  primary_key: boolean;
  format?: unknown;
  sub_query?: boolean;
  propagate_filters_to_sub_query?: boolean;
  latitude?: string;
  longitude?: string;
  case?: RawDimension['case'];
  granularities?: RawDimension['granularities'];
  values?: unknown[];
  order?: 'asc' | 'desc';
}

export interface CompiledSegment extends Described {
  sql: string;
}

export interface CompiledJoin {
  /** The cube joined. */
  name: string;
  relationship: Relationship;
  sql: string;
}

export interface CompiledPreAggregation {
  name: string;
  type: string;
  /** Members as `cube.member`. */
  measures: string[];
  dimensions: string[];
  segments: string[];
  time_dimension: string | null;
  granularity: string | null;
  partition_granularity?: string;
  rollups?: string[];
  refresh_key?: RawPreAggregation['refresh_key'];
  indexes?: RawPreAggregation['indexes'];
}

export interface CompiledCube {
  name: string;
  /** The model file it is defined in. */
  file: string;
  title?: string;
  description?: string;
  public: boolean;
  sql_table?: string;
  sql?: string;
  sql_alias?: string;
  data_source: string;
  extends?: string;
  refresh_key?: RawCube['refresh_key'];
  meta?: unknown;
  measures: CompiledMeasure[];
  dimensions: CompiledDimension[];
  segments: CompiledSegment[];
  joins: CompiledJoin[];
  pre_aggregations: CompiledPreAggregation[];
  hierarchies?: Array<{ name: string; title?: string; levels: string[] }>;
  access_policy?: RawCube['access_policy'];
}

export interface CompiledViewMember {
  /** The name the view exposes, with its prefix and alias. */
  name: string;
  kind: 'measure' | 'dimension' | 'segment';
  type: string | null;
  /** The cube member behind it, `cube.member`; null for a member the view defines with its own SQL. */
  member: string | null;
  join_path: string | null;
  sql?: string;
  public: boolean;
  title?: string;
  description?: string;
  format?: unknown;
  meta?: unknown;
}

export interface CompiledView {
  name: string;
  file: string;
  title?: string;
  description?: string;
  public: boolean;
  extends?: string;
  meta?: unknown;
  members: CompiledViewMember[];
  folders?: RawView['folders'];
  access_policy?: RawView['access_policy'];
}

export interface ModelArtifact {
  cubes: CompiledCube[];
  views: CompiledView[];
}

const RELATIONSHIPS: Record<string, Relationship> = {
  one_to_one: 'one_to_one',
  has_one: 'one_to_one',
  hasOne: 'one_to_one',
  oneToOne: 'one_to_one',
  one_to_many: 'one_to_many',
  has_many: 'one_to_many',
  hasMany: 'one_to_many',
  oneToMany: 'one_to_many',
  many_to_one: 'many_to_one',
  belongs_to: 'many_to_one',
  belongsTo: 'many_to_one',
  manyToOne: 'many_to_one',
};

export function normalizeRelationship(relationship: string): Relationship {
  return RELATIONSHIPS[relationship]!;
}

/** Leaves out what the file does not say, so the artifact holds no `undefined`. */
function defined<T extends object>(value: T): T {
  for (const key of Object.keys(value) as Array<keyof T>) if (value[key] === undefined) delete value[key];
  return value;
}

/** `public` says; else the older `shown` (and `visible` on measures); else primary keys are private and the rest public. */
function isPublic(raw: { public?: boolean; shown?: boolean; visible?: boolean; primary_key?: boolean }): boolean {
  return raw.public ?? raw.shown ?? raw.visible ?? !raw.primary_key;
}

function described(raw: { name: string; title?: string; description?: string; meta?: unknown }, publicFlag: boolean): Described {
  return { name: raw.name, title: raw.title, description: raw.description, public: publicFlag, meta: raw.meta };
}

/** A name from a list as `cube.member`, as resolved from `scope`. */
function qualified(model: Model, scope: EntitySymbol, name: string): string {
  const resolution = resolve(model, scope, name.split('.'), true);
  return 'member' in resolution ? `${resolution.entity.name}.${resolution.member.name}` : name;
}

function compileMember(model: Model, scope: EntitySymbol, member: MemberSymbol): CompiledMeasure | CompiledDimension | CompiledSegment {
  if (member.kind === 'segment') {
    const raw = member.raw as RawSegment;
    return defined({ ...described(raw, isPublic(raw)), sql: raw.sql });
  }
  if (member.kind === 'measure') {
    const raw = member.raw as RawMeasure;
    return defined({
      ...described(raw, isPublic(raw)),
      type: raw.type,
      sql: raw.sql ?? null,
      format: raw.format,
      filters: raw.filters?.map((filter) => filter.sql),
      rolling_window: raw.rolling_window,
      drill_members: raw.drill_members?.map((name) => qualified(model, scope, name)),
      multi_stage: raw.multi_stage,
      group_by: raw.group_by?.map((name) => qualified(model, scope, name)),
      reduce_by: raw.reduce_by?.map((name) => qualified(model, scope, name)),
      add_group_by: raw.add_group_by?.map((name) => qualified(model, scope, name)),
      order_by: raw.order_by,
      time_shift: raw.time_shift?.map((shift) =>
        shift.time_dimension === undefined ? shift : { ...shift, time_dimension: qualified(model, scope, shift.time_dimension) },
      ),
    });
  }
  const raw = member.raw as RawDimension;
  return defined({
    ...described(raw, isPublic(raw)),
    type: raw.type,
    sql: raw.sql ?? null,
    primary_key: raw.primary_key ?? false,
    format: raw.format,
    sub_query: raw.sub_query,
    propagate_filters_to_sub_query: raw.propagate_filters_to_sub_query,
    latitude: raw.latitude?.sql,
    longitude: raw.longitude?.sql,
    case: raw.case,
    granularities: raw.granularities,
    values: raw.values,
    order: raw.order,
  });
}

function compilePreAggregation(model: Model, scope: EntitySymbol, raw: RawPreAggregation): CompiledPreAggregation {
  const names = (list: string[] | undefined) => (list ?? []).map((name) => qualified(model, scope, name));
  return defined({
    name: raw.name,
    type: raw.type ?? 'rollup',
    measures: names(raw.measures),
    dimensions: names(raw.dimensions),
    segments: names(raw.segments),
    time_dimension: raw.time_dimension === undefined ? null : qualified(model, scope, raw.time_dimension),
    granularity: raw.granularity ?? null,
    partition_granularity: raw.partition_granularity,
    rollups: raw.rollups,
    refresh_key: raw.refresh_key,
    indexes: raw.indexes,
  });
}

function compileCube(model: Model, cube: EntitySymbol): CompiledCube {
  const raw = cube.raw as RawCube;
  const members = [...cube.members.values()];
  const of = <T>(kind: MemberSymbol['kind']) => members.filter((m) => m.kind === kind).map((m) => compileMember(model, cube, m) as T);
  // What a cube inherits and does not say itself (its table, its source) comes from its parent.
  const source = (key: 'sql' | 'sql_table' | 'data_source'): string | undefined => {
    for (let at: EntitySymbol | null = cube; at; at = at.parent) if ((at.raw as RawCube)[key] !== undefined) return (at.raw as RawCube)[key];
    return undefined;
  };
  return defined({
    name: cube.name,
    file: cube.file.path,
    title: raw.title,
    description: raw.description,
    public: isPublic(raw),
    sql_table: source('sql_table'),
    sql: source('sql'),
    sql_alias: raw.sql_alias,
    data_source: source('data_source') ?? 'default',
    extends: raw.extends,
    refresh_key: raw.refresh_key,
    meta: raw.meta,
    measures: of<CompiledMeasure>('measure'),
    dimensions: of<CompiledDimension>('dimension'),
    segments: of<CompiledSegment>('segment'),
    joins: [...cube.joins.values()].map(({ raw: join }) => ({ name: join.name, relationship: normalizeRelationship(join.relationship), sql: join.sql })),
    pre_aggregations: [...cube.preAggregations.values()].map(({ raw: p }) => compilePreAggregation(model, cube, p)),
    hierarchies: raw.hierarchies?.map((h) => defined({ name: h.name, title: h.title, levels: h.levels.map((level) => qualified(model, cube, level)) })),
    access_policy: raw.access_policy,
  });
}

function compileView(view: EntitySymbol): CompiledView {
  const raw = view.raw as RawView;
  const members: CompiledViewMember[] = [];
  for (const exposed of view.exposed.values()) {
    const { member } = exposed;
    members.push(
      defined({
        name: exposed.name,
        kind: member.kind,
        type: member.type,
        member: `${exposed.entity.name}.${member.name}`,
        join_path: exposed.joinPath,
        public: isPublic(member.raw),
        title: exposed.title ?? member.raw.title,
        description: exposed.description ?? member.raw.description,
        format: exposed.format ?? (member.raw as RawMeasure).format,
        meta: exposed.meta ?? member.raw.meta,
      }),
    );
  }
  for (const member of view.members.values()) {
    if (view.exposed.has(member.name)) continue;
    const sql = (member.raw as RawSegment).sql as string | undefined;
    members.push(
      defined({
        name: member.name,
        kind: member.kind,
        type: member.type,
        member: null,
        join_path: null,
        sql,
        public: isPublic(member.raw),
        title: member.raw.title,
        description: member.raw.description,
        meta: member.raw.meta,
      }),
    );
  }
  return defined({
    name: view.name,
    file: view.file.path,
    title: raw.title,
    description: raw.description,
    public: isPublic(raw),
    extends: raw.extends,
    meta: raw.meta,
    members,
    folders: raw.folders,
    access_policy: raw.access_policy,
  });
}

export function buildArtifact(model: Model): ModelArtifact {
  const cubes = model.entities.filter((e) => e.kind === 'cube').map((cube) => compileCube(model, cube));
  const views = model.entities.filter((e) => e.kind === 'view').map(compileView);
  return { cubes, views };
}
