import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { envVarContext } from '../src/areas/env-vars/env-vars.store.js';
import { DIALECTS, TestApp, problem } from './harness.js';
import { startServerProcess } from './server-process.js';
import { keyIn, serverEnv } from './server-env.js';

interface Item {
  name: string;
  value: string;
}
interface ListBody {
  items: Item[];
  data: Item[];
  pageInfo: { startCursor: string | null; endCursor: string | null; hasNextPage: boolean; hasPreviousPage: boolean };
}

describe.each(DIALECTS)('environment variables (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
  });
  afterAll(async () => t?.close());

  const url = (id: number) => `/api/v1/deployments/${id}/env-vars`;
  const list = (id: number, key?: string, query = '') => t.request({ url: `${url(id)}${query}`, key });
  const set = (id: number, env_variables: unknown, key?: string) => t.request({ method: 'PUT', url: url(id), body: { env_variables }, key });
  const del = (id: number, name: string, key?: string) => t.request({ method: 'DELETE', url: `${url(id)}/${encodeURIComponent(name)}`, key });
  const rows = (id: number) => t.store.db.selectFrom('env_vars').selectAll().where('deployment_id', '=', id).orderBy('id').execute();

  it('reference 1.11-1.12: a PUT stores values encrypted and a read returns them, secret-looking names masked whatever their case', async () => {
    const id = await t.deployment('masking');
    const sent = [
      { name: 'DB_HOST', value: 'db.internal' },
      { name: 'db_password', value: 'pw-lower' },
      { name: 'API_KEY', value: 'key-1' },
      { name: 'Client_Secret', value: 'sec-1' },
      { name: 'GITHUB_TOKEN', value: 'tok-1' },
      { name: 'AWS_CREDENTIALS', value: 'cred-1' },
      { name: 'PASSPHRASE', value: 'pp-1' },
      { name: 'monkey', value: 'contains key' },
      { name: 'EMPTY', value: '' },
    ];
    const res = await set(id, sent);
    expect(res.statusCode, res.body).toBe(200);
    const expected = [
      { name: 'API_KEY', value: '[ENCRYPTED]' },
      { name: 'AWS_CREDENTIALS', value: '[ENCRYPTED]' },
      { name: 'Client_Secret', value: '[ENCRYPTED]' },
      { name: 'DB_HOST', value: 'db.internal' },
      { name: 'EMPTY', value: '' },
      { name: 'GITHUB_TOKEN', value: '[ENCRYPTED]' },
      { name: 'PASSPHRASE', value: '[ENCRYPTED]' },
      { name: 'db_password', value: '[ENCRYPTED]' },
      { name: 'monkey', value: '[ENCRYPTED]' },
    ];
    const body = res.json() as ListBody;
    expect(body.items).toEqual(expected);
    expect(body.data).toEqual(expected);
    expect(body.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    const read = await list(id);
    expect(read.statusCode).toBe(200);
    expect((read.json() as ListBody).items).toEqual(expected);
    // At rest: the sealed form only, bound to the deployment and the name.
    for (const row of await rows(id)) {
      expect(row.value).toMatch(/^v1:ephemeral:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/);
      const plain = sent.find((s) => s.name === row.name)?.value ?? '';
      if (plain !== '') expect(row.value).not.toContain(plain);
      expect(t.app.services.secrets.open(row.value, envVarContext(id, row.name))).toBe(plain);
    }
  });

  it('reference 1.12: an upsert overwrites the names it lists and keeps the others', async () => {
    const id = await t.deployment('upsert');
    expect(
      (
        await set(id, [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ])
      ).statusCode,
    ).toBe(200);
    const res = await set(id, [
      { name: 'B', value: 'two' },
      { name: 'C', value: '3' },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as ListBody).items).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: 'two' },
      { name: 'C', value: '3' },
    ]);
    expect(await rows(id)).toHaveLength(3);
  });

  it('reference 1.12: the [ENCRYPTED] placeholder is refused as a value, naming the variable, and nothing of the request is applied', async () => {
    const id = await t.deployment('placeholder');
    await set(id, [{ name: 'DB_PASSWORD', value: 'original' }]);
    const before = await rows(id);
    const res = await set(id, [
      { name: 'OTHER', value: 'x' },
      { name: 'DB_PASSWORD', value: '[ENCRYPTED]' },
    ]);
    const body = problem(res, 400, 'VALIDATION_FAILED');
    expect(body.detail).toContain('"DB_PASSWORD"');
    expect(body.detail).toContain('[ENCRYPTED]');
    expect(body.errors).toEqual([expect.objectContaining({ pointer: '/body/env_variables/1/value' })]);
    expect(await rows(id)).toEqual(before);
  });

  it('reference 1.12: a new name must be a POSIX identifier; a legacy name already stored may be sent again, and removed', async () => {
    const id = await t.deployment('posix');
    for (const name of ['1LEADING_DIGIT', 'has-dash', 'with space', 'dot.ted', 'ÜMLAUT']) {
      const res = await set(id, [
        { name: 'FINE', value: 'x' },
        { name, value: 'v' },
      ]);
      const body = problem(res, 400, 'VALIDATION_FAILED');
      expect(body.detail).toContain(JSON.stringify(name));
      expect(body.errors).toEqual([{ pointer: '/body/env_variables/1/name', message: expect.stringContaining('not a valid new name') }]);
    }
    expect(await rows(id)).toEqual([]);
    // A variable stored before the rule existed.
    const at = new Date().toISOString();
    const legacy = 'legacy-name.v1';
    await t.store.db
      .insertInto('env_vars')
      .values({
        tenant_id: t.tenantId,
        deployment_id: id,
        name: legacy,
        value: t.app.services.secrets.seal('old', envVarContext(id, legacy)),
        created_at: at,
        updated_at: at,
      })
      .execute();
    expect((await list(id)).json()).toMatchObject({ items: [{ name: legacy, value: 'old' }] });
    const res = await set(id, [
      { name: legacy, value: 'new' },
      { name: '_ok9', value: 'y' },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as ListBody).items).toEqual([
      { name: '_ok9', value: 'y' },
      { name: legacy, value: 'new' },
    ]);
    expect((await del(id, legacy)).json()).toEqual({ success: true });
    // Gone: now it would be a new name, and the rule applies again.
    problem(await set(id, [{ name: legacy, value: 'again' }]), 400, 'VALIDATION_FAILED');
  });

  it('a name listed twice in one body is refused, nothing applied', async () => {
    const id = await t.deployment('duplicates');
    const res = await set(id, [
      { name: 'SAME', value: '1' },
      { name: 'OTHER', value: '2' },
      { name: 'SAME', value: '3' },
    ]);
    const body = problem(res, 400, 'VALIDATION_FAILED');
    expect(body.errors).toEqual([{ pointer: '/body/env_variables/2/name', message: '"SAME" is listed more than once' }]);
    expect(await rows(id)).toEqual([]);
  });

  it('limits: 1 to 1,000 variables a request, names up to 255 characters, values up to 32,768; the body is required', async () => {
    const id = await t.deployment('limits');
    problem(await set(id, []), 400, 'VALIDATION_FAILED');
    problem(await t.request({ method: 'PUT', url: url(id), body: {} }), 400, 'VALIDATION_FAILED');
    problem(await t.request({ method: 'PUT', url: url(id), body: { env_variables: [{ name: 'A', value: '1' }], extra: 1 } }), 400, 'VALIDATION_FAILED');
    problem(await set(id, [{ name: 'A' }]), 400, 'VALIDATION_FAILED');
    problem(await set(id, [{ name: '', value: 'x' }]), 400, 'VALIDATION_FAILED');
    problem(await set(id, [{ name: 'N'.repeat(256), value: 'x' }]), 400, 'VALIDATION_FAILED');
    problem(await set(id, [{ name: 'BIG', value: 'v'.repeat(32_769) }]), 400, 'VALIDATION_FAILED');
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `V${String(i).padStart(4, '0')}`, value: String(i) }));
    problem(await set(id, many(1001)), 400, 'VALIDATION_FAILED');
    expect(await rows(id)).toEqual([]);

    const edge = await set(id, [{ name: 'N'.repeat(255), value: 'v'.repeat(32_768) }]);
    expect(edge.statusCode, edge.body).toBe(200);
    const full = await set(id, many(1000));
    expect(full.statusCode, full.body).toBe(200);
    // The PUT answers the first page of the list after the change.
    const first = full.json() as ListBody;
    expect(first.items).toHaveLength(100);
    expect(first.pageInfo.hasNextPage).toBe(true);
    expect(await rows(id)).toHaveLength(1001);
  });

  it('reference 1.11: pages in name order with `first` and `after`', async () => {
    const id = await t.deployment('pages');
    await set(
      id,
      ['E', 'a', 'B', 'd', 'C'].map((name) => ({ name, value: name.toLowerCase() })),
    );
    const seen: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 5; i++) {
      const res = await list(id, undefined, `?first=2${after === null ? '' : `&after=${after}`}`);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as ListBody;
      seen.push(...body.items.map((v) => v.name));
      expect(body.pageInfo.hasPreviousPage).toBe(after !== null);
      if (!body.pageInfo.hasNextPage) break;
      after = body.pageInfo.endCursor;
    }
    // Byte order in both stores: capitals first.
    expect(seen).toEqual(['B', 'C', 'E', 'a', 'd']);
    problem(await list(id, undefined, '?after=not-a-cursor'), 400, 'INVALID_CURSOR');
  });

  it('extension: DELETE …/env-vars/{name} removes one variable; an unknown name is 404 ENV_VAR_NOT_FOUND', async () => {
    const id = await t.deployment('removal');
    await set(id, [
      { name: 'KEEP', value: '1' },
      { name: 'DROP_ME', value: '2' },
    ]);
    const res = await del(id, 'DROP_ME');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ success: true });
    expect((await list(id)).json()).toMatchObject({ items: [{ name: 'KEEP', value: '1' }] });
    problem(await del(id, 'DROP_ME'), 404, 'ENV_VAR_NOT_FOUND');
    // Names are exact: another deployment's variable of the same name is not this one's.
    const other = await t.deployment('removal-other');
    problem(await del(other, 'KEEP'), 404, 'ENV_VAR_NOT_FOUND');
    problem(await del(99_999_999, 'KEEP'), 404, 'DEPLOYMENT_NOT_FOUND');
  });

  it('DESIGN: SecretsManage (MANAGE on the deployment and DEVELOPER or above) for reading, writing and removing', async () => {
    const id = await t.deployment('access');
    await set(id, [{ name: 'SEEDED', value: 's' }]);
    const manager = await t.user('DEVELOPER');
    await t.grant({ type: 'USER', id: manager.userId }, { type: 'DEPLOYMENT', id }, 'MANAGE');
    const editor = await t.user('DEVELOPER');
    await t.grant({ type: 'USER', id: editor.userId }, { type: 'DEPLOYMENT', id }, 'EDIT');
    const explorer = await t.user('EXPLORER');
    await t.grant({ type: 'USER', id: explorer.userId }, { type: 'DEPLOYMENT', id }, 'MANAGE');
    const viewer = await t.user('VIEWER');
    await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id }, 'MANAGE');

    expect((await list(id, manager.key)).statusCode).toBe(200);
    expect((await set(id, [{ name: 'BY_MANAGER', value: 'm' }], manager.key)).statusCode).toBe(200);
    expect((await del(id, 'BY_MANAGER', manager.key)).statusCode).toBe(200);
    for (const caller of [editor, explorer, viewer]) {
      problem(await list(id, caller.key), 403, 'FORBIDDEN');
      problem(await set(id, [{ name: 'REFUSED', value: 'r' }], caller.key), 403, 'FORBIDDEN');
      problem(await del(id, 'SEEDED', caller.key), 403, 'FORBIDDEN');
    }

    // A key scoped to another deployment, even an admin's.
    const elsewhere = await t.deployment('access-elsewhere');
    const scoped = await t.key(t.admin.userId, { deploymentIds: [elsewhere] });
    problem(await list(id, scoped), 403, 'KEY_SCOPE_FORBIDDEN');
    problem(await set(id, [{ name: 'REFUSED', value: 'r' }], scoped), 403, 'KEY_SCOPE_FORBIDDEN');
    problem(await del(id, 'SEEDED', scoped), 403, 'KEY_SCOPE_FORBIDDEN');

    // Another tenant's deployment does not exist for this tenant's admin.
    const other = await t.tenant(`env-other-${dialect}`);
    const foreign = await t.deployment('foreign', { tenantId: other.tenantId });
    problem(await list(foreign), 404, 'DEPLOYMENT_NOT_FOUND');
    problem(await set(foreign, [{ name: 'REFUSED', value: 'r' }]), 404, 'DEPLOYMENT_NOT_FOUND');
    problem(await del(foreign, 'SEEDED'), 404, 'DEPLOYMENT_NOT_FOUND');

    expect((await list(id)).json()).toMatchObject({ items: [{ name: 'SEEDED', value: 's' }] });
  });

  it('a value copied to another variable or deployment does not decrypt there: the read fails rather than show it', async () => {
    const id = await t.deployment('copied');
    const to = await t.deployment('copied-to');
    await set(id, [{ name: 'SOURCE', value: 'only-here' }]);
    await set(to, [{ name: 'TARGET', value: 'placeholder' }]);
    const [source] = await rows(id);
    await t.store.db
      .updateTable('env_vars')
      .set({ value: source?.value ?? '' })
      .where('deployment_id', '=', to)
      .execute();
    const res = await list(to);
    problem(res, 500, 'INTERNAL');
    expect(res.body).not.toContain('only-here');
  });

  it('deleting the deployment deletes its variables', async () => {
    const id = await t.deployment('cascade');
    await set(id, [{ name: 'GONE', value: 'g' }]);
    await t.store.db.deleteFrom('deployments').where('id', '=', id).execute();
    expect(await rows(id)).toEqual([]);
  });
});

/** Every file below `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : e.isFile() ? [path.join(dir, e.name)] : []));
}

/** Rows as text, binary columns as their bytes read as text, so a value inside one is found too. */
function asText(rows: unknown[]): string {
  return JSON.stringify(rows, (_k, v: unknown) =>
    v && typeof v === 'object' && (v as { type?: unknown }).type === 'Buffer' ? Buffer.from((v as { data: number[] }).data).toString('latin1') : v,
  );
}

describe.each(DIALECTS)('no plaintext anywhere, through a real server process (%s)', (dialect) => {
  it('secret values set over HTTPS appear in no file of DATA_DIR, no log line and no row of any table', async () => {
    const env = await serverEnv(dialect);
    const marker = `PLAINTEXT${randomBytes(8).toString('hex')}`;
    const values = { masked: `${marker}masked`, shown: `${marker}shown`, refused: `${marker}refused` };
    let output: string;
    try {
      // With runtimes on: the values reach a runtime, which fails on one of them and logs why.
      const server = await startServerProcess(
        { ...env.env, LOG_LEVEL: 'trace', RUNTIME_DRIVER: 'process', RUNTIME_TICK_MS: '200', RUNTIME_LEASE_MS: '1000', RUNTIME_BACKOFF_MS: '200' },
        env.dataDir,
      );
      try {
        const key = keyIn(server.output());
        const made = await server.post('/build/api/v1/deployments/', { name: 'secrets' }, key);
        expect(made.status, made.text).toBeLessThan(300);
        const id = made.body.id as number;
        const path = `/api/v1/deployments/${id}/env-vars`;
        const put = await server.put(
          path,
          {
            env_variables: [
              { name: 'DB_PASSWORD', value: values.masked },
              { name: 'PLAIN_SETTING', value: values.shown },
            ],
          },
          key,
        );
        expect(put.status, put.text).toBe(200);
        expect(put.text).not.toContain(values.masked);
        const read = await server.get(path, key);
        expect(read.body.items).toEqual([
          { name: 'DB_PASSWORD', value: '[ENCRYPTED]' },
          { name: 'PLAIN_SETTING', value: values.shown },
        ]);
        // A refused body's values appear neither in the answer nor in the log.
        const refused = await server.put(
          path,
          {
            env_variables: [
              { name: 'NEW_SECRET', value: values.refused },
              { name: 'bad-name', value: values.refused },
            ],
          },
          key,
        );
        expect(refused.status, refused.text).toBe(400);
        expect(refused.text).not.toContain(marker);
        const tooLong = await server.put(path, { env_variables: [{ name: 'LONG', value: `${values.refused}${'x'.repeat(40_000)}` }] }, key);
        expect(tooLong.status).toBe(400);
        expect(tooLong.text).not.toContain(marker);
        const crashing = await server.put(path, { env_variables: [{ name: 'DB_TYPE', value: `${marker}type` }] }, key);
        expect(crashing.status, crashing.text).toBe(200);
        await vi.waitFor(
          async () => {
            const logs = await server.get(`/api/v1/deployments/${id}/logs?first=200`, key);
            expect((logs.body.items as Array<{ message: string }>).some((l) => l.message.includes('DB_TYPE names no data source type'))).toBe(true);
          },
          { timeout: 60_000, interval: 100 },
        );
      } finally {
        await server.stop();
        output = server.output();
      }
      expect(output).toContain('request completed');
      expect(output).not.toContain(marker);

      for (const file of filesUnder(env.dataDir)) {
        expect(fs.readFileSync(file).includes(marker), file).toBe(false);
      }
      const tables = await allRows(dialect, env.env, env.dataDir);
      expect(Object.keys(tables)).toContain('env_vars');
      expect(tables.env_vars).toContain('"value":"v1:');
      for (const [table, text] of Object.entries(tables)) expect(text.includes(marker), table).toBe(false);
    } finally {
      await env.destroy();
    }
  }, 120_000);
});

/** Every row of every table of the server's store, as text per table. */
async function allRows(dialect: string, env: Record<string, string>, dataDir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  if (dialect === 'sqlite') {
    const db = new SQLite(path.join(dataDir, 'mapi.sqlite'), { readonly: true });
    try {
      const names = db.prepare(`select name from sqlite_master where type = 'table'`).all() as Array<{ name: string }>;
      for (const { name } of names) out[name] = asText(db.prepare(`select * from "${name}"`).all());
    } finally {
      db.close();
    }
    return out;
  }
  const client = new pg.Client({ connectionString: env.DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ schema: string; name: string }>(
      `select table_schema as schema, table_name as name from information_schema.tables where table_schema in (current_schema(), current_schema() || '_jobs') and table_type = 'BASE TABLE'`,
    );
    for (const { schema, name } of rows)
      out[schema.endsWith('_jobs') ? `jobs.${name}` : name] = asText((await client.query(`select * from "${schema}"."${name}"`)).rows);
  } finally {
    await client.end();
  }
  return out;
}
