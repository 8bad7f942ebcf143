import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { ModelArtifact } from '../src/model/artifact.js';
import { validateModel } from '../src/model/index.js';
import { openDataSource, type DataSource } from '../src/semantic-layer/data-source.js';

/**
 * A small shop for query tests: customers, their orders, the orders' line items; the model over
 * it (joins many-to-one and one-to-many, a view); and the same rows in SQLite and PostgreSQL.
 */
export const SHOP_MODEL = `cubes:
  - name: customers
    sql_table: customers
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true, public: true }
      - { name: name, sql: name, type: string }
      - { name: region, sql: region, type: string }
    measures:
      - { name: count, type: count }

  - name: orders
    sql_table: orders
    joins:
      - { name: customers, relationship: many_to_one, sql: "{CUBE}.customer_id = {customers.id}" }
      - { name: line_items, relationship: one_to_many, sql: "{CUBE}.id = {line_items.order_id}" }
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true, public: true }
      - { name: status, sql: status, type: string }
      - { name: amount, sql: amount, type: number }
      - { name: created_at, sql: created_at, type: time }
      - name: size
        type: string
        case:
          when:
            - { sql: "{CUBE}.amount >= 70", label: large }
          else: { label: small }
    measures:
      - { name: count, type: count }
      - { name: total_amount, sql: amount, type: sum }
      - { name: average_amount, sql: amount, type: avg }
      - { name: largest, sql: amount, type: max }
      - { name: customers_count, sql: customer_id, type: count_distinct }
      - name: completed_count
        type: count
        filters:
          - sql: "{CUBE}.status = 'completed'"
      - { name: amount_per_order, sql: "{total_amount} / {count}", type: number }
    segments:
      - { name: completed, sql: "{CUBE}.status = 'completed'" }

  - name: line_items
    sql_table: line_items
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true, public: true }
      - { name: order_id, sql: order_id, type: number }
      - { name: product, sql: product, type: string }
    measures:
      - { name: count, type: count }
      - { name: quantity, sql: quantity, type: sum }

  # Two paths of the same length from a to d: an ambiguous join.
  - name: a
    sql: SELECT 1 AS id
    joins:
      - { name: b, relationship: one_to_one, sql: "{CUBE}.id = {b.id}" }
      - { name: c, relationship: one_to_one, sql: "{CUBE}.id = {c.id}" }
    dimensions: [{ name: id, sql: id, type: number, primary_key: true }]
  - name: b
    sql: SELECT 1 AS id
    joins: [{ name: d, relationship: one_to_one, sql: "{CUBE}.id = {d.id}" }]
    dimensions: [{ name: id, sql: id, type: number, primary_key: true }]
  - name: c
    sql: SELECT 1 AS id
    joins: [{ name: d, relationship: one_to_one, sql: "{CUBE}.id = {d.id}" }]
    dimensions: [{ name: id, sql: id, type: number, primary_key: true }]
  - name: d
    sql: SELECT 1 AS id
    dimensions: [{ name: id, sql: id, type: number, primary_key: true }]
    measures: [{ name: count, type: count }]

views:
  - name: sales
    cubes:
      - join_path: orders
        includes: [status, count, total_amount, created_at]
      - join_path: orders.customers
        includes: [region]
`;

/** The shop with access policies: each user sees the orders of their region's customers. */
export const SECURED_MODEL = `cubes:
  - name: customers
    sql_table: customers
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true, public: true }
      - { name: name, sql: name, type: string }
      - { name: region, sql: region, type: string }
    measures:
      - { name: count, type: count }
    access_policy:
      - group: "*"
        row_level:
          filters:
            - { member: region, operator: equals, values: ["{ userAttributes.region }"] }

  - name: orders
    sql_table: orders
    joins:
      - { name: customers, relationship: many_to_one, sql: "{CUBE}.customer_id = {customers.id}" }
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true, public: true }
      - { name: status, sql: status, type: string }
      - { name: amount, sql: amount, type: number }
    measures:
      - { name: count, type: count }
      - { name: total_amount, sql: amount, type: sum }
    access_policy:
      - group: "*"
        member_level:
          excludes: [amount, total_amount]
        row_level:
          filters:
            - { member: customers.region, operator: equals, values: ["{ userAttributes.region }"] }
      - group: finance
        row_level:
          filters:
            - or:
                - { member: customers.region, operator: equals, values: ["{ securityContext.region }"] }
                - { member: status, operator: equals, values: [cancelled] }

  - name: vault
    sql: SELECT 1 AS id
    dimensions: [{ name: id, sql: id, type: number, primary_key: true }]
    measures: [{ name: count, type: count }]
    access_policy:
      - group: auditors

views:
  - name: regional
    cubes:
      - join_path: orders
        includes: [status, count]
    access_policy:
      - group: "*"
        row_level:
          filters:
            - { member: status, operator: notEquals, values: [cancelled] }
`;

export function shopArtifact(model = SHOP_MODEL): ModelArtifact {
  const result = validateModel([{ path: 'model/cubes/shop.yml', content: model }]);
  if (!result.valid || !result.artifact) throw new Error(`The shop model does not validate: ${JSON.stringify(result.errors)}`);
  return result.artifact;
}

export const CUSTOMERS = [
  [1, 'Ada', 'EU'],
  [2, 'Bo', 'US'],
  [3, 'Cy', 'EU'],
];
export const ORDERS = [
  [1, 1, 'completed', 100, '2026-01-01T23:30:00Z'],
  [2, 1, 'processing', 50, '2026-01-02T10:00:00Z'],
  [3, 2, 'completed', 70, '2026-01-15T08:00:00Z'],
  [4, 3, 'cancelled', 30, '2026-02-01T00:30:00Z'],
  [5, null, 'completed', 20, '2026-02-10T12:00:00Z'],
];
export const LINE_ITEMS = [
  [1, 1, 'pen', 2],
  [2, 1, 'ink', 1],
  [3, 2, 'pen', 5],
  [4, 3, 'pad', 1],
];

export const DDL = [
  'CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, region TEXT)',
  'CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, status TEXT, amount INTEGER, created_at TEXT)',
  'CREATE TABLE line_items (id INTEGER PRIMARY KEY, order_id INTEGER, product TEXT, quantity INTEGER)',
];

/** The shop in a SQLite file named `name` in `dir`. */
export function writeShopSqlite(dir: string, name = 'shop.sqlite'): void {
  const db = new Database(path.join(dir, name));
  for (const statement of DDL) db.exec(statement);
  const rows = (table: string, list: unknown[][]) => {
    const insert = db.prepare(`INSERT INTO ${table} VALUES (${list[0]!.map(() => '?').join(', ')})`);
    for (const row of list) insert.run(...row);
  };
  rows('customers', CUSTOMERS);
  rows('orders', ORDERS);
  rows('line_items', LINE_ITEMS);
  db.close();
}

export interface ShopSource {
  source: DataSource;
  /** Changes the shop's rows, as its owner would (the runtime's own connection is read-only on SQLite). */
  run(sql: string): Promise<void>;
  close(): Promise<void>;
}

/** The shop as a data source of `dialect`: a SQLite file, or a PostgreSQL schema of its own (times as timestamptz). */
export async function shopSource(dialect: 'sqlite' | 'postgres', env: Record<string, string> = {}): Promise<ShopSource> {
  if (dialect === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-shop-'));
    writeShopSqlite(dir);
    const source = openDataSource({ ...env, DB_TYPE: 'sqlite', DB_URL: 'shop.sqlite' }, dir);
    const run = async (sql: string) => {
      const db = new Database(path.join(dir, 'shop.sqlite'));
      db.exec(sql);
      db.close();
    };
    return {
      source,
      run,
      close: async () => {
        await source.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set');
  const schema = `shop_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(`SET search_path = ${schema}`);
  for (const statement of DDL) await admin.query(statement.replace('created_at TEXT', 'created_at TIMESTAMPTZ'));
  const insert = async (table: string, list: unknown[][]) => {
    for (const row of list) await admin.query(`INSERT INTO ${table} VALUES (${row.map((_, i) => `$${i + 1}`).join(', ')})`, row);
  };
  await insert('customers', CUSTOMERS);
  await insert('orders', ORDERS);
  await insert('line_items', LINE_ITEMS);
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  const source = openDataSource({ ...env, DB_TYPE: 'postgres', DB_URL: u.toString() }, null);
  return {
    source,
    async run(sql) {
      await admin.query(sql);
    },
    async close() {
      await source.close();
      if (env.PRE_AGGREGATIONS_SCHEMA) await admin.query(`DROP SCHEMA IF EXISTS ${env.PRE_AGGREGATIONS_SCHEMA} CASCADE`);
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    },
  };
}
