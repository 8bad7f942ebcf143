import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { Repository } from '../src/git/repository.js';
import { largeManifest } from './dbt-fixtures.js';
import { DIALECTS } from './harness.js';
import { exited, type ServerEnv, serverEnv } from './server-env.js';
import { startServerProcess, type HttpAnswer, type ServerProcess } from './server-process.js';

/*
 * Issue 19: a server killed (kill -9) in the middle of a sync ends the run FAILED, with a log line
 * saying why, never RUNNING forever. The sync is made long by its manifest (1,500 models); the
 * server is killed while it processes it or writes its commit, and the next process reports the
 * run failed.
 */

const MODELS = 1500;

for (const dialect of DIALECTS) {
  describe(`a server killed during a dbt sync (${dialect})`, () => {
    let env: ServerEnv;
    let servers: ServerProcess[] = [];
    const adminKey = generateApiKey();
    const vars = () => ({ ...env.env, ADMIN_API_KEY: adminKey, RATE_LIMIT_PER_MINUTE: '0', JOBS_HEARTBEAT_MS: '300', JOBS_STALE_AFTER_MS: '1500' });
    const ok = (answer: HttpAnswer, what: string) => {
      if (answer.status !== 200 && answer.status !== 201) throw new Error(`${what}: ${answer.status} ${answer.text}`);
      return answer.body as Record<string, any>;
    };
    /** Reads the sync's status until `done` holds (a condition, polled). */
    const until = async (server: ServerProcess, url: string, done: (status: Record<string, any>) => boolean, what: string, timeoutMs = 90_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const status = ok(await server.get(url, adminKey), 'sync status');
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

    it('kill -9 mid-sync: the run ends FAILED with a log line saying the server stopped, never RUNNING', async () => {
      const first = servers[0] as ServerProcess;
      const id = ok(await first.post('/build/api/v1/deployments/', { name: 'killed-sync' }, adminKey), 'create').id as number;
      const started = ok(await first.post(`/api/v1/deployments/${id}/dbt-sync`, { source: 'manifest', manifest: largeManifest(MODELS) }, adminKey), 'start');
      const url = `/api/v1/deployments/${id}/dbt-sync/${started.syncJobId as string}`;
      const processing = await until(first, url, (s) => s.status !== 'INITIALIZING', 'the sync to reach the manifest');
      // Generation and validation hold the event loop, so the poll is often answered only once the
      // sync writes its commit (git runs in a child process): either stage is mid-run.
      expect(['PROCESSING_MANIFEST', 'WRITING_CUBE_FILES']).toContain(processing.status);
      first.child.kill('SIGKILL');
      await exited(first.child);

      const second = await startServerProcess(vars(), env.dataDir);
      servers.push(second);
      const done = await until(second, url, (s) => s.status === 'COMPLETED' || s.status === 'FAILED', 'the run to end after the kill');
      expect(done).toMatchObject({ status: 'FAILED', progress: { stage: 'FAILED' } });
      expect(done.error).toMatch(/The server running this sync stopped before it ended/);
      const history = ok(await second.get(`/api/v1/deployments/${id}/dbt-sync`, adminKey), 'history');
      expect(history.items[0]).toMatchObject({ syncJobId: started.syncJobId, status: 'FAILED', errorMessage: done.error });
      // Killed while it processed the manifest, or (on a slow machine) just after, while it wrote.
      expect(['PROCESSING_MANIFEST', 'WRITING_CUBE_FILES']).toContain(history.items[0].lastStage);
      const logs = ok(await second.get(`${url}/logs?first=200`, adminKey), 'logs');
      expect(logs.items.at(-1)).toMatchObject({ level: 'error', stream: 'system', message: done.error });
      const repo = new Repository(path.join(env.dataDir, 'repositories', `${id}.git`));
      if (history.items[0].lastStage === 'PROCESSING_MANIFEST') expect(await repo.head(started.branchName as string)).toBeNull();
      // The deployment may sync again: the failed run no longer holds it.
      const again = await second.post(`/api/v1/deployments/${id}/dbt-sync`, { source: 'manifest', manifest: largeManifest(3), output: 'files' }, adminKey);
      expect(again.status, again.text).toBe(200);
    }, 180_000);
  });
}
