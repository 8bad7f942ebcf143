import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../src/db/database.js';
import { createJobs, DEAD_WORKER, JobAbort, type Jobs, type JobsOptions } from '../src/jobs/index.js';
import { createTestStore, DIALECTS, type TestStore } from './harness.js';

/** A promise with its resolver, for a job to say "I am running" and a test to await it. */
function signal<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Settles when `signal` aborts, rejecting with its reason, as a job that honours it would. */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

async function insertTenant(store: Store, slug: string): Promise<number> {
  const row = await store.db.insertInto('tenants').values({ slug, name: slug, created_at: new Date().toISOString() }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

for (const dialect of DIALECTS) {
  describe(`jobs (${dialect})`, () => {
    let store: TestStore;
    let tenantId: number;
    const started: Jobs[] = [];
    const reopened: Store[] = [];
    const errors: unknown[] = [];

    /** A worker with short timings; stopped after the test. */
    function jobsOn(on: Store, options: JobsOptions = {}): Jobs {
      const jobs = createJobs(on, { heartbeatMs: 100, staleAfterMs: 1000, pollMs: 50, onError: (e) => errors.push(e), ...options });
      started.push(jobs);
      return jobs;
    }

    function reopen(): Store {
      const other = store.reopen();
      reopened.push(other);
      return other;
    }

    beforeEach(async () => {
      store = await createTestStore(dialect);
      tenantId = await insertTenant(store, 'acme');
      errors.length = 0;
    });

    afterEach(async () => {
      for (const jobs of started.splice(0)) await jobs.stop();
      for (const other of reopened.splice(0)) await other.close();
      await store.destroy();
      expect(errors).toEqual([]);
    });

    it('runs a job to succeeded, with its result and log lines', async () => {
      const jobs = jobsOn(store);
      jobs.register<{ name: string }, { greeting: string; attempt: number }>({
        kind: 'greet',
        async run(ctx) {
          await ctx.log('hello');
          await ctx.log('x'.repeat(10_000));
          return { greeting: `hi ${ctx.payload.name}`, attempt: ctx.attempt };
        },
      });
      await jobs.start();
      const queued = await jobs.enqueue(tenantId, 'greet', { name: 'ada' });
      expect(Number.isInteger(queued.id)).toBe(true);
      expect(queued).toMatchObject({
        tenantId,
        kind: 'greet',
        payload: { name: 'ada' },
        state: 'queued',
        attempts: 0,
        maxAttempts: 1,
        result: null,
        error: null,
      });

      const done = await jobs.waitFor(tenantId, queued.id);
      expect(done).toMatchObject({ state: 'succeeded', attempts: 1, result: { greeting: 'hi ada', attempt: 1 }, error: null, cancelRequested: false });
      expect(done.startedAt).not.toBeNull();
      expect(done.finishedAt! >= done.startedAt!).toBe(true);
      expect(await jobs.get(tenantId, queued.id)).toEqual(done);

      const lines = await jobs.logs(tenantId, queued.id, { limit: 10 });
      expect(lines.map((l) => l.seq)).toEqual([1, 2]);
      expect(lines[0]?.line).toBe('hello');
      // One line is cut to 8 KiB, with a mark that it was.
      expect(lines[1]?.line).toHaveLength(8192);
      expect(lines[1]?.line.endsWith('…')).toBe(true);
      expect(await jobs.logs(tenantId, queued.id, { afterSeq: 1, limit: 10 })).toEqual([lines[1]]);
    });

    it('lists a tenant’s jobs by kind, in id order either way, after a cursor', async () => {
      const jobs = jobsOn(store);
      const a = await jobs.enqueue(tenantId, 'a', 1);
      const b = await jobs.enqueue(tenantId, 'b', 2);
      const c = await jobs.enqueue(tenantId, 'a', 3);
      const ids = async (filter: Parameters<Jobs['list']>[1]) => (await jobs.list(tenantId, filter)).map((j) => j.id);
      expect(await ids({ limit: 10 })).toEqual([a.id, b.id, c.id]);
      expect(await ids({ kind: 'a', limit: 10 })).toEqual([a.id, c.id]);
      expect(await ids({ kind: 'a', afterId: a.id, limit: 10 })).toEqual([c.id]);
      expect(await ids({ limit: 2, newestFirst: true })).toEqual([c.id, b.id]);
      expect(await ids({ limit: 2, newestFirst: true, afterId: b.id })).toEqual([a.id]);
    });

    it('retries a job that throws while attempts remain, then fails it with the last message', async () => {
      const jobs = jobsOn(store);
      const runs: Array<[number, number]> = [];
      jobs.register<{ passOn?: number }, string>({
        kind: 'flaky',
        maxAttempts: 3,
        async run(ctx) {
          runs.push([ctx.id, ctx.attempt]);
          await ctx.log(`attempt ${ctx.attempt}`);
          if (ctx.attempt === ctx.payload.passOn) return 'passed';
          throw new Error(`attempt ${ctx.attempt} failed`);
        },
      });
      await jobs.start();
      const failing = await jobs.enqueue(tenantId, 'flaky', {});
      expect(failing.maxAttempts).toBe(3);
      const failed = await jobs.waitFor(tenantId, failing.id);
      expect(failed).toMatchObject({ state: 'failed', attempts: 3, error: 'attempt 3 failed', result: null });
      expect(runs.filter(([id]) => id === failing.id).map(([, attempt]) => attempt)).toEqual([1, 2, 3]);
      // The log runs on across attempts.
      expect((await jobs.logs(tenantId, failing.id, { limit: 10 })).map((l) => [l.seq, l.line])).toEqual([
        [1, 'attempt 1'],
        [2, 'attempt 2'],
        [3, 'attempt 3'],
      ]);

      // enqueue's maxAttempts overrides the kind's; a retry that succeeds ends succeeded.
      const second = await jobs.enqueue(tenantId, 'flaky', { passOn: 2 }, { maxAttempts: 2 });
      expect(await jobs.waitFor(tenantId, second.id)).toMatchObject({ state: 'succeeded', attempts: 2, maxAttempts: 2, result: 'passed', error: null });
      const once = await jobs.enqueue(tenantId, 'flaky', { passOn: 2 }, { maxAttempts: 1 });
      expect(await jobs.waitFor(tenantId, once.id)).toMatchObject({ state: 'failed', attempts: 1, error: 'attempt 1 failed' });
    });

    it('fails an attempt that runs past the kind’s time limit, aborting its signal', async () => {
      const jobs = jobsOn(store);
      let reason: unknown;
      jobs.register({
        kind: 'slow',
        timeoutMs: 100,
        async run(ctx) {
          await aborted(ctx.signal).catch((error: unknown) => {
            reason = error;
            throw error;
          });
        },
      });
      await jobs.start();
      const job = await jobs.enqueue(tenantId, 'slow', null);
      const failed = await jobs.waitFor(tenantId, job.id);
      expect(failed).toMatchObject({ state: 'failed', attempts: 1 });
      expect(failed.error).toMatch(/time limit of 100 ms/);
      expect(reason).toBeInstanceOf(JobAbort);
      expect((reason as JobAbort).why).toBe('timeout');
    });

    it('keeps the first lines of a job’s log up to the cap, and says the rest was dropped', async () => {
      const jobs = jobsOn(store, { maxLogLines: 3 });
      jobs.register({
        kind: 'chatty',
        async run(ctx) {
          for (let i = 1; i <= 6; i++) await ctx.log(`line ${i}`);
        },
      });
      await jobs.start();
      const job = await jobs.enqueue(tenantId, 'chatty', null);
      expect((await jobs.waitFor(tenantId, job.id)).state).toBe('succeeded');
      const lines = await jobs.logs(tenantId, job.id, { limit: 100 });
      expect(lines.map((l) => l.line)).toEqual(['line 1', 'line 2', 'line 3', '[log truncated: only the first 3 lines of a job are kept]']);
    });

    it('cancels a queued job at once; it never runs', async () => {
      const jobs = jobsOn(store);
      const ran: number[] = [];
      jobs.register({
        kind: 'note',
        async run(ctx) {
          ran.push(ctx.id);
        },
      });
      const first = await jobs.enqueue(tenantId, 'note', null);
      const cancelled = await jobs.cancel(tenantId, first.id);
      expect(cancelled).toMatchObject({ id: first.id, state: 'cancelled', cancelRequested: true, attempts: 0 });
      expect(cancelled?.finishedAt).not.toBeNull();
      // Jobs run oldest first: once a later one has run, the cancelled one would have run before it.
      const second = await jobs.enqueue(tenantId, 'note', null);
      await jobs.start();
      expect((await jobs.waitFor(tenantId, second.id)).state).toBe('succeeded');
      expect(ran).toEqual([second.id]);
      expect(await jobs.get(tenantId, first.id)).toEqual(cancelled);
      // Cancelling a finished job changes nothing.
      expect(await jobs.cancel(tenantId, second.id)).toMatchObject({ state: 'succeeded', cancelRequested: false });
      expect(await jobs.waitFor(tenantId, first.id)).toEqual(cancelled);
    });

    it('cancels a running job: its signal aborts and it ends cancelled', async () => {
      const jobs = jobsOn(store);
      const running = signal();
      let reason: unknown;
      jobs.register({
        kind: 'wait',
        async run(ctx) {
          running.resolve();
          await aborted(ctx.signal).catch((error: unknown) => {
            reason = error;
            throw error;
          });
        },
      });
      await jobs.start();
      const job = await jobs.enqueue(tenantId, 'wait', null);
      await running.promise;
      expect(await jobs.cancel(tenantId, job.id)).toMatchObject({ state: 'running', cancelRequested: true });
      expect(await jobs.waitFor(tenantId, job.id)).toMatchObject({ state: 'cancelled', cancelRequested: true, attempts: 1, error: null, result: null });
      expect((reason as JobAbort).why).toBe('cancelled');
    });

    it('cancels a job running in another worker (another process sharing the store) through its heartbeat', async () => {
      const worker = jobsOn(reopen());
      const running = signal();
      worker.register({
        kind: 'wait',
        async run(ctx) {
          running.resolve();
          // A job that returns once aborted still ends cancelled: cancel was asked.
          await aborted(ctx.signal).catch(() => undefined);
          return 'stopped early';
        },
      });
      await worker.start();
      const api = jobsOn(store);
      const job = await api.enqueue(tenantId, 'wait', null);
      await running.promise;
      expect(await api.cancel(tenantId, job.id)).toMatchObject({ state: 'running', cancelRequested: true });
      expect(await api.waitFor(tenantId, job.id)).toMatchObject({ state: 'cancelled', result: null });
    });

    it('runs at most `concurrency` jobs at once', async () => {
      const jobs = jobsOn(store, { concurrency: 2 });
      let inHand = 0;
      let most = 0;
      const two = signal();
      const gate = signal();
      jobs.register({
        kind: 'held',
        async run() {
          most = Math.max(most, ++inHand);
          if (inHand === 2) two.resolve();
          await gate.promise;
          inHand -= 1;
        },
      });
      await jobs.start();
      const enqueued = await Promise.all(Array.from({ length: 6 }, () => jobs.enqueue(tenantId, 'held', null)));
      await two.promise;
      // Two are held: the others stay queued, however often the worker looks.
      const states = async () => (await jobs.list(tenantId, { limit: 10 })).map((j) => j.state).sort();
      expect(await states()).toEqual(['queued', 'queued', 'queued', 'queued', 'running', 'running']);
      gate.resolve();
      const done = await Promise.all(enqueued.map((job) => jobs.waitFor(tenantId, job.id)));
      expect(done.every((job) => job.state === 'succeeded')).toBe(true);
      expect(most).toBe(2);
    });

    it('two workers on the same data never run one job twice', async () => {
      const runs = new Map<number, string[]>();
      const workers = [jobsOn(store, { concurrency: 3 }), jobsOn(reopen(), { concurrency: 3 })];
      workers.forEach((jobs, n) =>
        jobs.register({
          kind: 'count',
          async run(ctx) {
            runs.set(ctx.id, [...(runs.get(ctx.id) ?? []), `worker ${n}`]);
            // Work that takes a moment, so both workers have jobs in hand at once.
            await new Promise((resolve) => setTimeout(resolve, 10));
            return n;
          },
        }),
      );
      await Promise.all(workers.map((w) => w.start()));
      const enqueued = await Promise.all(Array.from({ length: 50 }, (_, i) => workers[0]!.enqueue(tenantId, 'count', { i })));
      const done = await Promise.all(enqueued.map((job) => workers[1]!.waitFor(tenantId, job.id)));
      expect(done.every((job) => job.state === 'succeeded' && job.attempts === 1)).toBe(true);
      expect([...runs.keys()].sort((a, b) => a - b)).toEqual(enqueued.map((j) => j.id).sort((a, b) => a - b));
      expect([...runs.values()].every((by) => by.length === 1)).toBe(true);
      // Both took part (each job's result names its worker).
      expect(new Set(done.map((job) => job.result))).toEqual(new Set([0, 1]));
    });

    it('another tenant sees none of a tenant’s jobs', async () => {
      const other = await insertTenant(store, 'other');
      const jobs = jobsOn(store);
      jobs.register({
        kind: 'note',
        async run(ctx) {
          await ctx.log('secret');
          return 'done';
        },
      });
      await jobs.start();
      const job = await jobs.enqueue(tenantId, 'note', { secret: true });
      await jobs.waitFor(tenantId, job.id);
      expect(await jobs.get(other, job.id)).toBeUndefined();
      expect(await jobs.list(other, { limit: 10 })).toEqual([]);
      expect(await jobs.list(other, { kind: 'note', limit: 10 })).toEqual([]);
      expect(await jobs.logs(other, job.id, { limit: 10 })).toEqual([]);
      expect(await jobs.cancel(other, job.id)).toBeUndefined();
      await expect(jobs.waitFor(other, job.id)).rejects.toThrow(/no job/);
      expect(await jobs.logs(tenantId, job.id, { limit: 10 })).toHaveLength(1);
    });

    it('stop() aborts running jobs and waits: a job that returns succeeded, one that throws is queued again without spending an attempt', async () => {
      const jobs = jobsOn(store, { concurrency: 2 });
      let inHand = 0;
      const both = signal();
      jobs.register<{ finish: boolean }, string>({
        kind: 'long',
        maxAttempts: 1,
        async run(ctx) {
          if (++inHand === 2) both.resolve();
          const reason = await aborted(ctx.signal).catch((error: unknown) => error);
          if (ctx.payload.finish) return `wrapped up (${(reason as JobAbort).why})`;
          throw reason;
        },
      });
      await jobs.start();
      const finishing = await jobs.enqueue(tenantId, 'long', { finish: true });
      const throwing = await jobs.enqueue(tenantId, 'long', { finish: false });
      await both.promise;
      await jobs.stop();
      expect(await jobs.get(tenantId, finishing.id)).toMatchObject({ state: 'succeeded', result: 'wrapped up (shutdown)' });
      expect(await jobs.get(tenantId, throwing.id)).toMatchObject({ state: 'queued', attempts: 0, error: null });

      // A stopped worker takes no more jobs; the next one runs the job that was put back.
      const later = await jobs.enqueue(tenantId, 'long', { finish: true });
      const next = jobsOn(store);
      next.register<{ finish: boolean }, string>({ kind: 'long', run: async (ctx) => `ran attempt ${ctx.attempt}` });
      await next.start();
      expect(await next.waitFor(tenantId, throwing.id)).toMatchObject({ state: 'succeeded', attempts: 1, result: 'ran attempt 1' });
      expect(await next.waitFor(tenantId, later.id)).toMatchObject({ state: 'succeeded', result: 'ran attempt 1' });
    });

    it('takes back a job whose worker stopped beating: queued again while attempts remain, else failed', async () => {
      const api = jobsOn(store);
      const again = await api.enqueue(tenantId, 'orphan', null, { maxAttempts: 2 });
      const last = await api.enqueue(tenantId, 'orphan', null, { maxAttempts: 1 });
      // As a worker that died would leave them: running, owned, with a heartbeat long past.
      const past = new Date(Date.now() - 60_000).toISOString();
      await store.db
        .updateTable('jobs')
        .set({ state: 'running', attempts: 1, owner: 'gone:1', started_at: past, heartbeat_at: past })
        .where('id', 'in', [again.id, last.id])
        .execute();
      const worker = jobsOn(store);
      worker.register({ kind: 'orphan', run: async (ctx) => `attempt ${ctx.attempt}` });
      await worker.start();
      expect(await worker.waitFor(tenantId, again.id)).toMatchObject({ state: 'succeeded', attempts: 2, result: 'attempt 2' });
      expect(await worker.waitFor(tenantId, last.id)).toMatchObject({ state: 'failed', attempts: 1, error: DEAD_WORKER });
    });
  });
}
