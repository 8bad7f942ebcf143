import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { Repository } from '../src/git/repository.js';
import { DIALECTS } from './harness.js';
import { exited, type ServerEnv, serverEnv } from './server-env.js';
import { startServerProcess, type HttpAnswer, type ServerProcess } from './server-process.js';

/*
 * Issue 13, "Uploads and builds": builds run on the jobs service, and a process killed (kill -9)
 * in the middle of a build leaves it re-run or failed, never stuck building. The build here is
 * made long by its size (thousands of cube files), the server is killed while it builds, and a
 * new process takes the build over and finishes it.
 */

const CUBES = 6000;

function bigModel(): Map<string, string> {
  const files = new Map<string, string>();
  for (let i = 0; i < CUBES; i++) {
    files.set(
      `model/cubes/c${i}.yml`,
      `cubes:\n  - name: c${i}\n    sql_table: t${i}\n    dimensions:\n      - name: id\n        sql: id\n        type: number\n        primary_key: true\n      - name: status\n        sql: status\n        type: string\n    measures:\n      - name: count\n        type: count\n      - name: total\n        sql: amount\n        type: sum\n`,
    );
  }
  return files;
}

for (const dialect of DIALECTS) {
  describe(`a server killed during a build (${dialect})`, () => {
    let env: ServerEnv;
    let servers: ServerProcess[] = [];
    const adminKey = generateApiKey();
    const vars = () => ({ ...env.env, ADMIN_API_KEY: adminKey, RATE_LIMIT_PER_MINUTE: '0', JOBS_HEARTBEAT_MS: '300', JOBS_STALE_AFTER_MS: '1500' });
    const ok = (answer: HttpAnswer, what: string) => {
      if (answer.status !== 200 && answer.status !== 201) throw new Error(`${what}: ${answer.status} ${answer.text}`);
      return answer.body as Record<string, any>;
    };
    /** Reads build status until `done` holds (a condition, polled). */
    const until = async (server: ServerProcess, id: number, done: (status: Record<string, any>) => boolean, what: string, timeoutMs = 90_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const status = ok(await server.get(`/api/v1/deployments/${id}/build-status`, adminKey), 'build status');
        if (done(status)) return status;
        if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(status)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };

    beforeAll(async () => {
      env = await serverEnv(dialect);
      servers.push(await startServerProcess(vars(), env.dataDir));
    });
    afterAll(async () => {
      await Promise.all(servers.map((s) => s.stop()));
      servers = [];
      await env?.destroy();
    });

    it('kill -9 mid-build: the next process runs the build again and it succeeds; it is never left building', async () => {
      const first = servers[0] as ServerProcess;
      const id = ok(await first.post('/build/api/v1/deployments/', { name: 'killed' }, adminKey), 'create').id as number;
      await until(first, id, (s) => s.status === 'success', 'first build');
      ok(await first.post(`/build/api/v1/deployments/${id}/branches`, { name: 'big' }, adminKey), 'branch');
      // The big model lands on a shared branch with git itself, then is merged through the API.
      const repo = new Repository(path.join(env.dataDir, 'repositories', `${id}.git`));
      const base = await repo.head('big');
      const big = await repo.commit({ ref: 'refs/heads/big', expectedHead: base, changes: bigModel(), author: { name: 'Big', email: 'big@example.com' }, message: 'A big model' });
      ok(await first.post(`/build/api/v1/deployments/${id}/merge-to-default`, { branchName: 'big', message: 'Ship the big model' }, adminKey), 'merge');
      const building = await until(first, id, (s) => s.lastHash === big && s.status !== 'queued', 'the big build to start');
      expect(building.status).toBe('building');
      first.child.kill('SIGKILL');
      await exited(first.child);

      const second = await startServerProcess(vars(), env.dataDir);
      servers.push(second);
      const done = await until(second, id, (s) => s.buildJobId === building.buildJobId && (s.status === 'success' || s.status === 'failed'), 'the build to finish after the kill');
      expect(done.status).toBe('success');
      const logs = ok(await second.get(`/api/v1/deployments/${id}/builds/${building.buildJobId}/logs?first=200`, adminKey), 'logs');
      // Both attempts wrote their first line: the killed one and the one that finished.
      expect(logs.items.filter((l: { line: string }) => l.line.startsWith('Building main at')).length).toBe(2);
      expect(logs.items.at(-1).line).toMatch(new RegExp(`^Compiled ${CUBES + 1} cubes and 1 view in`));
    }, 180_000);
  });
}
