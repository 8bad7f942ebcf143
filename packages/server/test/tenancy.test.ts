import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../src/admin.js';
import { buildApp } from '../src/app.js';
import { storeFor } from '../src/db/database.js';
import { DIALECTS, problem, TestApp } from './harness.js';
import { keyIn, runTs, serverEnv, type ServerEnv } from './server-env.js';

/** Whose keys a listing shows tells which tenant answered: each tenant here has one admin. */
function ownersIn(res: LightMyRequestResponse): number[] {
  expect(res.statusCode, res.body).toBe(200);
  return [...new Set((res.json() as { items: Array<{ userId: number }> }).items.map((k) => k.userId))];
}

describe.each(DIALECTS)('tenancy without BASE_DOMAIN (%s)', (dialect) => {
  let t: TestApp;
  let acme: Awaited<ReturnType<TestApp['tenant']>>;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
    acme = await t.tenant('acme', ['analytics.acme.com']);
  });
  afterAll(async () => t?.close());

  it('answers as the default tenant on any host that no tenant maps', async () => {
    for (const host of ['localhost', 'localhost:8443', 'anything.example.org', '127.0.0.1:8443', '[::1]:8443', 'acme.mapi.test']) {
      expect(ownersIn(await t.request({ url: '/api/v1/api-keys', host })), host).toEqual([t.admin.userId]);
    }
  });

  it('answers as the mapped tenant on its custom domain, whatever the case, port or trailing dot', async () => {
    for (const host of ['analytics.acme.com', 'Analytics.ACME.com:8443', 'analytics.acme.com.']) {
      expect(ownersIn(await t.request({ url: '/api/v1/api-keys', host, key: acme.admin.key })), host).toEqual([acme.admin.userId]);
    }
  });

  it("refuses a tenant's key on another tenant's host (401)", async () => {
    problem(await t.request({ url: '/api/v1/api-keys', host: 'analytics.acme.com' }), 401, 'UNAUTHENTICATED');
    problem(await t.request({ url: '/api/v1/api-keys', host: 'localhost', key: acme.admin.key }), 401, 'UNAUTHENTICATED');
  });
});

describe.each(DIALECTS)('tenancy with BASE_DOMAIN (%s)', (dialect) => {
  let t: TestApp;
  let acme: Awaited<ReturnType<TestApp['tenant']>>;
  let beta: Awaited<ReturnType<TestApp['tenant']>>;
  beforeAll(async () => {
    t = await TestApp.create(dialect, { baseDomain: 'mapi.test' });
    acme = await t.tenant('acme', ['analytics.acme.com']);
    beta = await t.tenant('beta');
  });
  afterAll(async () => t?.close());

  it('picks the tenant from <slug>.<BASE_DOMAIN>, ignoring case and port', async () => {
    for (const host of ['acme.mapi.test', 'ACME.Mapi.Test:8443', 'acme.mapi.test.']) {
      expect(ownersIn(await t.request({ url: '/api/v1/api-keys', host, key: acme.admin.key })), host).toEqual([acme.admin.userId]);
    }
    expect(ownersIn(await t.request({ url: '/api/v1/api-keys', host: 'beta.mapi.test', key: beta.admin.key }))).toEqual([beta.admin.userId]);
    expect(ownersIn(await t.request({ url: '/api/v1/api-keys', host: 'default.mapi.test' }))).toEqual([t.admin.userId]);
  });

  it('answers on a custom domain mapped to a tenant', async () => {
    expect(ownersIn(await t.request({ url: '/api/v1/api-keys', host: 'Analytics.Acme.com:443', key: acme.admin.key }))).toEqual([acme.admin.userId]);
  });

  it('gives 404 TENANT_NOT_FOUND on a host no tenant answers on, never the default tenant', async () => {
    const unknown = [
      'localhost',
      'localhost:8443',
      'mapi.test',
      'nobody.mapi.test',
      'deep.acme.mapi.test',
      'evilmapi.test',
      'acme.mapi.test.evil.com',
      '127.0.0.1',
    ];
    for (const host of unknown) {
      const body = problem(await t.request({ url: '/api/v1/api-keys', host }), 404, 'TENANT_NOT_FOUND');
      expect(body.detail).toContain(host.replace(/:\d+$/, ''));
    }
    // The tenant is resolved before the credential is looked at.
    problem(await t.request({ url: '/api/v1/api-keys', host: 'nobody.mapi.test', key: null }), 404, 'TENANT_NOT_FOUND');
  });

  it("refuses a key of tenant A on tenant B's host (401)", async () => {
    problem(await t.request({ url: '/api/v1/api-keys', host: 'beta.mapi.test', key: acme.admin.key }), 401, 'UNAUTHENTICATED');
    problem(await t.request({ url: '/api/v1/api-keys', host: 'analytics.acme.com', key: beta.admin.key }), 401, 'UNAUTHENTICATED');
    problem(await t.request({ url: '/api/v1/api-keys', host: 'acme.mapi.test' }), 401, 'UNAUTHENTICATED');
  });
});

describe.each(DIALECTS)('admin command (%s)', (dialect) => {
  let env: ServerEnv;
  beforeAll(async () => {
    env = await serverEnv(dialect);
  });
  afterAll(async () => env?.destroy());

  /** runAdmin in this process, with the output captured. */
  async function admin(argv: string[], extra: Record<string, string> = {}) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runAdmin(argv, { ...env.env, ...extra }, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, stdout: out.join('\n'), stderr: err.join('\n') };
  }

  async function appOver(baseDomain: string) {
    const store = storeFor(env.config({ BASE_DOMAIN: baseDomain }));
    const app = await buildApp({ store, baseDomain, tenantCacheMs: 0 });
    return { app, close: async () => (await app.close(), await store.close()) };
  }

  it('`tenant create` run as a process prints a key that authenticates on the tenant’s hosts only', async () => {
    const base = { ...env.env, BASE_DOMAIN: 'mapi.test' };
    const [created, failed] = await Promise.all([
      runTs('packages/server/src/admin.ts', ['tenant', 'create', 'acme', '--domain', 'analytics.acme.com', '--name', 'Acme Corp'], base),
      runTs('packages/server/src/admin.ts', ['tenant', 'add-domain', 'nobody', 'x.example.com'], base),
    ]);
    expect(created.code, `stdout: ${created.stdout}\nstderr: ${created.stderr}`).toBe(0);
    expect(created.stderr).not.toMatch(/error|fail/i);
    expect(created.stdout).toContain('acme.mapi.test');
    expect(created.stdout).toContain('analytics.acme.com');
    expect(created.stdout).toContain('admin@acme.mapi.test');
    const key = keyIn(created.stdout);
    expect(failed).toMatchObject({ code: 2, stdout: '' });
    expect(failed.stderr.trim()).toBe('Tenant "nobody" does not exist.');

    expect((await admin(['tenant', 'create', 'beta'], { BASE_DOMAIN: 'mapi.test' })).code).toBe(0);
    const { app, close } = await appOver('mapi.test');
    try {
      for (const host of ['acme.mapi.test', 'analytics.acme.com']) {
        const res = await app.inject({ url: '/api/v1/api-keys', headers: { host, authorization: `Bearer ${key}` } });
        expect(res.statusCode, host).toBe(200);
        expect(res.json().items).toHaveLength(1);
      }
      const elsewhere = await app.inject({ url: '/api/v1/api-keys', headers: { host: 'beta.mapi.test', authorization: `Bearer ${key}` } });
      expect(elsewhere.statusCode).toBe(401);
    } finally {
      await close();
    }
  });

  it('`tenant add-domain` maps a host, and `tenant list` shows every host', async () => {
    await admin(['tenant', 'create', 'gamma', '--admin-email', 'ops@gamma.example']);
    const added = await admin(['tenant', 'add-domain', 'gamma', 'Reports.Gamma.example']);
    expect(added).toMatchObject({ code: 0, stderr: '' });
    expect(added.stdout).toContain('reports.gamma.example');

    const listed = await admin(['tenant', 'list'], { BASE_DOMAIN: 'mapi.test' });
    expect(listed.code).toBe(0);
    const gamma = listed.stdout.split('\n').find((l) => /\bgamma\b/.test(l));
    expect(gamma).toContain('reports.gamma.example, gamma.mapi.test');

    const { app, close } = await appOver('mapi.test');
    try {
      const res = await app.inject({ url: '/api/v1/api-keys', headers: { host: 'reports.gamma.example' } });
      problem(res, 401, 'UNAUTHENTICATED');
    } finally {
      await close();
    }
  });

  it('reports tenant and configuration errors on stderr with exit code 2', async () => {
    expect((await admin(['tenant', 'create', 'epsilon', '--domain', 'reports.epsilon.example'])).code).toBe(0);
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['tenant', 'create', 'epsilon'], {}, /Tenant "epsilon" already exists/],
      [['tenant', 'create', 'zeta', '--domain', 'Reports.Epsilon.example'], {}, /Host "reports.epsilon.example" already belongs to a tenant/],
      [['tenant', 'add-domain', 'nobody', 'x.example.com'], {}, /Tenant "nobody" does not exist/],
      [['tenant', 'add-domain', 'epsilon', 'reports.epsilon.example'], {}, /already belongs to a tenant/],
      [['tenant', 'add-domain', 'epsilon', 'x.mapi.test'], { BASE_DOMAIN: 'mapi.test' }, /under BASE_DOMAIN/],
      [['tenant', 'create', 'zeta', '--domain', 'zeta.mapi.test'], { BASE_DOMAIN: 'mapi.test' }, /under BASE_DOMAIN/],
      [['tenant', 'create', 'Bad_Slug'], {}, /lowercase letters, digits and dashes/],
      [['tenant', 'create', 'default'], {}, /reserved/],
      [['tenant', 'create', 'delta', '--domain', 'not a host'], {}, /is not a host name/],
      [['tenant', 'add-domain', 'epsilon'], {}, /Expected <slug> <domain>, got epsilon/],
      [['tenant', 'create', 'delta', '--admin-email', 'nobody'], {}, /not an email address/],
      [['tenant', 'list'], { PORT: 'eighty' }, /PORT must be an integer/],
      [['tenant', 'list'], { DATABASE_URL: 'mysql://x' }, /DATABASE_URL must be a postgres/],
      [['tenant', 'create'], {}, /Expected <slug>, got none/],
      [['tenant', 'create', 'delta', '--colour', 'red'], {}, /Unknown option '--colour'/],
      [['tenant', 'frobnicate'], {}, /Unknown command "tenant frobnicate"/],
      [[], {}, /No command given/],
    ];
    for (const [argv, extra, message] of cases) {
      const run = await admin(argv, extra);
      expect(run.code, argv.join(' ')).toBe(2);
      expect(run.stderr, argv.join(' ')).toMatch(message);
      expect(run.stdout, argv.join(' ')).toBe('');
    }
  });

  it('`--help` explains each command with an example; `key generate` needs no store or valid config', async () => {
    for (const argv of [
      ['--help'],
      ['tenant', 'create', '--help'],
      ['tenant', 'list', '--help'],
      ['tenant', 'add-domain', '-h'],
      ['key', 'generate', '--help'],
    ]) {
      const help = await admin(argv);
      expect(help.code, argv.join(' ')).toBe(0);
      expect(help.stdout, argv.join(' ')).toMatch(/Usage: admin/);
      expect(help.stdout, argv.join(' ')).toMatch(/Example:\n {2}(npm run|export)/);
    }
    const generated = await admin(['key', 'generate'], { ADMIN_API_KEY: 'not-a-key', DATA_DIR: '/nonexistent/never-created' });
    expect(generated.code).toBe(0);
    expect(generated.stdout).toMatch(/^mapi_[A-Za-z0-9]{40}$/);
    expect((await admin(['key', 'generate'])).stdout).not.toBe(generated.stdout);
  });
});
