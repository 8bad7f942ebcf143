/**
 * `npm run bench:bulk-move`: 100-item bulk moves of mixed types through the real HTTPS stack,
 * beside a floor measured in the same run: the same moves written straight to the database, one
 * transaction per item. SQLite in a temporary directory by default; with DATABASE_URL, PostgreSQL
 * in a temporary schema of its own. BENCH_ROUNDS and BENCH_WARMUP change the number of rounds.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { loadConfig } from '../src/config.js';
import type { Store } from '../src/db/database.js';
import type { ItemType } from '../src/db/tables.js';
import { startServer } from '../src/server.js';
import { explorer, seed, shuffle, stamp, temporarySchema, type Seeded } from './bench/workspace-seed.js';

const ITEMS_PER_TYPE = 50_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 50);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 5);
/** Each round: 20 folders, 40 workbooks and 40 reports, shuffled. */
const MIX: Array<[ItemType, number]> = [
  ['FOLDER', 20],
  ['WORKBOOK', 40],
  ['REPORT', 40],
];

interface Ref {
  type: ItemType;
  id: number;
}
interface Round {
  items: Ref[];
  /** Where the HTTP moves put the batch, and where the floor then puts it: both move every item. */
  httpTo: number;
  floorTo: number;
}

const log = (line: string) => process.stdout.write(`${line}\n`);

/**
 * Rounds whose moves all succeed for the explorer: leaf folders of the deepest level (no
 * descendants, so never moved below themselves; height 1, so within 10 levels anywhere) and
 * workbooks and reports, into folders of levels 1 and 2 (never moved themselves). Every item is
 * moved at most once per direction, so no move is a no-op.
 */
function plan(seeded: Seeded, count: number): Round[] {
  const pools: Record<ItemType, number[]> = { FOLDER: shuffle([...seeded.levels[9]!]), WORKBOOK: shuffle([...seeded.workbooks]), REPORT: shuffle([...seeded.reports]) };
  const destinations = [...seeded.levels[0]!, ...seeded.levels[1]!];
  return Array.from({ length: count }, () => {
    const items = shuffle(MIX.flatMap(([type, n]) => pools[type].splice(0, n).map((id) => ({ type, id }))));
    const [httpTo, floorTo] = shuffle([...destinations]) as [number, number];
    return { items, httpTo, floorTo };
  });
}

/** The floor: each item's container written in its own transaction, nothing else. */
async function floorRound(store: Store, deploymentId: number, round: Round): Promise<void> {
  for (const { type, id } of round.items) {
    await store.db.transaction().execute(async (trx) => {
      const at = stamp();
      if (type === 'FOLDER') {
        await trx.updateTable('folders').set({ parent_id: round.floorTo, updated_at: at }).where('deployment_id', '=', deploymentId).where('id', '=', id).execute();
      } else {
        await trx
          .updateTable(type === 'WORKBOOK' ? 'workbooks' : 'reports')
          .set({ folder_id: round.floorTo, updated_at: at })
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
    log(`seeded ${seeded.levels.flat().length} folders (${seeded.levels.length} levels), ${seeded.workbooks.length} workbooks, ${seeded.reports.length} reports in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);

    client = poster(server.url, fs.readFileSync(path.join(dataDir, 'tls', 'localhost.crt'), 'utf8'), key);
    const rounds = plan(seeded, WARMUP + ROUNDS);
    const http: number[] = [];
    const floor: number[] = [];
    let failedItems = 0;
    for (const [index, round] of rounds.entries()) {
      const measured = index >= WARMUP;
      const answer = await client.post(`/api/v1/deployments/${deployment.id}/workspace/bulk-move`, { items: round.items, folderId: round.httpTo });
      const took = answer.took;
      if (answer.status !== 200) throw new Error(`bulk move answered ${answer.status}: ${JSON.stringify(answer.body)}`);
      const failed = (answer.body as { failed: unknown[] }).failed;
      if (failed.length > 0 && failedItems === 0) log(`warning: first failures: ${JSON.stringify(failed.slice(0, 3))}`);
      failedItems += failed.length;
      const started = performance.now();
      await floorRound(store, deployment.id, round);
      if (measured) {
        http.push(took);
        floor.push(performance.now() - started);
      }
    }

    const perRound = MIX.reduce((n, [, count]) => n + count, 0);
    const rows = [stats('HTTP bulk move', http, perRound), stats('floor (1 tx/item)', floor, perRound)];
    log('');
    log(`bench:bulk-move  dialect=${store.dialect}  node=${process.version}  cores=${os.availableParallelism()}  rounds=${ROUNDS} (+${WARMUP} warm-up) x ${perRound} items (20 folders, 40 workbooks, 40 reports)`);
    log(`${'path'.padEnd(20)}${'items/s'.padStart(10)}${'p50 ms'.padStart(10)}${'p99 ms'.padStart(10)}${'mean ms'.padStart(10)}`);
    for (const r of rows) log(`${r.label.padEnd(20)}${r.itemsPerSecond.toFixed(0).padStart(10)}${r.p50.toFixed(2).padStart(10)}${r.p99.toFixed(2).padStart(10)}${r.mean.toFixed(2).padStart(10)}`);
    log(`ratio HTTP/floor: ${(rows[0]!.mean / rows[1]!.mean).toFixed(2)}x on mean time per 100 items (= items/s), ${(rows[0]!.p50 / rows[1]!.p50).toFixed(2)}x on p50`);
    if (failedItems > 0) log(`warning: ${failedItems} item moves failed; the figures are not comparable`);
  } finally {
    await client?.close();
    await server.close();
    await schema?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
