/**
 * `npm run bench:bulk-move`: 100-item bulk moves of mixed types through the real HTTPS stack,
 * beside a floor measured in the same run: the same moves written straight to the database on its
 * driver, one transaction per item (scripts/bench/move-breakdown.ts), and, for comparison with
 * figures from before, the former floor (the same through the query builder). Then a few rounds through an
 * in-process app whose store logs every statement give the per-item breakdown: what each kind of
 * statement costs an item, and what the server spends outside the database. SQLite in a temporary
 * directory by default; with DATABASE_URL, PostgreSQL in a temporary schema of its own.
 * BENCH_ROUNDS, BENCH_WARMUP and BENCH_BREAKDOWN_ROUNDS change the number of rounds.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { buildApp } from '../src/app.js';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { loadConfig } from '../src/config.js';
import { openStore, type Store } from '../src/db/database.js';
import type { ItemType } from '../src/db/tables.js';
import { startServer } from '../src/server.js';
import { postgresFloor, sqliteFloor, StatementTally, type Floor, type FloorTimes, type Ref } from './bench/move-breakdown.js';
import { explorer, seed, shuffle, stamp, temporarySchema, type Seeded } from './bench/workspace-seed.js';

const ITEMS_PER_TYPE = 50_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 50);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 5);
const BREAKDOWN_ROUNDS = Number(process.env.BENCH_BREAKDOWN_ROUNDS ?? 10);
/** Each round: 20 folders, 40 workbooks and 40 reports, shuffled. */
const MIX: Array<[ItemType, number]> = [
  ['FOLDER', 20],
  ['WORKBOOK', 40],
  ['REPORT', 40],
];

interface Round {
  items: Ref[];
  /** Where the HTTP moves put the batch, then the floor, then the former floor: each moves every item. */
  httpTo: number;
  floorTo: number;
  builderTo: number;
}

const log = (line: string) => process.stdout.write(`${line}\n`);

/**
 * Rounds whose moves all succeed for the explorer: leaf folders of the deepest level (no
 * descendants, so never moved below themselves; height 1, so within 10 levels anywhere) and
 * workbooks and reports, into folders of levels 1 and 2 (never moved themselves). Every item is
 * moved at most once per direction, so no move is a no-op.
 */
function plan(seeded: Seeded, count: number): Round[] {
  const pools: Record<ItemType, number[]> = {
    FOLDER: shuffle([...seeded.levels[9]!]),
    WORKBOOK: shuffle([...seeded.workbooks]),
    REPORT: shuffle([...seeded.reports]),
  };
  const destinations = [...seeded.levels[0]!, ...seeded.levels[1]!];
  return Array.from({ length: count }, () => {
    const items = shuffle(MIX.flatMap(([type, n]) => pools[type].splice(0, n).map((id) => ({ type, id }))));
    const [httpTo, floorTo, builderTo] = shuffle([...destinations]) as [number, number, number];
    return { items, httpTo, floorTo, builderTo };
  });
}

/**
 * The floor as this benchmark measured it before it ran on the driver: each item's container written
 * in its own transaction through the query builder, on the server's own store. Kept beside the
 * floor so that figures from before can be compared; the floor is the one to beat.
 */
async function builderFloorRound(store: Store, deploymentId: number, to: number, items: Ref[]): Promise<void> {
  for (const { type, id } of items) {
    await store.db.transaction().execute(async (trx) => {
      const at = stamp();
      if (type === 'FOLDER') {
        await trx.updateTable('folders').set({ parent_id: to, updated_at: at }).where('deployment_id', '=', deploymentId).where('id', '=', id).execute();
      } else {
        await trx
          .updateTable(type === 'WORKBOOK' ? 'workbooks' : 'reports')
          .set({ folder_id: to, updated_at: at })
          .where('deployment_id', '=', deploymentId)
          .where('id', '=', id)
          .execute();
      }
    });
  }
}

/**
 * The HTTPS client runs on a worker thread, as a real client runs in a process of its own: its TLS
 * and JSON work does not borrow the server's thread, and it times each request as the caller sees it.
 */
const CLIENT = `
const { parentPort, workerData } = require('node:worker_threads');
const https = require('node:https');
const { url, ca, key } = workerData;
const target = new URL(url);
const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca, servername: 'localhost' });
parentPort.on('message', ({ pathname, payload }) => {
  const started = performance.now();
  const req = https.request(
    { hostname: target.hostname, port: target.port, path: pathname, method: 'POST', agent,
      headers: { authorization: 'Bearer ' + key, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) } },
    (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.once('end', () => {
        const took = performance.now() - started;
        parentPort.postMessage({ status: res.statusCode, took, body: JSON.parse(text) });
      });
    },
  );
  req.once('error', (error) => parentPort.postMessage({ error: String(error) }));
  req.end(payload);
});
`;

function poster(url: string, ca: string, key: string) {
  const worker = new Worker(CLIENT, { eval: true, workerData: { url, ca, key } });
  const post = (pathname: string, body: unknown) =>
    new Promise<{ status: number; took: number; body: any }>((resolve, reject) => {
      worker.once('message', (answer: { status: number; took: number; body: unknown; error?: string }) =>
        answer.error ? reject(new Error(answer.error)) : resolve(answer),
      );
      worker.postMessage({ pathname, payload: JSON.stringify(body) });
    });
  return { post, close: () => worker.terminate() };
}

function stats(label: string, perRound: number[], itemsPerRound: number) {
  const sorted = [...perRound].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  const total = perRound.reduce((a, b) => a + b, 0);
  return { label, itemsPerSecond: (itemsPerRound * perRound.length) / (total / 1000), p50: at(0.5), p99: at(0.99), mean: total / perRound.length };
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-bench-'));
  const schema = await temporarySchema(process.env.DATABASE_URL);
  const adminKey = generateApiKey();
  const env: Record<string, string> = { PORT: '0', LOG_LEVEL: 'silent', DATA_DIR: dataDir, ADMIN_API_KEY: adminKey, RATE_LIMIT_PER_MINUTE: '0' };
  if (schema) env.DATABASE_URL = schema.url;
  const server = await startServer(loadConfig(env), () => undefined);
  let client: ReturnType<typeof poster> | undefined;
  let floorDriver: Floor | undefined;
  try {
    const { store } = server;
    const tenant = await store.db.selectFrom('tenants').select('id').where('slug', '=', 'default').executeTakeFirstOrThrow();
    const deployment = await store.db
      .insertInto('deployments')
      .values({ tenant_id: tenant.id, name: 'bench', settings: '{}', created_by: null, created_at: stamp(), updated_at: stamp() })
      .returning('id')
      .executeTakeFirstOrThrow();
    const seedStart = performance.now();
    const seeded = await seed(store, tenant.id, deployment.id, ITEMS_PER_TYPE);
    const key = await explorer(store, tenant.id, seeded.levels[0]!);
    log(
      `seeded ${seeded.levels.flat().length} folders (${seeded.levels.length} levels), ${seeded.workbooks.length} workbooks, ${seeded.reports.length} reports in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`,
    );

    client = poster(server.url, fs.readFileSync(path.join(dataDir, 'tls', 'localhost.crt'), 'utf8'), key);
    const file = path.join(dataDir, 'mapi.sqlite');
    floorDriver = schema ? await postgresFloor(schema.url) : sqliteFloor(file);
    const rounds = plan(seeded, WARMUP + ROUNDS + BREAKDOWN_ROUNDS + 1);
    const http: number[] = [];
    const floor: number[] = [];
    const builder: number[] = [];
    let failedItems = 0;
    const checked = (status: number, body: unknown) => {
      if (status !== 200) throw new Error(`bulk move answered ${status}: ${JSON.stringify(body)}`);
      const failed = (body as { failed: unknown[] }).failed;
      if (failed.length > 0 && failedItems === 0) log(`warning: first failures: ${JSON.stringify(failed.slice(0, 3))}`);
      failedItems += failed.length;
    };
    for (const [index, round] of rounds.slice(0, WARMUP + ROUNDS).entries()) {
      const measured = index >= WARMUP;
      // The three paths move the same items one after the other, and the first to touch an item's
      // rows pays for bringing them in (about 10 µs more per update and per commit, and slower
      // reads): each path goes first in a third of the rounds.
      const paths = [
        async () => {
          const answer = await client!.post(`/api/v1/deployments/${deployment.id}/workspace/bulk-move`, { items: round.items, folderId: round.httpTo });
          checked(answer.status, answer.body);
          if (measured) http.push(answer.took);
        },
        async () => {
          const started = performance.now();
          await floorDriver!.round(deployment.id, round.floorTo, round.items);
          if (measured) floor.push(performance.now() - started);
        },
        async () => {
          const started = performance.now();
          await builderFloorRound(store, deployment.id, round.builderTo, round.items);
          if (measured) builder.push(performance.now() - started);
        },
      ];
      for (let k = 0; k < paths.length; k++) await paths[(index + k) % paths.length]!();
    }

    // The breakdown: the same kind of rounds through an in-process app over a second handle on the
    // same database whose every statement is logged with its time (no TLS, no client thread), each
    // followed by the floor's round, timed statement by statement.
    const tally = new StatementTally();
    const floorTimes: FloorTimes = { begin: 0, update: 0, commit: 0 };
    const logged = schema ? openStore({ dialect: 'postgres', url: schema.url, log: tally.log }) : openStore({ dialect: 'sqlite', file, log: tally.log });
    const app = await buildApp({ store: logged, baseDomain: null, logger: false, rateLimitPerMinute: 0 });
    let inProcess = 0;
    try {
      for (const [index, round] of rounds.slice(WARMUP + ROUNDS).entries()) {
        // The app and the floor take turns at moving the round's items first (see above).
        const floorFirst = index % 2 === 1;
        const floorRound = async () => {
          const times = await floorDriver!.round(deployment.id, round.floorTo, round.items);
          if (index > 0) for (const k of ['begin', 'update', 'commit'] as const) floorTimes[k] += times[k];
        };
        if (floorFirst) await floorRound();
        tally.recording = index > 0;
        const started = performance.now();
        const answer = await app.inject({
          method: 'POST',
          url: `/api/v1/deployments/${deployment.id}/workspace/bulk-move`,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ items: round.items, folderId: round.httpTo }),
        });
        const measured = tally.recording;
        if (measured) inProcess += performance.now() - started;
        tally.recording = false;
        checked(answer.statusCode, answer.json());
        if (!floorFirst) await floorRound();
      }
    } finally {
      await app.close();
      await logged.close();
    }

    const perRound = MIX.reduce((n, [, count]) => n + count, 0);
    const rows = [stats('HTTP bulk move', http, perRound), stats('floor (1 tx/item)', floor, perRound), stats('former floor', builder, perRound)];
    log('');
    log(
      `bench:bulk-move  dialect=${store.dialect}  node=${process.version}  cores=${os.availableParallelism()}  rounds=${ROUNDS} (+${WARMUP} warm-up) x ${perRound} items (20 folders, 40 workbooks, 40 reports)`,
    );
    log(`${'path'.padEnd(20)}${'items/s'.padStart(10)}${'p50 ms'.padStart(10)}${'p99 ms'.padStart(10)}${'mean ms'.padStart(10)}`);
    for (const r of rows)
      log(
        `${r.label.padEnd(20)}${r.itemsPerSecond.toFixed(0).padStart(10)}${r.p50.toFixed(2).padStart(10)}${r.p99.toFixed(2).padStart(10)}${r.mean.toFixed(2).padStart(10)}`,
      );
    log(
      `ratio HTTP/floor: ${(rows[0]!.mean / rows[1]!.mean).toFixed(2)}x on mean time per 100 items (= items/s), ${(rows[0]!.p50 / rows[1]!.p50).toFixed(2)}x on p50`,
    );
    log(
      `(former floor, the same transactions through the query builder on the server's own store, as this benchmark measured before: HTTP/former floor ${(rows[0]!.mean / rows[2]!.mean).toFixed(2)}x on mean, ${(rows[0]!.p50 / rows[2]!.p50).toFixed(2)}x on p50)`,
    );

    const items = BREAKDOWN_ROUNDS * perRound;
    const us = (ms: number) => ((ms * 1000) / items).toFixed(1).padStart(10);
    log('');
    log(`per item, ${BREAKDOWN_ROUNDS} rounds through an in-process app (no TLS, no client) whose store logs each statement's time:`);
    log(`  ${'statement'.padEnd(44)}${'per item'.padStart(10)}${'µs/item'.padStart(10)}`);
    for (const [kind, count, micros] of tally.perItem(items)) log(`  ${kind.padEnd(44)}${count.toFixed(2).padStart(10)}${micros.toFixed(1).padStart(10)}`);
    const { millis: databaseMillis, roundTrips } = tally.inDatabase;
    log(
      `  ${'in the database (pipelined statements overlap)'.padEnd(44)}${(roundTrips / items).toFixed(2).padStart(10)}${us(databaseMillis)}   <- round trips`,
    );
    log(`  ${'server work outside statements'.padEnd(44)}${''.padStart(10)}${us(inProcess - databaseMillis)}`);
    log(`  ${'total'.padEnd(44)}${(tally.statements / items).toFixed(2).padStart(10)}${us(inProcess)}   <- statements`);
    const fus = (ms: number) => ((ms * 1000) / items).toFixed(1);
    log(
      `floor per item in the same rounds, on the driver: begin ${fus(floorTimes.begin)} + update ${fus(floorTimes.update)} + commit ${fus(floorTimes.commit)} = ${fus(floorTimes.begin + floorTimes.update + floorTimes.commit)} µs, 3 statements in 3 round trips`,
    );
    if (failedItems > 0) log(`warning: ${failedItems} item moves failed; the figures are not comparable`);
  } finally {
    await client?.close();
    await floorDriver?.close();
    await server.close();
    await schema?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
