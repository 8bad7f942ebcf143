import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEPLOYMENT_TOKEN_TYPE } from '../src/areas/tokens/tokens.service.js';
import { Secrets } from '../src/secrets/index.js';
import { Signing } from '../src/signing/index.js';
import { DIALECTS, TestApp, problem } from './harness.js';
import { FAST_RUNTIME, runtimeProbe } from './runtime-support.js';

/*
 * Issue 14, "Runtime" and the data-API side of "tokens" (reference 1.16-1.20, 2.14, 2.0): the data
 * API at <deploymentUrl>/data-api/v1 (a branch's at .../dev-mode/<branch>/data-api/v1) takes the
 * tokens minted for that very environment, raw or after Bearer, and REST credentials with
 * DeploymentRead; staging and development environments start on use and suspend when idle; a
 * staging flag switched on runs the branch's environment at all times.
 */

type Json = Record<string, any>;
const IDLE_MS = 2_000;

for (const dialect of DIALECTS) {
  describe(`the data API behind the deployment URL (${dialect})`, () => {
    let t: TestApp;
    let r: ReturnType<typeof runtimeProbe>;
    const secrets = Secrets.ephemeral();
    const meta = (path: string, authorization?: string) =>
      t.request({ url: `${path}/meta`, key: null, ...(authorization === undefined ? {} : { headers: { authorization } }) });
    const build = (id: number) => `/build/api/v1/deployments/${id}`;

    beforeAll(async () => {
      t = await TestApp.create(dialect, { secrets, runtime: { ...FAST_RUNTIME, idleMs: IDLE_MS } });
      r = runtimeProbe(t);
    });
    afterAll(() => t.close());

    it('a deployment token (1.16) reads /v1/meta raw or after Bearer; another deployment’s token, a garbage one or none is 401', async () => {
      const id = await r.create('tokens');
      const other = await r.create('other');
      await r.running(id);
      const token = ((await t.request({ method: 'POST', url: `/api/v1/deployments/${id}/token` })).json() as Json).platformApiToken as string;
      const otherToken = ((await t.request({ method: 'POST', url: `/api/v1/deployments/${other}/token` })).json() as Json).platformApiToken as string;
      const path = `/deployments/${id}/data-api/v1`;
      expect((await meta(path, token)).statusCode).toBe(200);
      expect((await meta(path, `Bearer ${token}`)).statusCode).toBe(200);
      expect(problem(await meta(path, otherToken), 401, 'UNAUTHENTICATED').detail).toContain('"aud"');
      problem(await meta(path, 'not.a.token'), 401, 'UNAUTHENTICATED');
      const none = problem(await meta(path), 401, 'UNAUTHENTICATED');
      expect(none.detail).toContain('data-API token');
      problem(await meta(`/deployments/999999/data-api/v1`, token), 401, 'UNAUTHENTICATED');
    });

    it('an expired token is 401, and so is one of another kind signed by the same keys', async () => {
      const id = await r.create('expired');
      await r.running(id);
      const tenant = await t.store.db.selectFrom('tenants').select(['id', 'slug']).where('id', '=', t.tenantId).executeTakeFirstOrThrow();
      const audience = `https://localhost/deployments/${id}/data-api/v1`;
      const claims = { deployment_id: id, environment_id: 'production', user_id: t.admin.userId };
      const past = new Signing(t.store, { secrets, issuerOf: async () => 'https://localhost', now: () => new Date(Date.now() - 2 * 3600_000) });
      const expired = await past.sign(tenant, claims, { audience, expiresInSeconds: 3600, type: DEPLOYMENT_TOKEN_TYPE });
      expect(problem(await meta(`/deployments/${id}/data-api/v1`, expired.token), 401, 'UNAUTHENTICATED').detail).toContain('exp');
      const current = new Signing(t.store, { secrets, issuerOf: async () => 'https://localhost' });
      const fresh = await current.sign(tenant, claims, { audience, expiresInSeconds: 600, type: DEPLOYMENT_TOKEN_TYPE });
      expect((await meta(`/deployments/${id}/data-api/v1`, fresh.token)).statusCode).toBe(200);
      const otherKind = await current.sign(tenant, claims, { audience, expiresInSeconds: 600, type: 'embed+jwt' });
      problem(await meta(`/deployments/${id}/data-api/v1`, otherKind.token), 401, 'UNAUTHENTICATED');
    });

    it('environment tokens (1.19, 1.20): `meta` reads /v1/meta, a token without it is 403; private members need meta-private', async () => {
      const id = await r.create('scopes');
      await r.running(id);
      const mint = async (route: string, scopes: string[]) =>
        (
          (
            await t.request({ method: 'POST', url: `/api/v1/deployments/${id}/environments/production/${route}`, body: { security_context: {}, scopes } })
          ).json() as Json
        ).data.token as string;
      const path = `/deployments/${id}/data-api/v1`;
      expect((await meta(path, await mint('tokens', ['meta']))).statusCode).toBe(200);
      problem(await meta(path, await mint('tokens', [])), 403, 'FORBIDDEN');
      // A model with a private member, committed to the deploy branch: production builds and moves to it.
      const before = (await r.pods(id))[0] as Json;
      await t.request({ method: 'POST', url: `${build(id)}/dev-mode` });
      const model =
        'cubes:\n  - name: notes\n    sql: SELECT 1 AS id, 2 AS secret_score\n    dimensions:\n      - name: id\n        sql: id\n        type: number\n        primary_key: true\n        public: true\n      - name: secret_score\n        sql: secret_score\n        type: number\n        public: false\n    measures:\n      - name: count\n        type: count\n';
      expect(
        (await t.request({ method: 'PUT', url: `${build(id)}/data-model/files`, body: { files: [{ path: 'model/cubes/notes.yml', content: model }] } }))
          .statusCode,
      ).toBe(200);
      expect((await t.request({ method: 'POST', url: `${build(id)}/commit`, body: { message: 'notes', exitDevMode: true } })).statusCode).toBe(200);
      await r.replaced(id, before.name);
      const dimensions = async (token: string) => {
        const res = await meta(path, token);
        expect(res.statusCode, res.body).toBe(200);
        return ((res.json() as Json).cubes as Json[]).find((c) => c.name === 'notes')?.dimensions.map((d: Json) => d.name);
      };
      expect(await dimensions(await mint('tokens', ['meta']))).toEqual(['notes.id']);
      expect(await dimensions(await mint('tokens-for-meta-sync', ['meta-private']))).toEqual(['notes.id', 'notes.secret_score']);
    });

    it('pre-aggregations: the runtime builds a rollup when it starts, lists its state at /v1/pre-aggregations, and answers matching queries from it', async () => {
      const id = await r.create('rollups');
      await r.running(id);
      const before = (await r.pods(id))[0] as Json;
      await t.request({ method: 'POST', url: `${build(id)}/dev-mode` });
      const model = [
        'cubes:',
        '  - name: shop',
        '    sql_table: starter_orders',
        '    dimensions:',
        '      - { name: id, sql: id, type: number, primary_key: true }',
        '      - { name: status, sql: status, type: string }',
        '    measures:',
        '      - { name: count, type: count }',
        '      - { name: amount, sql: amount, type: sum }',
        '    pre_aggregations:',
        '      - { name: by_status, measures: [count, amount], dimensions: [status] }',
        '',
      ].join('\n');
      expect(
        (await t.request({ method: 'PUT', url: `${build(id)}/data-model/files`, body: { files: [{ path: 'model/cubes/shop.yml', content: model }] } }))
          .statusCode,
      ).toBe(200);
      expect((await t.request({ method: 'POST', url: `${build(id)}/commit`, body: { message: 'rollup', exitDevMode: true } })).statusCode).toBe(200);
      await r.replaced(id, before.name);
      const path = `/deployments/${id}/data-api/v1`;
      const state = async () => {
        const res = await t.request({ url: `${path}/pre-aggregations` });
        expect(res.statusCode, res.body).toBe(200);
        return ((res.json() as Json).preAggregations as Json[]).find((p) => p.id === 'shop.by_status')!;
      };
      await vi.waitFor(async () => expect((await state()).status).toBe('ready'), { timeout: 20_000, interval: 50 });
      const { table, rows, timezone } = await state();
      expect({ rows, timezone }).toEqual({ rows: 2, timezone: 'UTC' });
      const query = encodeURIComponent(
        JSON.stringify({ measures: ['shop.count', 'shop.amount'], dimensions: ['shop.status'], order: { 'shop.status': 'asc' } }),
      );
      const loaded = await t.request({ url: `${path}/load?query=${query}` });
      expect(loaded.statusCode, loaded.body).toBe(200);
      const answer = loaded.json() as Json;
      expect(Object.keys(answer.usedPreAggregations)).toEqual([table]);
      expect(answer.data).toEqual([
        { 'shop.status': 'completed', 'shop.count': 2, 'shop.amount': 40 },
        { 'shop.status': 'processing', 'shop.count': 1, 'shop.amount': 20 },
      ]);
      // A token that runs queries but lacks meta-private does not see the tables.
      const token = (
        (
          await t.request({
            method: 'POST',
            url: `/api/v1/deployments/${id}/environments/production/tokens`,
            body: { security_context: {}, scopes: ['meta', 'sql-runner'] },
          })
        ).json() as Json
      ).data.token as string;
      expect((await t.request({ url: `${path}/load?query=${query}`, key: null, headers: { authorization: token } })).statusCode).toBe(200);
      const refused = await t.request({ url: `${path}/pre-aggregations`, key: null, headers: { authorization: token } });
      expect(refused.statusCode).toBe(403);
      expect(refused.body).toMatch(/meta-private/);
    });

    it('REST credentials: an API key with DeploymentRead reads it; without access 403; a key scoped elsewhere 403', async () => {
      const id = await r.create('rest');
      await r.running(id);
      const path = `/deployments/${id}/data-api/v1`;
      expect((await meta(path, `Bearer ${t.admin.key}`)).statusCode).toBe(200);
      const viewer = await t.user('VIEWER');
      problem(await meta(path, `Bearer ${viewer.key}`), 403, 'FORBIDDEN');
      const scoped = await t.key(t.admin.userId, { deploymentIds: [await r.create('rest elsewhere')] });
      problem(await meta(path, `Bearer ${scoped}`), 403, 'KEY_SCOPE_FORBIDDEN');
      expect((await t.request({ url: `${path}/nothing-here` })).statusCode).toBe(404);
    });

    it('a branch’s staging environment starts on its first request (building the branch), and is suspended when idle; the next request wakes it; deleting the branch removes it (2.14, 1.17)', async () => {
      const id = await r.create('on demand');
      await r.running(id);
      expect((await t.request({ method: 'POST', url: `${build(id)}/branches`, body: { name: 'stage' } })).statusCode).toBe(200);
      const path = `/deployments/${id}/dev-mode/stage/data-api/v1`;
      const first = await meta(path, `Bearer ${t.admin.key}`);
      expect(first.statusCode, first.body).toBe(200);
      expect((first.json() as Json).cubes.map((c: Json) => c.name)).toContain('starter_orders');
      const staging = await r.podWhere(id, { status: 'Running', ready: true }, 'staging');
      expect(staging.name).toMatch(/^staging-\d+-[a-z0-9]{5}$/);
      await r.podWhere(id, { status: 'Terminated', ready: false }, 'staging');
      await r.logsWith(id, `Stopping pod ${staging.name}: idle for`);
      expect((await r.logs(id, '&source=dev')).length).toBeGreaterThan(0);
      expect((await meta(path, `Bearer ${t.admin.key}`)).statusCode).toBe(200);
      const woken = await r.podWhere(id, { status: 'Running', ready: true }, 'staging');
      const pid = r.pidOf(id, woken.name.replace(/-[a-z0-9]{5}$/, '')) as number;
      // Deleting the branch stops its environment and drops its pod.
      expect((await t.request({ method: 'DELETE', url: `${build(id)}/branches?branchName=stage` })).statusCode).toBe(200);
      await vi.waitFor(() => expect(r.alive(pid)).toBe(false), { timeout: 10_000, interval: 20 });
      expect((await r.pods(id)).map((p) => p.type)).toEqual(['production']);
      problem(await meta(path, `Bearer ${t.admin.key}`), 404, 'ENVIRONMENT_NOT_FOUND');
      problem(await meta(`/deployments/${id}/dev-mode/nope/data-api/v1`, `Bearer ${t.admin.key}`), 404, 'ENVIRONMENT_NOT_FOUND');
      problem(await meta(`/deployments/${id}/dev-mode/main/data-api/v1`, `Bearer ${t.admin.key}`), 404, 'ENVIRONMENT_NOT_FOUND');
    });

    it('a shared branch git has without a row of its own (pushed before pushes recorded their branches) is served by its data API, as validate reads it', async () => {
      const id = await r.create('unrecorded');
      const gitDir = t.app.services.repositories.repositories.pathOf(id);
      execFileSync('git', [`--git-dir=${gitDir}`, 'branch', 'old-push', 'main'], { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: '/nonexistent' } });
      expect((await t.request({ url: `${build(id)}/data-model/validate?branchName=old-push` })).statusCode).toBe(200);
      const res = await meta(`/deployments/${id}/dev-mode/old-push/data-api/v1`, `Bearer ${t.admin.key}`);
      expect(res.statusCode, res.body).toBe(200);
      expect((res.json() as Json).cubes.map((c: Json) => c.name)).toContain('starter_orders');
    });

    it('a staging flag switched on runs the branch’s environment without a request and keeps it through idle time; a token of that environment reads it', async () => {
      const id = await r.create('always on');
      await r.running(id);
      expect((await t.request({ method: 'POST', url: `${build(id)}/branches`, body: { name: 'live' } })).statusCode).toBe(200);
      const on = await t.request({ method: 'PUT', url: `${build(id)}/branches/staging-environment`, body: { enabled: true, branchName: 'live' } });
      expect(on.statusCode, on.body).toBe(200);
      const pod = await r.podWhere(id, { status: 'Running', ready: true }, 'staging');
      const environmentId = pod.name.replace(/-[a-z0-9]{5}$/, '');
      // Beside it, a branch used once: once that one is suspended, the idle time has passed for both.
      expect((await t.request({ method: 'POST', url: `${build(id)}/branches`, body: { name: 'lazy' } })).statusCode).toBe(200);
      expect((await meta(`/deployments/${id}/dev-mode/lazy/data-api/v1`, `Bearer ${t.admin.key}`)).statusCode).toBe(200);
      await vi.waitFor(
        async () => {
          const lazy = (await r.pods(id)).find((p) => p.type === 'staging' && p.name !== pod.name);
          expect(lazy).toMatchObject({ status: 'Terminated' });
        },
        { timeout: 30_000, interval: 50 },
      );
      expect((await r.pods(id)).find((p) => p.name === pod.name)).toMatchObject({ status: 'Running', ready: true });
      const token = (
        (
          await t.request({
            method: 'POST',
            url: `/api/v1/deployments/${id}/environments/${environmentId}/tokens`,
            body: { security_context: {}, scopes: ['meta'] },
          })
        ).json() as Json
      ).data.token as string;
      expect((await meta(`/deployments/${id}/dev-mode/live/data-api/v1`, token)).statusCode).toBe(200);
      problem(await meta(`/deployments/${id}/data-api/v1`, token), 401, 'UNAUTHENTICATED');
    });

    it('dev mode: the credential’s dev-… branch gets a development environment on first use', async () => {
      const id = await r.create('developing');
      await r.running(id);
      const dev = (await t.request({ method: 'POST', url: `${build(id)}/dev-mode` })).json() as Json;
      const res = await meta(`/deployments/${id}/dev-mode/${encodeURIComponent(dev.branchName)}/data-api/v1`, `Bearer ${t.admin.key}`);
      expect(res.statusCode, res.body).toBe(200);
      const pod = await r.podWhere(id, { status: 'Running' }, 'dev');
      expect(pod.name).toMatch(/^development-\d+-[a-z0-9]{5}$/);
    });

    it('a deployment whose build failed answers 503 with the reason and Retry-After', async () => {
      const res = await t.request({ method: 'POST', url: '/build/api/v1/deployments', body: { name: 'broken' } });
      const { id } = res.json() as Json;
      await r.running(id);
      await t.request({ method: 'POST', url: `${build(id)}/branches`, body: { name: 'bad' } });
      const dev = (await t.request({ method: 'POST', url: `${build(id)}/dev-mode`, body: { branchName: 'bad' } })).json() as Json;
      const write = await t.request({
        method: 'PUT',
        url: `${build(id)}/data-model/files`,
        body: { files: [{ path: 'model/cubes/broken.yml', content: 'cubes:\n  - name: broken\n    measures: nope\n' }] },
      });
      expect(write.statusCode, write.body).toBe(200);
      const commit = await t.request({ method: 'POST', url: `${build(id)}/commit`, body: { message: 'broken' } });
      expect(commit.statusCode, commit.body).toBe(200);
      await vi.waitFor(
        async () => {
          const answer = await meta(`/deployments/${id}/dev-mode/${encodeURIComponent(dev.branchName)}/data-api/v1`, `Bearer ${t.admin.key}`);
          expect(answer.statusCode).toBe(503);
          expect(answer.headers['retry-after']).toBeDefined();
          expect((answer.json() as Json).detail).toContain('no successful build');
        },
        { timeout: 30_000, interval: 200 },
      );
    });
  });
}
