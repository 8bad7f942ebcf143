/**
 * `npm run fuzz`: a schema-driven fuzzer over the served OpenAPI document. It builds the app
 * in-process on a fresh store (SQLite; PostgreSQL when DATABASE_URL is set), seeds a tenant with
 * every role, keys, content and a second tenant, reads GET /api/v1/spec, and sends requests for
 * every operation through app.inject: path and query values (real ids, ids of other deployments
 * and tenants, hostile spellings), bodies valid and invalid (generated with fast-check from the
 * schemas, `$ref`s followed), under every kind of credential and content type. Each answer is
 * checked: no 5xx, a documented status, 2xx bodies valid against their schema (Ajv), errors as
 * problem details (SCIM: SCIM errors) with a documented code, nothing invalid accepted.
 *
 * Then the data-API phase (scripts/fuzz/data-api.ts, on by default): a second app with runtimes,
 * two deployments serving the shop model (one on a SQLite file, one on a throwaway PostgreSQL
 * cluster that logs every statement), and Cube queries valid and malformed (GET `?query=`, POST
 * bodies, `queryType=multi`, lists, SQL over cubes, hostile strings) sent through the server's
 * route and proxy to every data-API route (`dataApi GET load`, `dataApi POST cubesql`, ...) with
 * real tokens (raw and after `Bearer`), API keys and bad credentials. Each answer is checked: no
 * 5xx, 200/400/401/403/404 (405/413/415 where asked for), refusals as Cube's `{error}`, nothing
 * 2xx for a credential or URL that may not have it, answers within the row and byte limits; no
 * hostile value in the text of any statement (the SQL /v1/sql answers, every statement PostgreSQL
 * logged); both data sources as they were after the run.
 *
 *   FUZZ_REQUESTS (or --requests=N)  how many requests, default 10000
 *   FUZZ_SEED     (or --seed=N)      the seed, printed at start; the same seed replays the run
 *   FUZZ_ONLY     (or --only=REGEX)  only operations whose id or path matches (`dataApi`: the
 *                                    data-API phase alone; a pattern that names no data-API
 *                                    route leaves that phase out)
 *   FUZZ_STORE    (or --store=...)   sqlite or postgres; default postgres when DATABASE_URL is set
 *   FUZZ_DATA_API_REQUESTS (or --data-api-requests=N)
 *                                    how many of the requests go to the data API, default a quarter
 *
 * Exit status 1 on any finding; every finding is printed with one reproduction, the shortest seen.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import type { Dialect } from '../src/db/database.js';
import { Builder, type Built } from './fuzz/build.js';
import { check, Validators, type Finding } from './fuzz/checks.js';
import { DATA_OPERATIONS, DataApiWorld, dataOperationPath, runDataApiPhase } from './fuzz/data-api.js';
import { operationsOf, type Operation } from './fuzz/operations.js';
import { planArb, type Plan } from './fuzz/plan.js';
import { Report } from './fuzz/report.js';
import { makeResolver, type GenContext, type Schema } from './fuzz/schema-arbitrary.js';
import { ATTRIBUTE_NAMES } from './fuzz/scim.js';
import { World } from './fuzz/world.js';

const log = (line: string) => process.stdout.write(`${line}\n`);

function option(name: string): string | undefined {
  const flag = process.argv.find((a) => a.startsWith(`--${name}=`));
  return flag ? flag.slice(name.length + 3) : process.env[`FUZZ_${name.toUpperCase().replace(/-/g, '_')}`];
}

const REQUESTS = Number(option('requests') ?? 10_000);
const SEED = Number(option('seed') ?? Math.floor(Math.random() * 2 ** 31));
const ONLY = option('only');
const DATA_API_REQUESTS = option('data-api-requests') === undefined ? undefined : Number(option('data-api-requests'));
const STORE = (option('store') ?? (process.env.DATABASE_URL ? 'postgres' : 'sqlite')) as Dialect;
const BATCH = 64;
const TIMEOUT_MS = 30_000;

if (!Number.isSafeInteger(REQUESTS) || REQUESTS < 1) throw new Error(`FUZZ_REQUESTS must be a positive whole number, not ${option('requests')}`);
if (DATA_API_REQUESTS !== undefined && (!Number.isSafeInteger(DATA_API_REQUESTS) || DATA_API_REQUESTS < 0))
  throw new Error(`FUZZ_DATA_API_REQUESTS must be a whole number, not ${option('data-api-requests')}`);
if (!Number.isSafeInteger(SEED)) throw new Error(`FUZZ_SEED must be a whole number, not ${option('seed')}`);
if (STORE !== 'sqlite' && STORE !== 'postgres') throw new Error(`FUZZ_STORE must be sqlite or postgres, not ${STORE}`);
if (STORE === 'postgres' && !process.env.DATABASE_URL) throw new Error('FUZZ_STORE=postgres needs DATABASE_URL');

/** Plans per operation, generated BATCH at a time from a seed derived from the run's seed. */
class Plans {
  private buffers: Plan[][];
  private batches: number[];
  constructor(
    private readonly arbitraries: Array<fc.Arbitrary<Plan>>,
    private readonly seed: number,
  ) {
    this.buffers = arbitraries.map(() => []);
    this.batches = arbitraries.map(() => 0);
  }
  next(i: number): Plan {
    if (this.buffers[i]!.length === 0) {
      const seed = (this.seed + Math.imul(i + 1, 1_000_003) + Math.imul(this.batches[i]!++, 7919)) | 0;
      this.buffers[i] = fc.sample(this.arbitraries[i]!, { seed, numRuns: BATCH }).reverse();
    }
    return this.buffers[i]!.pop()!;
  }
}

async function main() {
  const only = ONLY ? new RegExp(ONLY) : undefined;
  // Which phases run: the management API's operations (known before the app is built from the
  // committed document, which the drift test keeps equal to the served one) and the data API's routes.
  const committed = JSON.parse(fs.readFileSync(new URL('../openapi.json', import.meta.url), 'utf8')) as Record<string, unknown>;
  const matches = (id: string, route: string) => !only || only.test(id) || only.test(route);
  const managementSelected = operationsOf(committed, makeResolver(committed)).some((o) => matches(o.id, `${o.method} ${o.path}`));
  const dataOps = DATA_OPERATIONS.filter((o) => matches(o.id, dataOperationPath(o)));
  if (!managementSelected && dataOps.length === 0) throw new Error(`no operation matches /${ONLY}/`);
  const dataRequests =
    dataOps.length === 0 ? 0 : !managementSelected ? REQUESTS : Math.min(REQUESTS - 1, DATA_API_REQUESTS ?? Math.max(dataOps.length, Math.round(REQUESTS / 4)));
  const managementRequests = REQUESTS - dataRequests;
  log(
    `fuzz: ${REQUESTS} requests on ${STORE}, seed ${SEED}${ONLY ? `, operations matching /${ONLY}/` : ''} (replay with FUZZ_SEED=${SEED}): ${managementRequests} to the management API, ${dataRequests} to the data API`,
  );
  const report = new Report();
  const phases: string[] = [];

  // A stream error nobody listens to (a body abandoned by the parser, a timer firing later)
  // would end the process; it is a finding, and the run goes on. Bodies left unread (413, 415)
  // are remembered, so an error that fires later names the request that most likely caused it.
  let lastRequest = -1;
  let phase = 'management API';
  const abandoned: Array<{ at: number; index: number; op: string; built: Built; credential: string; status: number }> = [];
  process.on('uncaughtException', (error: Error & { code?: string }) => {
    const now = performance.now();
    const frame =
      error.stack
        ?.split('\n')
        .find((l) => l.includes('/src/'))
        ?.trim() ?? '';
    const finding: Finding = { kind: 'uncaught-exception', detail: `${error.code ?? error.name}`, message: `${error.message} ${frame}`.slice(0, 300) };
    const guess = abandoned.reduce<(typeof abandoned)[number] | undefined>(
      (best, a) => (!best || Math.abs(now - a.at - 30_000) < Math.abs(now - best.at - 30_000) ? a : best),
      undefined,
    );
    const built: Built = guess?.built ?? {
      method: '-',
      url: `(raised outside any request; the last one sent was #${lastRequest} of the ${phase} phase)`,
      headers: {},
      payload: undefined,
      invalidParams: [],
      foreignParams: [],
      routerRefuses: false,
      deploymentId: undefined,
      body: undefined,
    };
    const after = guess ? `raised ${((now - guess.at) / 1000).toFixed(1)} s after this answer to ${guess.op}, the likeliest cause` : '';
    if (report.add('(process)', finding, built, guess?.credential ?? '-', guess?.status ?? 0, after, error.stack?.slice(0, 300), guess?.index ?? lastRequest)) {
      log(`  new finding after request ${lastRequest} (${phase}): [uncaught-exception] ${error.message}`);
    }
  });

  if (managementRequests > 0) {
    const started = performance.now();
    const world = await World.create(STORE, log);
    try {
      const admin = world.credentials.get('admin')!;
      const spec = await world.app.inject({ method: 'GET', url: '/api/v1/spec', headers: { authorization: `Bearer ${admin.key}` } });
      if (spec.statusCode !== 200) throw new Error(`GET /api/v1/spec answered ${spec.statusCode}`);
      const document = spec.json() as { components?: { schemas?: Record<string, Schema> } };
      const resolve = makeResolver(document);
      const all = operationsOf(document, resolve);
      const ops: Operation[] = only ? all.filter((o) => only.test(o.id) || only.test(`${o.method} ${o.path}`)) : all;
      if (ops.length === 0) throw new Error(`no operation of the served document matches /${ONLY}/`);
      const validators = new Validators(document);
      const components = document.components?.schemas ?? {};
      const ctx: GenContext = {
        resolve,
        mapKeys: (property) =>
          property === 'values'
            ? fc.oneof(fc.constantFrom(...ATTRIBUTE_NAMES), fc.constantFrom(...world.attributeNames()), fc.constant('noSuchAttribute'))
            : undefined,
      };
      const plans = new Plans(
        ops.map((op) => planArb(op, ctx)),
        SEED,
      );
      const builder = new Builder(world, validators.validateString);
      log(`seeded in ${((performance.now() - started) / 1000).toFixed(1)} s; ${ops.length} of ${all.length} operations from the served document`);

      const fuzzStart = performance.now();
      const cpuStart = process.cpuUsage();
      for (let i = 0; i < managementRequests; i++) {
        const opIndex = i % ops.length;
        const op = ops[opIndex]!;
        const plan = plans.next(opIndex);
        const built = builder.build(op, plan);
        lastRequest = i;
        world.lastLoggedError = undefined;
        let timer: NodeJS.Timeout | undefined;
        const sent = performance.now();
        const answer = await Promise.race([
          world.app.inject({
            method: built.method as 'GET',
            url: built.url,
            headers: built.headers,
            ...(built.payload === undefined ? {} : { payload: built.payload }),
          }),
          new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), TIMEOUT_MS))),
        ]);
        clearTimeout(timer);
        if (answer === 'timeout') {
          report.count(op.id, 0);
          report.add(
            op.id,
            { kind: 'timeout', detail: 'no answer', message: `no answer within ${TIMEOUT_MS / 1000} s` },
            built,
            plan.credential,
            0,
            '',
            undefined,
            i,
          );
          continue;
        }
        report.count(op.id, answer.statusCode, performance.now() - sent);
        if (answer.statusCode === 413 || answer.statusCode === 415) {
          abandoned.push({ at: performance.now(), index: i, op: op.id, built, credential: plan.credential, status: answer.statusCode });
          if (abandoned.length > 100) abandoned.shift();
        }
        const findings: Finding[] = check(op, built, plan.credential, answer, validators, components);
        const scoped = plan.credential === 'scopedDeveloper' || plan.credential === 'scopedAdmin';
        if (scoped && answer.statusCode < 300 && built.deploymentId !== undefined && built.deploymentId !== world.scopedDeployment) {
          findings.push({
            kind: 'scope-bypass',
            detail: plan.credential,
            message: `a key scoped to deployment ${world.scopedDeployment} was answered 2xx for deployment ${built.deploymentId}`,
          });
        }
        for (const finding of findings) {
          if (report.add(op.id, finding, built, plan.credential, answer.statusCode, answer.body, world.lastLoggedError, i)) {
            log(`  new finding at request ${i}: [${finding.kind}] ${op.id} ${finding.detail}`);
          }
        }
        if (answer.statusCode === 200 && answer.body.includes('endCursor')) {
          try {
            builder.rememberCursor(op, (answer.json() as { pageInfo?: { endCursor?: unknown } }).pageInfo?.endCursor);
          } catch {
            // a body that is not JSON is already a finding
          }
        }
        if (i % 50 === 49) await world.heal(log);
        if (i % 500 === 499) await world.refresh();
        if (i % 10_000 === 9_999) {
          const seconds = (performance.now() - fuzzStart) / 1000;
          log(`  ${i + 1} requests, ${((i + 1) / seconds) | 0} a second, ${report.distinct} distinct findings`);
        }
      }
      const seconds = (performance.now() - fuzzStart) / 1000;
      const cpu = process.cpuUsage(cpuStart);
      // Errors raised by timers of the last requests (body timeouts) still count.
      const lastAbandoned = abandoned.at(-1)?.at;
      if (lastAbandoned !== undefined && performance.now() - lastAbandoned < 31_000) {
        log(`waiting ${Math.ceil((31_000 - (performance.now() - lastAbandoned)) / 1000)} s for timers of unread bodies…`);
        await new Promise((resolve) => setTimeout(resolve, 31_000 - (performance.now() - lastAbandoned)));
      }
      phases.push(
        `${managementRequests} requests over ${ops.length} operations in ${seconds.toFixed(1)} s (${(managementRequests / seconds) | 0} a second, ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s of CPU)`,
      );
    } finally {
      await world.close();
    }
  }

  if (dataRequests > 0) {
    phase = 'data API';
    lastRequest = -1;
    abandoned.length = 0;
    const started = performance.now();
    const world = await DataApiWorld.create(STORE, log);
    try {
      log(
        `data-API phase ready in ${((performance.now() - started) / 1000).toFixed(1)} s: ${dataOps.length} routes on ${world.sources.map((s) => s.kind).join(' and ')}`,
      );
      const fuzzStart = performance.now();
      const cpuStart = process.cpuUsage();
      await runDataApiPhase(world, dataOps, dataRequests, SEED, report, log, TIMEOUT_MS, (i) => (lastRequest = i));
      const seconds = (performance.now() - fuzzStart) / 1000;
      const cpu = process.cpuUsage(cpuStart);
      phases.push(
        `${dataRequests} data-API requests over ${dataOps.length} routes in ${seconds.toFixed(1)} s (${(dataRequests / seconds) | 0} a second, ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s of CPU in this process)`,
      );
    } finally {
      await world.close();
    }
  }

  report.print(log, SEED);
  log('');
  log(`${phases.join('; ')}, on ${STORE}, seed ${SEED}: ${report.distinct === 0 ? 'no findings' : `${report.distinct} distinct findings`}`);
  process.exitCode = report.distinct === 0 ? 0 : 1;
}

main().catch((error: unknown) => {
  process.stderr.write(`fuzz: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 2;
});
