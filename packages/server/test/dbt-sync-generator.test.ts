import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { checkManifest, generateCubes, NothingSelected, type GeneratedCube, type Manifest, type ModelSelector } from '../src/areas/dbt-sync/generator/index.js';
import { snakeCase } from '../src/areas/dbt-sync/generator/names.js';
import { dimensionType } from '../src/areas/dbt-sync/generator/types.js';
import { validateModel } from '../src/model/index.js';
import { largeManifest, largeModels, manifestOf, shopManifest, type FixtureModel } from './dbt-fixtures.js';

const ALL: ModelSelector = { paths: [], tags: [], names: [] };
const OUT = 'model/cubes/dbt';

function manifest(value: unknown): Manifest {
  const checked = checkManifest(value);
  if (!checked.manifest) throw new Error(JSON.stringify(checked.problems));
  return checked.manifest;
}

const generate = (value: unknown, selector: ModelSelector = ALL) => generateCubes(manifest(value), { outputPath: OUT, selector });

function cube(files: Array<{ path: string; content: string }>, name: string): GeneratedCube {
  const file = files.find((f) => f.path === `${OUT}/${name}.yml`);
  if (!file) throw new Error(`no file for ${name}: ${files.map((f) => f.path).join(', ')}`);
  return (parse(file.content) as { cubes: GeneratedCube[] }).cubes[0] as GeneratedCube;
}

const dimension = (c: GeneratedCube, name: string) => c.dimensions.find((d) => d.name === name);

describe('dbt-sync generator: the shop manifest', () => {
  const { files, stats } = generate(shopManifest());

  it('writes one YAML file per model under the output path, one cube per file, in path order', () => {
    expect(files.map((f) => f.path)).toEqual([`${OUT}/customers.yml`, `${OUT}/orders.yml`, `${OUT}/payments.yml`, `${OUT}/stg_orders.yml`]);
    expect(stats).toEqual({ models: 4, sources: 1, macros: 3, dbtVersion: '1.9.4', manifestGeneratedAt: '2026-08-17T12:00:00.000000Z' });
  });

  it('makes a dimension per column with its type and description, and the unique column the primary key', () => {
    const customers = cube(files, 'customers');
    expect(customers.sql_table).toBe('"analytics"."main"."customers"');
    expect(customers.description).toBe('One row per customer.');
    expect(customers.meta).toEqual({ dbt: { unique_id: 'model.shop.customers', path: 'models/marts/customers.sql', tags: ['core', 'finance'] } });
    expect(customers.dimensions).toEqual([
      { name: 'id', description: 'The customer id.', sql: '{CUBE}.id', type: 'number', primary_key: true },
      { name: 'first_name', sql: '{CUBE}.first_name', type: 'string' },
      { name: 'last_name', sql: '{CUBE}.last_name', type: 'string' },
      { name: 'created_at', description: 'When the customer signed up.', sql: '{CUBE}.created_at', type: 'time' },
      { name: 'lifetime_value', sql: '{CUBE}.lifetime_value', type: 'number' },
      { name: 'is_active', sql: '{CUBE}.is_active', type: 'boolean' },
    ]);
  });

  it('adds a count measure and a sum per numeric column that is not a key', () => {
    expect(cube(files, 'customers').measures).toEqual([
      { name: 'count', type: 'count' },
      { name: 'total_lifetime_value', sql: '{CUBE}.lifetime_value', type: 'sum' },
    ]);
    // order_id is the key, customer_id a join's column: only amount is summed.
    expect(cube(files, 'orders').measures).toEqual([
      { name: 'count', type: 'count' },
      { name: 'total_amount', sql: '{CUBE}.amount', type: 'sum' },
    ]);
  });

  it('joins a child to its parent, many_to_one, from each relationships test', () => {
    expect(cube(files, 'orders').joins).toEqual([{ name: 'customers', sql: '{CUBE}.customer_id = {customers}.id', relationship: 'many_to_one' }]);
    expect(cube(files, 'payments').joins).toEqual([{ name: 'orders', sql: '{CUBE}.order_id = {orders}.order_id', relationship: 'many_to_one' }]);
    expect(cube(files, 'customers').joins).toBeUndefined();
  });

  it('snake_cases model and column names, quoting columns that are not plain identifiers', () => {
    const payments = cube(files, 'payments');
    expect(payments.name).toBe('payments');
    expect(dimension(payments, 'payment_method')).toEqual({ name: 'payment_method', sql: '{CUBE}."Payment Method"', type: 'string' });
    // A unique column without not_null is still the key; a column without a type is a string.
    expect(dimension(payments, 'payment_id')?.primary_key).toBe(true);
    expect(dimension(payments, 'paid_at')?.type).toBe('string');
  });

  it('passes the data-model validator, joins included', () => {
    const result = validateModel(files);
    expect(result.errors).toEqual([]);
    expect(result.valid).toBe(true);
    expect(result.artifact?.cubes.map((c) => c.name)).toEqual(['customers', 'orders', 'payments', 'stg_orders']);
  });

  it('is deterministic: the same manifest, with its keys in another order, gives the same bytes', () => {
    const shuffled = shopManifest();
    shuffled.nodes = Object.fromEntries(Object.entries(shuffled.nodes).reverse());
    expect(generate(shuffled).files).toEqual(files);
    expect(generate(shopManifest()).files).toEqual(files);
  });

  it('starts each file with the marker a re-sync recognises its files by', () => {
    for (const file of files) expect(file.content.startsWith('# Generated by dbt-sync from model.shop.')).toBe(true);
  });
});

describe('dbt-sync generator: hostile manifests (docs/security.md, "The dbt manifest")', () => {
  it('keeps a unique_id with line breaks on its comment line: nothing of it becomes YAML of the file', () => {
    const value = manifestOf([{ name: 'orders', path: 'marts/orders.sql', columns: [{ name: 'id' }] }]) as { nodes: Record<string, { unique_id: string }> };
    const [id, node] = Object.entries(value.nodes)[0]!;
    delete value.nodes[id];
    node.unique_id = `${id}\nviews:\n  - name: injected\r\n    cubes: []\u2028x: &a 1`;
    value.nodes[node.unique_id] = node;
    const files = generate(value).files;
    expect(files.map((f) => f.path)).toEqual([`${OUT}/orders.yml`]);
    const content = files[0]!.content;
    expect(content.split('\n')[0]).toBe(
      `# Generated by dbt-sync from ${id}\\u000aviews:\\u000a  - name: injected\\u000d\\u000a    cubes: []\\u2028x: &a 1; a re-sync rewrites this file.`,
    );
    expect(Object.keys(parse(content) as object)).toEqual(['cubes']);
    expect(cube(files, 'orders').meta.dbt.unique_id).toBe(node.unique_id);
  });

  it('names files only from snake_cased model names: a name with .., / or a leading dash stays inside the output folder', () => {
    const files = generate(
      manifestOf([
        { name: '../../../.git/hooks/pre-receive', path: 'a.sql', columns: [{ name: 'id' }] },
        { name: '-upload-pack=evil', path: 'b.sql', columns: [{ name: 'id' }] },
      ]),
    ).files;
    for (const { path } of files) expect(path).toMatch(/^model\/cubes\/dbt\/[a-z][a-z0-9_]*\.yml$/);
  });
});

describe('dbt-sync generator: selection', () => {
  const names = (selector: Partial<ModelSelector>) => generate(shopManifest(), { ...ALL, ...selector }).files.map((f) => f.path.slice(OUT.length + 1));

  it('selects by path, tag or name; any match selects a model', () => {
    expect(names({ paths: ['models/staging'] })).toEqual(['stg_orders.yml']);
    expect(names({ paths: ['marts/orders.sql'] })).toEqual(['orders.yml']);
    expect(names({ tags: ['finance'] })).toEqual(['customers.yml', 'orders.yml']);
    expect(names({ names: ['Payments'], tags: ['staging'] })).toEqual(['payments.yml', 'stg_orders.yml']);
  });

  it('makes no join to a model that was not selected', () => {
    const { files } = generate(shopManifest(), { ...ALL, names: ['orders'] });
    expect(cube(files, 'orders').joins).toBeUndefined();
    expect(validateModel(files).valid).toBe(true);
  });

  it('fails when the selector matches nothing, instead of generating nothing (reference 7.1)', () => {
    expect(() => generate(shopManifest(), { ...ALL, tags: ['nope'] })).toThrow(NothingSelected);
    expect(() => generate(shopManifest(), { ...ALL, tags: ['nope'] })).toThrow(/matches none of the manifest's 4 models/);
  });

  it('leaves out disabled models', () => {
    const models: FixtureModel[] = [
      { name: 'orders', path: 'orders.sql', columns: [{ name: 'id', data_type: 'int' }] },
      { name: 'stg_orders', path: 'stg_orders.sql', columns: [{ name: 'id', data_type: 'int' }], enabled: false },
    ];
    expect(generate(manifestOf(models)).files.map((f) => f.path)).toEqual([`${OUT}/orders.yml`]);
  });
});

describe('dbt-sync generator: names', () => {
  it('resolves colliding cube names in unique_id order: the first keeps the name, the next gets _2', () => {
    const { files } = generate(
      manifestOf([
        { name: 'order_items', path: 'a.sql', columns: [{ name: 'id' }] },
        { name: 'OrderItems', path: 'b.sql', columns: [{ name: 'id' }] },
      ]),
    );
    // model.shop.OrderItems sorts before model.shop.order_items (byte order).
    expect(cube(files, 'order_items').meta.dbt.unique_id).toBe('model.shop.OrderItems');
    expect(cube(files, 'order_items_2').meta.dbt.unique_id).toBe('model.shop.order_items');
    expect(validateModel(files).valid).toBe(true);
  });

  it('resolves colliding member names: dimensions first in column order, then measures', () => {
    const { files } = generate(
      manifestOf([
        {
          name: 't',
          path: 't.sql',
          columns: [
            { name: 'Amount', data_type: 'int' },
            { name: 'amount', data_type: 'int' },
            { name: 'count', data_type: 'text' },
          ],
        },
      ]),
    );
    const t = cube(files, 't');
    expect(t.dimensions.map((d) => [d.name, d.sql])).toEqual([
      ['amount', '{CUBE}.Amount'],
      ['amount_2', '{CUBE}.amount'],
      ['count', '{CUBE}.count'],
    ]);
    expect(t.measures.map((m) => m.name)).toEqual(['count_2', 'total_amount', 'total_amount_2']);
    expect(validateModel(files).valid).toBe(true);
  });

  it('snake_cases names into identifiers', () => {
    expect(snakeCase('OrderItems', 'model')).toBe('order_items');
    expect(snakeCase('stg-orders v2', 'model')).toBe('stg_orders_v2');
    expect(snakeCase('HTTPRequests', 'model')).toBe('http_requests');
    expect(snakeCase('2024_sales', 'model')).toBe('model_2024_sales');
    expect(snakeCase('Café', 'column')).toBe('cafe');
    expect(snakeCase('???', 'column')).toBe('column');
  });

  it('maps warehouse types: numeric to number, dates and timestamps to time, booleans to boolean, the rest to string', () => {
    for (const t of ['integer', 'BIGINT', 'numeric(12,2)', 'NUMBER(38,0)', 'double precision', 'FLOAT64', 'Nullable(Int64)', 'real', 'decimal'])
      expect(dimensionType(t)).toBe('number');
    for (const t of ['date', 'timestamp', 'TIMESTAMP WITH TIME ZONE', 'timestamp_ntz', 'timestamptz', 'datetime', 'DateTime64(3)'])
      expect(dimensionType(t)).toBe('time');
    for (const t of ['boolean', 'BOOL']) expect(dimensionType(t)).toBe('boolean');
    for (const t of ['text', 'varchar(20)', 'json', 'time', null, undefined, '']) expect(dimensionType(t)).toBe('string');
  });
});

describe('dbt-sync generator: manifest checks', () => {
  it('names each missing or mistyped part the generator reads', () => {
    expect(checkManifest({}).problems).toEqual([
      { pointer: '/metadata', message: 'is required' },
      { pointer: '/nodes', message: 'is required' },
    ]);
    const bad = shopManifest() as unknown as { metadata: Record<string, unknown>; nodes: Record<string, Record<string, unknown>> };
    bad.metadata.dbt_schema_version = 'v12';
    (bad.nodes['model.shop.orders'] as { columns: Record<string, Record<string, unknown>> }).columns.amount!.data_type = 12;
    const problems = checkManifest(bad).problems;
    expect(problems).toContainEqual({
      pointer: '/metadata/dbt_schema_version',
      message: 'must be a dbt manifest schema URL such as https://schemas.getdbt.com/dbt/manifest/v12.json',
    });
    expect(problems.map((p) => p.pointer)).toContain('/nodes/model.shop.orders/columns/amount/data_type');
  });

  it('accepts the keys it does not read', () => {
    expect(checkManifest(shopManifest()).problems).toEqual([]);
  });
});

describe('dbt-sync generator: a 500-model project', () => {
  const models = largeModels(500);
  const { files, cubes } = generate(largeManifest(500));

  it('makes 500 valid cubes with a key each and the joins the manifest declares', () => {
    expect(files).toHaveLength(500);
    const result = validateModel(files);
    expect(result.errors.slice(0, 3)).toEqual([]);
    expect(result.cubesCount).toBe(500);
    const byName = new Map(cubes.map((c) => [c.name, c]));
    for (const model of models) {
      const c = byName.get(model.name);
      expect(c?.dimensions.filter((d) => d.primary_key).map((d) => d.name)).toEqual(['id']);
      expect((c?.joins ?? []).map((j) => j.sql)).toEqual((model.relationships ?? []).map((r) => `{CUBE}.${r.column} = {${r.to}}.${r.field}`));
    }
  });
});
