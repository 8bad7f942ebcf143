/**
 * `npm run bench:dbt-sync`: a 500-model dbt manifest (v12, from test/dbt-fixtures.ts: 6 to 24
 * typed columns a model, a key and a relationship each) turned into generated, validated cube
 * files, beside its floor measured in the same run: `JSON.parse` of the same manifest text, which
 * any sync must do before it reads a single model. Timed per step: parse, the manifest check,
 * generation, and validation of the generated model by the data-model validator. Then the same
 * work as a sync does it, on a worker pool of one thread (the manifest copied to it as text, the
 * files copied back), beside the longest the event loop waited meanwhile.
 * BENCH_ROUNDS (default 10) timed rounds after 2 untimed ones; medians are printed.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { checkManifest, generateCubes } from '../src/areas/dbt-sync/generator/index.js';
import { validateModel } from '../src/model/index.js';
import { registerSyncTasks, SyncThread } from '../src/areas/dbt-sync/worker/thread.js';
import { createWorkerPool } from '../src/jobs/index.js';
import { largeManifest } from '../test/dbt-fixtures.js';

const MODELS = Number(process.env.BENCH_MODELS ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const WARMUP_ROUNDS = 2;
const log = (line: string) => process.stdout.write(`${line}\n`);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const ms = (n: number) => `${n.toFixed(1)} ms`;

const text = JSON.stringify(largeManifest(MODELS));
const pool = createWorkerPool({ size: 1 });
registerSyncTasks(pool);
const selector = { paths: [], tags: [], names: [] };
const timings = {
  floor: [] as number[],
  parse: [] as number[],
  check: [] as number[],
  generate: [] as number[],
  validate: [] as number[],
  total: [] as number[],
};
let cubes = 0;
let bytes = 0;

for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round += 1) {
  const f0 = performance.now();
  JSON.parse(text);
  const floor = performance.now() - f0;

  const t0 = performance.now();
  const value: unknown = JSON.parse(text);
  const t1 = performance.now();
  const checked = checkManifest(value);
  if (!checked.manifest) throw new Error(JSON.stringify(checked.problems));
  const t2 = performance.now();
  const generation = generateCubes(checked.manifest, { outputPath: 'model/cubes/dbt', selector });
  const t3 = performance.now();
  const result = validateModel(generation.files);
  const t4 = performance.now();
  if (!result.valid) throw new Error(`the generated model does not validate: ${JSON.stringify(result.errors.slice(0, 3))}`);
  cubes = generation.cubes.length;
  bytes = generation.files.reduce((n, f) => n + Buffer.byteLength(f.content), 0);
  if (round < WARMUP_ROUNDS) continue;
  timings.floor.push(floor);
  timings.parse.push(t1 - t0);
  timings.check.push(t2 - t1);
  timings.generate.push(t3 - t2);
  timings.validate.push(t4 - t3);
  timings.total.push(t4 - t0);
}

const floor = median(timings.floor);
const total = median(timings.total);
log(
  `dbt-sync: ${MODELS}-model manifest (${(text.length / 1024 / 1024).toFixed(1)} MiB) → ${cubes} cube files (${(bytes / 1024 / 1024).toFixed(1)} MiB), validated`,
);
log(`machine: ${os.cpus()[0]?.model ?? 'unknown CPU'} x${os.cpus().length}, Node ${process.version}; ${ROUNDS} rounds, medians`);
log(`  floor (JSON.parse of the manifest): ${ms(floor)}`);
log(`  manifest to validated files:        ${ms(total)}  (${(total / floor).toFixed(1)}x the floor)`);
log(
  `    parse ${ms(median(timings.parse))}, check ${ms(median(timings.check))}, generate ${ms(median(timings.generate))}, validate ${ms(median(timings.validate))}`,
);

// As a sync runs it, on the worker thread; the event loop is sampled meanwhile.
const threaded: number[] = [];
const stalls: number[] = [];
for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round += 1) {
  let longest = 0;
  let last = performance.now();
  const sampler = setInterval(() => {
    const at = performance.now();
    longest = Math.max(longest, at - last);
    last = at;
  }, 5);
  const t0 = performance.now();
  const thread = new SyncThread(pool);
  await thread.parse(text);
  const generation = await thread.generate({ outputPath: 'model/cubes/dbt', selector });
  const errors = await thread.validate(generation.files);
  await thread.close();
  const elapsed = performance.now() - t0;
  clearInterval(sampler);
  if (errors.length > 0) throw new Error(`the generated model does not validate: ${JSON.stringify(errors.slice(0, 3))}`);
  if (round < WARMUP_ROUNDS) continue;
  threaded.push(elapsed);
  stalls.push(longest);
}
log(
  `  on the worker pool's thread:        ${ms(median(threaded))}  (${(median(threaded) / floor).toFixed(1)}x the floor); the event loop's longest wait meanwhile ${ms(median(stalls))} (sampled every 5 ms)`,
);
await pool.close();
