import { expect, vi } from 'vitest';
import type { TestApp } from './harness.js';

type Json = Record<string, any>;

/** Runtime timings for tests: ticks, checks and back-offs in a few hundred milliseconds. */
export const FAST_RUNTIME = {
  driver: 'process' as const,
  tickMs: 200,
  leaseMs: 1_000,
  healthIntervalMs: 300,
  healthTimeoutMs: 500,
  backoffBaseMs: 200,
  logFlushMs: 20,
};

/** Pod and log reads of one test app, and waits on them. */
export function runtimeProbe(t: TestApp) {
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
  /** Waits until the deployment's pod of `type` matches `expected`; answers it. */
  const podWhere = (id: number, expected: Json, type = 'production') =>
    vi.waitFor(
      async () => {
        const pod = (await pods(id)).find((p) => p.type === type);
        expect(pod).toMatchObject(expected);
        return pod as Json;
      },
      { timeout: 30_000, interval: 50 },
    );
  /** Waits until a pod other than `name` runs in its place; answers it. */
  const replaced = (id: number, name: string, type = 'production') =>
    vi.waitFor(
      async () => {
        const pod = (await pods(id)).find((p) => p.type === type);
        expect(pod?.name).not.toBe(name);
        expect(pod).toMatchObject({ status: 'Running', ready: true });
        return pod as Json;
      },
      { timeout: 30_000, interval: 50 },
    );
  /** The cursor of the deployment's newest log line: `logsWith(id, text, mark)` then looks only at what follows. */
  const mark = async (id: number): Promise<string> => {
    const res = await t.request({ url: `/api/v1/deployments/${id}/logs?first=1` });
    return (res.json() as Json).pageInfo.endCursor as string;
  };
  const logsWith = (id: number, text: string | RegExp, after?: string) =>
    vi.waitFor(
      async () => {
        const lines = after === undefined ? await logs(id) : await logs(id, `&after=${after}`);
        expect(
          lines.some((l) => (typeof text === 'string' ? l.includes(text) : text.test(l))),
          `no log line matches ${String(text)}:\n${lines.join('\n')}`,
        ).toBe(true);
        return lines;
      },
      { timeout: 30_000, interval: 50 },
    );
  const create = async (name: string): Promise<number> => {
    const res = await t.request({ method: 'POST', url: '/build/api/v1/deployments', body: { name } });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as Json).id as number;
  };
  const pidOf = (id: number, environmentId = 'production') => t.app.services.runtime.localPids().get(`${id}/${environmentId}`) ?? null;
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  return { pods, logs, mark, podWhere, replaced, logsWith, create, pidOf, alive, running: (id: number) => podWhere(id, { status: 'Running', ready: true }) };
}
