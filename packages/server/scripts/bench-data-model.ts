/**
 * `npm run bench:data-model`: the data-model validator on generated models of 100 and 1,000
 * cubes, beside its floor measured in the same run: parsing the same YAML files with the yaml
 * package and nothing else. Every model file has to be parsed, so validation can never beat
 * that; the target is to stay within 3x of it.
 *
 * Each cube is a file of its own with 5 dimensions, 4 measures (one reading two others) and a
 * join to the cube before it; there is a view per 10 cubes, over a join path three cubes long.
 * BENCH_ROUNDS (default 15) timed rounds per size, after 3 untimed ones; medians are printed.
 *
 * Part 2, uploads: a server in this process (HTTPS, SQLite and repositories in a temporary
 * directory), a deployment, and the client's push helper (`client.dataModel.push`) sending a
 * generated model of 1,000 cube files, then the same model with one file changed, which must
 * send exactly that file. Each push is timed to its commit, and the build of that commit after
 * it. The floor, measured in the same run, is what any push must do before it knows what to
 * send: hash every local file and read the branch's `file-hashes`. BENCH_PUSH=0 skips part 2.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parse } from 'yaml';
import { blobHash, createClient, unwrap, type MapiClient, type PushResult } from '../../client/src/node.js';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { validateModel, type ModelFile } from '../src/model/index.js';
import { loadConfig } from '../src/config.js';
import { startServer } from '../src/server.js';

const SIZES = [100, 1000];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const WARMUP_ROUNDS = 3;
const TARGET_RATIO = 3;
const PUSH_FILES = 1000;
const log = (line: string) => process.stdout.write(`${line}\n`);

function cubeFile(i: number): ModelFile {
  const join =
    i === 0
      ? ''
      : `
    joins:
      - name: cube_${i - 1}
        relationship: many_to_one
        sql: "{CUBE}.parent_id = {cube_${i - 1}.id}"
`;
  const content = `cubes:
  - name: cube_${i}
    sql_table: analytics.table_${i}
    title: Cube ${i}
    description: Generated cube number ${i}
${join}
    dimensions:
      - name: id
        sql: id
        type: number
        primary_key: true
      - name: status
        sql: "{CUBE}.status"
        type: string
      - name: category
        sql: category
        type: string
      - name: amount_value
        sql: amount
        type: number
      - name: created_at
        sql: created_at
        type: time

    measures:
      - name: count
        type: count
      - name: total_amount
        sql: "{amount_value}"
        type: sum
        format: currency
      - name: distinct_categories
        sql: category
        type: count_distinct
      - name: average_amount
        sql: "{CUBE.total_amount} / NULLIF({count}, 0)"
        type: number
`;
  return { path: `model/cubes/cube_${i}.yml`, content };
}

function viewFile(v: number): ModelFile {
  const last = v * 10 + 9;
  const content = `views:
  - name: view_${v}
    description: Cubes ${last - 2} to ${last}
    cubes:
      - join_path: cube_${last}
        includes: "*"
      - join_path: cube_${last}.cube_${last - 1}
        prefix: true
        includes: [status, count, total_amount]
      - join_path: cube_${last}.cube_${last - 1}.cube_${last - 2}
        alias: grandparent
        prefix: true
        includes:
          - category
          - name: average_amount
            alias: average
`;
  return { path: `model/views/view_${v}.yml`, content };
}

function model(cubes: number): ModelFile[] {
  return [...Array.from({ length: cubes }, (_, i) => cubeFile(i)), ...Array.from({ length: cubes / 10 }, (_, v) => viewFile(v))];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function time(run: () => unknown): number {
  const started = performance.now();
  run();
  return performance.now() - started;
}

/** Alternates the two, round by round, so a slower moment of a shared machine falls on both alike. */
function measure(files: ModelFile[]): { parse: number; validate: number } {
  const parseOnly = () => files.map((file) => parse(file.content) as unknown);
  const validate = () => validateModel(files);
  for (let i = 0; i < WARMUP_ROUNDS; i++) {
    parseOnly();
    validate();
  }
  const parses: number[] = [];
  const validations: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    parses.push(time(parseOnly));
    validations.push(time(validate));
  }
  return { parse: median(parses), validate: median(validations) };
}

function validation(): void {
  log(
    `bench:data-model  node=${process.version}  cores=${os.availableParallelism()}  ${os.cpus()[0]?.model ?? ''}  ${ROUNDS} rounds after ${WARMUP_ROUNDS} untimed`,
  );
  log(
    `${'model'.padEnd(26)}${'files'.padStart(7)}${'bytes'.padStart(11)}${'parse ms'.padStart(11)}${'validate ms'.padStart(14)}${'validate/parse'.padStart(16)}`,
  );
  let worst = 0;
  for (const cubes of SIZES) {
    const files = model(cubes);
    const result = validateModel(files);
    if (!result.valid || result.cubesCount !== cubes)
      throw new Error(`the generated model should be valid with ${cubes} cubes: ${JSON.stringify(result.errors.slice(0, 3))}`);
    const bytes = files.reduce((sum, file) => sum + Buffer.byteLength(file.content), 0);
    const { parse: parseMs, validate: validateMs } = measure(files);
    const ratio = validateMs / parseMs;
    worst = Math.max(worst, ratio);
    const label = `${cubes} cubes, ${cubes / 10} views`;
    log(
      `${label.padEnd(26)}${String(files.length).padStart(7)}${String(bytes).padStart(11)}${parseMs.toFixed(1).padStart(11)}${validateMs.toFixed(1).padStart(14)}${`${ratio.toFixed(2)}x`.padStart(16)}`,
    );
  }
  log(`medians; parse = the yaml package's parse() of every file, the floor; target: validate within ${TARGET_RATIO}x of parse`);
  log(worst <= TARGET_RATIO ? `within target (worst ${worst.toFixed(2)}x)` : `OVER TARGET: worst ${worst.toFixed(2)}x`);
}

interface Timed {
  result: PushResult;
  pushMs: number;
  buildMs: number;
}

/** One push, timed to its commit, then the build of that commit, which must succeed. */
async function timedPush(client: MapiClient, deploymentId: number, files: ModelFile[]): Promise<Timed> {
  const started = performance.now();
  const result = await client.dataModel.push(deploymentId, files);
  const pushed = performance.now();
  const build = await client.builds.waitFor(deploymentId, result.lastHash as string, { intervalMs: 10, maxIntervalMs: 50 });
  if (build.status !== 'success') throw new Error(`the build of the pushed model failed: ${build.errorText}`);
  return { result, pushMs: pushed - started, buildMs: performance.now() - pushed };
}

/** What every push does before it sends anything: hash every local file and read the branch's hashes. */
async function diffFloor(client: MapiClient, deploymentId: number, files: ModelFile[]): Promise<number> {
  const started = performance.now();
  await Promise.all(files.map((file) => blobHash(file.content)));
  await client.dataModel.hashes(deploymentId);
  return performance.now() - started;
}

/** What storing `files` must cost at least: git writing them as blobs, all in one process (`hash-object -w --stdin-paths`). */
function blobFloor(scratch: string, files: ModelFile[]): number {
  const dir = fs.mkdtempSync(path.join(scratch, 'blobs-'));
  execFileSync('git', ['init', '--quiet', '--bare', path.join(dir, 'repo.git')]);
  const paths = files.map((file, i) => {
    const at = path.join(dir, `${i}.yml`);
    fs.writeFileSync(at, file.content);
    return at;
  });
  const started = performance.now();
  execFileSync('git', ['--git-dir', path.join(dir, 'repo.git'), 'hash-object', '-w', '--stdin-paths'], { input: paths.join('\n') });
  return performance.now() - started;
}

async function pushes(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-bench-data-model-'));
  const token = generateApiKey();
  try {
    const config = loadConfig({
      PORT: '0',
      LOG_LEVEL: 'silent',
      DATA_DIR: dataDir,
      REPOSITORIES_DIR: path.join(dataDir, 'repositories'),
      ADMIN_API_KEY: token,
      RATE_LIMIT_PER_MINUTE: '0',
    });
    const server = await startServer(config, () => undefined);
    try {
      const ca = fs.readFileSync(path.join(dataDir, 'tls', 'localhost.crt'), 'utf8');
      const client = createClient({ baseUrl: server.url, token, ca });
      const deploymentId = unwrap(await client.POST('/build/api/v1/deployments/', { body: { name: 'bench-data-model' } })).id;
      const files = Array.from({ length: PUSH_FILES }, (_, i) => cubeFile(i));
      const first = await timedPush(client, deploymentId, files);
      const changedAt = PUSH_FILES / 2;
      const changed = files.map((file, i) =>
        i === changedAt ? { ...file, content: file.content.replace(`title: Cube ${i}`, `title: Cube ${i}, renamed`) } : file,
      );
      const second = await timedPush(client, deploymentId, changed);
      if (second.result.sent.length !== 1 || second.result.sent[0] !== changed[changedAt]?.path) {
        throw new Error(`the second push should send exactly ${changed[changedAt]?.path}, sent ${second.result.sent.length} files`);
      }
      const diff = median([
        await diffFloor(client, deploymentId, changed),
        await diffFloor(client, deploymentId, changed),
        await diffFloor(client, deploymentId, changed),
      ]);
      const blobs = (sent: ModelFile[]) => median([blobFloor(dataDir, sent), blobFloor(dataDir, sent), blobFloor(dataDir, sent)]);
      const floors = [diff + blobs(files), diff + blobs([changed[changedAt] as ModelFile])];

      log('');
      log(`push: client.dataModel.push over HTTPS to a server in this process (SQLite, repositories in a temporary directory), ${PUSH_FILES} cube files`);
      log(
        `${'push'.padEnd(26)}${'files'.padStart(7)}${'sent'.padStart(7)}${'bytes sent'.padStart(12)}${'push ms'.padStart(10)}${'floor ms'.padStart(10)}${'push/floor'.padStart(12)}${'build ms'.padStart(10)}`,
      );
      const rows = [
        ['first (starter model only)', first],
        ['second (1 file changed)', second],
      ] as const;
      rows.forEach(([label, timed], i) => {
        const { result } = timed;
        const floor = floors[i] as number;
        log(
          `${label.padEnd(26)}${String(result.files).padStart(7)}${String(result.sent.length).padStart(7)}${String(result.bytesSent).padStart(12)}${timed.pushMs.toFixed(1).padStart(10)}${floor.toFixed(1).padStart(10)}${`${(timed.pushMs / floor).toFixed(1)}x`.padStart(12)}${timed.buildMs.toFixed(1).padStart(10)}`,
        );
      });
      log(
        `push ms: from the start to the commit; build ms: from the commit to the build's success. floor: hash the ${PUSH_FILES} local files and read file-hashes (${diff.toFixed(1)} ms), plus git writing the files sent as blobs in one process (medians of 3)`,
      );
      await server.close();
    } catch (error) {
      await server.close().catch(() => undefined);
      throw error;
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  validation();
  if (process.env.BENCH_PUSH !== '0') await pushes();
}

await main();
