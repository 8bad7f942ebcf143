import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DIALECTS, TestApp, problem } from './harness.js';
import { DEFAULT_RUNTIME_OPTIONS } from '../src/runtime/supervisor.js';
import { FAST_RUNTIME, runtimeProbe } from './runtime-support.js';

/*
 * Issue 14, "Runtime: pods and logs that are real" and "Starter experience" (reference 1.9, 1.10,
 * 1.12): a new deployment's production environment runs as a child process serving the data
 * API's /v1/meta behind the deployment URL; a killed runtime is restarted, one that keeps
 * crashing shows CrashLoopBackOff, one that stops answering its liveness checks is killed; a
 * change of variables or version restarts it, and its logs say which names changed, never values.
 */

type Json = Record<string, any>;

for (const dialect of DIALECTS) {
  describe(`runtime pods (${dialect})`, () => {
    let t: TestApp;
    let r: ReturnType<typeof runtimeProbe>;
    let dataSources: string;
    let outside: string;
    const setVars = async (id: number, vars: Record<string, string>) => {
      const res = await t.request({
        method: 'PUT',
        url: `/api/v1/deployments/${id}/env-vars`,
        body: { env_variables: Object.entries(vars).map(([name, value]) => ({ name, value })) },
      });
      expect(res.statusCode, res.body).toBe(200);
    };

    beforeAll(async () => {
      dataSources = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-datasources-'));
      outside = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-outside-'));
      // Queries may take 1 s here: a runtime on SQLite answers no liveness check while a statement
      // runs, so it counts as hung only after that and a second more (ceil(2000 / 300) + 1 = 8 checks).
      t = await TestApp.create(dialect, {
        runtime: { ...FAST_RUNTIME, dataSourcesDir: dataSources, queries: { ...DEFAULT_RUNTIME_OPTIONS.queries, timeoutMs: 1_000 } },
      });
      r = runtimeProbe(t);
    });
    afterAll(async () => {
      await t.close();
      fs.rmSync(dataSources, { recursive: true, force: true });
      fs.rmSync(outside, { recursive: true, force: true });
    });

    it('a new deployment reaches a Running pod serving its starter model at <deploymentUrl>/data-api/v1/meta (starter experience)', async () => {
      const id = await r.create('starter');
      const pod = await r.running(id);
      expect(pod).toMatchObject({ type: 'production', containers: ['MAIN'], restartCount: 0 });
      expect(pod.name).toMatch(/^production-[a-z0-9]{5}$/);
      const meta = await t.request({ url: `/deployments/${id}/data-api/v1/meta` });
      expect(meta.statusCode, meta.body).toBe(200);
      const cubes = (meta.json() as Json).cubes as Json[];
      expect(cubes.map((c) => [c.name, c.type])).toEqual([
        ['starter_orders', 'cube'],
        ['starter_orders_view', 'view'],
      ]);
      expect(cubes[0]?.measures.map((m: Json) => m.name)).toEqual(['starter_orders.count', 'starter_orders.total_amount']);
      // Each request the runtime answers leaves a line in the deployment's log.
      await r.logsWith(id, /^GET \/v1\/meta 200 \d+ ms$/);
      const lines = await r.logsWith(id, 'Ready: the data source answers');
      expect(lines.some((l) => l.includes('Data source: the sample SQLite dataset (starter_orders, 3 rows)'))).toBe(true);
      expect(lines.some((l) => l.startsWith(`Scheduled pod ${pod.name}: runtime 1.1.0, build `))).toBe(true);
    });

    it('a killed runtime is restarted in the same pod: restartCount goes up and its logs say why', async () => {
      const id = await r.create('killed');
      const before = await r.running(id);
      process.kill(r.pidOf(id) as number, 'SIGKILL');
      await r.podWhere(id, { name: before.name, status: 'Running', ready: true, restartCount: 1 });
      await r.logsWith(id, 'The runtime killed by SIGKILL. Restarting in 200 ms (restart 1)');
    });

    it('a runtime that stops answering its liveness checks is killed and restarted, once they have failed for longer than a statement may run', async () => {
      const id = await r.create('frozen');
      await r.running(id);
      const pid = r.pidOf(id) as number;
      process.kill(pid, 'SIGSTOP');
      await r.podWhere(id, { status: 'Running', ready: true, restartCount: 1 });
      expect(r.alive(pid)).toBe(false);
      await r.logsWith(id, 'Liveness check failed (3 of 8 in a row)');
      await r.logsWith(id, 'Killing the runtime: it failed 8 liveness checks in a row');
      await r.logsWith(id, 'killed after failing 8 liveness checks in a row');
    });

    it('a runtime that keeps crashing shows CrashLoopBackOff with the error in its logs, values redacted; fixing the variable brings it back (1.12)', async () => {
      const id = await r.create('crashing');
      const first = await r.running(id);
      await setVars(id, { DB_TYPE: 'warehouse-9000' });
      const looping = await r.podWhere(id, { status: 'CrashLoopBackOff', ready: false });
      expect(looping.name).not.toBe(first.name);
      expect(looping.restartCount).toBeGreaterThanOrEqual(2);
      const lines = await r.logsWith(
        id,
        'Runtime failed to start: DB_TYPE names no data source type: set it to sqlite or postgres, or remove it for the sample dataset.',
      );
      expect(lines.some((l) => l.includes(`Replacing pod ${first.name} with ${looping.name}: environment variables changed: DB_TYPE (added)`))).toBe(true);
      expect(lines.some((l) => l.includes('Back-off restarting failed runtime in'))).toBe(true);
      expect(lines.join('\n')).not.toContain('warehouse-9000');
      const refused = problem(await t.request({ url: `/deployments/${id}/data-api/v1/meta` }), 503, 'RUNTIME_UNAVAILABLE');
      expect(refused.detail).toContain('keeps crashing');
      expect((await t.request({ method: 'DELETE', url: `/api/v1/deployments/${id}/env-vars/DB_TYPE` })).statusCode).toBe(200);
      const back = await r.replaced(id, looping.name);
      expect(back.restartCount).toBe(0);
      await r.logsWith(id, `with ${back.name}: environment variables changed: DB_TYPE (removed)`);
    });

    it('a variable written again with the same value restarts nothing; a new one restarts the runtime and the log names it, never its value', async () => {
      const id = await r.create('variables');
      const first = await r.running(id);
      await setVars(id, { WAREHOUSE_PASSWORD: 'correct-horse-battery' });
      const pod = await r.replaced(id, first.name);
      await r.logsWith(id, `Replacing pod ${first.name} with ${pod.name}: environment variables changed: WAREHOUSE_PASSWORD (added)`);
      await setVars(id, { WAREHOUSE_PASSWORD: 'correct-horse-battery' });
      await t.app.services.runtime.reconcile();
      await t.app.services.runtime.reconcile();
      expect((await r.pods(id))[0]).toMatchObject({ name: pod.name, status: 'Running' });
      const lines = await r.logs(id);
      expect(lines.join('\n')).not.toContain('correct-horse-battery');
    });

    it('switching the runtime version restarts the runtime on it, and the log says so (1.7)', async () => {
      const id = await r.create('versions');
      const before = await r.running(id);
      const res = await t.request({ method: 'PUT', url: `/api/v1/deployments/${id}`, body: { releaseChannel: 'latest' } });
      expect(res.statusCode, res.body).toBe(200);
      const after = await r.replaced(id, before.name);
      const lines = await r.logsWith(id, `Replacing pod ${before.name} with ${after.name}: runtime version 1.1.0 → 1.2.0`);
      expect(lines.some((l) => l.startsWith(`Runtime 1.2.0 starting pod ${after.name}`))).toBe(true);
    });

    it('data sources: a SQLite file of the data-sources directory, PostgreSQL by URL with the password apart; a file outside, a password in the URL refused; a data source down is not ready, not killed', async () => {
      const id = await r.create('sources');
      const first = await r.running(id);
      const shop = new Database(path.join(dataSources, 'shop.sqlite'));
      shop.exec('CREATE TABLE orders (id INTEGER)');
      shop.close();
      await setVars(id, { DB_TYPE: 'sqlite', DB_URL: 'shop.sqlite' });
      const onFile = await r.replaced(id, first.name);
      await r.logsWith(id, 'Data source: SQLite, the file DB_URL names in the data-sources directory');
      fs.writeFileSync(path.join(outside, 'secret.sqlite'), '');
      fs.symlinkSync(path.join(outside, 'secret.sqlite'), path.join(dataSources, 'link.sqlite'));
      // Written paths that leave the directory are refused when written, and nothing changes.
      const refusedWrite = async (vars: Record<string, string>, message: string) => {
        const res = await t.request({
          method: 'PUT',
          url: `/api/v1/deployments/${id}/env-vars`,
          body: { env_variables: Object.entries(vars).map(([name, value]) => ({ name, value })) },
        });
        const refusal = problem(res, 400, 'VALIDATION_FAILED');
        expect(refusal.errors?.[0]?.message).toContain(message);
        // One sentence, one full stop: the field's message is not stopped twice in the detail.
        expect(refusal.detail).not.toContain('..');
      };
      for (const name of ['../secret.sqlite', path.join(outside, 'secret.sqlite')])
        await refusedWrite({ DB_URL: name }, 'DB_URL names a file outside the data-sources directory');
      expect((await r.pods(id))[0]).toMatchObject({ name: onFile.name });
      // A symbolic link inside that leads outside is a name like any other until the runtime opens it.
      const since = await r.mark(id);
      await setVars(id, { DB_URL: 'link.sqlite' });
      await r.logsWith(id, 'Runtime failed to start: DB_URL names a file outside the data-sources directory.', since);
      await refusedWrite(
        { DB_TYPE: 'postgres', DB_URL: 'postgres://someone:hunter22@127.0.0.1:1/warehouse' },
        'DB_URL holds a password: put it in DB_PASSWORD',
      );
      await setVars(id, { DB_TYPE: 'postgres', DB_URL: 'postgres://someone@127.0.0.1:1/warehouse', DB_PASSWORD: 'hunter22' });
      // Nothing listens on port 1: the runtime runs (it answers its liveness checks) but is not ready.
      const down = await vi.waitFor(
        async () => {
          const pod = (await r.pods(id))[0] as Json;
          expect(pod.name).not.toBe(onFile.name);
          expect(pod).toMatchObject({ status: 'Running', ready: false, restartCount: 0 });
          return pod;
        },
        { timeout: 30_000, interval: 50 },
      );
      await r.logsWith(id, 'Not ready: the data source does not answer');
      await r.logsWith(id, 'Data source: PostgreSQL at DB_URL, with the password in DB_PASSWORD');
      expect((await r.pods(id))[0]).toMatchObject({ name: down.name, restartCount: 0 });
      expect((await r.logs(id)).join('\n')).not.toContain('hunter22');
    });

    it('deleting the deployment stops its runtime before answering, and removes its pods and logs (1.5)', async () => {
      const id = await r.create('deleted');
      await r.running(id);
      const pid = r.pidOf(id) as number;
      expect((await t.request({ method: 'DELETE', url: `/api/v1/deployments/${id}` })).statusCode).toBe(200);
      await vi.waitFor(() => expect(r.alive(pid)).toBe(false), { timeout: 10_000, interval: 20 });
      expect(await t.store.db.selectFrom('runtimes').select('id').where('deployment_id', '=', id).execute()).toEqual([]);
      expect(await t.store.db.selectFrom('runtime_logs').select('id').where('deployment_id', '=', id).execute()).toEqual([]);
    });

    it('logs: the tail oldest first, followed with endCursor; filters by source, pod and container; bad cursor 400 (1.9)', async () => {
      const id = await r.create('log pages');
      const pod = await r.running(id);
      await r.logsWith(id, 'Ready');
      const all = await r.logs(id);
      const tail = (await t.request({ url: `/api/v1/deployments/${id}/logs?first=2` })).json() as Json;
      expect(tail.items.map((l: Json) => l.message)).toEqual(all.slice(-2));
      expect(tail.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: false });
      expect(tail.items[0]).toMatchObject({ pod: pod.name });
      expect(new Date(tail.items[0].date).toString()).not.toBe('Invalid Date');
      // Nothing matches yet, and still a cursor to follow from: the deployment's newest line.
      const none = (await t.request({ url: `/api/v1/deployments/${id}/logs?source=dev` })).json() as Json;
      expect(none.items).toEqual([]);
      expect(none.pageInfo.endCursor).toBe(tail.pageInfo.endCursor);
      const empty = (await t.request({ url: `/api/v1/deployments/${id}/logs?after=${tail.pageInfo.endCursor}` })).json() as Json;
      expect(empty).toMatchObject({ items: [], pageInfo: { endCursor: tail.pageInfo.endCursor, hasNextPage: false } });
      process.kill(r.pidOf(id) as number, 'SIGKILL');
      await vi.waitFor(
        async () => {
          const next = (await t.request({ url: `/api/v1/deployments/${id}/logs?after=${tail.pageInfo.endCursor}` })).json() as Json;
          expect(next.items.map((l: Json) => l.message).join('\n')).toContain('killed by SIGKILL');
        },
        { timeout: 10_000, interval: 50 },
      );
      expect(await r.logs(id, '&source=dev')).toEqual([]);
      expect((await r.logs(id, '&source=production')).length).toBeGreaterThan(0);
      expect(await r.logs(id, '&container=INIT')).toEqual([]);
      expect((await r.logs(id, `&container=MAIN&pod=${pod.name}`)).length).toBeGreaterThan(0);
      expect(await r.logs(id, '&pod=production-zzzzz')).toEqual([]);
      problem(await t.request({ url: `/api/v1/deployments/${id}/logs?after=nonsense` }), 400, 'INVALID_CURSOR');
      problem(await t.request({ url: `/api/v1/deployments/${id}/logs?container=sidecar` }), 400, 'VALIDATION_FAILED');
    });

    it('pods and logs need DeploymentRead: a user without access gets 403, a key scoped elsewhere 403', async () => {
      const id = await r.create('guarded');
      await r.running(id);
      const viewer = await t.user('VIEWER');
      for (const path of ['pods', 'logs']) {
        problem(await t.request({ url: `/api/v1/deployments/${id}/${path}`, key: viewer.key }), 403, 'FORBIDDEN');
        const scoped = await t.key(t.admin.userId, { deploymentIds: [await r.create(`elsewhere ${path}`)] });
        problem(await t.request({ url: `/api/v1/deployments/${id}/${path}`, key: scoped }), 403, 'KEY_SCOPE_FORBIDDEN');
      }
      const grant = await t.request({
        method: 'POST',
        url: '/api/v1/policies',
        body: { principal: { type: 'USER', id: viewer.userId }, resource: { type: 'DEPLOYMENT', id }, access: 'VIEW' },
      });
      expect(grant.statusCode, grant.body).toBeLessThan(300);
      expect((await t.request({ url: `/api/v1/deployments/${id}/pods`, key: viewer.key })).statusCode).toBe(200);
    });
  });
}
