import fs from 'node:fs';
import path from 'node:path';

/**
 * dbt manifests in dbt's documented v12 format (https://schemas.getdbt.com/dbt/manifest/v12.json),
 * as `dbt compile` writes them to target/manifest.json: a small shop (customers, orders, payments,
 * plus a staging model and a source) and a generated project of any size. Only what a real
 * manifest has, with the keys the generator ignores filled in as dbt fills them.
 */

export interface FixtureColumn {
  name: string;
  data_type?: string | null;
  description?: string;
}

export interface FixtureModel {
  name: string;
  /** Below `models/`: `marts/orders.sql`. */
  path: string;
  description?: string;
  tags?: string[];
  columns: FixtureColumn[];
  /** Columns with dbt's `unique` test. */
  unique?: string[];
  notNull?: string[];
  /** `column` references `field` of model `to` (a `relationships` test). */
  relationships?: Array<{ column: string; to: string; field: string }>;
  enabled?: boolean;
}

const PACKAGE = 'shop';

export const modelId = (name: string, pkg = PACKAGE) => `model.${pkg}.${name}`;

function hash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0').slice(0, 10);
}

function modelNode(model: FixtureModel, pkg: string) {
  const id = modelId(model.name, pkg);
  const tags = model.tags ?? [];
  return {
    database: 'analytics',
    schema: 'main',
    name: model.name,
    resource_type: 'model',
    package_name: pkg,
    path: model.path,
    original_file_path: `models/${model.path}`,
    unique_id: id,
    fqn: [pkg, ...model.path.replace(/\.sql$/, '').split('/')],
    alias: model.name,
    checksum: { name: 'sha256', checksum: hash(id).repeat(6) },
    config: {
      enabled: model.enabled ?? true,
      alias: null,
      schema: null,
      database: null,
      tags,
      meta: {},
      group: null,
      materialized: 'table',
      on_schema_change: 'ignore',
      contract: { enforced: false, alias_types: true },
      access: 'protected',
    },
    tags,
    description: model.description ?? '',
    columns: Object.fromEntries(
      model.columns.map((c) => [
        c.name,
        { name: c.name, description: c.description ?? '', meta: {}, data_type: c.data_type ?? null, constraints: [], quote: null, tags: [], granularity: null },
      ]),
    ),
    meta: {},
    group: null,
    docs: { show: true, node_color: null },
    patch_path: `${pkg}://models/schema.yml`,
    build_path: null,
    unrendered_config: { materialized: 'table' },
    created_at: 1767225600,
    relation_name: `"analytics"."main"."${model.name}"`,
    raw_code: `select * from {{ ref('stg_${model.name}') }}`,
    language: 'sql',
    refs: [],
    sources: [],
    metrics: [],
    depends_on: { macros: [], nodes: [] },
    compiled_path: `target/compiled/${pkg}/models/${model.path}`,
    compiled: true,
    compiled_code: `select * from "analytics"."main"."stg_${model.name}"`,
    extra_ctes_injected: true,
    extra_ctes: [],
    contract: { enforced: false, alias_types: true, checksum: null },
    access: 'protected',
    constraints: [],
    version: null,
    latest_version: null,
    deprecation_date: null,
  };
}

function testNode(pkg: string, kind: 'unique' | 'not_null' | 'relationships', model: string, column: string, rel?: { to: string; field: string }) {
  const name = rel ? `relationships_${model}_${column}__${rel.field}__ref_${rel.to}_` : `${kind}_${model}_${column}`;
  const kwargs: Record<string, unknown> = { column_name: column, model: `{{ get_where_subquery(ref('${model}')) }}` };
  if (rel) Object.assign(kwargs, { to: `ref('${rel.to}')`, field: rel.field });
  const nodes = rel ? [modelId(rel.to, pkg), modelId(model, pkg)] : [modelId(model, pkg)];
  const id = `test.${pkg}.${name}.${hash(name)}`;
  return [
    id,
    {
      database: 'analytics',
      schema: 'main_dbt_test__audit',
      name,
      resource_type: 'test',
      package_name: pkg,
      path: `${name}.sql`,
      original_file_path: 'models/schema.yml',
      unique_id: id,
      fqn: [pkg, name],
      alias: name,
      checksum: { name: 'none', checksum: '' },
      config: { enabled: true, severity: 'ERROR', tags: [], meta: {} },
      tags: [],
      description: '',
      columns: {},
      meta: {},
      raw_code: `{{ test_${kind}(**_dbt_generic_test_kwargs) }}`,
      language: 'sql',
      refs: nodes.map((n) => ({ name: n.split('.')[2], package: null, version: null })),
      sources: [],
      metrics: [],
      depends_on: { macros: [`macro.dbt.test_${kind}`], nodes },
      column_name: column,
      file_key_name: `models.${model}`,
      attached_node: modelId(model, pkg),
      test_metadata: { name: kind, kwargs, namespace: null },
    },
  ] as const;
}

/** A v12 manifest of `models` (tests made from their unique, notNull and relationships). */
export function manifestOf(models: FixtureModel[], options: { pkg?: string; sources?: number; macros?: number } = {}) {
  const pkg = options.pkg ?? PACKAGE;
  const nodes: Record<string, unknown> = {};
  for (const model of models) {
    nodes[modelId(model.name, pkg)] = modelNode(model, pkg);
    for (const column of model.unique ?? []) nodes[testNode(pkg, 'unique', model.name, column)[0]] = testNode(pkg, 'unique', model.name, column)[1];
    for (const column of model.notNull ?? []) nodes[testNode(pkg, 'not_null', model.name, column)[0]] = testNode(pkg, 'not_null', model.name, column)[1];
    for (const r of model.relationships ?? []) {
      const [id, node] = testNode(pkg, 'relationships', model.name, r.column, r);
      nodes[id] = node;
    }
  }
  const sources = Object.fromEntries(
    Array.from({ length: options.sources ?? 1 }, (_, i) => {
      const id = `source.${pkg}.raw.table_${i}`;
      return [
        id,
        {
          database: 'raw',
          schema: 'public',
          name: `table_${i}`,
          resource_type: 'source',
          package_name: pkg,
          unique_id: id,
          source_name: 'raw',
          identifier: `table_${i}`,
          columns: {},
          relation_name: `"raw"."public"."table_${i}"`,
        },
      ];
    }),
  );
  const macros = Object.fromEntries(
    Array.from({ length: options.macros ?? 3 }, (_, i) => {
      const id = `macro.${pkg}.macro_${i}`;
      return [id, { name: `macro_${i}`, resource_type: 'macro', package_name: pkg, unique_id: id, macro_sql: '{% macro x() %}1{% endmacro %}' }];
    }),
  );
  return {
    metadata: {
      dbt_schema_version: 'https://schemas.getdbt.com/dbt/manifest/v12.json',
      dbt_version: '1.9.4',
      generated_at: '2026-08-17T12:00:00.000000Z',
      invocation_id: '8f0c1a52-6d0e-4f4b-9d7c-3c1f7f2f0a11',
      env: {},
      project_name: pkg,
      project_id: hash(pkg),
      user_id: null,
      send_anonymous_usage_stats: false,
      adapter_type: 'postgres',
    },
    nodes,
    sources,
    macros,
    docs: {},
    exposures: {},
    metrics: {},
    groups: {},
    selectors: {},
    disabled: {},
    parent_map: {},
    child_map: {},
    group_map: {},
    saved_queries: {},
    semantic_models: {},
    unit_tests: {},
  };
}

export type FixtureManifest = ReturnType<typeof manifestOf>;

/** The shop: customers, their orders and the orders' payments, with a staging model tagged `staging`. */
export function shopModels(): FixtureModel[] {
  return [
    {
      name: 'customers',
      path: 'marts/customers.sql',
      description: 'One row per customer.',
      tags: ['finance', 'core'],
      columns: [
        { name: 'id', data_type: 'integer', description: 'The customer id.' },
        { name: 'first_name', data_type: 'text' },
        { name: 'last_name', data_type: 'character varying(255)' },
        { name: 'created_at', data_type: 'timestamp with time zone', description: 'When the customer signed up.' },
        { name: 'lifetime_value', data_type: 'numeric(12,2)' },
        { name: 'is_active', data_type: 'boolean' },
      ],
      unique: ['id'],
      notNull: ['id'],
    },
    {
      name: 'orders',
      path: 'marts/orders.sql',
      description: 'One row per order.',
      tags: ['finance'],
      columns: [
        { name: 'order_id', data_type: 'bigint' },
        { name: 'customer_id', data_type: 'integer' },
        { name: 'order_date', data_type: 'date' },
        { name: 'status', data_type: 'varchar', description: 'placed, shipped, completed, returned' },
        { name: 'amount', data_type: 'double precision' },
      ],
      unique: ['order_id'],
      notNull: ['order_id', 'customer_id'],
      relationships: [{ column: 'customer_id', to: 'customers', field: 'id' }],
    },
    {
      name: 'Payments',
      path: 'marts/payments.sql',
      columns: [
        { name: 'payment_id', data_type: 'integer' },
        { name: 'order_id', data_type: 'bigint' },
        { name: 'Payment Method', data_type: 'text' },
        { name: 'amount', data_type: 'decimal(12,2)' },
        { name: 'paid_at' },
      ],
      unique: ['payment_id'],
      relationships: [{ column: 'order_id', to: 'orders', field: 'order_id' }],
    },
    {
      name: 'stg_orders',
      path: 'staging/stg_orders.sql',
      tags: ['staging'],
      columns: [
        { name: 'id', data_type: 'integer' },
        { name: 'user_id', data_type: 'integer' },
      ],
    },
  ];
}

export function shopManifest(): FixtureManifest {
  return manifestOf(shopModels());
}

/** A deterministic pseudo-random sequence (the same project every run). */
function sequence(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const TYPES = ['integer', 'bigint', 'numeric(18,2)', 'double precision', 'text', 'varchar(64)', 'date', 'timestamp', 'timestamp with time zone', 'boolean'];
const TAGS = ['core', 'finance', 'marketing', 'ops', 'staging'];

/** A project of `count` models (500 for the benchmark): each with an `id` key, 6 to 24 typed columns, and a relationship to an earlier model. */
export function largeModels(count = 500): FixtureModel[] {
  const next = sequence(20260817);
  const models: FixtureModel[] = [];
  for (let i = 0; i < count; i += 1) {
    const name = `model_${String(i).padStart(4, '0')}`;
    const columns: FixtureColumn[] = [{ name: 'id', data_type: 'bigint', description: `Key of ${name}.` }];
    const relationships: FixtureModel['relationships'] = [];
    if (i > 0) {
      const parent = `model_${String(Math.floor(next() * i)).padStart(4, '0')}`;
      columns.push({ name: `${parent}_id`, data_type: 'bigint' });
      relationships.push({ column: `${parent}_id`, to: parent, field: 'id' });
    }
    const extra = 6 + Math.floor(next() * 19);
    for (let c = 0; c < extra; c += 1)
      columns.push({
        name: `col_${c}`,
        data_type: TYPES[Math.floor(next() * TYPES.length)] ?? 'text',
        description: next() < 0.5 ? `Column ${c} of ${name}.` : '',
      });
    models.push({
      name,
      path: `${TAGS[i % TAGS.length]}/${name}.sql`,
      description: `Model ${i} of the generated project.`,
      tags: [TAGS[i % TAGS.length] ?? 'core'],
      columns,
      unique: ['id'],
      notNull: ['id'],
      relationships,
    });
  }
  return models;
}

export function largeManifest(count = 500): FixtureManifest {
  return manifestOf(largeModels(count), { sources: 40, macros: 300 });
}

/** Writes a manifest where `dbt compile` would: `<dir>/target/manifest.json`. */
export function writeManifest(dir: string, manifest: unknown): string {
  const file = path.join(dir, 'target', 'manifest.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(manifest, null, 2));
  return file;
}
