import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Repository } from '../src/git/repository.js';
import { largeManifest } from './dbt-fixtures.js';
import { DIALECTS } from './harness.js';
import { killedServers } from './killed-server.js';

/*
 * Issue 19: a server killed (kill -9) in the middle of a sync ends the run FAILED, with a log line
 * saying why, never RUNNING forever. The sync is made long by its manifest (1,500 models); the
 * server is killed while it processes it or writes its commit, and the next process reports the
 * run failed.
 */

const MODELS = 1500;

for (const dialect of DIALECTS) {
  describe(`a server killed during a dbt sync (${dialect})`, () => {
    const servers = killedServers(dialect);
    const { adminKey, ok } = servers;

    it('kill -9 mid-sync: the run ends FAILED with a log line saying the server stopped, never RUNNING', async () => {
      const first = servers.first();
      const id = ok(await first.post('/build/api/v1/deployments/', { name: 'killed-sync' }, adminKey), 'create').id as number;
      const started = ok(await first.post(`/api/v1/deployments/${id}/dbt-sync`, { source: 'manifest', manifest: largeManifest(MODELS) }, adminKey), 'start');
      const url = `/api/v1/deployments/${id}/dbt-sync/${started.syncJobId as string}`;
      const processing = await servers.until(first, url, (s) => s.status !== 'INITIALIZING', 'the sync to reach the manifest');
      // Generation and validation run on a worker thread, so the poll is answered while they run;
      // on a slow machine the sync may be writing its commit by the time the answer is read.
      expect(['PROCESSING_MANIFEST', 'WRITING_CUBE_FILES']).toContain(processing.status);

      const second = await servers.killAndReplace(first);
      const done = await servers.until(second, url, (s) => s.status === 'COMPLETED' || s.status === 'FAILED', 'the run to end after the kill');
      expect(done).toMatchObject({ status: 'FAILED', progress: { stage: 'FAILED' } });
      expect(done.error).toMatch(/The server running this sync stopped before it ended/);
      const history = ok(await second.get(`/api/v1/deployments/${id}/dbt-sync`, adminKey), 'history');
      expect(history.items[0]).toMatchObject({ syncJobId: started.syncJobId, status: 'FAILED', errorMessage: done.error });
      // Killed while it processed the manifest, or (on a slow machine) just after, while it wrote.
      expect(['PROCESSING_MANIFEST', 'WRITING_CUBE_FILES']).toContain(history.items[0].lastStage);
      const logs = ok(await second.get(`${url}/logs?first=200`, adminKey), 'logs');
      expect(logs.items.at(-1)).toMatchObject({ level: 'error', stream: 'system', message: done.error });
      const repo = new Repository(path.join(servers.env().dataDir, 'repositories', `${id}.git`));
      if (history.items[0].lastStage === 'PROCESSING_MANIFEST') expect(await repo.head(started.branchName as string)).toBeNull();
      // The deployment may sync again: the failed run no longer holds it.
      const again = await second.post(`/api/v1/deployments/${id}/dbt-sync`, { source: 'manifest', manifest: largeManifest(3), output: 'files' }, adminKey);
      expect(again.status, again.text).toBe(200);
    }, 180_000);
  });
}
