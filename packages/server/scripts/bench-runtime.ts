/**
 * `npm run bench:runtime`: deployments' runtimes on this machine, each figure beside a floor
 * measured in the same run. The server runs as users run it (`node packages/server/dist/main.js`:
 * HTTPS, SQLite in a temporary directory, RUNTIME_DRIVER=process, default timings), so each pod
 * is the compiled runtime (dist/semantic-layer/main.js) forked by the server.
 *
 * 1. Start: from `POST /build/api/v1/deployments` to its production pod Running and ready (the
 *    starter build, then the pod), median of BENCH_STARTS (default 5) deployments created one
 *    after the other. A pod starts at the first reconcile after its build, so built→Running
 *    includes the wait for the supervisor's next tick (up to RUNTIME_TICK_MS). Floor: forking a
 *    bare Node.js process that listens on a port and says so over IPC, which any start includes.
 * 2. Memory: each runtime process's RSS (VmRSS in /proc/<pid>/status), beside the RSS of that
 *    bare Node.js process.
 * 3. Capacity: how many runtimes this machine holds while the API's latency stays within 2x of its
 *    idle latency. The request is a cheap authenticated GET that costs the same at every step
 *    (`GET /api/v1/deployments/<first>/pods`), sent one at a time (BENCH_REQUESTS, default 1000,
 *    after 300 untimed) on a kept-alive connection; the floor is its latency with one runtime,
 *    after 3,000 untimed requests. Deployments are added BENCH_STEP (default 10) at a time up to
 *    BENCH_MAX_RUNTIMES (default 100), or until the median latency passes 2x the floor's, or less
 *    than 10% of the memory is available.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { client, freePort, percentile, median, sleep, waitFor, type Client, type Json } from './bench/https-client.js';

const STARTS = Number(process.env.BENCH_STARTS ?? 5);
const STEP = Number(process.env.BENCH_STEP ?? 10);
const MAX_RUNTIMES = Number(process.env.BENCH_MAX_RUNTIMES ?? 100);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1000);
const WARMUP_REQUESTS = 300;
/** Before the floor, on a server that has just started: enough for its JIT to settle, so later rows are not compared with a cold server. */
const FLOOR_WARMUP_REQUESTS = 3_000;
const TARGET_RATIO = 2;
const MIN_AVAILABLE_MEMORY = 0.1;
/** After a step's pods are Running: their first health checks and log writes are over. */
const SETTLE_MS = 2_000;
/** How often a start is polled: the granularity of the times measured. */
const POLL_MS = 20;

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const log = (line: string) => process.stdout.write(`${line}\n`);

function rssMiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

function availableMemory(): { availableMiB: number; share: number } {
  const info = fs.readFileSync('/proc/meminfo', 'utf8');
  const kib = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(info)?.[1] ?? 0);
  return { availableMiB: kib('MemAvailable') / 1024, share: kib('MemAvailable') / kib('MemTotal') };
}

/** The runtimes the server forked: its children running the runtime program. */
function runtimePids(serverPid: number): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== serverPid) continue;
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('semantic-layer/main.')) pids.push(Number(entry));
    } catch {
      // Ended while being read.
    }
  }
  return pids;
}

/** The floor of a runtime's start and memory: a bare Node.js process that listens on a port and says so over IPC. */
async function bareProcess(): Promise<{ startMs: number; rss: number; child: ChildProcess }> {
  const code =
    "require('node:http').createServer((q, s) => s.end()).listen(0, '127.0.0.1', function () { process.send({ type: 'listening', port: this.address().port }); }); process.on('disconnect', () => process.exit(0));";
  const started = performance.now();
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (exitCode) => reject(new Error(`the bare process exited (${exitCode})`)));
  });
  const startMs = performance.now() - started;
  await sleep(200);
  return { startMs, rss: rssMiB(child.pid as number), child };
}

interface Started {
  id: number;
  createdMs: number;
  builtMs: number;
  runningMs: number;
}

/** Creates a deployment and waits for its production pod to be Running and ready. */
async function createDeployment(api: Client, name: string, timed: boolean): Promise<Started> {
  const started = performance.now();
  const created = await api.json('POST', '/build/api/v1/deployments', { name });
  if (created.status !== 200 && created.status !== 201) throw new Error(`creating ${name}: ${created.status} ${JSON.stringify(created.body)}`);
  const id = created.body.id as number;
  const createdMs = performance.now() - started;
  let builtMs = Number.NaN;
  if (timed) {
    builtMs = await waitFor(
      async () => {
        const builds = (await api.json('GET', `/api/v1/deployments/${id}/builds`)).body.items as Json[] | undefined;
        const build = builds?.[0];
        if (build?.status === 'failed') throw new Error(`the starter build of ${id} failed`);
        return build?.status === 'success' ? performance.now() - started : undefined;
      },
      `the starter build of deployment ${id}`,
      120_000,
      POLL_MS,
    );
  }
  return { id, createdMs, builtMs, runningMs: timed ? await running(api, id, started) : Number.NaN };
}

function running(api: Client, id: number, since: number): Promise<number> {
  return waitFor(
    async () => {
      const [pod] = (await api.json('GET', `/api/v1/deployments/${id}/pods`)).body.items as Json[];
      return pod?.status === 'Running' && pod.ready === true ? performance.now() - since : undefined;
    },
    `the pod of deployment ${id}`,
    120_000,
    POLL_MS,
  );
}

/** Sequential requests, each timed alone: p50 and p99 in ms. */
async function latency(api: Client, url: string, warmup = WARMUP_REQUESTS): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < warmup; i++) await api.request('GET', url);
  const samples: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const started = performance.now();
    const answer = await api.request('GET', url);
    samples.push(performance.now() - started);
    if (answer.status !== 200) throw new Error(`${url} answered ${answer.status}`);
  }
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

async function main(): Promise<void> {
  execFileSync('npx', ['tsc', '-b', 'packages/server'], { cwd: root, stdio: 'inherit' });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-bench-runtime-'));
  const adminKey = generateApiKey();
  const port = await freePort();
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(port),
    DATA_DIR: dataDir,
    ADMIN_API_KEY: adminKey,
    RATE_LIMIT_PER_MINUTE: '0',
    RUNTIME_DRIVER: 'process',
    DATABASE_URL: '',
  };
  for (const name of Object.keys(env)) if (name.startsWith('RUNTIME_') && name !== 'RUNTIME_DRIVER') delete env[name];
  delete env.LOG_LEVEL;
  const logFile = fs.openSync(path.join(dataDir, 'server.log'), 'a');
  const server = spawn(process.execPath, [path.join(root, 'packages/server/dist/main.js')], { env, stdio: ['ignore', logFile, logFile] });
  const serverPid = server.pid as number;
  let api: Client | undefined;
  try {
    await waitFor(async () => (fs.existsSync(path.join(dataDir, 'tls', 'localhost.crt')) ? true : undefined), 'the certificate', 60_000, 100);
    const ca = fs.readFileSync(path.join(dataDir, 'tls', 'localhost.crt'), 'utf8');
    api = client(`https://localhost:${port}`, ca, adminKey);
    const a = api;
    await waitFor(async () => ((await a.request('GET', '/healthz')).status === 200 ? true : undefined), 'the server', 60_000, 100);
    const idleServerRss = rssMiB(serverPid);
    log(
      `bench:runtime  node=${process.version}  cores=${os.availableParallelism()}  ${os.cpus()[0]?.model ?? ''}  memory=${Math.round(os.totalmem() / 2 ** 20)} MiB`,
    );
    log('server: dist/main.js, SQLite, RUNTIME_DRIVER=process, default timings (tick 2 s, health checks every 5 s)');

    // Floors: a bare Node.js process's start and RSS, median of the same number of starts.
    const bares: Array<{ startMs: number; rss: number }> = [];
    for (let i = 0; i < STARTS; i++) {
      const b = await bareProcess();
      bares.push(b);
      b.child.kill('SIGKILL');
    }

    // 1. Start, one deployment at a time; the API's idle latency (part 3's floor) is measured
    // with the first one's runtime alone, before the others.
    const starts: Started[] = [await createDeployment(api, 'bench start 0', true)];
    const url = `/api/v1/deployments/${starts[0]!.id}/pods`;
    await sleep(SETTLE_MS);
    const floor = await latency(api, url, FLOOR_WARMUP_REQUESTS);
    const floorRow = { server: rssMiB(serverPid), runtimes: runtimePids(serverPid).map(rssMiB), memory: availableMemory() };
    for (let i = 1; i < STARTS; i++) starts.push(await createDeployment(api, `bench start ${i}`, true));
    const floorStart = median(bares.map((b) => b.startMs));
    const startMedian = median(starts.map((s) => s.runningMs));
    log('');
    log(`1. start: POST /build/api/v1/deployments to a Running, ready pod, ${STARTS} deployments one after the other`);
    log(`${'deployment'.padEnd(14)}${'POST ms'.padStart(10)}${'built ms'.padStart(10)}${'Running ms'.padStart(12)}${'built→Running'.padStart(15)}`);
    const startRow = (label: string, s: Omit<Started, 'id'>) =>
      log(
        `${label.padEnd(14)}${s.createdMs.toFixed(0).padStart(10)}${s.builtMs.toFixed(0).padStart(10)}${s.runningMs.toFixed(0).padStart(12)}${(s.runningMs - s.builtMs).toFixed(0).padStart(15)}`,
      );
    for (const s of starts) startRow(String(s.id), s);
    startRow('median', { createdMs: median(starts.map((s) => s.createdMs)), builtMs: median(starts.map((s) => s.builtMs)), runningMs: startMedian });
    log("ms from the POST; built: the starter build succeeded; Running: the pod Running and ready (the median row is each column's median)");
    log("built→Running includes the wait for the supervisor's next tick (every 2 s), when the pod is started");
    log(
      `floor: fork a bare Node.js process until it listens and says so over IPC, median ${floorStart.toFixed(0)} ms; start/floor ${(startMedian / floorStart).toFixed(1)}x`,
    );

    // 2. Memory per runtime.
    await sleep(SETTLE_MS);
    const rssOf = () => runtimePids(serverPid).map(rssMiB);
    const rss = rssOf();
    const floorRss = median(bares.map((b) => b.rss));
    log('');
    log(`2. memory: VmRSS of each runtime process (${rss.length} running the starter model)`);
    log(
      `runtime median ${median(rss).toFixed(1)} MiB (min ${Math.min(...rss).toFixed(1)}, max ${Math.max(...rss).toFixed(1)}); floor: a bare Node.js process listening on a port ${floorRss.toFixed(1)} MiB; runtime/floor ${(median(rss) / floorRss).toFixed(1)}x`,
    );
    log(`server process: ${idleServerRss.toFixed(1)} MiB before any deployment, ${rssMiB(serverPid).toFixed(1)} MiB with ${rss.length} runtimes`);

    // 3. Capacity: the API's latency as runtimes are added.
    log('');
    log(
      `3. capacity: GET /api/v1/deployments/<first>/pods, ${REQUESTS} sequential requests per row after ${WARMUP_REQUESTS} untimed; target: p50 within ${TARGET_RATIO}x of the floor's`,
    );
    log(
      `${'runtimes'.padEnd(10)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'p50/floor'.padStart(11)}${'p99/floor'.padStart(11)}${'runtimes MiB'.padStart(14)}${'server MiB'.padStart(12)}${'available MiB'.padStart(15)}${'step s'.padStart(9)}`,
    );
    const total = (values: number[]) => values.reduce((sum, v) => sum + v, 0);
    const row = (count: number, l: { p50: number; p99: number }, stepSeconds: number | null) => {
      const sizes = rssOf();
      const memory = availableMemory();
      log(
        `${String(count).padEnd(10)}${l.p50.toFixed(2).padStart(9)}${l.p99.toFixed(2).padStart(9)}${`${(l.p50 / floor.p50).toFixed(2)}x`.padStart(11)}${`${(l.p99 / floor.p99).toFixed(2)}x`.padStart(11)}` +
          `${total(sizes).toFixed(0).padStart(14)}${rssMiB(serverPid).toFixed(0).padStart(12)}${memory.availableMiB.toFixed(0).padStart(15)}${(stepSeconds === null ? '' : stepSeconds.toFixed(1)).padStart(9)}`,
      );
      return memory;
    };
    log(
      `${'1'.padEnd(10)}${floor.p50.toFixed(2).padStart(9)}${floor.p99.toFixed(2).padStart(9)}${'1.00x'.padStart(11)}${'1.00x'.padStart(11)}` +
        `${total(floorRow.runtimes).toFixed(0).padStart(14)}${floorRow.server.toFixed(0).padStart(12)}${floorRow.memory.availableMiB.toFixed(0).padStart(15)}`,
    );
    let count = runtimePids(serverPid).length;
    let held = count;
    let stoppedBy = `the cap of ${MAX_RUNTIMES} runtimes`;
    while (count < MAX_RUNTIMES) {
      const target = Math.min(MAX_RUNTIMES, count < STEP ? STEP : count + STEP);
      const stepStarted = performance.now();
      const ids: number[] = [];
      for (let i = count; i < target; i++) ids.push((await createDeployment(api, `bench ${i}`, false)).id);
      for (const id of ids) await running(api, id, stepStarted);
      await waitFor(async () => (runtimePids(serverPid).length >= target ? true : undefined), `${target} runtime processes`, 120_000, POLL_MS);
      const stepSeconds = (performance.now() - stepStarted) / 1000;
      count = target;
      await sleep(SETTLE_MS);
      const l = await latency(api, url);
      const memory = row(count, l, stepSeconds);
      if (l.p50 > TARGET_RATIO * floor.p50) {
        stoppedBy = `p50 over ${TARGET_RATIO}x the floor's`;
        break;
      }
      held = count;
      if (memory.share < MIN_AVAILABLE_MEMORY) {
        stoppedBy = `less than ${MIN_AVAILABLE_MEMORY * 100}% of the memory available`;
        break;
      }
    }
    log(
      `floor: the first row, the API idle with one runtime (measured before the other starts of part 1). step s: adding the row's deployments (one POST after another) until all their pods are Running; rows measured ${SETTLE_MS / 1000} s after`,
    );
    log(`held ${held} runtimes with p50 within ${TARGET_RATIO}x of the floor (stopped by ${stoppedBy})`);
  } finally {
    api?.close();
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
