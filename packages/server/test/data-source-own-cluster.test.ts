import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envVarContext, upsertEnvVars } from '../src/areas/env-vars/env-vars.store.js';
import { OWN_CLUSTER_MESSAGE, readClusterIdentity, sameCluster, type ClusterIdentity } from '../src/semantic-layer/cluster-identity.js';
import { openDataSource, OwnClusterRefused } from '../src/semantic-layer/data-source.js';
import { DataSourceTargetRefused, pgTarget, pinnedSettings } from '../src/semantic-layer/pg-target.js';
import { DIALECTS, TestApp, problem } from './harness.js';
import { LOCAL_PG, startSecondCluster } from './pg-cluster-fixture.js';
import { FAST_RUNTIME, runtimeProbe } from './runtime-support.js';

/*
 * Issue: a deployment's data source (DB_TYPE=postgres, DB_URL) must never be the server's own
 * PostgreSQL cluster, however DB_URL spells it. The local PostgreSQL stands for the server's own
 * cluster (its URL given as the app's databaseUrl, on either store); a throwaway cluster started
 * for these tests is a warehouse that is not.
 */

const ownDb = decodeURIComponent(new URL(LOCAL_PG).pathname.slice(1)) || 'postgres';
const otherDb = `mapi_other_${randomBytes(4).toString('hex')}`;

/** A name other than localhost that /etc/hosts maps to loopback, where there is one. */
function loopbackAlias(): string {
  const hosts = fs.existsSync('/etc/hosts') ? fs.readFileSync('/etc/hosts', 'utf8') : '';
  for (const line of hosts.split('\n')) {
    const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
    const name = names.find((n) => n !== 'localhost' && /^[a-z][a-z0-9.-]*$/i.test(n));
    if (address === '127.0.0.1' && name) return name;
  }
  return 'localhost';
}

/** Spellings of the server's own cluster that a comparison of host names let through, or could. */
const SAME_CLUSTER: Array<[string, string]> = [
  ['0.0.0.0', `postgres://postgres@0.0.0.0:5432/${ownDb}`],
  ['the address as one decimal number', `postgres://postgres@2130706433:5432/${ownDb}`],
  ['an IPv4-mapped IPv6 address', `postgres://postgres@[::ffff:127.0.0.1]:5432/${ownDb}`],
  ['localhost', `postgres://postgres@localhost:5432/${ownDb}`],
  [`a name /etc/hosts resolves to loopback (${loopbackAlias()})`, `postgres://postgres@${loopbackAlias()}:5432/${ownDb}`],
  ['another database of the same cluster', `postgres://postgres@127.0.0.1:5432/${otherDb}`],
];

/** DB_URLs that lead past their host part: refused unless DATASOURCES_ALLOW_SOCKETS, then compared like the rest. */
const PAST_THE_HOST: Array<[string, string, string]> = [
  ['a Unix socket', `postgres://postgres@%2Fvar%2Frun%2Fpostgresql/${ownDb}`, 'DB_URL names a Unix socket'],
  ['host= in the parameters', `postgres://postgres@db.example.invalid:5432/${ownDb}?host=127.0.0.1`, 'DB_URL sets host= or hostaddr='],
  ['hostaddr= in the parameters', `postgres://postgres@db.example.invalid:5432/${ownDb}?hostaddr=127.0.0.1`, 'DB_URL sets host= or hostaddr='],
];

let second: Awaited<ReturnType<typeof startSecondCluster>>;
let own: ClusterIdentity;

beforeAll(async () => {
  second = await startSecondCluster();
  const admin = new pg.Client({ connectionString: LOCAL_PG });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${otherDb}`);
  own = await readClusterIdentity(admin);
  await admin.end();
}, 120_000);
afterAll(async () => {
  second?.stop();
  const admin = new pg.Client({ connectionString: LOCAL_PG });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${otherDb} WITH (FORCE)`);
  await admin.end();
});

async function identityAt(url: string, allowSockets = false): Promise<ClusterIdentity> {
  const client = new pg.Client({ ...(await pinnedSettings(pgTarget(url, allowSockets))), connectionTimeoutMillis: 2_000 });
  await client.connect();
  try {
    return await readClusterIdentity(client);
  } finally {
    await client.end();
  }
}

describe('cluster identity: what decides that a data source is the server’s own cluster', () => {
  it('every spelling of the server’s cluster, and every database of it, has its identity; another cluster does not', async () => {
    for (const [, url] of SAME_CLUSTER) expect(sameCluster(own, await identityAt(url)), url).toBe(true);
    for (const [, url] of PAST_THE_HOST) expect(sameCluster(own, await identityAt(url, true)), url).toBe(true);
    const warehouse = await identityAt(second.url);
    expect(warehouse.systemIdentifier).not.toBeNull();
    expect(sameCluster(own, warehouse)).toBe(false);
  });

  it('where a role may not read pg_control_system(), the postmaster’s start time and port decide: the same cluster still matches, another still does not', async () => {
    const unread = (identity: ClusterIdentity): ClusterIdentity => ({ ...identity, systemIdentifier: null });
    expect(sameCluster(own, unread(await identityAt(`postgres://postgres@127.0.0.1:5432/${otherDb}`)))).toBe(true);
    expect(sameCluster(unread(own), await identityAt('postgres://postgres@localhost:5432/postgres'))).toBe(true);
    expect(sameCluster(own, unread(await identityAt(second.url)))).toBe(false);
    // Where both sides read it, the system identifier alone decides.
    expect(sameCluster(own, { ...own, systemIdentifier: '1' })).toBe(false);
  });
});

describe('DB_URL targets: where the connection goes', () => {
  it('a Unix socket, host= and hostaddr= are refused unless allowed, the refusal naming the fix; a URL without a host is refused', () => {
    for (const [, url, message] of PAST_THE_HOST) {
      expect(() => pgTarget(url, false)).toThrow(DataSourceTargetRefused);
      expect(() => pgTarget(url, false)).toThrow(message);
      expect(() => pgTarget(url, false)).toThrow('DATASOURCES_ALLOW_SOCKETS=true');
      expect(() => pgTarget(url, true)).not.toThrow();
    }
    expect(() => pgTarget('postgres:///warehouse', false)).toThrow('DB_URL names no host');
    // The runtime opens its data source through the same check: it does not start.
    expect(() => openDataSource({ DB_TYPE: 'postgres', DB_URL: PAST_THE_HOST[0]![1] }, null)).toThrow('DB_URL names a Unix socket');
  });

  it('parameters that name files of this host (sslcert=, sslkey=, sslrootcert=, …) are refused, allowed sockets or not', () => {
    for (const parameter of ['sslcert', 'sslkey', 'sslrootcert', 'sslcrl', 'passfile']) {
      const url = `postgres://analyst@db.example.invalid/warehouse?sslmode=require&${parameter}=/work/data/secret.key`;
      for (const allowSockets of [false, true])
        expect(() => pgTarget(url, allowSockets)).toThrow(`DB_URL sets ${parameter}=, which would read files on this server`);
    }
    expect(() => pgTarget('postgres://analyst@db.example.invalid/warehouse?sslmode=require', false)).not.toThrow();
  });

  it('a host name is resolved once and every connection goes to that address; TLS still checks the certificate against the name', async () => {
    const pinned = await pinnedSettings(pgTarget('postgres://analyst@localhost:5432/warehouse?sslmode=verify-full', false));
    expect(pinned.host).toBe('127.0.0.1');
    expect(pinned.ssl).toMatchObject({ servername: 'localhost' });
    expect((await pinnedSettings(pgTarget('postgres://analyst@db.example.invalid/warehouse?hostaddr=192.0.2.7', true))).host).toBe('192.0.2.7');
    // No TLS asked for: none added.
    expect((await pinnedSettings(pgTarget('postgres://analyst@localhost/warehouse', false))).ssl).toBeUndefined();
  });

  it('a runtime’s PostgreSQL source runs no statement before it is compared: the server’s own cluster is refused, another is queried', async () => {
    const refusals: OwnClusterRefused[] = [];
    const guard = { ownCluster: own, allowSockets: false, refused: (error: OwnClusterRefused) => refusals.push(error) };
    const mine = openDataSource({ DB_TYPE: 'postgres', DB_URL: `postgres://postgres@0.0.0.0:5432/${otherDb}` }, null, 5_000, undefined, guard);
    await expect(mine.query('SELECT 1 AS one', [])).rejects.toThrow(OWN_CLUSTER_MESSAGE);
    await expect(mine.check()).rejects.toThrow(OwnClusterRefused);
    expect(refusals).toHaveLength(1);
    await mine.close();
    const warehouse = openDataSource({ DB_TYPE: 'postgres', DB_URL: second.url }, null, 5_000, undefined, guard);
    expect(await warehouse.query('SELECT 1 AS one', [])).toEqual([{ one: 1 }]);
    await warehouse.close();
  });
});

describe.each(DIALECTS)('a deployment’s data source is never the server’s own PostgreSQL cluster: at write time (%s store)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect, { databaseUrl: LOCAL_PG });
  }, 120_000);
  afterAll(async () => t?.close());

  const put = (app: TestApp, id: number, vars: Array<{ name: string; value: string }>) =>
    app.request({ method: 'PUT', url: `/api/v1/deployments/${id}/env-vars`, body: { env_variables: vars } });
  const stored = (app: TestApp, id: number) => app.store.db.selectFrom('env_vars').select('name').where('deployment_id', '=', id).execute();

  it('every spelling of the server’s own cluster, and another database of it, is a 400 pointing at DB_URL that stores nothing', async () => {
    const id = await t.deployment('own cluster');
    for (const [what, url] of SAME_CLUSTER) {
      const refused = problem(
        await put(t, id, [
          { name: 'DB_TYPE', value: 'postgres' },
          { name: 'DB_URL', value: url },
        ]),
        400,
        'VALIDATION_FAILED',
      );
      expect(refused.detail, what).toContain("DB_URL reaches this server's own PostgreSQL cluster");
      expect(refused.errors).toEqual([{ pointer: '/body/env_variables/1/value', message: OWN_CLUSTER_MESSAGE }]);
    }
    expect(await stored(t, id)).toEqual([]);
  });

  it('a Unix socket, host= and hostaddr= are a 400 naming DATASOURCES_ALLOW_SOCKETS; where allowed, they are compared and the server’s own cluster is still a 400', async () => {
    const id = await t.deployment('past the host');
    for (const [, url, message] of PAST_THE_HOST) {
      const refused = problem(
        await put(t, id, [
          { name: 'DB_TYPE', value: 'postgres' },
          { name: 'DB_URL', value: url },
        ]),
        400,
        'VALIDATION_FAILED',
      );
      expect(refused.errors?.[0]).toMatchObject({ pointer: '/body/env_variables/1/value', message: expect.stringContaining(message) });
      expect(refused.detail).toContain('DATASOURCES_ALLOW_SOCKETS=true');
    }
    expect(await stored(t, id)).toEqual([]);
    const sockets = await TestApp.create(dialect, { databaseUrl: LOCAL_PG, runtime: { driver: 'none', allowSocketSources: true } });
    try {
      const allowed = await sockets.deployment('sockets allowed');
      for (const [, url] of PAST_THE_HOST) {
        expect(
          problem(
            await put(sockets, allowed, [
              { name: 'DB_TYPE', value: 'postgres' },
              { name: 'DB_URL', value: url },
            ]),
            400,
            'VALIDATION_FAILED',
          ).detail,
        ).toContain(OWN_CLUSTER_MESSAGE);
      }
      expect(await stored(sockets, allowed)).toEqual([]);
    } finally {
      await sockets.close();
    }
  }, 120_000);

  it('the variables are checked as they will stand: DB_TYPE=postgres added to a stored DB_URL of the server’s cluster is the 400, pointing at DB_TYPE', async () => {
    const id = await t.deployment('in two writes');
    expect((await put(t, id, [{ name: 'DB_URL', value: `postgres://postgres@0.0.0.0:5432/${ownDb}` }])).statusCode).toBe(200);
    const refused = problem(await put(t, id, [{ name: 'DB_TYPE', value: 'postgres' }]), 400, 'VALIDATION_FAILED');
    expect(refused.errors).toEqual([{ pointer: '/body/env_variables/0/value', message: OWN_CLUSTER_MESSAGE }]);
    expect((await stored(t, id)).map((r) => r.name)).toEqual(['DB_URL']);
  });

  it('another cluster is accepted, and so is a source the server cannot reach now (the runtime compares it before any query)', async () => {
    const id = await t.deployment('warehouse');
    expect(
      (
        await put(t, id, [
          { name: 'DB_TYPE', value: 'postgres' },
          { name: 'DB_URL', value: second.url },
        ])
      ).statusCode,
    ).toBe(200);
    const down = await t.deployment('down');
    expect(
      (
        await put(t, down, [
          { name: 'DB_TYPE', value: 'postgres' },
          { name: 'DB_URL', value: 'postgres://analyst@127.0.0.1:1/warehouse' },
          { name: 'DB_PASSWORD', value: 'pw' },
        ])
      ).statusCode,
    ).toBe(200);
  });
});

describe.each(DIALECTS)('a deployment’s data source is never the server’s own PostgreSQL cluster: at run time (%s store)', (dialect) => {
  let t: TestApp;
  let r: ReturnType<typeof runtimeProbe>;
  beforeAll(async () => {
    // Sockets allowed, so every spelling reaches the runtime's comparison (refused otherwise at start: above).
    t = await TestApp.create(dialect, { databaseUrl: LOCAL_PG, runtime: { ...FAST_RUNTIME, allowSocketSources: true } });
    r = runtimeProbe(t);
  }, 120_000);
  afterAll(async () => t?.close());

  /** Writes the variables straight into the store, past the write's check, as an older server or a restore might have. */
  const store = async (id: number, vars: Record<string, string>) => {
    const sealed = Object.entries(vars).map(([name, value]) => ({ name, value: t.app.services.secrets.seal(value, envVarContext(id, name)) }));
    await upsertEnvVars(t.store.db, t.tenantId, id, sealed, new Date().toISOString());
    await t.app.services.runtime.reconcile();
  };

  it('a DB_URL of the server’s own cluster stored by any path stops the runtime before it serves: the refusal in the pod’s log and status (CrashLoopBackOff), the data API 503', async () => {
    const cases = [...SAME_CLUSTER, ...PAST_THE_HOST.map(([what, url]) => [what, url] as [string, string])];
    await Promise.all(
      cases.map(async ([what, url], i) => {
        const id = await r.create(`own ${i}`);
        await store(id, { DB_TYPE: 'postgres', DB_URL: url });
        const lines = await r.logsWith(id, `Runtime refused its data source: ${OWN_CLUSTER_MESSAGE}`);
        expect(
          lines.some((l) => l.startsWith('Listening on')),
          what,
        ).toBe(false);
        await r.podWhere(id, { status: 'CrashLoopBackOff', ready: false });
        const unavailable = problem(await t.request({ url: `/deployments/${id}/data-api/v1/meta` }), 503, 'RUNTIME_UNAVAILABLE');
        expect(unavailable.detail, what).toContain(OWN_CLUSTER_MESSAGE);
        // Its crash loop would slow the tests that follow.
        expect((await t.request({ method: 'DELETE', url: `/api/v1/deployments/${id}` })).statusCode).toBe(200);
      }),
    );
  }, 120_000);

  it('a source that does not answer at start is not ready and runs no query until it can be compared; another cluster runs and is ready', async () => {
    const id = await r.create('warehouse');
    expect(
      (
        await t.request({
          method: 'PUT',
          url: `/api/v1/deployments/${id}/env-vars`,
          body: {
            env_variables: [
              { name: 'DB_TYPE', value: 'postgres' },
              { name: 'DB_URL', value: second.url },
            ],
          },
        })
      ).statusCode,
    ).toBe(200);
    await r.podWhere(id, { status: 'Running', ready: true });
    const lines = await r.logsWith(id, 'Ready: the data source answers');
    expect(lines.join('\n')).not.toContain('refused');
    const down = await r.create('down');
    await store(down, { DB_TYPE: 'postgres', DB_URL: 'postgres://postgres@127.0.0.1:1/warehouse' });
    await r.logsWith(down, 'Data source not checked yet, so no query runs');
    await r.podWhere(down, { status: 'Running', ready: false });
  }, 60_000);
});
