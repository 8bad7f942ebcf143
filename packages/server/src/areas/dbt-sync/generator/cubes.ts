import type { ManifestColumn, ManifestNode } from './manifest.js';
import type { ModelFacts } from './model-tests.js';
import { Namer, snakeCase } from './names.js';
import { dimensionType, type DimensionType } from './types.js';

export interface CubeDimension {
  name: string;
  description?: string;
  sql: string;
  type: DimensionType;
  primary_key?: true;
}

export interface CubeMeasure {
  name: string;
  description?: string;
  sql?: string;
  type: 'count' | 'sum';
}

export interface CubeJoin {
  name: string;
  sql: string;
  relationship: 'many_to_one';
}

/** A cube in the order its keys are written. */
export interface GeneratedCube {
  name: string;
  description?: string;
  sql_table: string;
  meta: { dbt: { unique_id: string; path: string | null; tags?: string[] } };
  joins?: CubeJoin[];
  dimensions: CubeDimension[];
  measures: CubeMeasure[];
}

const SIMPLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A column as SQL: bare when it is a plain identifier, else double-quoted. */
export function columnSql(name: string): string {
  return SIMPLE.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

const described = (value: string | null | undefined) => (value && value.trim() !== '' ? { description: value.trim() } : {});

/** The table a model builds: its `relation_name` as dbt quotes it, else database.schema.alias. */
export function tableOf(model: ManifestNode): string {
  if (model.relation_name) return model.relation_name;
  return [model.database, model.schema, model.alias ?? model.name].filter((part): part is string => typeof part === 'string' && part !== '').join('.');
}

interface Column {
  column: string;
  dataType: string | null;
  description: string | null;
}

/** The model's documented columns in manifest order, then columns only its tests name (in test order). */
function columnsOf(model: ManifestNode, facts: ModelFacts | undefined): Column[] {
  const columns: Column[] = Object.values(model.columns ?? {}).map((c: ManifestColumn) => ({
    column: c.name,
    dataType: c.data_type ?? null,
    description: c.description ?? null,
  }));
  const known = new Set(columns.map((c) => c.column.toLowerCase()));
  const tested = [...(facts?.unique ?? []), ...(facts?.relationships.map((r) => r.column) ?? [])];
  for (const column of tested) {
    if (known.has(column.toLowerCase())) continue;
    known.add(column.toLowerCase());
    columns.push({ column, dataType: null, description: null });
  }
  return columns;
}

/** The primary key: the first `unique` column that is also `not_null`, else the first `unique` one. */
function primaryKeyOf(facts: ModelFacts | undefined): string | null {
  if (!facts || facts.unique.length === 0) return null;
  return (facts.unique.find((c) => facts.notNull.has(c.toLowerCase())) ?? facts.unique[0] ?? null)?.toLowerCase() ?? null;
}

/**
 * One model's cube: a dimension per column (the `unique` one the primary key), a join per
 * `relationships` test to another generated cube (many_to_one, from this model, the child), a
 * `count` measure and a `sum` measure per numeric column that is neither the key nor a join's.
 * Member names are snake_case, unique in the cube: dimensions claim theirs first, in column
 * order, then the measures.
 */
export function cubeOf(model: ManifestNode, cubeName: string, facts: ModelFacts | undefined, cubeNames: ReadonlyMap<string, string>): GeneratedCube {
  const namer = new Namer();
  const primaryKey = primaryKeyOf(facts);
  const joins: CubeJoin[] = [];
  const joined = new Set<string>();
  const foreignKeys = new Set<string>();
  for (const relation of facts?.relationships ?? []) {
    foreignKeys.add(relation.column.toLowerCase());
    const target = cubeNames.get(relation.parentId);
    // One join per target cube (a cube's joins are named for their target); the first test wins.
    if (target === undefined || joined.has(target) || target === cubeName) continue;
    joined.add(target);
    joins.push({ name: target, sql: `{CUBE}.${columnSql(relation.column)} = {${target}}.${columnSql(relation.field)}`, relationship: 'many_to_one' });
  }
  joins.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  const dimensions: CubeDimension[] = [];
  const sums: Array<{ dimension: string; column: string }> = [];
  for (const { column, dataType, description } of columnsOf(model, facts)) {
    const name = namer.take(snakeCase(column, 'column'));
    const type = dimensionType(dataType);
    const isKey = column.toLowerCase() === primaryKey;
    dimensions.push({ name, ...described(description), sql: `{CUBE}.${columnSql(column)}`, type, ...(isKey ? { primary_key: true as const } : {}) });
    if (type === 'number' && !isKey && !foreignKeys.has(column.toLowerCase())) sums.push({ dimension: name, column });
  }
  const measures: CubeMeasure[] = [{ name: namer.take('count'), type: 'count' }];
  for (const { dimension, column } of sums) measures.push({ name: namer.take(`total_${dimension}`), sql: `{CUBE}.${columnSql(column)}`, type: 'sum' });

  const tags = [...(model.tags ?? [])].sort();
  return {
    name: cubeName,
    ...described(model.description),
    sql_table: tableOf(model),
    meta: { dbt: { unique_id: model.unique_id, path: model.original_file_path ?? model.path ?? null, ...(tags.length > 0 ? { tags } : {}) } },
    ...(joins.length > 0 ? { joins } : {}),
    dimensions,
    measures,
  };
}
