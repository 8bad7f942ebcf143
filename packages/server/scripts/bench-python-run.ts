/**
 * `npm run bench:python-run`: what a python-run adds for an empty script (`pass`), on a worker
 * process the pool has already loaded: handing it the code and rows, running them, collecting the
 * output, killing it. Beside its floor measured in the same run: an IPC message round trip to a
 * bare Node.js process that has already started. Also printed: how long a worker takes to load Pyodide
 * (the pool hides it while runs come no faster than workers load).
 * BENCH_ROUNDS (default 15) timed rounds after 2 untimed ones; medians are printed.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { fork } from 'node:child_process';
import { PythonSandbox } from '../src/python/sandbox.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const WARMUP_ROUNDS = 2;
const log = (line: string) => process.stdout.write(`${line}\n`);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const ms = (n: number) => `${n < 1 ? n.toFixed(3) : n.toFixed(1)} ms`;

async function floor(): Promise<number[]> {
  const child = fork('-e', ["process.on('message', (m) => process.send(m));"], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const times: number[] = [];
  for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round += 1) {
    const t0 = performance.now();
    await new Promise((resolve) => {
      child.once('message', resolve);
      child.send({ code: 'pass', rowsJson: '[]' });
    });
    if (round >= WARMUP_ROUNDS) times.push(performance.now() - t0);
  }
  child.kill();
  return times;
}

async function emptyRuns(): Promise<{ runs: number[]; loads: number[] }> {
  // One worker loaded ahead, one run at a time: each run takes a loaded worker, as a pool does.
  const sandbox = new PythonSandbox({ poolSize: 1, concurrency: 1, timeoutMs: 30_000, memoryMb: 256 });
  const runs: number[] = [];
  const loads: number[] = [];
  for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round += 1) {
    const l0 = performance.now();
    sandbox.warm();
    await sandbox.ready();
    const loaded = performance.now() - l0;
    const t0 = performance.now();
    const result = await sandbox.run('pass', []);
    const took = performance.now() - t0;
    if (result.executionError !== null) throw new Error(result.executionError);
    if (round >= WARMUP_ROUNDS) {
      runs.push(took);
      // The run just made took the loaded worker; the next warm() loads another from scratch.
      if (round > WARMUP_ROUNDS) loads.push(loaded);
    }
  }
  await sandbox.close();
  return { runs, loads };
}

log(`python-run of an empty script: ${ROUNDS} rounds on ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}`);
const bare = await floor();
const { runs, loads } = await emptyRuns();
log(`  floor: IPC round trip to a started process     median ${ms(median(bare))}`);
log(`  python-run of "pass" on a loaded worker         median ${ms(median(runs))}  (${(median(runs) / Math.max(median(bare), 0.001)).toFixed(0)}x the floor)`);
log(`  loading a worker (Pyodide, ahead of the run)    median ${ms(median(loads))}`);
