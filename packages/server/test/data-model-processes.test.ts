import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { DIALECTS } from './harness.js';
import { serverEnv, type ServerEnv } from './server-env.js';
import { startServerProcess, type HttpAnswer, type ServerProcess } from './server-process.js';

/*
 * Issue 13, "Repository": several server processes on one PostgreSQL see the same repositories
 * and never corrupt one. Two processes write and commit to one deployment at the same time, 200
 * commits in all; then git fsck is clean and every commit and file is there. (An embedded SQLite
 * store is served by one process, DESIGN.md; this is the shared-database setup.)
 */

const git = (gitDir: string, ...args: string[]) =>
  execFileSync('git', [`--git-dir=${gitDir}`, ...args], {
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: '/nonexistent' },
    maxBuffer: 64 * 1024 * 1024,
  });
const COMMITS_PER_PROCESS = 100;

for (const dialect of DIALECTS.filter((d) => d === 'postgres')) {
  describe(`two server processes writing one repository (${dialect})`, () => {
    let env: ServerEnv;
    let servers: ServerProcess[] = [];
    const adminKey = generateApiKey();
    const repositories = () => path.join(env.dataDir, 'repositories');

    const expectOk = (answer: HttpAnswer, what: string) => {
      if (answer.status !== 200 && answer.status !== 201) throw new Error(`${what}: ${answer.status} ${answer.text}`);
      return answer.body as Record<string, any>;
    };

    beforeAll(async () => {
      env = await serverEnv(dialect);
      const vars = { ...env.env, ADMIN_API_KEY: adminKey, RATE_LIMIT_PER_MINUTE: '0', LOCK_TIMEOUT_MS: '30000' };
      // The first start writes the certificate both use; then the second.
      servers.push(await startServerProcess(vars, env.dataDir));
      servers.push(await startServerProcess(vars, env.dataDir));
    });
    afterAll(async () => {
      await Promise.all(servers.map((s) => s.stop()));
      servers = [];
      await env?.destroy();
    });

    it('commits 200 changes from two processes at once: every commit and file lands, and git fsck is clean', async () => {
      const [a, b] = servers as [ServerProcess, ServerProcess];
      const id = expectOk(await a.post('/build/api/v1/deployments/', { name: 'shared' }, adminKey), 'create').id as number;
      const keyFor = async (name: string) => expectOk(await a.post('/api/v1/api-keys', { name }, adminKey), 'key').key as string;
      const writers = [
        { server: a, key: await keyFor('writer a'), label: 'a' },
        { server: b, key: await keyFor('writer b'), label: 'b' },
      ];
      for (const w of writers) expectOk(await w.server.post(`/build/api/v1/deployments/${id}/dev-mode`, {}, w.key), 'dev mode');
      await Promise.all(
        writers.map(async (w) => {
          for (let i = 0; i < COMMITS_PER_PROCESS; i++) {
            expectOk(
              await w.server.put(
                `/build/api/v1/deployments/${id}/data-model/files`,
                { files: [{ path: `model/${w.label}/${i}.yml`, content: `cubes: [] # ${w.label} ${i}\n` }] },
                w.key,
              ),
              `write ${w.label} ${i}`,
            );
            expectOk(await w.server.post(`/build/api/v1/deployments/${id}/commit`, { message: `${w.label} ${i}` }, w.key), `commit ${w.label} ${i}`);
          }
        }),
      );
      const dir = path.join(repositories(), `${id}.git`);
      git(dir, 'fsck', '--strict', '--no-dangling');
      const messages = new Set(git(dir, 'log', '--format=%s', 'main').trim().split('\n'));
      for (const w of writers) for (let i = 0; i < COMMITS_PER_PROCESS; i++) expect(messages.has(`${w.label} ${i}`), `${w.label} ${i}`).toBe(true);
      const files = git(dir, 'ls-tree', '-r', '--name-only', 'main').trim().split('\n');
      expect(files.filter((f) => f.startsWith('model/a/') || f.startsWith('model/b/'))).toHaveLength(2 * COMMITS_PER_PROCESS);
      // The API agrees, from either process.
      const history = expectOk(await b.get(`/build/api/v1/deployments/${id}/commits?first=200`, adminKey), 'history');
      expect(history.items.length).toBe(200);
      for (const s of servers) expect(s.errors()).toEqual([]);
    }, 240_000);
  });
}
