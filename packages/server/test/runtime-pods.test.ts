import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DIALECTS, TestApp } from './harness.js';

/*
 * Issue 14, "Runtime: pods and logs that are real" and "Starter experience" (reference 1.9, 1.10):
 * a new deployment's production environment runs as a child process that serves the data API's
 * /v1/meta behind the deployment URL; crashes restart it with back-off; logs are kept.
 */

type Json = Record<string, any>;
const FAST = { driver: 'process' as const, tickMs: 200, leaseMs: 1_000, healthIntervalMs: 300, healthTimeoutMs: 500, backoffBaseMs: 200, logFlushMs: 20 };

for (const dialect of DIALECTS) {
  describe(`runtime pods (${dialect})`, () => {
    let t: TestApp;
    const pods = async (id: number) => {
      const res = await t.request({ url: `/api/v1/deployments/${id}/pods` });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as Json).items as Json[];
    };
    const logs = async (id: number, query = '') => {
      const res = await t.request({ url: `/api/v1/deployments/${id}/logs?first=200${query}` });
      expect(res.statusCode, res.body).toBe(200);
      return ((res.json() as Json).items as Json[]).map((l) => l.message as string);
    };
    const running = (id: number) =>
      vi.waitFor(
        async () => {
          const [pod] = await pods(id);
          expect(pod).toMatchObject({ status: 'Running', ready: true, type: 'production', containers: ['MAIN'] });
          return pod as Json;
        },
        { timeout: 30_000, interval: 50 },
      );
    const pidOf = (id: number) => t.app.services.runtime.localPids().get(`${id}/production`) ?? null;

    beforeAll(async () => {
      t = await TestApp.create(dialect, { runtime: FAST });
    });
    afterAll(() => t.close());

    it('a new deployment reaches a Running pod serving its starter model at <deploymentUrl>/data-api/v1/meta', async () => {
      const created = await t.request({ method: 'POST', url: '/build/api/v1/deployments', body: { name: 'starter' } });
      expect(created.statusCode, created.body).toBe(200);
      const { id } = created.json() as Json;
      const pod = await running(id);
      expect(pod.name).toMatch(/^production-[a-z0-9]{5}$/);
      const meta = await t.request({ url: `/deployments/${id}/data-api/v1/meta` });
      expect(meta.statusCode, meta.body).toBe(200);
      const names = (meta.json() as Json).cubes.map((c: Json) => c.name);
      expect(names).toEqual(['starter_orders', 'starter_orders_view']);
      const lines = await logs(id);
      expect(lines.some((l) => l.includes('Data source: the sample SQLite dataset'))).toBe(true);
      expect(lines.some((l) => l.startsWith('Scheduled pod production-'))).toBe(true);
    });

    it('a killed runtime is restarted: restartCount goes up and its logs say why', async () => {
      const { id } = (await t.request({ method: 'POST', url: '/build/api/v1/deployments', body: { name: 'killed' } })).json() as Json;
      const before = await running(id);
      process.kill(pidOf(id) as number, 'SIGKILL');
      await vi.waitFor(async () => {
        const [pod] = await pods(id);
        expect(pod).toMatchObject({ name: before.name, status: 'Running', ready: true, restartCount: 1 });
      }, { timeout: 30_000, interval: 50 });
      expect((await logs(id)).some((l) => l.includes('killed by SIGKILL'))).toBe(true);
    });
  });
}
