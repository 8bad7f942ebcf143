/**
 * The corpus dataset of `npm run conformance:cube`: five tables in the schema `cube_conformance`
 * of the local PostgreSQL, drawn by a seeded generator so that every run has the same rows.
 * It holds NULLs in most columns, numerics with cents, booleans with NULLs, text differing only
 * in case, timestamps with time zone clustered around the daylight-saving changes of
 * Europe/Berlin (2025-03-30, 2025-10-26) and America/New_York (2025-03-09, 2025-11-02), around
 * midnight UTC and at year ends, and an empty table (returns).
 */
import { seededRandom } from '../bench/seeded-random.js';

export const SCHEMA = 'cube_conformance';

const literal = (value: unknown): string => {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return `'${String(value).replace(/'/g, "''")}'`;
};

function insert(table: string, rows: unknown[][]): string[] {
  const statements: string[] = [];
  for (let i = 0; i < rows.length; i += 200) {
    statements.push(
      `INSERT INTO ${SCHEMA}.${table} VALUES ${rows
        .slice(i, i + 200)
        .map((r) => `(${r.map(literal).join(', ')})`)
        .join(',\n')}`,
    );
  }
  return statements;
}

export const CUSTOMERS = 60;
export const ORDERS = 600;
export const LINE_ITEMS = 1_500;
export const PRODUCTS = 25;

/** The instants orders cluster around (UTC). */
const HOT_SPOTS = [
  '2025-03-30T00:30:00Z', // Berlin springs forward at 01:00 UTC
  '2025-10-26T00:30:00Z', // Berlin falls back at 01:00 UTC
  '2025-03-09T06:30:00Z', // New York springs forward at 07:00 UTC
  '2025-11-02T05:30:00Z', // New York falls back at 06:00 UTC
  '2024-12-31T22:30:00Z', // the year end in Berlin and UTC
  '2025-01-01T04:30:00Z', // the year end in New York
  '2024-02-29T12:00:00Z', // a leap day
  '2025-06-30T23:30:00Z', // a quarter end
];

export function datasetStatements(): string[] {
  const next = seededRandom(20251026);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const maybe = <T>(value: T, nullShare: number): T | null => (next() < nullShare ? null : value);
  const iso = (ms: number) => new Date(ms).toISOString();
  const from = Date.UTC(2024, 0, 1);
  const span = Date.UTC(2026, 0, 1) - from;
  const instant = (): string => {
    if (next() < 0.35) {
      const spot = Date.parse(pick(HOT_SPOTS));
      // Within three hours either side, on the minute.
      return iso(spot + Math.round((next() - 0.5) * 6 * 60) * 60_000);
    }
    return iso(from + Math.floor((next() * span) / 60_000) * 60_000);
  };
  const names = [
    'Ada',
    'ada',
    'ADA',
    'Alan',
    'Anna',
    'anna',
    'Bo',
    'Cy',
    'Dee',
    'Eve',
    'Finn',
    'Grace',
    'Hal',
    'Ivy',
    "O'Neil",
    'Zoë',
    'Ürsula',
    '% percent',
    'under_score',
  ];
  const regions = ['EU', 'US', 'APAC', 'eu', 'LATAM'];
  const statuses = ['completed', 'completed', 'completed', 'processing', 'cancelled', 'returned', 'Completed'];
  const categories = ['Books', 'books', 'Games', 'Garden', 'Tools', null];
  const notes = ['gift wrap', 'Gift wrap', 'leave at door', 'call first', '', null, null, null];

  const customers: unknown[][] = [];
  for (let id = 1; id <= CUSTOMERS; id++) {
    customers.push([
      id,
      `${pick(names)} ${id}`,
      maybe(pick(regions), 0.1),
      maybe(`c${id}@${pick(['example.com', 'Example.org', 'mail.test'])}`, 0.1),
      maybe(next() < 0.3, 0.15),
      maybe(Math.round(next() * 200_000) / 100, 0.1),
      instant(),
    ]);
  }
  const products: unknown[][] = [];
  for (let id = 1; id <= PRODUCTS; id++) {
    products.push([
      id,
      `Product ${String.fromCharCode(65 + (id % 26))}${id}`,
      pick(categories),
      Math.round(100 + next() * 9_900) / 100,
      next() < 0.8,
      maybe(instant(), 0.2),
    ]);
  }
  const orders: unknown[][] = [];
  for (let id = 1; id <= ORDERS; id++) {
    const created = instant();
    const shipped = next() < 0.3 ? null : iso(Date.parse(created) + Math.floor(next() * 10 * 86_400_000));
    orders.push([
      id,
      maybe(1 + Math.floor(next() * (CUSTOMERS + 3)), 0.05),
      pick(statuses),
      maybe(Math.round(next() * 30_000) / 100, 0.05),
      created,
      shipped,
      maybe(next() < 0.2, 0.1),
      pick(notes),
    ]);
  }
  const lineItems: unknown[][] = [];
  for (let id = 1; id <= LINE_ITEMS; id++) {
    // Some orders have none (one in ten orders is skipped by taking ids from the first 90%).
    lineItems.push([
      id,
      1 + Math.floor(next() * ORDERS * 0.9),
      1 + Math.floor(next() * PRODUCTS),
      1 + Math.floor(next() * 5),
      Math.round(100 + next() * 9_900) / 100,
    ]);
  }
  return [
    `DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`,
    `CREATE SCHEMA ${SCHEMA}`,
    // customer_id beyond CUSTOMERS: orders of customers that do not exist (an outer join's NULLs).
    `CREATE TABLE ${SCHEMA}.customers (id integer PRIMARY KEY, name text NOT NULL, region text, email text, is_vip boolean, credit numeric(12,2), signup_at timestamptz NOT NULL)`,
    `CREATE TABLE ${SCHEMA}.products (id integer PRIMARY KEY, name text NOT NULL, category text, price numeric(10,2) NOT NULL, active boolean NOT NULL, launched_at timestamptz)`,
    `CREATE TABLE ${SCHEMA}.orders (id integer PRIMARY KEY, customer_id integer, status text NOT NULL, amount numeric(12,2), created_at timestamptz NOT NULL, shipped_at timestamptz, is_gift boolean, note text)`,
    `CREATE TABLE ${SCHEMA}.line_items (id integer PRIMARY KEY, order_id integer NOT NULL, product_id integer NOT NULL, quantity integer NOT NULL, unit_price numeric(10,2) NOT NULL)`,
    `CREATE TABLE ${SCHEMA}.returns (id integer PRIMARY KEY, order_id integer, reason text, refund numeric(10,2), returned_at timestamptz)`,
    ...insert('customers', customers),
    ...insert('products', products),
    ...insert('orders', orders),
    ...insert('line_items', lineItems),
    `ANALYZE ${SCHEMA}.customers`,
    `ANALYZE ${SCHEMA}.orders`,
  ];
}
