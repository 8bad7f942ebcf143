import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { createJobs, DEAD_WORKER, takeoverMessage, type Jobs, type JobTakeover } from '../src/jobs/index.js';
import { createTestStore, DIALECTS, type TestStore } from './harness.js';
import { exited, spawnTs } from './server-env.js';

/**
 * A worker process killed with SIGKILL mid-job leaves the job failed, or run again, never running
 * forever: another worker sees its heartbeat stop and takes the job back within about
 * staleAfterMs + sweepMs (here 2 s + 1 s).
 */
const STALE_AFTER_MS = 2000;
const SWEEP_MS = 1000;

/** Resolves once `condition` holds, reading it again every few milliseconds; rejects past `timeoutMs`. */
async function until<T>(what: string, condition: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

for (const dialect of DIALECTS) {
  describe(`jobs of a killed process (${dialect})`, () => {
    let store: TestStore;
    let tenantId: number;
    let child: ChildProcess | undefined;
    const stopped: Jobs[] = [];
    let killedPid = 0;

    beforeEach(async () => {
      store = await createTestStore(dialect);
      const row = await store.db
        .insertInto('tenants')
        .values({ slug: 'acme', name: 'acme', created_at: new Date().toISOString() })
        .returning('id')
        .executeTakeFirstOrThrow();
      tenantId = row.id;
    });

    afterEach(async () => {
      if (child && child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited(child);
      }
      for (const jobs of stopped.splice(0)) await jobs.stop();
      await store.destroy();
    });

    /** Enqueues a `hang` job, has a child process run it, and kills the child once the job has logged. */
    async function killedMidJob(maxAttempts: number): Promise<{ api: Jobs; id: number }> {
      const api = createJobs(store);
      stopped.push(api);
      const job = await api.enqueue(tenantId, 'hang', { maxAttempts }, { maxAttempts });
      child = spawnTs('packages/server/test/fixtures/jobs-worker.ts', [], { JOBS_STORE: JSON.stringify(store.options) });
      // A worker that exits without running afterEach (interrupted run) must not leave the child behind.
      const orphaned = () => child?.kill('SIGKILL');
      process.once('exit', orphaned);
      child.once('exit', () => process.off('exit', orphaned));
      let stderr = '';
      child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.stdout?.resume();
      const running = await until('the child runs the job', async () => {
        if (child?.exitCode !== null) throw new Error(`The worker process exited early:\n${stderr}`);
        const record = await api.get(tenantId, job.id);
        const lines = await api.logs(tenantId, job.id, { limit: 10 });
        return record?.state === 'running' && lines.some((l) => l.line === 'started') && record;
      });
      expect(running.attempts).toBe(1);
      killedPid = child.pid ?? 0;
      child.kill('SIGKILL');
      expect((await exited(child))[1]).toBe('SIGKILL');
      return { api, id: job.id };
    }

    /** What the sweeping worker reported taking back (the server writes these to its log). */
    let takeovers: JobTakeover[] = [];
    function worker(): Jobs {
      takeovers = [];
      const jobs = createJobs(store, { heartbeatMs: 250, staleAfterMs: STALE_AFTER_MS, sweepMs: SWEEP_MS, pollMs: 100, onTakeover: (t) => takeovers.push(t) });
      stopped.push(jobs);
      return jobs;
    }

    it('a job with no attempt left ends failed', async () => {
      const { id } = await killedMidJob(1);
      const killedAt = Date.now();
      const jobs = worker();
      await jobs.start();
      const done = await jobs.waitFor(tenantId, id, { timeoutMs: 15_000 });
      expect(done).toMatchObject({ state: 'failed', attempts: 1, error: DEAD_WORKER });
      expect(Date.now() - killedAt).toBeLessThan(STALE_AFTER_MS + SWEEP_MS + 2000);
      // The takeover is reported with the job, the dead process and the attempt.
      expect(takeovers).toEqual([
        expect.objectContaining({ jobId: id, kind: 'hang', tenantId, attempt: 1, maxAttempts: 1, outcome: 'failed', fromOwner: `fixture:${killedPid}` }),
      ]);
      expect(takeoverMessage(takeovers[0]!)).toMatch(
        new RegExp(`^jobs: took back hang job ${id} \\(tenant ${tenantId}\\) from fixture:${killedPid}, silent since .*, at attempt 1 of 1; failed it`),
      );
    });

    it('a job with an attempt left runs again and succeeds', async () => {
      const { id } = await killedMidJob(2);
      const killedAt = Date.now();
      const jobs = worker();
      const attempts: number[] = [];
      jobs.register({
        kind: 'hang',
        async run(ctx) {
          attempts.push(ctx.attempt);
          await ctx.log('again');
          return 'done';
        },
      });
      await jobs.start();
      const done = await jobs.waitFor(tenantId, id, { timeoutMs: 15_000 });
      expect(done).toMatchObject({ state: 'succeeded', attempts: 2, result: 'done', error: null });
      expect(takeovers).toEqual([expect.objectContaining({ jobId: id, attempt: 1, maxAttempts: 2, outcome: 'queued', fromOwner: `fixture:${killedPid}` })]);
      expect(attempts).toEqual([2]);
      expect((await jobs.logs(tenantId, id, { limit: 10 })).map((l) => l.line)).toEqual(['started', 'again']);
      expect(Date.now() - killedAt).toBeLessThan(STALE_AFTER_MS + SWEEP_MS + 2000);
    });
  });
}
