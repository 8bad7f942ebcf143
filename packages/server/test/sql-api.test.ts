import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { parse, serialize } from 'pg-protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogTimeout, Catalogs, CatalogsFull } from '../src/areas/sql-api/sql-api.catalog.js';
import { SERVER_VERSION } from '../src/areas/sql-api/sql-api.server.js';
import { bindParameters, classify, normalize, splitStatements } from '../src/areas/sql-api/sql-api.sql.js';
import { loadConfig } from '../src/config.js';
import { startServer, type RunningServer } from '../src/server.js';
import { DIALECTS, STORE_INDEPENDENT, TestApp } from './harness.js';
import { SECURED_MODEL, SHOP_MODEL, writeShopSqlite } from './query-fixtures.js';
import { FAST_RUNTIME, runtimeProbe } from './runtime-support.js';
import { keyIn, serverEnv, type ServerEnv } from './server-env.js';

/*
 * The SQL API (docs/sql-api.md): a deployment's cubes and views over the PostgreSQL protocol, driven
 * by Debian's psql and by the `pg` client, against a running runtime on the shop's SQLite file.
 */

type Json = Record<string, any>;
const run = promisify(execFile);

for (const dialect of DIALECTS) {
  describe(`the SQL API over the PostgreSQL protocol (${dialect})`, () => {
    let t: TestApp;
    let dataSources: string;
    let shop: number;
    let secured: number;
    let port: number;

    /** A deployment running `model` on the shop's SQLite file. */
    const deploy = async (r: ReturnType<typeof runtimeProbe>, name: string, model: string, cubes: string) => {
      const id = await r.create(name);
      const first = await r.running(id);
      const build = `/build/api/v1/deployments/${id}`;
      expect(
        (
          await t.request({
            method: 'PUT',
            url: `/api/v1/deployments/${id}/env-vars`,
            body: {
              env_variables: [
                { name: 'DB_TYPE', value: 'sqlite' },
                { name: 'DB_URL', value: 'shop.sqlite' },
              ],
            },
          })
        ).statusCode,
      ).toBe(200);
      expect((await t.request({ method: 'POST', url: `${build}/dev-mode` })).statusCode).toBe(200);
      expect(
        (await t.request({ method: 'PUT', url: `${build}/data-model/files`, body: { files: [{ path: 'model/cubes/shop.yml', content: model }] } })).statusCode,
      ).toBe(200);
      expect((await t.request({ method: 'POST', url: `${build}/commit`, body: { message: name, exitDevMode: true } })).statusCode).toBe(200);
      await r.replaced(id, first.name);
      await r.logsWith(id, cubes);
      return id;
    };

    beforeAll(async () => {
      dataSources = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-datasources-'));
      writeShopSqlite(dataSources);
      t = await TestApp.create(dialect, { runtime: { ...FAST_RUNTIME, dataSourcesDir: dataSources }, sqlApi: { port: 0, host: '127.0.0.1' } });
      port = t.app.sqlApi!.address()!.port;
      const r = runtimeProbe(t);
      shop = await deploy(r, 'shop', SHOP_MODEL, '8 cubes and 2 views');
      secured = await deploy(r, 'secured shop', SECURED_MODEL, '4 cubes and 2 views');
    });
    afterAll(async () => {
      await t?.close();
      fs.rmSync(dataSources, { recursive: true, force: true });
    });

    /** psql's answer to `command` (-At: unaligned, tuples only, unless `table`). */
    const psql = async (database: string, password: string, command: string, flags = ['-At']) => {
      const { stdout } = await run(
        '/usr/bin/psql',
        ['-X', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1', '-p', String(port), '-U', 'analyst', '-d', database, ...flags, '-c', command],
        {
          env: { PATH: process.env.PATH ?? '', PGPASSWORD: password, PGSSLMODE: 'prefer', PGCONNECT_TIMEOUT: '10' },
        },
      );
      return stdout;
    };
    /** A `pg` client signed in as `password` on `database`. */
    const client = async (database: string, password: string) => {
      const c = new pg.Client({ host: '127.0.0.1', port, user: 'analyst', database, password });
      await c.connect();
      return c;
    };

    it('the environments list gives the SQL credentials of each environment', async () => {
      const res = await t.request({ url: `/api/v1/deployments/${shop}/environments` });
      expect(res.statusCode, res.body).toBe(200);
      const production = ((res.json() as Json).items as Json[]).find((e) => e.id === 'production')!;
      expect(production.api_credentials).toContainEqual({ type: 'sql', version: 1, host: 'localhost', port, database: String(shop) });
    });

    it('psql connects with an API key, lists the cubes and views with \\dt and describes one with \\d', async () => {
      expect(await psql(String(shop), t.admin.key, 'SELECT current_schema()')).toBe('public\n');
      const tables = (await psql(String(shop), t.admin.key, '\\dt')).trim().split('\n');
      expect(tables.map((line) => line.split('|')[1])).toEqual([
        'a',
        'b',
        'c',
        'customers',
        'd',
        'line_items',
        'orders',
        'sales',
        'starter_orders',
        'starter_orders_view',
      ]);
      const orders = await psql(String(shop), t.admin.key, '\\d orders');
      expect(
        orders
          .trim()
          .split('\n')
          .map((line) => line.split('|').slice(0, 2).join(' ')),
      ).toEqual(expect.arrayContaining(['status text', 'amount numeric', 'created_at timestamp without time zone', 'count bigint', 'total_amount numeric']));
      expect(await psql(String(shop), t.admin.key, '\\dn')).toContain('public|');
    });

    it('psql runs queries over cubes and views: filters, grouping, ordering, a view', async () => {
      expect(await psql(String(shop), t.admin.key, "SELECT status, count FROM orders WHERE status <> 'cancelled' GROUP BY 1 ORDER BY 2 DESC, 1")).toBe(
        'completed|3\nprocessing|1\n',
      );
      expect(await psql(String(shop), t.admin.key, 'SELECT region, count, total_amount FROM sales GROUP BY 1 ORDER BY 2 DESC, 1')).toBe(
        'EU|3|180\nUS|1|70\n|1|20\n',
      );
      // Aligned output: the column headers are the SELECT's names.
      expect(await psql(String(shop), t.admin.key, 'SELECT count FROM orders', [])).toMatch(/^\s*count\s*\n-+\n\s*5\n\(1 row\)/);
    });

    it('the pg client: catalog queries, typed columns, and parameters bound through the extended protocol', async () => {
      const c = await client(String(shop), t.admin.key);
      try {
        const version = await c.query('SELECT version() AS v');
        expect(version.rows[0].v).toMatch(/^PostgreSQL /);
        // The version announced at start-up is the catalog's: clients pick their catalog queries by it.
        expect((await c.query('SHOW server_version')).rows[0].server_version).toBe(SERVER_VERSION);
        await c.query("SET application_name = 'bi tool'");
        const listed = await c.query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1");
        expect(listed.rows.map((row) => row.table_name)).toEqual([
          'a',
          'b',
          'c',
          'customers',
          'd',
          'line_items',
          'orders',
          'sales',
          'starter_orders',
          'starter_orders_view',
        ]);
        const columns = await c.query('SELECT column_name, data_type FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position', [
          'sales',
        ]);
        expect(columns.rows).toEqual(
          expect.arrayContaining([
            { column_name: 'region', data_type: 'text' },
            { column_name: 'count', data_type: 'bigint' },
          ]),
        );
        // Counts are int8 (pg gives strings for them), sums numeric.
        const grouped = await c.query('SELECT region, count, total_amount FROM sales WHERE region = $1 GROUP BY 1', ['EU']);
        expect(grouped.fields.map((f) => [f.name, f.dataTypeID])).toEqual([
          ['region', 25],
          ['count', 20],
          ['total_amount', 1700],
        ]);
        expect(grouped.rows).toEqual([{ region: 'EU', count: '3', total_amount: '180' }]);
        const numbers = await c.query('SELECT status, count FROM orders WHERE amount >= $1 GROUP BY 1 ORDER BY 1', [70]);
        expect(numbers.rows).toEqual([{ status: 'completed', count: '2' }]);
        // A parameter is one value: quotes inside it stay inside it.
        const smuggled = await c.query('SELECT count FROM orders WHERE status = $1', ["completed' OR '1'='1"]);
        expect(smuggled.rows).toEqual([{ count: '0' }]);
        // Outside the subset: an error naming the clause, and the connection still answers.
        await expect(c.query('SELECT region, count FROM orders JOIN customers ON orders.customer_id = customers.id GROUP BY 1')).rejects.toMatchObject({
          code: '42000',
          message: 'JOIN is not supported: query a view that joins the cubes.',
        });
        await expect(c.query('DROP TABLE orders')).rejects.toMatchObject({ code: '25006' });
        // The catalog's own errors come as PostgreSQL sends them; a $n without a value is refused.
        await expect(c.query('SELECT * FROM pg_catalog.pg_nothing')).rejects.toMatchObject({
          code: '42P01',
          message: 'relation "pg_catalog.pg_nothing" does not exist',
        });
        await expect(c.query('SELECT count FROM orders WHERE status = $2', ['completed'])).rejects.toMatchObject({
          code: '08P01',
          message: 'there is no parameter $2',
        });
        expect((await c.query('SELECT count FROM orders')).rows).toEqual([{ count: '5' }]);
        // As BI tools write it: the schema named, columns qualified, SELECT *.
        const qualified = await c.query(
          'SELECT "public"."sales"."region" AS "region", "public"."sales"."count" AS "count" FROM "public"."sales" GROUP BY 1 ORDER BY 1 LIMIT 2000',
        );
        expect(qualified.rows).toEqual([
          { region: 'EU', count: '3' },
          { region: 'US', count: '1' },
          { region: null, count: '1' },
        ]);
        // SELECT * lists the dimensions, a row per distinct combination.
        const star = await c.query('SELECT * FROM public.customers ORDER BY id LIMIT 2');
        expect(star.fields.map((f) => f.name)).toEqual(['id', 'name', 'region']);
        expect(star.rows).toEqual([
          { id: '1', name: 'Ada', region: 'EU' },
          { id: '2', name: 'Bo', region: 'US' },
        ]);
      } finally {
        await c.end();
      }
    });

    it('connections of one environment answer at once, each its own statements, over the catalog they share', async () => {
      const clients = await Promise.all([client(String(shop), t.admin.key), client(String(shop), t.admin.key), client(String(shop), t.admin.key)]);
      try {
        const answers = await Promise.all(
          clients.map(async (c, n) => {
            const tables = await c.query("SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'");
            const data = await c.query('SELECT status, count FROM orders GROUP BY 1 HAVING count >= $1 ORDER BY 1', [n + 1]);
            return [tables.rows[0].n, data.rows.map((row) => row.status)];
          }),
        );
        expect(answers).toEqual([
          [10, ['cancelled', 'completed', 'processing']],
          [10, ['completed']],
          [10, ['completed']],
        ]);
      } finally {
        await Promise.all(clients.map((c) => c.end()));
      }
    });

    it("a row limit on Execute (a driver's fetch size) sends the rows in parts, PortalSuspended between them", async () => {
      const socket = net.connect(port, '127.0.0.1');
      const seen: Array<{ name: string; fields?: unknown[] }> = [];
      const waiting: Array<{ name: string; count: number; resolve: () => void }> = [];
      const count = (name: string) => seen.filter((m) => m.name === name).length;
      void parse(socket, (message) => {
        seen.push(message as never);
        for (const w of [...waiting]) {
          if (count(w.name) < w.count) continue;
          waiting.splice(waiting.indexOf(w), 1);
          w.resolve();
        }
      });
      /** Resolves once `name` has arrived `times` times in all. */
      const arrived = (name: string, times = 1) =>
        new Promise<void>((resolve) => (count(name) >= times ? resolve() : waiting.push({ name, count: times, resolve })));
      try {
        socket.write(serialize.startup({ user: 'analyst', database: String(shop) }));
        await arrived('authenticationCleartextPassword');
        socket.write(serialize.password(t.admin.key));
        await arrived('readyForQuery');
        socket.write(
          Buffer.concat([
            serialize.parse({ text: 'SELECT status, count FROM orders GROUP BY 1 ORDER BY 1' }),
            serialize.bind({}),
            serialize.describe({ type: 'P' }),
            serialize.execute({ rows: 2 }),
            serialize.flush(),
          ]),
        );
        await arrived('portalSuspended');
        expect(count('dataRow')).toBe(2);
        socket.write(Buffer.concat([serialize.execute({ rows: 2 }), serialize.sync()]));
        await arrived('readyForQuery', 2);
        expect(seen.filter((m) => m.name === 'dataRow').map((m) => m.fields)).toEqual([
          ['cancelled', '1'],
          ['completed', '3'],
          ['processing', '1'],
        ]);
        expect(seen.map((m) => m.name).slice(-3)).toEqual(['dataRow', 'commandComplete', 'readyForQuery']);
      } finally {
        const closed = new Promise((resolve) => socket.once('close', resolve));
        socket.end(serialize.end());
        await closed;
      }
    });

    it('a restricted user sees only their rows, and not the members a policy hides', async () => {
      expect((await t.request({ method: 'POST', url: '/api/v1/user-attributes', body: { name: 'region', type: 'string' } })).statusCode).toBe(201);
      const who = await t.user('EXPLORER');
      expect((await t.request({ method: 'POST', url: `/api/v1/user-attribute-values/${who.userId}`, body: { values: { region: 'US' } } })).statusCode).toBe(
        200,
      );
      expect(
        (
          await t.request({
            method: 'POST',
            url: '/api/v1/policies',
            body: { principal: { type: 'USER', id: who.userId }, resource: { type: 'DEPLOYMENT', id: secured }, access: 'VIEW' },
          })
        ).statusCode,
      ).toBe(201);
      expect(await psql(String(secured), who.key, 'SELECT name, count FROM customers GROUP BY 1 ORDER BY 1')).toBe('Bo|1\n');
      expect(await psql(String(secured), t.admin.key, 'SELECT count FROM orders')).toBe('0\n');
      // The catalog shows only the members the caller may query.
      const columns = await psql(String(secured), who.key, "SELECT column_name FROM information_schema.columns WHERE table_name = 'orders' ORDER BY 1");
      expect(columns.split('\n')).not.toContain('total_amount');
      const c = await client(String(secured), who.key);
      try {
        await expect(c.query('SELECT total_amount FROM orders')).rejects.toMatchObject({ code: expect.stringMatching(/^42/) });
      } finally {
        await c.end();
      }
      // An environment token with a security context, minted for the production environment.
      const minted = await t.request({
        method: 'POST',
        url: `/api/v1/deployments/${shop}/environments/production/tokens`,
        body: { security_context: {}, scopes: ['meta', 'sql-runner'] },
      });
      expect(minted.statusCode, minted.body).toBeLessThan(300);
      const token = ((minted.json() as Json).data as Json).token as string;
      expect(await psql(`${shop}/production`, token, 'SELECT count FROM orders')).toBe('5\n');
      // A deployment token (POST /api/v1/deployments/{id}/token) opens its production environment, and no other deployment.
      const deploymentToken = ((await t.request({ method: 'POST', url: `/api/v1/deployments/${shop}/token` })).json() as Json).platformApiToken as string;
      expect(await psql(String(shop), deploymentToken, 'SELECT count FROM orders')).toBe('5\n');
      await expect(psql(String(secured), deploymentToken, 'SELECT 1')).rejects.toMatchObject({
        stderr: expect.stringContaining('password authentication failed'),
      });
      // Each caller's catalog is a PostgreSQL of its own (PGlite) made on first use: four here, slow on a busy machine.
    }, 90_000);

    it('a wrong password, or a database that names no deployment, is refused with 28P01', async () => {
      const refused = (database: string, password: string) => client(database, password);
      await expect(refused(String(shop), 'not-a-token')).rejects.toMatchObject({ code: '28P01' });
      await expect(refused(String(shop), `mapi_${'x'.repeat(40)}`)).rejects.toMatchObject({ code: '28P01' });
      await expect(refused('999999', t.admin.key)).rejects.toMatchObject({ code: '28P01' });
      await expect(psql(String(shop), 'wrong', 'SELECT 1')).rejects.toMatchObject({ stderr: expect.stringContaining('password authentication failed') });
    });
  });
}

describe('the SQL API configuration', () => {
  it('SQL_API_PORT unset or 0 is off; a port of its own with SQL_API_HOST and SQL_API_MAX_CONNECTIONS; never PORT', () => {
    expect(loadConfig({}).sqlApi).toBeNull();
    expect(loadConfig({ SQL_API_PORT: '0' }).sqlApi).toBeNull();
    expect(loadConfig({ SQL_API_PORT: '5433', HOST: '0.0.0.0' }).sqlApi).toEqual({ port: 5433, host: '0.0.0.0', maxConnections: 100, maxCatalogs: 8 });
    expect(loadConfig({ SQL_API_PORT: '5433', SQL_API_HOST: '10.0.0.5', SQL_API_MAX_CONNECTIONS: '20', SQL_API_MAX_CATALOGS: '2' }).sqlApi).toEqual({
      port: 5433,
      host: '10.0.0.5',
      maxConnections: 20,
      maxCatalogs: 2,
    });
    expect(() => loadConfig({ PORT: '8443', SQL_API_PORT: '8443' })).toThrow('SQL_API_PORT must differ from PORT (8443)');
    expect(() => loadConfig({ SQL_API_PORT: '5433', SQL_API_MAX_CONNECTIONS: '0' })).toThrow('SQL_API_MAX_CONNECTIONS must be a whole number');
  });
});

describe("the SQL API's catalogs", () => {
  it('one per model in use, the idle ones closed past their number; past the most, a new one is refused until one is free', async () => {
    const catalogs = new Catalogs(0, 1);
    const shop = [
      {
        name: 'orders',
        type: 'cube',
        measures: [{ name: 'orders.count', type: 'number', aggType: 'count' }],
        dimensions: [{ name: 'orders.status', type: 'string' }],
      },
    ];
    try {
      const first = await catalogs.acquire('1:1:production', shop);
      const answer = await first.query(
        "SELECT string_agg(column_name || ' ' || data_type, ', ' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_name = 'orders'",
      );
      expect(answer.filter((m) => m.type === 'D').map((m) => m.body.toString('utf8'))).toEqual([expect.stringContaining('status text, count bigint')]);
      // Read-only: a write inside a catalog read is refused by the catalog itself.
      const write = await first.query('WITH gone AS (DELETE FROM orders RETURNING 1) SELECT count(*) FROM gone');
      expect(write.find((m) => m.type === 'E')?.body.toString('utf8')).toContain('read-only transaction');
      await expect(catalogs.acquire('1:2:production', [])).rejects.toBeInstanceOf(CatalogsFull);
      catalogs.release(first);
      const second = await catalogs.acquire('1:2:production', []);
      expect(
        (await second.query("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"))
          .filter((m) => m.type === 'D')
          .map((m) => m.body.subarray(6).toString('utf8')),
      ).toEqual(['0']);
    } finally {
      await catalogs.close();
    }
  });
});

describe("the SQL API's catalog statements run on a thread of their own", () => {
  it('one past its time is stopped with 57014 while the server keeps answering, and the catalog is made again', async () => {
    const catalogs = new Catalogs(0, 1, 500);
    try {
      const catalog = await catalogs.acquire('1:1:production', []);
      const started = Date.now();
      let ticks = 0;
      const ticking = setInterval(() => (ticks += 1), 20);
      await expect(catalog.query('SELECT pg_sleep(30)')).rejects.toBeInstanceOf(CatalogTimeout);
      clearInterval(ticking);
      // Stopped at its time, not at the sleep's end; this thread's timers ran all along.
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(ticks).toBeGreaterThan(5);
      expect(catalog.broken).toBe(true);
      catalogs.release(catalog);
      const again = await catalogs.acquire('1:1:production', []);
      expect(again).not.toBe(catalog);
      expect((await again.query('SELECT 1')).some((m) => m.type === 'D')).toBe(true);
    } finally {
      await catalogs.close();
    }
  });
});

describe('the SQL API reads statements before running them', () => {
  it('a bound value is one literal, whatever it holds; a $n inside a string is left alone', () => {
    expect(bindParameters("SELECT count FROM orders WHERE status = $1 AND note = '$1'", ["x' OR '1'='1"], [0])).toBe(
      "SELECT count FROM orders WHERE status =  'x'' OR ''1''=''1'  AND note = '$1'",
    );
    expect(bindParameters('SELECT count FROM orders WHERE amount >= $1 AND status IS $2', ['70', null], [0, 0])).toBe(
      'SELECT count FROM orders WHERE amount >=  70  AND status IS  NULL ',
    );
    // A numeric-looking value of a text parameter stays a string.
    expect(bindParameters('SELECT 1 WHERE a = $1', ['70'], [25])).toBe("SELECT 1 WHERE a =  '70' ");
    expect(() => bindParameters('SELECT $2', ['a'], [0])).toThrow('there is no parameter $2');
  });

  it('as BI tools write it: the public schema dropped, SELECT * listing the dimensions, grouped', () => {
    const columns = new Map([['orders', ['id', 'status']]]);
    expect(normalize('SELECT "public"."orders"."status" FROM "public"."orders" GROUP BY 1', columns)).toBe('SELECT "orders"."status" FROM "orders" GROUP BY 1');
    expect(normalize("SELECT * FROM public.orders WHERE status = 'public.x' ORDER BY 1 LIMIT 2", columns)).toBe(
      `SELECT "id", "status" FROM orders WHERE status = 'public.x'  GROUP BY 1, 2 ORDER BY 1 LIMIT 2`,
    );
    expect(normalize('SELECT * FROM orders -- all;', columns)).toBe('SELECT "id", "status" FROM orders -- all;\n GROUP BY 1, 2 ');
    expect(normalize('SELECT * FROM orders;', columns)).toBe('SELECT "id", "status" FROM orders\n GROUP BY 1, 2 ');
    expect(normalize('SELECT * FROM elsewhere', columns)).toBe('SELECT * FROM elsewhere');
  });

  it('cubes and views go to the runtime, catalogs to the catalog, session commands are answered, writes refused', () => {
    const tables = new Set(['orders', 'sales']);
    expect(classify('SELECT count FROM orders', tables)).toEqual({ kind: 'data' });
    expect(classify('select * from public."sales" s', tables)).toEqual({ kind: 'data' });
    expect(classify("SELECT relname FROM pg_catalog.pg_class WHERE relname = 'orders'", tables)).toEqual({ kind: 'catalog' });
    expect(classify('SHOW search_path', tables)).toEqual({ kind: 'catalog' });
    expect(classify('SET extra_float_digits = 3', tables)).toEqual({ kind: 'session', tag: 'SET' });
    expect(classify('DELETE FROM orders', tables)).toEqual({ kind: 'refused', reason: 'DELETE' });
    expect(splitStatements("SELECT $a1$ ; $b$ $a1$; SELECT ';' -- ;\n; /* ; */")).toEqual(['SELECT $a1$ ; $b$ $a1$', "SELECT ';' -- ;"]);
  });
});

describe('the SQL API of a started server: SSL with the server certificate, a cap on connections', () => {
  for (const dialect of STORE_INDEPENDENT) {
    let env: ServerEnv;
    let running: RunningServer;
    let port: number;
    let key: string;
    let deployment: number;

    beforeAll(async () => {
      env = await serverEnv(dialect);
      // A free port for SQL_API_PORT (0 there means off).
      port = await new Promise<number>((resolve) => {
        const probe = net.createServer().listen(0, '127.0.0.1', () => {
          const { port: free } = probe.address() as net.AddressInfo;
          probe.close(() => resolve(free));
        });
      });
      let printed = '';
      running = await startServer(env.config({ SQL_API_PORT: String(port), SQL_API_MAX_CONNECTIONS: '2' }), (line) => (printed += `${line}\n`));
      key = keyIn(printed);
      const tenant = await running.store.db.selectFrom('tenants').select('id').executeTakeFirstOrThrow();
      const at = new Date().toISOString();
      deployment = (
        await running.store.db
          .insertInto('deployments')
          .values({ tenant_id: tenant.id, name: 'tls', settings: '{}', created_by: null, created_at: at, updated_at: at })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
    });
    afterAll(async () => {
      await running?.close();
      await env?.destroy();
    });

    const psql = (password: string, sslmode: string, command: string) =>
      run('/usr/bin/psql', ['-X', '-At', '-h', '127.0.0.1', '-p', String(port), '-U', 'analyst', '-d', String(deployment), '-c', command], {
        env: { PATH: process.env.PATH ?? '', PGPASSWORD: password, PGSSLMODE: sslmode, PGCONNECT_TIMEOUT: '10' },
      });

    it('psql with sslmode=require connects over TLS; a wrong password is still refused', async () => {
      const { stdout } = await psql(key, 'require', '\\conninfo');
      expect(stdout).toMatch(/SSL connection \(protocol: TLSv1\.[23]/);
      // The self-signed certificate verifies for localhost, as the docs tell developers to check it.
      const verified = await run(
        '/usr/bin/psql',
        ['-X', '-At', '-h', 'localhost', '-p', String(port), '-U', 'analyst', '-d', String(deployment), '-c', '\\conninfo'],
        {
          env: {
            PATH: process.env.PATH ?? '',
            PGPASSWORD: key,
            PGSSLMODE: 'verify-full',
            PGSSLROOTCERT: path.join(env.dataDir, 'tls', 'localhost.crt'),
            PGCONNECT_TIMEOUT: '10',
          },
        },
      );
      expect(verified.stdout).toContain('SSL connection');
      await expect(psql('wrong', 'require', '\\conninfo')).rejects.toMatchObject({
        stderr: expect.stringContaining('password authentication failed for user "analyst"'),
      });
    });

    it('a SQL port already taken stops the start with a message naming SQL_API_PORT', async () => {
      const fresh = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-sql-')), 'data');
      await expect(startServer(env.config({ DATA_DIR: fresh, SQL_API_PORT: String(port) }), () => undefined)).rejects.toThrow(
        `port ${port} on 127.0.0.1 (SQL_API_PORT) is already in use`,
      );
      expect(fs.existsSync(fresh)).toBe(false);
    });

    it('past SQL_API_MAX_CONNECTIONS a client is told there are too many (53300)', async () => {
      const open = async () => {
        const c = new pg.Client({ host: '127.0.0.1', port, user: 'analyst', database: String(deployment), password: key });
        await c.connect();
        return c;
      };
      const first = await open();
      const second = await open();
      try {
        await expect(open()).rejects.toMatchObject({ code: '53300' });
      } finally {
        await first.end();
        await second.end();
      }
    });
  }
});

for (const dialect of DIALECTS) {
  describe(`the SQL API with tenants on BASE_DOMAIN (${dialect})`, () => {
    let t: TestApp;
    let acme: { tenantId: number; admin: { key: string } };
    let deployment: number;
    beforeAll(async () => {
      t = await TestApp.create(dialect, { baseDomain: 'mapi.test', sqlApi: { port: 0, host: '127.0.0.1' } });
      acme = await t.tenant('acme');
      deployment = await t.deployment('acme analytics', { tenantId: acme.tenantId });
    });
    afterAll(async () => {
      await t?.close();
    });

    const conninfo = (user: string, password: string) =>
      run(
        '/usr/bin/psql',
        ['-X', '-At', '-h', '127.0.0.1', '-p', String(t.app.sqlApi!.address()!.port), '-U', user, '-d', String(deployment), '-c', '\\conninfo'],
        {
          env: { PATH: process.env.PATH ?? '', PGPASSWORD: password, PGSSLMODE: 'disable', PGCONNECT_TIMEOUT: '10' },
        },
      );

    it('the user name `name@<tenant-slug>` names the tenant; without it, or with another tenant, the password is refused', async () => {
      expect((await conninfo('bob@acme', acme.admin.key)).stdout).toContain('as user "bob@acme"');
      // A client with no database field names the deployment as the user.
      const asUser = await run(
        '/usr/bin/psql',
        ['-X', '-At', '-h', '127.0.0.1', '-p', String(t.app.sqlApi!.address()!.port), '-U', `${deployment}@acme`, '-d', 'analytics', '-c', '\\conninfo'],
        {
          env: { PATH: process.env.PATH ?? '', PGPASSWORD: acme.admin.key, PGSSLMODE: 'disable' },
        },
      );
      expect(asUser.stdout).toContain(`as user "${deployment}@acme"`);
      for (const user of ['bob', 'bob@default', 'bob@nowhere']) {
        await expect(conninfo(user, acme.admin.key)).rejects.toMatchObject({ stderr: expect.stringContaining('password authentication failed') });
      }
      // The environments list gives the tenant's host and the SQL port.
      const listed = await t.request({ url: `/api/v1/deployments/${deployment}/environments`, key: acme.admin.key, host: 'acme.mapi.test' });
      expect(listed.statusCode, listed.body).toBe(200);
      expect(((listed.json() as Json).items as Json[])[0]!.api_credentials).toContainEqual({
        type: 'sql',
        version: 1,
        host: 'acme.mapi.test',
        port: t.app.sqlApi!.address()!.port,
        database: String(deployment),
      });
    });
  });
}
