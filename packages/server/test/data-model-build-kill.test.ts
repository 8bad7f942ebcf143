import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Repository } from '../src/git/repository.js';
import { DIALECTS } from './harness.js';
import { killedServers } from './killed-server.js';
import type { ServerProcess } from './server-process.js';

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
    const servers = killedServers(dialect);
    const { adminKey, ok } = servers;
    const status = (server: ServerProcess, id: number, done: (s: Record<string, any>) => boolean, what: string) =>
      servers.until(server, `/api/v1/deployments/${id}/build-status`, done, what);

    it('kill -9 mid-build: the next process runs the build again and it succeeds; it is never left building', async () => {
      const first = servers.first();
      const id = ok(await first.post('/build/api/v1/deployments/', { name: 'killed' }, adminKey), 'create').id as number;
      await status(first, id, (s) => s.status === 'success', 'first build');
      ok(await first.post(`/build/api/v1/deployments/${id}/branches`, { name: 'big' }, adminKey), 'branch');
      // The big model lands on a shared branch with git itself, then is merged through the API.
      const repo = new Repository(path.join(servers.env().dataDir, 'repositories', `${id}.git`));
      const base = await repo.head('big');
      const big = await repo.commit({
        ref: 'refs/heads/big',
        expectedHead: base,
        changes: bigModel(),
        author: { name: 'Big', email: 'big@example.com' },
        message: 'A big model',
      });
      ok(await first.post(`/build/api/v1/deployments/${id}/merge-to-default`, { branchName: 'big', message: 'Ship the big model' }, adminKey), 'merge');
      const building = await status(first, id, (s) => s.lastHash === big && s.status !== 'queued', 'the big build to start');
      expect(building.status).toBe('building');

      const killedPid = first.child.pid;
      const second = await servers.killAndReplace(first);
      const done = await status(
        second,
        id,
        (s) => s.buildJobId === building.buildJobId && (s.status === 'success' || s.status === 'failed'),
        'the build to finish after the kill',
      );
      expect(done.status).toBe('success');
      // The server that took the build over says so in its own log: which job, from which process, at which attempt.
      expect(second.output()).toMatch(
        new RegExp(
          `took back data-model.build job ${building.buildJobId} \\(tenant \\d+\\) from [^,"]*:${killedPid}:[^,"]*, silent since [^,]*, at attempt 1 of \\d+; queued it again`,
        ),
      );
      const logs = ok(await second.get(`/api/v1/deployments/${id}/builds/${building.buildJobId}/logs?first=200`, adminKey), 'logs');
      // Both attempts wrote their first line: the killed one and the one that finished.
      expect(logs.items.filter((l: { line: string }) => l.line.startsWith('Building main at')).length).toBe(2);
      expect(logs.items.at(-1).line).toMatch(new RegExp(`^Compiled ${CUBES + 1} cubes and 1 view in`));
    }, 180_000);
  });
}
