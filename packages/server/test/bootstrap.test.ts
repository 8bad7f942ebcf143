import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { bootstrapDefaultTenant, issueFirstAdminKey, type BootstrapResult } from '../src/areas/tenants/tenants.service.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { migrate, storeFor, type Store } from '../src/db/database.js';
import { startServer, type RunningServer } from '../src/server.js';
import { systemClock } from '../src/time.js';
import { selfSignedLocalhost } from '../src/tls.js';
import { createTestStore, DIALECTS } from './harness.js';
import { keyIn, REPO_ROOT, runTs, serverEnv, type ServerEnv } from './server-env.js';
import { startServerProcess } from './server-process.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const execFileAsync = promisify(execFile);
const shellQuote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

/** Runs a command with `input` on its stdin (a pipe, as when a key file is redirected in). */
function runWithInput(
  command: string,
  args: string[],
  input: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdin.end(input);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function counts(store: Store) {
  const count = async (table: 'tenants' | 'users' | 'api_keys') =>
    Number(
      (
        await store.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return { tenants: await count('tenants'), users: await count('users'), keys: await count('api_keys') };
}

describe.each(DIALECTS)('start-up bootstrap (%s)', (dialect) => {
  let env: ServerEnv;
  let running: RunningServer | null = null;
  beforeAll(async () => {
    env = await serverEnv(dialect);
  });
  afterEach(async () => {
    await running?.close();
    running = null;
  });
  afterAll(async () => env?.destroy());

  async function start(extra: Record<string, string> = {}) {
    const printed: string[] = [];
    running = await startServer(env.config(extra), (line) => printed.push(line));
    return { server: running, printed };
  }

  async function stop() {
    await running?.close();
    running = null;
  }

  const listKeys = (server: RunningServer, key: string) => server.app.inject({ url: '/api/v1/api-keys', headers: { authorization: `Bearer ${key}` } });

  it('without ADMIN_API_KEY: generates an admin key, prints it once with a curl and a login line that work as pasted, and a second start prints nothing', async () => {
    const first = await start();
    expect(first.printed).toHaveLength(1);
    const key = [...new Set(first.printed[0]?.match(/mapi_[A-Za-z0-9]{40}/g) ?? [])];
    expect(key).toHaveLength(1);
    expect(first.printed[0]).toContain('admin@localhost');
    expect((await listKeys(first.server, key[0] as string)).statusCode).toBe(200);
    // The banner's curl and login lines name this server and its certificate, and work as pasted.
    const banner = first.printed[0] as string;
    const lines = banner.split('\n').map((line) => line.trim());
    const curl = lines.find((line) => line.startsWith('curl ')) as string;
    const login = lines.find((line) => line.startsWith('npx mapi login ')) as string;
    const cert = path.join(env.dataDir, 'tls', 'localhost.crt');
    expect(curl).toBe(`curl --cacert ${cert} -H "Authorization: Bearer ${key[0]}" ${first.server.url}/api/v1/users/me`);
    expect(login).toBe(`npx mapi login --url ${first.server.url} --ca-cert ${cert} --token-stdin`);

    const me = await execFileAsync('sh', ['-c', curl], { env: { PATH: process.env.PATH ?? '' } });
    expect(JSON.parse(me.stdout)).toMatchObject({ email: 'admin@localhost', role: 'ADMIN' });
    // The login line, with the CLI this repository builds in place of npx, saves a working profile.
    const configDir = path.join(env.dataDir, 'cli-config');
    const cli = path.join(REPO_ROOT, 'packages/cli/bin/mapi.js');
    const loggedIn = await runWithInput('sh', ['-c', login.replace(/^npx mapi /, `${shellQuote(process.execPath)} ${shellQuote(cli)} `)], `${key[0]}\n`, {
      PATH: process.env.PATH ?? '',
      HOME: configDir,
      MAPI_CONFIG_DIR: configDir,
    });
    expect(loggedIn.code, loggedIn.stderr).toBe(0);
    expect(loggedIn.stdout).toContain(`Logged in to ${first.server.url} as admin@localhost (ADMIN).`);
    expect(loggedIn.stderr).toContain('Next: `mapi deployments list` lists the deployments; `mapi --help` lists every command.');
    expect(JSON.parse(fs.readFileSync(path.join(configDir, 'config.json'), 'utf8')).profiles.default).toEqual({
      url: first.server.url,
      token: key[0],
      caCert: cert,
    });
    await stop();

    const second = await start();
    expect(second.printed).toEqual([]);
    expect((await listKeys(second.server, key[0] as string)).statusCode).toBe(200);
    expect(await counts(second.server.store)).toEqual({ tenants: 1, users: 1, keys: 1 });
  });

  it('with ADMIN_API_KEY: that exact key is the admin, only its SHA-256 is stored, and restarts change nothing', async () => {
    const adminKey = generateApiKey();
    const first = await start({ ADMIN_API_KEY: adminKey, ADMIN_EMAIL: 'ops@example.com' });
    expect(first.printed).toEqual([]);
    const listed = await listKeys(first.server, adminKey);
    expect(listed.statusCode).toBe(200);

    const rows = await first.server.store.db.selectFrom('api_keys').selectAll().where('key_hash', '=', sha256(adminKey)).execute();
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row.revoked_at).toBeNull();
    const owner = await first.server.store.db.selectFrom('users').selectAll().where('id', '=', row.user_id).executeTakeFirstOrThrow();
    expect(owner).toMatchObject({ email: 'ops@example.com', role: 'ADMIN', deactivated_at: null });
    const everything = JSON.stringify(await first.server.store.db.selectFrom('api_keys').selectAll().execute());
    expect(everything).not.toContain(adminKey);
    expect(everything).not.toContain(adminKey.slice(5));
    expect(JSON.stringify(listed.json())).not.toContain(adminKey);
    await stop();

    const again = await start({ ADMIN_API_KEY: adminKey, ADMIN_EMAIL: 'ops@example.com' });
    expect(again.printed).toEqual([]);
    expect((await listKeys(again.server, adminKey)).statusCode).toBe(200);
    expect(await again.server.store.db.selectFrom('api_keys').select('id').where('key_hash', '=', sha256(adminKey)).execute()).toEqual([{ id: row.id }]);
  });

  it("the database files are 0600 and the repositories 0700 whatever the umask or the data directory's mode, and a start narrows wider ones", async () => {
    const umask = process.umask(0o022);
    try {
      fs.chmodSync(env.dataDir, 0o755);
      const modeOf = (name: string) => (fs.statSync(path.join(env.dataDir, name)).mode & 0o777).toString(8);
      const databaseFiles = dialect === 'sqlite' ? ['mapi.sqlite', 'mapi.sqlite-wal', 'mapi.sqlite-shm'] : [];
      await start();
      for (const file of databaseFiles) expect([file, modeOf(file)]).toEqual([file, '600']);
      expect(modeOf('repositories')).toBe('700');
      await stop();

      // Made wider by hand, or by an earlier version: the next start narrows them again.
      for (const file of databaseFiles) if (fs.existsSync(path.join(env.dataDir, file))) fs.chmodSync(path.join(env.dataDir, file), 0o644);
      fs.chmodSync(path.join(env.dataDir, 'repositories'), 0o755);
      await start();
      for (const file of databaseFiles) expect([file, modeOf(file)]).toEqual([file, '600']);
      expect(modeOf('repositories')).toBe('700');
    } finally {
      process.umask(umask);
    }
  });

  it('a new ADMIN_API_KEY rotates the old one: after restart only the new value works', async () => {
    const oldKey = generateApiKey();
    const newKey = generateApiKey();
    await start({ ADMIN_API_KEY: oldKey });
    await stop();
    const rotated = await start({ ADMIN_API_KEY: newKey });
    expect((await listKeys(rotated.server, newKey)).statusCode).toBe(200);
    expect((await listKeys(rotated.server, oldKey)).statusCode).toBe(401);
  });
});

describe('configuration', () => {
  const problemsOf = (env: Record<string, string>): string[] => {
    try {
      loadConfig(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as ConfigError).problems;
    }
    throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
  };

  it('has working defaults', () => {
    expect(loadConfig({})).toMatchObject({
      port: 8443,
      host: '127.0.0.1',
      databaseUrl: null,
      adminApiKey: null,
      baseDomain: null,
      logLevel: 'info',
      adminEmail: 'admin@localhost',
      rateLimitPerMinute: 1200,
    });
    expect(loadConfig({ PORT: '0', BASE_DOMAIN: ' Mapi.Example.COM ', ADMIN_API_KEY: 'mapi_' + 'a'.repeat(40) })).toMatchObject({
      port: 0,
      baseDomain: 'mapi.example.com',
    });
  });

  it('timeouts and limits have safe defaults, and none can be turned off by a zero', () => {
    expect(loadConfig({})).toMatchObject({
      rateLimitPerIpPerMinute: 60,
      redisUrl: null,
      timeouts: { headersMs: 10_000, bodyMs: 30_000, keepAliveMs: 72_000, drainMs: 10_000 },
    });
    expect(loadConfig({ REDIS_URL: 'rediss://cache.internal:6380/2', BODY_TIMEOUT_MS: '600000' })).toMatchObject({
      redisUrl: 'rediss://cache.internal:6380/2',
      timeouts: { bodyMs: 600_000 },
    });
  });

  it('runtimes default to child processes on loopback with the documented timings; bad values are named', () => {
    expect(loadConfig({ DATA_DIR: '/srv/mapi' }).runtime).toEqual({
      driver: 'process',
      host: '127.0.0.1',
      tickMs: 2_000,
      leaseMs: 15_000,
      healthIntervalMs: 5_000,
      backoffBaseMs: 2_000,
      idleMs: 600_000,
      logLinesPerDeployment: 10_000,
      dataSourcesDir: '/srv/mapi/datasources',
      allowSocketSources: false,
      podFilesDir: '/srv/mapi/pods',
      queries: { timeoutMs: 30_000, maxRows: 50_000, maxResultBytes: 52_428_800, cacheTtlMs: 10_000, continueWaitMs: 5_000 },
    });
    expect(problemsOf({ RUNTIME_DRIVER: 'docker' })).toEqual([expect.stringMatching(/^RUNTIME_DRIVER must be "process"/)]);
    expect(problemsOf({ RUNTIME_TICK_MS: '5000', RUNTIME_LEASE_MS: '10000' })).toEqual([
      expect.stringMatching(/^RUNTIME_LEASE_MS must be at least three times RUNTIME_TICK_MS/),
    ]);
    expect(problemsOf({ RUNTIME_LOG_LINES: '10' })).toEqual([expect.stringMatching(/^RUNTIME_LOG_LINES must be/)]);
    // The server's own database is never a data source.
    expect(problemsOf({ DATA_DIR: '/srv/mapi', DATASOURCES_DIR: '/srv/mapi' })).toEqual([
      expect.stringMatching(/^DATASOURCES_DIR must not hold the server's own database/),
    ]);
    expect(problemsOf({ DATA_DIR: '/srv/mapi', DATASOURCES_DIR: '/srv' })).toHaveLength(1);
  });

  it('DATASOURCES_ALLOW_SOCKETS: off unless "true"; anything but true or false is named', () => {
    expect(loadConfig({ DATASOURCES_ALLOW_SOCKETS: 'TRUE' }).runtime.allowSocketSources).toBe(true);
    expect(loadConfig({ DATASOURCES_ALLOW_SOCKETS: 'false' }).runtime.allowSocketSources).toBe(false);
    expect(problemsOf({ DATASOURCES_ALLOW_SOCKETS: 'yes' })).toEqual([
      'DATASOURCES_ALLOW_SOCKETS must be "true" (allow a Unix socket or host=/hostaddr= in DB_URL) or "false", got "yes"',
    ]);
  });

  it('Python analysis runs within a time and a memory limit, from a small pool; bad values are named', () => {
    expect(loadConfig({}).python).toEqual({ poolSize: 2, concurrency: 2, queueLimit: 32, timeoutMs: 10_000, memoryMb: 256, cacheMs: 60_000 });
    expect(loadConfig({ PYTHON_POOL_SIZE: '0', PYTHON_TIMEOUT_MS: '2000', PYTHON_MEMORY_MB: '512', PYTHON_CACHE_MS: '0' }).python).toMatchObject({
      poolSize: 0,
      timeoutMs: 2_000,
      memoryMb: 512,
      cacheMs: 0,
    });
    expect(problemsOf({ PYTHON_MEMORY_MB: '16' })).toEqual([expect.stringMatching(/^PYTHON_MEMORY_MB must be a number of megabytes from 64/)]);
    expect(problemsOf({ PYTHON_CONCURRENCY: '0' })).toEqual([expect.stringMatching(/^PYTHON_CONCURRENCY must be/)]);
    expect(problemsOf({ PYTHON_QUEUE_LIMIT: 'lots' })).toEqual([expect.stringMatching(/^PYTHON_QUEUE_LIMIT must be a number of waiting runs/)]);
    expect(problemsOf({ PYTHON_TIMEOUT_MS: '10' })).toEqual([expect.stringMatching(/^PYTHON_TIMEOUT_MS must be/)]);
  });

  it('refuses a malformed ADMIN_API_KEY at start-up, naming the variable', () => {
    for (const bad of ['secret', 'mapi_short', `mapi_${'a'.repeat(39)}!`, `MAPI_${'a'.repeat(40)}`, `mapi_${'a'.repeat(41)}`]) {
      const problems = problemsOf({ ADMIN_API_KEY: bad });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^ADMIN_API_KEY must be "mapi_" followed by 40 letters or digits/);
      expect(problems[0]).not.toContain(bad);
    }
  });

  it.each([
    [{ PORT: '80a' }, /^PORT must be an integer from 0 to 65535, got "80a"$/],
    [{ PORT: '65536' }, /^PORT must be an integer/],
    [{ PORT: '-1' }, /^PORT must be an integer/],
    [{ DATABASE_URL: 'mysql://localhost/db' }, /^DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL/],
    [{ TLS_CERT: '/etc/cert.pem' }, /^TLS_CERT and TLS_KEY go together/],
    [{ TLS_KEY: '/etc/key.pem' }, /^TLS_CERT and TLS_KEY go together/],
    [{ LOG_LEVEL: 'verbose' }, /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"$/],
    [{ BASE_DOMAIN: 'https://mapi.example.com' }, /^BASE_DOMAIN must be a host name such as "mapi.example.com"/],
    [{ BASE_DOMAIN: 'mapi.example.com:8443' }, /^BASE_DOMAIN must be a host name/],
    [{ ADMIN_EMAIL: 'root' }, /^ADMIN_EMAIL must be an email address, got "root"$/],
    [{ RATE_LIMIT_PER_MINUTE: 'lots' }, /^RATE_LIMIT_PER_MINUTE must be a whole number/],
    [{ RATE_LIMIT_PER_IP_PER_MINUTE: '-5' }, /^RATE_LIMIT_PER_IP_PER_MINUTE must be a whole number/],
    [{ REDIS_URL: 'http://127.0.0.1:6379' }, /^REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/],
    [{ HEADERS_TIMEOUT_MS: '0' }, /^HEADERS_TIMEOUT_MS must be a number of milliseconds from 100 to 86400000, got "0"$/],
    [{ BODY_TIMEOUT_MS: '30s' }, /^BODY_TIMEOUT_MS must be a number of milliseconds/],
    [{ KEEP_ALIVE_TIMEOUT_MS: '99' }, /^KEEP_ALIVE_TIMEOUT_MS must be a number of milliseconds/],
  ])('explains %j', (env, message) => {
    const problems = problemsOf(env);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
  });

  it('reports every problem at once', () => {
    const error = (() => {
      try {
        loadConfig({ PORT: 'x', LOG_LEVEL: 'loud', TLS_CERT: 'a.pem', ADMIN_API_KEY: 'nope' });
      } catch (e) {
        return e as ConfigError;
      }
      throw new Error('accepted');
    })();
    expect(error.problems).toHaveLength(4);
    expect(error.message).toMatch(/^Invalid configuration:\n {2}- PORT/);
    for (const name of ['PORT', 'LOG_LEVEL', 'TLS_CERT', 'ADMIN_API_KEY']) expect(error.message).toContain(name);
  });
});

describe.each(DIALECTS)('concurrent bootstraps (%s)', (dialect) => {
  let env: ServerEnv;
  beforeAll(async () => {
    env = await serverEnv(dialect);
  });
  afterAll(async () => env?.destroy());

  it('two server processes starting at once on a fresh database migrate once and leave one tenant, one admin, one generated key', async () => {
    const runs = await Promise.all([1, 2].map(() => runTs('packages/server/test/fixtures/bootstrap-once.ts', [], env.env)));
    for (const run of runs) expect(run, run.stderr).toMatchObject({ code: 0, stderr: '' });
    const results = runs.map((r) => JSON.parse(r.stdout) as { tenantId: number; adminId: number; generatedKey: string | null });
    expect(results.filter((r) => r.generatedKey !== null)).toHaveLength(1);
    expect(new Set(results.map((r) => r.tenantId)).size).toBe(1);
    expect(new Set(results.map((r) => r.adminId)).size).toBe(1);
    const store = storeFor(env.config());
    try {
      expect(await counts(store)).toEqual({ tenants: 1, users: 1, keys: 1 });
    } finally {
      await store.close();
    }
  });
});

// Two handles in one process: on PostgreSQL both wait asynchronously on the advisory lock.
// better-sqlite3 waits synchronously for SQLite's lock, which would stall the very event loop the
// other handle needs to commit; across processes (above) SQLite serialises them as it should.
if (DIALECTS.includes('postgres')) {
  describe('concurrent bootstraps in one process (postgres)', () => {
    it('two store handles bootstrapping at once do the same, with or without ADMIN_API_KEY', async () => {
      const store = await createTestStore('postgres');
      const other = store.reopen();
      try {
        const results: BootstrapResult[] = await Promise.all([
          bootstrapDefaultTenant(store, systemClock, 'admin@localhost', null),
          bootstrapDefaultTenant(other, systemClock, 'admin@localhost', null),
        ]);
        expect(results.map((r) => r.adminKeys)).toEqual(['first-start', 'first-start']);
        const [a, b] = results as [BootstrapResult, BootstrapResult];
        const issued = await Promise.all([
          issueFirstAdminKey(store, systemClock, a.tenant.id, a.admin.id),
          issueFirstAdminKey(other, systemClock, b.tenant.id, b.admin.id),
        ]);
        expect(issued.filter((key) => key !== null)).toHaveLength(1);
        expect(new Set(results.map((r) => r.admin.id)).size).toBe(1);
        expect(await counts(store)).toEqual({ tenants: 1, users: 1, keys: 1 });

        const key = generateApiKey();
        await Promise.all([
          bootstrapDefaultTenant(store, systemClock, 'admin@localhost', key),
          bootstrapDefaultTenant(other, systemClock, 'admin@localhost', key),
        ]);
        expect(await counts(store)).toEqual({ tenants: 1, users: 1, keys: 2 });
        expect(await store.db.selectFrom('api_keys').select('id').where('key_hash', '=', sha256(key)).execute()).toHaveLength(1);
      } finally {
        await other.close();
        await store.destroy();
      }
    });
  });
}

describe.each(DIALECTS)('bootstrap edge cases (%s)', (dialect) => {
  it('an expired only admin key is reported as none usable, and no new key is made behind the operator', async () => {
    const store = await createTestStore(dialect);
    try {
      const first = await bootstrapDefaultTenant(store, systemClock, 'admin@localhost', null);
      expect(first.adminKeys).toBe('first-start');
      expect(await issueFirstAdminKey(store, systemClock, first.tenant.id, first.admin.id)).toMatch(/^mapi_[A-Za-z0-9]{40}$/);
      expect((await bootstrapDefaultTenant(store, systemClock, 'admin@localhost', null)).adminKeys).toBe('usable');
      await store.db
        .updateTable('api_keys')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .execute();
      const second = await bootstrapDefaultTenant(store, systemClock, 'admin@localhost', null);
      expect(second.adminKeys).toBe('none-usable');
      expect(await issueFirstAdminKey(store, systemClock, second.tenant.id, second.admin.id)).toBeNull();
      expect(await counts(store)).toEqual({ tenants: 1, users: 1, keys: 1 });
    } finally {
      await store.destroy();
    }
  });

  it("refuses an ADMIN_API_KEY that is already another user's key, and changes nothing", async () => {
    const store = await createTestStore(dialect);
    try {
      await bootstrapDefaultTenant(store, systemClock, 'admin@localhost', null);
      const { insertKey } = await import('../src/areas/api-keys/api-keys.store.js');
      const { insertUser } = await import('../src/areas/users/users.store.js');
      const at = new Date().toISOString();
      const tenant = await store.db.selectFrom('tenants').select('id').executeTakeFirstOrThrow();
      const viewer = await insertUser(store.db, {
        tenant_id: tenant.id,
        email: 'viewer@example.com',
        first_name: null,
        role: 'VIEWER',
        deactivated_at: null,
        created_at: at,
        updated_at: at,
      });
      const theirs = generateApiKey();
      await insertKey(store.db, { tenantId: tenant.id, userId: viewer.id, name: 'theirs', key: theirs, source: 'api', createdAt: at });
      const before = await counts(store);
      await expect(bootstrapDefaultTenant(store, systemClock, 'admin@localhost', theirs)).rejects.toThrow(/ADMIN_API_KEY is already in use/);
      expect(await counts(store)).toEqual(before);
    } finally {
      await store.destroy();
    }
  });
});

describe.each(DIALECTS)('first start (%s)', (dialect) => {
  let env: ServerEnv;
  beforeAll(async () => {
    env = await serverEnv(dialect);
  });
  afterAll(async () => env?.destroy());

  async function keyCount(): Promise<number> {
    const store = storeFor(env.config());
    try {
      return (await counts(store)).keys;
    } finally {
      await store.close();
    }
  }

  it('a failed start leaves no data directory behind when it made it; an existing one stays', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((taken.address() as net.AddressInfo).port);
      const fresh = path.join(env.dataDir, 'fresh');
      await expect(startServer(env.config({ DATA_DIR: fresh, PORT: port }), () => undefined)).rejects.toThrow(/already in use/);
      expect(fs.existsSync(fresh)).toBe(false);
      await expect(startServer(env.config({ PORT: port }), () => undefined)).rejects.toThrow(/already in use/);
      expect(fs.existsSync(path.join(env.dataDir, 'tls'))).toBe(true);
    } finally {
      taken.close();
    }
  });

  it('a start on a taken port fails in one line naming the port and creates no key; the next start on a free port shows a working key', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as net.AddressInfo).port;
      const failed = await runTs('packages/server/src/main.ts', [], { ...env.env, PORT: String(port), LOG_LEVEL: 'info' });
      expect(failed.code).toBe(1);
      expect(failed.stderr.trimEnd().split('\n')).toEqual([
        `mapi failed to start: port ${port} on 127.0.0.1 is already in use: stop what listens there, or set PORT to a free port (PORT=0 picks one).`,
      ]);
      expect(failed.stdout).not.toMatch(/mapi_[A-Za-z0-9]{40}/);
    } finally {
      taken.close();
    }
    expect(await keyCount()).toBe(0);

    const server = await startServerProcess(env.env, env.dataDir);
    try {
      const key = keyIn(server.output());
      const me = await server.get('/api/v1/users/me', key);
      expect(me.status, me.text).toBe(200);
      expect(me.body).toMatchObject({ email: 'admin@localhost', role: 'ADMIN' });
    } finally {
      await server.stop();
    }
    expect(await keyCount()).toBe(1);
  }, 120_000);

  it('a start with a certificate that does not match its key fails naming both files, before any key is made', async () => {
    const fresh = await serverEnv(dialect);
    try {
      const [one, other] = await Promise.all([selfSignedLocalhost(), selfSignedLocalhost()]);
      fs.writeFileSync(path.join(fresh.dataDir, 'one.crt'), one.cert);
      fs.writeFileSync(path.join(fresh.dataDir, 'other.key'), other.key);
      const config = fresh.config({ TLS_CERT: path.join(fresh.dataDir, 'one.crt'), TLS_KEY: path.join(fresh.dataDir, 'other.key') });
      await expect(startServer(config, () => undefined)).rejects.toThrow(
        /^TLS_CERT \(.*one\.crt\) and TLS_KEY \(.*other\.key\) are not a usable certificate and private key/,
      );
      const store = storeFor(fresh.config());
      try {
        await migrate(store);
        expect(await counts(store)).toEqual({ tenants: 0, users: 0, keys: 0 });
      } finally {
        await store.close();
      }
    } finally {
      await fresh.destroy();
    }
  }, 60_000);
});

describe.each(DIALECTS)('no usable admin key (%s)', (dialect) => {
  let env: ServerEnv;
  let running: RunningServer | null = null;
  beforeEach(async () => {
    env = await serverEnv(dialect);
  });
  afterEach(async () => {
    await running?.close();
    running = null;
    await env?.destroy();
  });

  async function start(extra: Record<string, string> = {}) {
    await running?.close();
    const printed: string[] = [];
    running = await startServer(env.config(extra), (line) => printed.push(line));
    return { server: running, text: printed.join('\n') };
  }

  const me = (server: RunningServer, key: string) => server.app.inject({ url: '/api/v1/users/me', headers: { authorization: `Bearer ${key}` } });

  it('after every admin key is revoked, a start prints no new key but how to make one, and doing so works', async () => {
    const first = await start();
    const original = keyIn(first.text);
    await first.server.store.db.updateTable('api_keys').set({ revoked_at: new Date().toISOString() }).execute();

    const again = await start();
    expect(again.text).not.toMatch(/mapi_[A-Za-z0-9]{40}/);
    expect(again.text).toContain('No admin API key works in tenant "default"');
    expect(again.text).toContain('export ADMIN_API_KEY=$(npm run --silent admin -- key generate)');
    expect(again.text).not.toContain('ADMIN_EMAIL=');
    expect((await me(again.server, original)).statusCode).toBe(401);

    const made = generateApiKey();
    const fixed = await start({ ADMIN_API_KEY: made });
    expect(fixed.text).toBe('');
    expect((await me(fixed.server, made)).statusCode).toBe(200);
  }, 120_000);

  it('when the ADMIN_EMAIL admin is deactivated, the hint says to name another admin email, and doing so works', async () => {
    const first = await start();
    await first.server.store.db.updateTable('users').set({ deactivated_at: new Date().toISOString() }).execute();

    const again = await start();
    expect(again.text).not.toMatch(/mapi_[A-Za-z0-9]{40}/);
    expect(again.text).toContain('admin@localhost (ADMIN_EMAIL) is no longer an active admin');
    expect(again.text).toContain('export ADMIN_EMAIL=');

    const made = generateApiKey();
    const fixed = await start({ ADMIN_API_KEY: made, ADMIN_EMAIL: 'ops@example.com' });
    const res = await me(fixed.server, made);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ email: 'ops@example.com', role: 'ADMIN' });
  }, 120_000);
});
