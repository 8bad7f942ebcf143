import fs from 'node:fs';
import { parse } from 'yaml';
import { UsageError } from '../errors.js';

/** The three places a generated command takes its JSON body from, merged in this order. */
export interface BodyInput {
  data?: string;
  file?: string;
  set: string[];
}

const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/**
 * A `--set` value, typed the way people expect on a command line: numbers, true, false and null
 * as themselves, `[...]`, `{...}` and `"..."` as JSON, anything else as the string it is. A string
 * that looks like a number is written as JSON: `--set 'code="007"'`.
 */
export function parseSetValue(text: string): unknown {
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text === 'null') return null;
  if (NUMBER.test(text) && Number.isFinite(Number(text))) return Number(text);
  if (/^[[{"]/.test(text)) {
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new UsageError(`--set value ${text} is not valid JSON: ${(error as Error).message}`, 'Quote it for the shell, e.g. --set \'tags=["a","b"]\'.');
    }
  }
  return text;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Objects merged key by key (a later source wins on a leaf); anything else is replaced whole. */
function merge(base: unknown, over: unknown): unknown {
  if (!isObject(base) || !isObject(over)) return over;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) out[key] = key in out ? merge(out[key], value) : value;
  return out;
}

/** `a.b.c=value` → {a: {b: {c: value}}}: dotted keys reach into nested objects. */
export function setAssignment(target: Record<string, unknown>, assignment: string): void {
  const eq = assignment.indexOf('=');
  if (eq <= 0) throw new UsageError(`--set ${assignment} is not key=value.`, 'For example --set name=Finance or --set settings.enabled=true.');
  const keys = assignment.slice(0, eq).split('.');
  if (keys.some((key) => key === '')) throw new UsageError(`--set ${assignment}: the key has an empty part.`);
  let node = target;
  for (const key of keys.slice(0, -1)) {
    if (!isObject(node[key])) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys.at(-1) as string] = parseSetValue(assignment.slice(eq + 1));
}

/** A file (`-`: stdin) as JSON or YAML; YAML reads JSON too, and its errors name the line. */
function readBodyFile(file: string): unknown {
  const where = file === '-' ? 'stdin' : file;
  let text: string;
  try {
    text = fs.readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    throw new UsageError(`Cannot read ${where}: ${(error as Error).message}`);
  }
  try {
    return parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`${where} is not valid JSON or YAML: ${(error as Error).message.split('\n')[0]}`);
  }
}

/** The body to send, or undefined when none of --data, --file and --set was given. */
export function buildBody(input: BodyInput): unknown {
  let body: unknown;
  let given = false;
  if (input.data !== undefined) {
    try {
      body = JSON.parse(input.data) as unknown;
    } catch (error) {
      throw new UsageError(`--data is not valid JSON: ${(error as Error).message}`, 'Quote it for the shell: --data \'{"name": "Finance"}\'.');
    }
    given = true;
  }
  if (input.file !== undefined) {
    body = given ? merge(body, readBodyFile(input.file)) : readBodyFile(input.file);
    given = true;
  }
  if (input.set.length > 0) {
    if (given && !isObject(body)) throw new UsageError('--set adds fields to an object, but --data or --file gave another JSON value.');
    const fields: Record<string, unknown> = isObject(body) ? structuredClone(body) : {};
    for (const assignment of input.set) setAssignment(fields, assignment);
    body = fields;
    given = true;
  }
  return given ? body : undefined;
}
