import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compileModel, registerModelTasks } from '../src/areas/data-model/model-tasks.js';
import { createJobs, createWorkerPool, type Jobs } from '../src/jobs/index.js';
import { createTestStore, type TestStore } from './harness.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('jobs: schedules', () => {
  let store: TestStore;
  let jobs: Jobs;

  beforeEach(async () => {
    store = await createTestStore('sqlite');
    jobs = createJobs(store);
  });

  afterEach(async () => {
    await jobs.stop();
    await store.destroy();
  });

  it('a schedule runs only once the schedules are started, never two runs at once, and jobs.stop() ends it after the run in hand', async () => {
    let runs = 0;
    let running = 0;
    let most = 0;
    jobs.schedule({
      name: 'every-10ms',
      everyMs: 10,
      run: async () => {
        runs += 1;
        running += 1;
        most = Math.max(most, running);
        await sleep(30);
        running -= 1;
      },
    });
    await sleep(50);
    expect(runs).toBe(0);
    jobs.startSchedules();
    await expect.poll(() => runs, { timeout: 5_000 }).toBeGreaterThanOrEqual(3);
    await jobs.stop();
    expect(running).toBe(0);
    expect(most).toBe(1);
    const after = runs;
    await sleep(50);
    expect(runs).toBe(after);
  });

  it('a run that fails is reported to onError and the next run goes on; a handle runs by hand and restarts after stop', async () => {
    const errors: unknown[] = [];
    let runs = 0;
    const handle = jobs.schedule({
      name: 'failing',
      everyMs: 10,
      run: async () => {
        runs += 1;
        if (runs === 1) throw new Error('first run fails');
      },
      onError: (error) => errors.push(error),
    });
    expect(() => jobs.schedule({ name: 'failing', everyMs: 10, run: async () => undefined })).toThrow(/already registered/);
    await handle.runNow();
    expect(errors).toHaveLength(1);
    expect(handle.started).toBe(false);
    handle.start();
    await expect.poll(() => runs, { timeout: 5_000 }).toBeGreaterThanOrEqual(3);
    await handle.stop();
    expect(handle.started).toBe(false);
    handle.start(5);
    expect(handle.started).toBe(true);
    await handle.stop();
    expect(errors).toHaveLength(1);
  });
});

describe('jobs: the worker pool', () => {
  it('runs a registered task module off the event loop (from sources here), passes a failure on, and closes', async () => {
    const pool = createWorkerPool({ size: 1 });
    try {
      expect(pool.size).toBe(1);
      await expect(pool.run('data-model', 'validate', [])).rejects.toThrow(/No worker pool tasks/);
      registerModelTasks(pool);
      // The same module again is no change; another under the name is refused.
      registerModelTasks(pool);
      expect(() => pool.register('data-model', new URL('./other.js', import.meta.url))).toThrow(/another module/);
      const valid = await compileModel(pool, [
        {
          path: 'model/cubes/orders.yml',
          content: 'cubes:\n  - name: orders\n    sql_table: orders\n    measures:\n      - name: count\n        type: count\n',
        },
      ]);
      expect(valid).toMatchObject({ valid: true, errors: [], cubesCount: 1 });
      expect(valid.artifact?.cubes.map((c) => c.name)).toEqual(['orders']);
      const invalid = await compileModel(pool, [{ path: 'model/cubes/broken.yml', content: 'cubes: [' }]);
      expect(invalid.valid).toBe(false);
      await expect(pool.run('data-model', 'missing', null)).rejects.toThrow(/exports no function missing/);
    } finally {
      await pool.close();
    }
  });

  it('sizes itself from the option, at least one thread', () => {
    expect(createWorkerPool().size).toBeGreaterThanOrEqual(1);
    expect(() => createWorkerPool({ size: 0 })).toThrow(RangeError);
  });
});
