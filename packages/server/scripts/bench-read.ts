/**
 * `npm run bench:read`: the API's hot GETs under load, each beside its floor measured in the same
 * run. The server runs as users run it (`node packages/server/dist/main.js`: HTTPS, logging at its
 * default level to a file, rate limiting on with a budget the run cannot reach) over the
 * benchmarks' workspace. The floor is a bare Fastify TLS server (scripts/bench/floor-server.ts)
 * answering each URL with the very bytes the API answered, from memory. autocannon drives both
 * with the same connections for the same time.
 *
 * SQLite in a temporary directory by default; with DATABASE_URL, PostgreSQL in a temporary schema.
 * BENCH_SECONDS (default 10) per target, BENCH_CONNECTIONS (default 50), BENCH_LARGE=0 skips the
 * second deployment of 1,000,000 items (BENCH_LARGE_ITEMS changes its size). BENCH_ONLY=<regex>
 * runs the targets whose label matches; BENCH_PROFILE=<dir> writes the server's CPU profile there
 * (open it in Chrome DevTools or speedscope) to see where a request's time goes.
 * and then prints, from that profile, where each target's time per request went under load
 * (scripts/bench/profile-breakdown.ts).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { migrate, storeFor, type Store } from '../src/db/database.js';
import { breakdown, type Window } from './bench/profile-breakdown.js';
import { seed, stamp, temporarySchema } from './bench/workspace-seed.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP_SECONDS = Math.min(3, SECONDS);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ITEMS_PER_TYPE = 50_000;
const LARGE_ITEMS = process.env.BENCH_LARGE === '0' ? 0 : Number(process.env.BENCH_LARGE_ITEMS ?? 1_000_000);
const SCIM_USERS = 1000;

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const log = (line: string) => process.stdout.write(`${line}\n`);

interface Target {
  label: string;
  url: string;
  /** The 100k-item target a 1M-item one is compared with. */
  compareTo?: string;
}
interface Measure {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** One request on a connection of its own: a kept-alive socket idle through a long seed may be closed by the server just as it is reused. */
function get(base: string, url: string, ca: string, key: string): Promise<{ status: number; contentType: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = https.get(new URL(url, base), { ca, agent: false, headers: { authorization: `Bearer ${key}` } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('end', () =>
        resolve({ status: response.statusCode ?? 0, contentType: String(response.headers['content-type'] ?? ''), body: Buffer.concat(chunks) }),
      );
    });
    request.on('error', reject);
  });
}

async function waitFor(check: () => Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function rssMiB(child: ChildProcess): number {
  const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

async function load(base: string, url: string, key: string | null, seconds: number): Promise<Measure> {
  const result = await autocannon({
    url: new URL(url, base).toString(),
    connections: CONNECTIONS,
    duration: seconds,
    headers: key ? { authorization: `Bearer ${key}` } : {},
  });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx + result.errors };
}

/** 1,000 users provisioned by an identity provider, for the SCIM list (which shows only those). */
async function seedUsers(store: Store, tenantId: number): Promise<void> {
  const at = stamp();
  const rows = Array.from({ length: SCIM_USERS }, (_, i) => ({
    tenant_id: tenantId,
    email: `user${i}@bench.example`,
    first_name: `User ${i}`,
    role: 'VIEWER' as const,
    deactivated_at: null,
    created_at: at,
    updated_at: at,
  }));
  for (let i = 0; i < rows.length; i += 500) {
    const ids = await store.db
      .insertInto('users')
      .values(rows.slice(i, i + 500))
      .returning('id')
      .execute();
    const document = (n: number) =>
      JSON.stringify({ externalId: `ext-${n}`, name: { givenName: `User ${n}`, familyName: 'Bench' }, displayName: `User ${n} Bench` });
    await store.db
      .insertInto('scim_users')
      .values(ids.map(({ id }, j) => ({ user_id: id, tenant_id: tenantId, document: document(i + j), created_at: at })))
      .execute();
  }
}

async function deploymentWith(store: Store, tenantId: number, name: string, itemsPerType: number) {
  const deployment = await store.db
    .insertInto('deployments')
    .values({ tenant_id: tenantId, name, settings: '{}', created_by: null, created_at: stamp(), updated_at: stamp() })
    .returning('id')
    .executeTakeFirstOrThrow();
  const started = performance.now();
  const seeded = await seed(store, tenantId, deployment.id, itemsPerType);
  log(
    `seeded deployment ${deployment.id} "${name}": ${seeded.levels.flat().length} folders, ${seeded.workbooks.length} workbooks, ${seeded.reports.length} reports in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return { id: deployment.id, seeded };
}

function targets(deploymentId: number, workbookId: number, reportId: number, folderId: number, suffix = ''): Target[] {
  const d = `/api/v1/deployments/${deploymentId}`;
  return [
    { label: `deployments list${suffix}`, url: '/api/v1/deployments' },
    { label: `workbook by id${suffix}`, url: `${d}/workbooks/${workbookId}` },
    { label: `report by id${suffix}`, url: `${d}/reports/${reportId}` },
    { label: `folders first=100${suffix}`, url: `${d}/folders?first=100` },
    { label: `workspace first=100${suffix}`, url: `${d}/workspace?first=100&folderId=${folderId}` },
    { label: `workspace search${suffix}`, url: `${d}/workspace?search=Workbook%201234&first=100` },
    { label: `reports sortBy=name${suffix}`, url: `${d}/reports?first=100&sortBy=name` },
    { label: `SCIM Users count=100${suffix}`, url: '/api/scim/v2/Users?count=100' },
  ];
}

async function main() {
  execFileSync('npx', ['tsc', '-b', 'packages/server'], { cwd: root, stdio: 'inherit' });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-bench-read-'));
  const schema = await temporarySchema(process.env.DATABASE_URL);
  const adminKey = generateApiKey();
  const port = await freePort();
  const env = {
    ...process.env,
    PORT: String(port),
    DATA_DIR: dataDir,
    ADMIN_API_KEY: adminKey,
    RATE_LIMIT_PER_MINUTE: '100000000',
    DATABASE_URL: schema?.url ?? '',
  };
  delete (env as Record<string, string | undefined>).LOG_LEVEL;
  const logFile = fs.openSync(path.join(dataDir, 'server.log'), 'a');
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_PROFILE)}`] : [];
  const server = spawn(process.execPath, [...profile, path.join(root, 'packages/server/dist/main.js')], { env, stdio: ['ignore', logFile, logFile] });
  let floor: ChildProcess | undefined;
  /** When each target's measured API run took place, for the profile's breakdown. */
  const windows: Window[] = [];
  const base = `https://localhost:${port}`;
  try {
    const ca = await (async () => {
      await waitFor(async () => fs.existsSync(path.join(dataDir, 'tls', 'localhost.crt')), 'the certificate');
      return fs.readFileSync(path.join(dataDir, 'tls', 'localhost.crt'), 'utf8');
    })();
    await waitFor(async () => (await get(base, '/healthz', ca, adminKey)).status === 200, 'the server');
    const store = storeFor({ databaseUrl: schema?.url ?? null, dataDir });
    await migrate(store);
    const tenant = await store.db.selectFrom('tenants').select('id').where('slug', '=', 'default').executeTakeFirstOrThrow();
    const primary = await deploymentWith(store, tenant.id, 'bench', ITEMS_PER_TYPE);
    await seedUsers(store, tenant.id);
    const large = LARGE_ITEMS > 0 ? await deploymentWith(store, tenant.id, 'bench-large', LARGE_ITEMS / 2) : null;
    // What autovacuum does within a minute of a bulk load: PostgreSQL plans a folder's page by its
    // statistics (migration 0007), and a benchmark started at once would measure the first minute.
    if (store.dialect === 'postgres') await sql`analyze`.execute(store.db);
    await store.db.destroy();
    const rssAfterSeed = rssMiB(server);

    // Items deep in the tree (level 10), so a view walks the longest ancestry; a level-9 folder's page.
    const pick = (d: { seeded: Awaited<ReturnType<typeof seed>> }) => ({
      workbook: d.seeded.workbooks[d.seeded.workbooks.length - 1]!,
      report: d.seeded.reports[d.seeded.reports.length - 1]!,
      folder: d.seeded.levels[8]![0]!,
    });
    const p = pick(primary);
    let list = targets(primary.id, p.workbook, p.report, p.folder);
    if (large) {
      // The same pages of the 1M-item deployment, as many entries long as the 100k-item ones: its
      // folders hold ten times the items and its search matches ten times as many, and a longer
      // page would measure the page, not the deployment's size.
      const q = pick(large);
      for (const target of targets(large.id, q.workbook, q.report, q.folder, ' (1M)').filter((t) => /workspace|reports sortBy/.test(t.label))) {
        const primaryTarget = list.find((t) => t.label === target.label.replace(' (1M)', ''))!;
        const entries = (JSON.parse((await get(base, primaryTarget.url, ca, adminKey)).body.toString('utf8')) as { items: unknown[] }).items.length;
        const label = entries === 100 ? target.label : `${target.label.replace(' first=100', '').replace(' (1M)', '')} (1M, first=${entries})`;
        list.push({ label, url: target.url.replace('first=100', `first=${entries}`), compareTo: primaryTarget.label });
      }
    }
    if (process.env.BENCH_ONLY) list = list.filter((t) => new RegExp(process.env.BENCH_ONLY!).test(t.label));

    // Fetch every body once; the floor answers with exactly these bytes.
    const routes = [];
    for (const target of list) {
      const answer = await get(base, target.url, ca, adminKey);
      if (answer.status !== 200) throw new Error(`${target.url} answered ${answer.status}: ${answer.body.toString('utf8').slice(0, 300)}`);
      routes.push({ url: target.url, contentType: answer.contentType, body: answer.body.toString('base64'), bytes: answer.body.length });
    }
    const routesFile = path.join(dataDir, 'floor-routes.json');
    fs.writeFileSync(routesFile, JSON.stringify({ cert: ca, key: fs.readFileSync(path.join(dataDir, 'tls', 'localhost.key'), 'utf8'), routes }));
    floor = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'bench/floor-server.ts'), routesFile], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const floorPort = await new Promise<number>((resolve, reject) => {
      floor!.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
      floor!.once('exit', (code) => reject(new Error(`floor server exited with ${code}`)));
    });
    const floorBase = `https://localhost:${floorPort}`;

    log('');
    log(
      `bench:read  dialect=${schema ? 'postgres' : 'sqlite'}  node=${process.version}  cores=${os.availableParallelism()}  ${CONNECTIONS} connections, ${SECONDS} s per target after ${WARMUP_SECONDS} s warm-up, TLS`,
    );
    log(
      `${'target'.padEnd(30)}${'bytes'.padStart(8)}${'API req/s'.padStart(11)}${'p50'.padStart(6)}${'p99'.padStart(6)}${'floor req/s'.padStart(13)}${'p50'.padStart(6)}${'p99'.padStart(6)}${'API/floor'.padStart(11)}`,
    );
    const measured: Array<{ target: Target; api: Measure; bare: Measure }> = [];
    for (const [index, target] of list.entries()) {
      await load(base, target.url, adminKey, WARMUP_SECONDS);
      const from = process.hrtime.bigint();
      const api = await load(base, target.url, adminKey, SECONDS);
      windows.push({ label: target.label, from, to: process.hrtime.bigint(), requests: api.rps * SECONDS });
      await load(floorBase, target.url, null, WARMUP_SECONDS);
      const bare = await load(floorBase, target.url, null, SECONDS);
      const ratio = api.rps / bare.rps;
      measured.push({ target, api, bare });
      log(
        `${target.label.padEnd(30)}${String(routes[index]!.bytes).padStart(8)}${api.rps.toFixed(0).padStart(11)}${String(api.p50).padStart(6)}${String(api.p99).padStart(6)}` +
          `${bare.rps.toFixed(0).padStart(13)}${String(bare.p50).padStart(6)}${String(bare.p99).padStart(6)}${`${(ratio * 100).toFixed(1)}%`.padStart(11)}`,
      );
      if (api.non2xx > 0 || bare.non2xx > 0)
        log(`  warning: ${api.non2xx} API and ${bare.non2xx} floor requests were not 2xx, failed or timed out (autocannon gives up after 10 s)`);
    }
    log(`latencies in ms; API/floor is the API's req/s as a share of the floor's`);
    for (const large of measured.filter((m) => m.target.compareTo !== undefined)) {
      const primary = measured.find((m) => m.target.label === large.target.compareTo);
      if (primary) log(`${large.target.label}: ${(primary.api.rps / large.api.rps).toFixed(2)}x the time per request of ${primary.target.label} (100k items)`);
    }
    log(`server RSS: ${rssAfterSeed.toFixed(0)} MiB after seeding, ${rssMiB(server).toFixed(0)} MiB after the run`);
  } catch (error) {
    // The server's own account of what went wrong, before its directory goes.
    const serverLog = fs.readFileSync(path.join(dataDir, 'server.log'), 'utf8');
    log(`server log (last lines):\n${serverLog.split('\n').slice(-15).join('\n')}`);
    throw error;
  } finally {
    floor?.kill();
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
    // The profile is written as the server exits.
    if (process.env.BENCH_PROFILE && windows.length > 0) breakdown(path.resolve(process.env.BENCH_PROFILE), server.pid!, windows, log);
    await schema?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
