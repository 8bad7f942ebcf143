/**
 * `npm run bench:data-model`: the data-model validator on generated models of 100 and 1,000
 * cubes, beside its floor measured in the same run: parsing the same YAML files with the yaml
 * package and nothing else. Every model file has to be parsed, so validation can never beat
 * that; the target is to stay within 3x of it.
 *
 * Each cube is a file of its own with 5 dimensions, 4 measures (one reading two others) and a
 * join to the cube before it; there is a view per 10 cubes, over a join path three cubes long.
 * BENCH_ROUNDS (default 15) timed rounds per size, after 3 untimed ones; medians are printed.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parse } from 'yaml';
import { validateModel, type ModelFile } from '../src/areas/data-model/validator/index.js';

const SIZES = [100, 1000];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const WARMUP_ROUNDS = 3;
const TARGET_RATIO = 3;
const log = (line: string) => process.stdout.write(`${line}\n`);

function cubeFile(i: number): ModelFile {
  const join = i === 0 ? '' : `
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

function main(): void {
  log(`bench:data-model  node=${process.version}  cores=${os.availableParallelism()}  ${os.cpus()[0]?.model ?? ''}  ${ROUNDS} rounds after ${WARMUP_ROUNDS} untimed`);
  log(`${'model'.padEnd(26)}${'files'.padStart(7)}${'bytes'.padStart(11)}${'parse ms'.padStart(11)}${'validate ms'.padStart(14)}${'validate/parse'.padStart(16)}`);
  let worst = 0;
  for (const cubes of SIZES) {
    const files = model(cubes);
    const result = validateModel(files);
    if (!result.valid || result.cubesCount !== cubes) throw new Error(`the generated model should be valid with ${cubes} cubes: ${JSON.stringify(result.errors.slice(0, 3))}`);
    const bytes = files.reduce((sum, file) => sum + Buffer.byteLength(file.content), 0);
    const { parse: parseMs, validate: validateMs } = measure(files);
    const ratio = validateMs / parseMs;
    worst = Math.max(worst, ratio);
    const label = `${cubes} cubes, ${cubes / 10} views`;
    log(`${label.padEnd(26)}${String(files.length).padStart(7)}${String(bytes).padStart(11)}${parseMs.toFixed(1).padStart(11)}${validateMs.toFixed(1).padStart(14)}${`${ratio.toFixed(2)}x`.padStart(16)}`);
  }
  log(`medians; parse = the yaml package's parse() of every file, the floor; target: validate within ${TARGET_RATIO}x of parse`);
  log(worst <= TARGET_RATIO ? `within target (worst ${worst.toFixed(2)}x)` : `OVER TARGET: worst ${worst.toFixed(2)}x`);
}

main();
