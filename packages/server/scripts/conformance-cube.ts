/**
 * `npm run conformance:cube`: a differential conformance run of this product's data API against
 * Cube Core (cube.dev), whose answers the data plane must match.
 *
 * 1. Cube Core 1.7.x (@cubejs-backend/server-core, api-gateway, postgres-driver) is installed once
 *    into .cache/cube-core/ (ignored by git), with CUBESTORE_SKIP_POST_INSTALL=true; its native
 *    module is absent, and conformance-cube/cube-runner.cjs replaces the three entry points the
 *    REST API needs in JavaScript. Cube runs in a child process on a free loopback port with the
 *    JavaScript SQL planner (CUBEJS_TESSERACT_SQL_PLANNER=false).
 * 2. The corpus dataset (conformance-cube/dataset.ts) is written to the schema cube_conformance of
 *    PostgreSQL at CONFORMANCE_PG_URL (default postgres://postgres@127.0.0.1:5432/test), dropped
 *    at the end (CONFORMANCE_KEEP=1 keeps it).
 * 3. This server runs as users run it (dist/main.js, its store on SQLite in a temporary
 *    directory, RUNTIME_DRIVER=process) with one deployment whose variables name that PostgreSQL
 *    (DB_TYPE=postgres, DB_URL) and whose model is the corpus model (conformance-cube/model/*.yml,
 *    the very files Cube reads; their sql_table names the schema).
 * 4. Each query of the corpus (conformance-cube/queries.ts) goes to both engines' /v1/load with
 *    queryType=multi as each caller: `all` (security context {region: '*'}, which the customers
 *    cube's access policy lets see every row), `eu` and `us` (one region's customers), and `none`
 *    (an empty security context). Cube reads the context from an HS256 JWT; this server from a
 *    data-API token minted with that security_context.
 * 5. Answers are compared: numbers numerically (Cube's driver answers int8 and numeric as
 *    strings), times normalised to YYYY-MM-DDTHH:mm:ss.SSS, rows in order where the query's order
 *    is total and as sets otherwise, `total` numerically, errors against errors (both refuse:
 *    agreement). Prints the agreement per feature and writes every disagreement to
 *    .cache/conformance-cube-report.json.
 * 6. Latency (median and p95 per feature, each request timed by the client, the two engines by
 *    turns) and the resident memory of each engine (Cube's process; this server's runtime
 *    process, and the server beside it), sampled through the run.
 *
 * CONFORMANCE_ONLY=<regex> runs the queries whose feature or id matches. Exits 0 whatever the
 * agreement: this measures, it is not a gate.
 */
import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { SignJWT } from 'jose';
import pg from 'pg';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { STARTER_MODEL_PATH } from '../src/areas/data-model/starter-model.js';
import { datasetStatements, ORDERS, SCHEMA } from './conformance-cube/dataset.js';
import { corpus, type CorpusQuery } from './conformance-cube/queries.js';
import { client, freePort, median, percentile, sleep, waitFor, type Json } from './bench/https-client.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const cacheDir = path.join(root, '.cache');
const cubeDir = path.join(cacheDir, 'cube-core');
const modelDir = path.join(here, 'conformance-cube', 'model');
const reportFile = path.join(cacheDir, 'conformance-cube-report.json');
const PG_URL = process.env.CONFORMANCE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const CUBE_VERSION = '1.7.x';
const log = (line: string) => process.stdout.write(`${line}\n`);

/** The callers: a name and the security context both engines get. */
const CALLERS: Array<{ name: string; context: Record<string, unknown> }> = [
  { name: 'all', context: { region: '*' } },
  { name: 'eu', context: { region: 'EU' } },
  { name: 'us', context: { region: 'US' } },
  { name: 'none', context: {} },
];

interface Answer {
  status: number;
  ms: number;
  body: Json;
}

/** Installs Cube Core into .cache/cube-core once. */
function installCube(): void {
  if (fs.existsSync(path.join(cubeDir, 'node_modules/@cubejs-backend/server-core/package.json'))) return;
  log(`installing Cube Core ${CUBE_VERSION} into ${path.relative(root, cubeDir)} (once)`);
  fs.mkdirSync(cubeDir, { recursive: true });
  const packages = ['server-core', 'api-gateway', 'postgres-driver'].map((p) => `@cubejs-backend/${p}@${CUBE_VERSION}`);
  execFileSync('npm', ['install', '--prefix', cubeDir, '--no-audit', '--no-fund', '--loglevel=error', ...packages, 'express'], {
    stdio: 'inherit',
    env: { ...process.env, CUBESTORE_SKIP_POST_INSTALL: 'true' },
  });
}

function cubeVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(cubeDir, 'node_modules/@cubejs-backend/server-core/package.json'), 'utf8')) as { version: string }).version;
}

async function writeDataset(): Promise<void> {
  const db = new pg.Client(PG_URL);
  await db.connect();
  try {
    for (const statement of datasetStatements()) await db.query(statement);
  } finally {
    await db.end();
  }
}

async function dropDataset(): Promise<void> {
  const db = new pg.Client(PG_URL);
  await db.connect();
  try {
    await db.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  } finally {
    await db.end();
  }
}

/** A POST of JSON over a kept-alive connection with a raw Authorization value. */
function poster(agent: http.Agent | https.Agent, base: string) {
  return (url: string, authorization: string, body: unknown, method = 'POST'): Promise<Answer> => {
    const payload = body === undefined ? '' : JSON.stringify(body);
    const started = performance.now();
    const target = new URL(url, base);
    const lib = target.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = lib.request(
        target,
        {
          method,
          agent,
          headers: {
            authorization,
            ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.once('end', () => {
            const ms = performance.now() - started;
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: Json;
            try {
              parsed = text ? (JSON.parse(text) as Json) : {};
            } catch {
              parsed = { error: text.slice(0, 500) };
            }
            resolve({ status: res.statusCode ?? 0, ms, body: parsed });
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  };
}

/** Retries a load answered "Continue wait" (both engines answer so while a query runs long). */
async function load(post: ReturnType<typeof poster>, url: string, authorization: string, query: unknown): Promise<Answer> {
  const started = performance.now();
  for (let i = 0; ; i++) {
    const answer = await post(url, authorization, { query, queryType: 'multi' });
    if (answer.body.error !== 'Continue wait' || i > 100) return { ...answer, ms: performance.now() - started };
  }
}

/** Cube Core in a child process: its port and the process. */
async function startCube(secret: string): Promise<{ child: ChildProcess; port: number; logFile: string }> {
  const port = await freePort();
  const logFile = path.join(cacheDir, 'cube-runner.log');
  const out = fs.openSync(logFile, 'w');
  // Cube reads schemaPath relative to its working directory.
  const child = fork(path.join(here, 'conformance-cube', 'cube-runner.cjs'), [], {
    cwd: path.dirname(modelDir),
    env: {
      ...process.env,
      CUBE_CORE_DIR: cubeDir,
      CUBE_SCHEMA_PATH: path.basename(modelDir),
      CUBE_API_SECRET: secret,
      CUBE_PORT: String(port),
      CUBE_LOG: '1',
      NODE_ENV: 'production',
    },
    stdio: ['ignore', out, out, 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`Cube Core exited (${code}); see ${logFile}`)));
  });
  return { child, port, logFile };
}

/** The resident set of a process, in MiB (Linux /proc), or undefined. */
function rssMiB(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /VmRSS:\s+(\d+)/.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}

/** The child processes of `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) found.push(Number(entry));
    } catch {
      // gone
    }
  }
  return found;
}

// ---------------------------------------------------------------------------------------------
// Comparison

const TIME = /^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d(:?\d\d)?)?$/;

/** A value in a form both engines' spellings of it share. */
export function normalise(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return numberKey(value);
  if (typeof value === 'string') {
    const time = TIME.exec(value);
    if (time) return `${time[1]}T${time[2]}${(time[3] ?? '.000').padEnd(4, '0').slice(0, 4)}${time[4] && time[4] !== 'Z' ? time[4] : ''}`;
    if (value.trim() !== '' && /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(value)) return numberKey(Number(value));
    return JSON.stringify(value);
  }
  return JSON.stringify(value);
}

function numberKey(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n)) return String(n);
  // Twelve significant digits: a numeric's exact decimal against a double.
  return String(Number(n.toPrecision(12)));
}

function membersOf(query: Json): string[] {
  const members = [...((query.measures as string[] | undefined) ?? []), ...((query.dimensions as string[] | undefined) ?? [])];
  for (const td of (query.timeDimensions as Json[] | undefined) ?? []) if (td.granularity) members.push(`${td.dimension}.${td.granularity}`);
  return [...new Set(members)];
}

function rowKey(row: Json, members: string[]): string {
  return members.map((m) => normalise(row[m])).join(' | ');
}

interface Verdict {
  agreed: boolean;
  reason?: string;
  firstDifference?: { index: number; cube: unknown; ours: unknown };
}

function errorOf(answer: Answer): string | undefined {
  if (answer.status !== 200 || typeof answer.body.error === 'string') return String(answer.body.error ?? `HTTP ${answer.status}`);
  if (!Array.isArray(answer.body.results)) return `no results (HTTP ${answer.status})`;
  return undefined;
}

export function compare(item: CorpusQuery, cube: Answer, ours: Answer): Verdict {
  const cubeError = errorOf(cube);
  const ourError = errorOf(ours);
  if (cubeError !== undefined && ourError !== undefined) return { agreed: true, reason: 'both refuse' };
  if (cubeError !== undefined) return { agreed: false, reason: `Cube refuses (${cubeError.slice(0, 200)}), ours answers` };
  if (ourError !== undefined) return { agreed: false, reason: `ours refuses (${ourError.slice(0, 200)}), Cube answers` };
  const cubeResults = cube.body.results as Json[];
  const ourResults = ours.body.results as Json[];
  if (cubeResults.length !== ourResults.length) return { agreed: false, reason: `${cubeResults.length} results from Cube, ${ourResults.length} from ours` };
  for (let r = 0; r < cubeResults.length; r++) {
    const c = cubeResults[r]!;
    const o = ourResults[r]!;
    const members = membersOf((c.query as Json | undefined) ?? item.query);
    const cRows = ((c.data as Json[] | undefined) ?? []).map((row) => rowKey(row, members));
    const oRows = ((o.data as Json[] | undefined) ?? []).map((row) => rowKey(row, members));
    if ((item.query as Json).total) {
      const ct = c.total === null || c.total === undefined ? null : Number(c.total);
      const ot = o.total === null || o.total === undefined ? null : Number(o.total);
      if (ct !== ot) return { agreed: false, reason: `total: Cube ${ct}, ours ${ot}` };
    }
    const a = item.ordered ? cRows : [...cRows].sort();
    const b = item.ordered ? oRows : [...oRows].sort();
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n; i++) {
      if (a[i] !== b[i]) {
        return {
          agreed: false,
          reason: `${cRows.length} rows from Cube, ${oRows.length} from ours${cRows.length === oRows.length ? '; a row differs' : ''}${item.ordered ? ' (in order)' : ' (as sets)'}${cubeResults.length > 1 ? ` in result ${r}` : ''}`,
          firstDifference: { index: i, cube: a[i] ?? null, ours: b[i] ?? null },
        };
      }
    }
  }
  return { agreed: true };
}

/** /v1/meta as a comparable list: each cube and view with its type and title, and its members with their types, titles and visibility. */
export function metaShape(body: Json): string[] {
  const lines: string[] = [];
  for (const cube of (body.cubes as Json[] | undefined) ?? []) {
    lines.push(`${cube.name} ${cube.type ?? 'cube'} "${cube.title}"`);
    for (const kind of ['measures', 'dimensions', 'segments'] as const) {
      for (const m of (cube[kind] as Json[] | undefined) ?? [])
        lines.push(`  ${kind} ${m.name} ${m.type ?? ''} "${m.title}" "${m.shortTitle}"${m.isVisible === false ? ' hidden' : ''}`);
    }
  }
  return lines.sort();
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const startedAt = performance.now();
  installCube();
  execFileSync('npx', ['tsc', '-b', 'packages/server'], { cwd: root, stdio: 'inherit' });
  const only = process.env.CONFORMANCE_ONLY ? new RegExp(process.env.CONFORMANCE_ONLY) : null;
  const items = corpus().filter((q) => only === null || only.test(q.feature) || only.test(q.id));
  log(
    `conformance:cube  node=${process.version}  cores=${os.availableParallelism()}  Cube Core ${cubeVersion()}  ${items.length} queries x ${CALLERS.length} callers`,
  );

  await writeDataset();
  log(`dataset: schema ${SCHEMA} at ${PG_URL.replace(/\/\/[^@]*@/, '//')}`);

  const cubeSecret = generateApiKey();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-conformance-cube-'));
  let cube: Awaited<ReturnType<typeof startCube>> | undefined;
  let server: ChildProcess | undefined;
  const agents: Array<http.Agent | https.Agent> = [];
  const rss = { cube: [] as number[], runtime: [] as number[], server: [] as number[] };
  let sampler: NodeJS.Timeout | undefined;
  try {
    // Cube Core.
    const cubeStarted = performance.now();
    cube = await startCube(cubeSecret);
    const cubeAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(cubeAgent);
    const cubePost = poster(cubeAgent, `http://127.0.0.1:${cube.port}`);
    const cubeTokens = new Map<string, string>();
    const key = new TextEncoder().encode(cubeSecret);
    for (const caller of CALLERS)
      cubeTokens.set(caller.name, await new SignJWT(caller.context).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('2h').sign(key));
    const cubeLoad = '/cubejs-api/v1/load';
    await waitFor(
      async () => {
        const answer = await load(cubePost, cubeLoad, cubeTokens.get('all')!, { measures: ['orders.count'] });
        return Number((answer.body.results as Json[] | undefined)?.[0]?.data?.[0]?.['orders.count']) === ORDERS ? true : undefined;
      },
      'Cube Core answering',
      120_000,
    );
    log(`Cube Core: answering ${((performance.now() - cubeStarted) / 1000).toFixed(1)} s after its start (pid ${cube.child.pid})`);

    // This server, its store on SQLite (no DATABASE_URL), so the local PostgreSQL is not its own cluster.
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
    const serverLog = fs.openSync(path.join(dataDir, 'server.log'), 'a');
    const ourStarted = performance.now();
    server = spawn(process.execPath, [path.join(root, 'packages/server/dist/main.js')], { env, stdio: ['ignore', serverLog, serverLog] });
    await waitFor(async () => (fs.existsSync(path.join(dataDir, 'tls', 'localhost.crt')) ? true : undefined), 'the certificate', 60_000);
    const base = `https://localhost:${port}`;
    const ca = fs.readFileSync(path.join(dataDir, 'tls', 'localhost.crt'), 'utf8');
    const api = client(base, ca, adminKey);
    const ourAgent = new https.Agent({ keepAlive: true, maxSockets: 1, ca });
    agents.push(ourAgent);
    const ourPost = poster(ourAgent, base);
    await waitFor(async () => ((await api.request('GET', '/healthz')).status === 200 ? true : undefined), 'the server', 60_000);
    const expectOk = async (answer: Promise<{ status: number; body: Json }>, what: string): Promise<Json> => {
      const { status, body } = await answer;
      if (status < 200 || status > 299) throw new Error(`${what}: ${status} ${JSON.stringify(body)}`);
      return body;
    };
    const id = (await expectOk(api.json('POST', '/build/api/v1/deployments', { name: 'cube conformance' }), 'creating the deployment')).id as number;
    const build = `/build/api/v1/deployments/${id}`;
    await expectOk(
      api.json('PUT', `/api/v1/deployments/${id}/env-vars`, {
        env_variables: [
          { name: 'DB_TYPE', value: 'postgres' },
          { name: 'DB_URL', value: PG_URL },
          { name: 'PRE_AGGREGATIONS_SCHEMA', value: 'mapi_pre_aggregations' },
        ],
      }),
      'setting its variables',
    );
    await expectOk(api.json('POST', `${build}/dev-mode`), 'entering dev mode');
    const files = fs
      .readdirSync(modelDir)
      .filter((f) => f.endsWith('.yml'))
      .map((f) => ({ path: `model/${f === 'views.yml' ? 'views' : 'cubes'}/${f}`, content: fs.readFileSync(path.join(modelDir, f), 'utf8') }));
    await expectOk(api.json('PUT', `${build}/data-model/files`, { files }), 'writing the model');
    // Without the starter model a new deployment comes with: the same cubes and views as Cube's.
    const removed = await ourPost(`${build}/data-model/files`, `Bearer ${adminKey}`, { files: [{ path: STARTER_MODEL_PATH }] }, 'DELETE');
    if (removed.status > 299) throw new Error(`removing the starter model: ${removed.status} ${JSON.stringify(removed.body)}`);
    await expectOk(api.json('POST', `${build}/commit`, { message: 'The conformance corpus', exitDevMode: true }), 'committing the model');
    const ourTokens = new Map<string, string>();
    for (const caller of CALLERS) {
      const body = await expectOk(
        api.json('POST', `/api/v1/deployments/${id}/environments/production/tokens`, { security_context: caller.context, scopes: ['meta', 'sql-runner'] }),
        `minting the token of ${caller.name}`,
      );
      ourTokens.set(caller.name, (body.data as Json).token as string);
    }
    api.close();
    const ourLoad = `/deployments/${id}/data-api/v1/load`;
    let lastAnswer: Answer | undefined;
    await waitFor(
      async () => {
        lastAnswer = await load(ourPost, ourLoad, ourTokens.get('all')!, { measures: ['orders.count'] });
        return Number((lastAnswer.body.results as Json[] | undefined)?.[0]?.data?.[0]?.['orders.count']) === ORDERS ? true : undefined;
      },
      'our runtime answering',
      120_000,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}; last answer ${JSON.stringify(lastAnswer?.body).slice(0, 500)}`);
    });
    const runtimePids = childrenOf(server.pid!);
    log(
      `ours: dist/main.js (pid ${server.pid}), deployment ${id} answering ${((performance.now() - ourStarted) / 1000).toFixed(1)} s after the server's start; runtime pid ${runtimePids.join(', ') || '?'}`,
    );

    const sample = () => {
      const c = rssMiB(cube?.child.pid);
      if (c !== undefined) rss.cube.push(c);
      const s = rssMiB(server?.pid);
      if (s !== undefined) rss.server.push(s);
      const r = childrenOf(server!.pid!)
        .map(rssMiB)
        .filter((v): v is number => v !== undefined);
      if (r.length > 0) rss.runtime.push(r.reduce((a, b) => a + b, 0));
    };
    sample();
    const idle = { cube: rss.cube.at(-1), runtime: rss.runtime.at(-1), server: rss.server.at(-1) };
    sampler = setInterval(sample, 500);

    // /v1/meta per caller: the cubes and views, their members and types.
    const metaResults: Array<{ caller: string; agreed: boolean; onlyCube: string[]; onlyOurs: string[] }> = [];
    for (const caller of CALLERS) {
      const c = await cubePost('/cubejs-api/v1/meta', cubeTokens.get(caller.name)!, undefined, 'GET');
      const o = await ourPost(`/deployments/${id}/data-api/v1/meta`, ourTokens.get(caller.name)!, undefined, 'GET');
      const cs = metaShape(c.body);
      const os_ = metaShape(o.body);
      const onlyCube = cs.filter((l) => !os_.includes(l));
      const onlyOurs = os_.filter((l) => !cs.includes(l));
      metaResults.push({ caller: caller.name, agreed: c.status === o.status && onlyCube.length === 0 && onlyOurs.length === 0, onlyCube, onlyOurs });
    }

    // The corpus, each query as each caller, the two engines by turns (which goes first alternates).
    const results: Array<{ item: CorpusQuery; caller: string; cube: Answer; ours: Answer; verdict: Verdict }> = [];
    let done = 0;
    for (const item of items) {
      for (const caller of CALLERS) {
        const runCube = () => load(cubePost, cubeLoad, cubeTokens.get(caller.name)!, item.query);
        const runOurs = () => load(ourPost, ourLoad, ourTokens.get(caller.name)!, item.query);
        let c: Answer;
        let o: Answer;
        if (done % 2 === 0) {
          c = await runCube();
          o = await runOurs();
        } else {
          o = await runOurs();
          c = await runCube();
        }
        done++;
        results.push({ item, caller: caller.name, cube: c, ours: o, verdict: compare(item, c, o) });
      }
      if (done % 200 === 0) log(`  ${done} of ${items.length * CALLERS.length} runs`);
    }
    clearInterval(sampler);
    sampler = undefined;

    // Agreement per feature.
    const features = [...new Set(items.map((q) => q.feature))];
    const table = features.map((feature) => {
      const of = results.filter((r) => r.item.feature === feature);
      const agreed = of.filter((r) => r.verdict.agreed).length;
      return { feature, queries: new Set(of.map((r) => r.item.id)).size, runs: of.length, agreed, percent: (100 * agreed) / of.length };
    });
    const totalAgreed = results.filter((r) => r.verdict.agreed).length;
    log('');
    log('agreement per feature (runs = queries x callers)');
    log(`${'feature'.padEnd(28)}${'queries'.padStart(8)}${'runs'.padStart(7)}${'agreed'.padStart(8)}${'%'.padStart(8)}`);
    for (const t of table)
      log(
        `${t.feature.padEnd(28)}${String(t.queries).padStart(8)}${String(t.runs).padStart(7)}${String(t.agreed).padStart(8)}${t.percent.toFixed(1).padStart(8)}`,
      );
    log(
      `${'all'.padEnd(28)}${String(items.length).padStart(8)}${String(results.length).padStart(7)}${String(totalAgreed).padStart(8)}${((100 * totalAgreed) / results.length).toFixed(1).padStart(8)}`,
    );
    log(
      `/v1/meta (cubes, views, members, their types, titles and visibility): ${metaResults.filter((m) => m.agreed).length} of ${metaResults.length} callers agree`,
    );
    for (const m of metaResults.filter((x) => !x.agreed))
      log(`  ${m.caller}: only in Cube's: ${m.onlyCube.slice(0, 8).join('; ') || '-'}; only in ours: ${m.onlyOurs.slice(0, 8).join('; ') || '-'}`);
    // Agreement is not vacuous: how many agreed runs had rows, had none, or were refused by both.
    const agreedRuns = results.filter((r) => r.verdict.agreed);
    const withRows = agreedRuns.filter(
      (r) => r.verdict.reason === undefined && ((r.cube.body.results as Json[])[0]?.data as Json[] | undefined)?.length,
    ).length;
    const refused = agreedRuns.filter((r) => r.verdict.reason === 'both refuse').length;
    log(`agreed runs: ${withRows} with rows, ${agreedRuns.length - withRows - refused} with none, ${refused} refused by both`);
    // Which runs each engine read from a pre-aggregation (Cube's usedPreAggregations, in both answers).
    const usedPreAggregation = (a: Answer) =>
      ((a.body.results as Json[] | undefined) ?? []).some((r) => Object.keys((r.usedPreAggregations as Json | undefined) ?? {}).length > 0);
    const fromRollups = results.filter((r) => usedPreAggregation(r.cube) || usedPreAggregation(r.ours));
    log(
      `runs answered from a pre-aggregation: Cube ${fromRollups.filter((r) => usedPreAggregation(r.cube)).length}, ours ${fromRollups.filter((r) => usedPreAggregation(r.ours)).length}, both ${fromRollups.filter((r) => usedPreAggregation(r.cube) && usedPreAggregation(r.ours)).length} (${[...new Set(fromRollups.map((r) => r.item.id))].join(', ')})`,
    );
    log('');
    log('agreement per caller');
    for (const caller of CALLERS) {
      const of = results.filter((r) => r.caller === caller.name);
      const agreed = of.filter((r) => r.verdict.agreed).length;
      log(`  ${caller.name.padEnd(6)} ${JSON.stringify(caller.context).padEnd(20)} ${agreed}/${of.length} (${((100 * agreed) / of.length).toFixed(1)}%)`);
    }

    // Latency per feature, and memory.
    const latency = features.map((feature) => {
      const of = results.filter((r) => r.item.feature === feature);
      const c = of.map((r) => r.cube.ms);
      const o = of.map((r) => r.ours.ms);
      return { feature, cube: { p50: median(c), p95: percentile(c, 95) }, ours: { p50: median(o), p95: percentile(o, 95) } };
    });
    const allCube = results.map((r) => r.cube.ms);
    const allOurs = results.map((r) => r.ours.ms);
    // The first caller's runs: each query's first request to either engine, before either's result
    // cache holds it (ours keys its cache by caller context; Cube's by SQL, so later callers of a
    // query without a policy may be answered from Cube's cache).
    const first = results.filter((r) => r.caller === CALLERS[0]!.name);
    const firstCube = first.map((r) => r.cube.ms);
    const firstOurs = first.map((r) => r.ours.ms);
    log('');
    log('latency per feature, ms (client-timed, one request at a time, the engines by turns; ratio = ours / Cube)');
    log(`${'feature'.padEnd(28)}${'Cube p50'.padStart(9)}${'p95'.padStart(8)}${'ours p50'.padStart(10)}${'p95'.padStart(8)}${'p50 ratio'.padStart(11)}`);
    const f1 = (v: number) => v.toFixed(1);
    for (const l of latency)
      log(
        `${l.feature.padEnd(28)}${f1(l.cube.p50).padStart(9)}${f1(l.cube.p95).padStart(8)}${f1(l.ours.p50).padStart(10)}${f1(l.ours.p95).padStart(8)}${`${(l.ours.p50 / l.cube.p50).toFixed(2)}x`.padStart(11)}`,
      );
    log(
      `${'all'.padEnd(28)}${f1(median(allCube)).padStart(9)}${f1(percentile(allCube, 95)).padStart(8)}${f1(median(allOurs)).padStart(10)}${f1(percentile(allOurs, 95)).padStart(8)}${`${(median(allOurs) / median(allCube)).toFixed(2)}x`.padStart(11)}`,
    );
    log(
      `${'first caller only (cold)'.padEnd(28)}${f1(median(firstCube)).padStart(9)}${f1(percentile(firstCube, 95)).padStart(8)}${f1(median(firstOurs)).padStart(10)}${f1(percentile(firstOurs, 95)).padStart(8)}${`${(median(firstOurs) / median(firstCube)).toFixed(2)}x`.padStart(11)}`,
    );
    const mem = (values: number[]) => ({ median: values.length ? median(values) : NaN, max: values.length ? Math.max(...values) : NaN });
    const memory = { idle, cube: mem(rss.cube), runtime: mem(rss.runtime), server: mem(rss.server), samples: rss.cube.length };
    log('');
    log(
      `memory (RSS, MiB; ${memory.samples} samples every 0.5 s through the run): idle before the corpus: Cube ${idle.cube?.toFixed(0)}, our runtime ${idle.runtime?.toFixed(0)} (server ${idle.server?.toFixed(0)})`,
    );
    log(`  Cube Core process: median ${memory.cube.median.toFixed(0)}, max ${memory.cube.max.toFixed(0)}`);
    log(
      `  our runtime process: median ${memory.runtime.median.toFixed(0)}, max ${memory.runtime.max.toFixed(0)}  (ratio to Cube ${(memory.runtime.median / memory.cube.median).toFixed(2)}x)`,
    );
    log(
      `  our server process beside it: median ${memory.server.median.toFixed(0)}, max ${memory.server.max.toFixed(0)}  (runtime + server to Cube ${((memory.runtime.median + memory.server.median) / memory.cube.median).toFixed(2)}x)`,
    );

    // The disagreements.
    const disagreements = results
      .filter((r) => !r.verdict.agreed)
      .map((r) => ({
        id: r.item.id,
        feature: r.item.feature,
        caller: r.caller,
        query: r.item.query,
        reason: r.verdict.reason,
        firstDifference: r.verdict.firstDifference,
        cube: summarise(r.cube),
        ours: summarise(r.ours),
      }));
    fs.mkdirSync(cacheDir, { recursive: true });
    fs.writeFileSync(
      reportFile,
      JSON.stringify(
        {
          cubeVersion: cubeVersion(),
          node: process.version,
          total: results.length,
          agreed: totalAgreed,
          table,
          runs: results.map((r) => ({ id: r.item.id, caller: r.caller, agreed: r.verdict.agreed, cube: outcome(r.cube), ours: outcome(r.ours) })),
          meta: metaResults,
          latency,
          latencyFirstCaller: {
            cube: { p50: median(firstCube), p95: percentile(firstCube, 95) },
            ours: { p50: median(firstOurs), p95: percentile(firstOurs, 95) },
          },
          memory,
          disagreements,
        },
        null,
        2,
      ),
    );
    log('');
    log(`${disagreements.length} disagreements (every one, with both answers, in ${path.relative(root, reportFile)}); the first of each query:`);
    const seen = new Set<string>();
    for (const d of disagreements) {
      if (seen.has(d.id)) continue;
      seen.add(d.id);
      const callers = disagreements
        .filter((x) => x.id === d.id)
        .map((x) => x.caller)
        .join(',');
      log(
        `  ${d.id} [${callers}] ${d.reason}${d.firstDifference ? `: Cube ${JSON.stringify(d.firstDifference.cube)} / ours ${JSON.stringify(d.firstDifference.ours)}` : ''}`,
      );
      log(`      ${JSON.stringify(d.query)}`);
    }
    log('');
    log(`done in ${((performance.now() - startedAt) / 1000).toFixed(0)} s`);
  } catch (error) {
    const serverLogFile = path.join(dataDir, 'server.log');
    if (fs.existsSync(serverLogFile)) log(`server log (last lines):\n${fs.readFileSync(serverLogFile, 'utf8').split('\n').slice(-15).join('\n')}`);
    if (cube && fs.existsSync(cube.logFile)) log(`Cube log (last lines):\n${fs.readFileSync(cube.logFile, 'utf8').split('\n').slice(-15).join('\n')}`);
    throw error;
  } finally {
    if (sampler) clearInterval(sampler);
    for (const agent of agents) agent.destroy();
    for (const child of [server, cube?.child]) {
      if (child && child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await Promise.race([new Promise((resolve) => child.once('exit', resolve)), sleep(10_000)]);
      }
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (process.env.CONFORMANCE_KEEP !== '1') await dropDataset();
  }
}

/** An answer in a word: its status and row counts, or its error. */
function outcome(answer: Answer): string {
  const error = errorOf(answer);
  if (error !== undefined) return `${answer.status} ${error.slice(0, 120)}`;
  return `${answer.status} rows ${(answer.body.results as Json[]).map((r) => (r.data as Json[] | undefined)?.length ?? 0).join('+')}`;
}

/** An answer as the report keeps it: its status, error or first rows. */
function summarise(answer: Answer): Json {
  const error = errorOf(answer);
  if (error !== undefined) return { status: answer.status, error: error.slice(0, 1000) };
  return {
    status: answer.status,
    results: (answer.body.results as Json[]).map((r) => ({
      rows: (r.data as Json[] | undefined)?.length ?? 0,
      total: r.total,
      data: ((r.data as Json[] | undefined) ?? []).slice(0, 20),
    })),
  };
}

await main();
