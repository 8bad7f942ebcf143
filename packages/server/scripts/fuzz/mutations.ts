import fc from 'fast-check';
import type { Resolve, Schema } from './schema-arbitrary.js';
import { poolFor } from './schema-arbitrary.js';
import { clone, Deep, PoolRef, put, RawJson } from './values.js';

/**
 * Invalid and hostile request bodies, made from a valid one: one change at one place. Whether the
 * result really violates the schema is decided later, by Ajv, and only when the server accepted it.
 */

type Path = Array<string | number>;
interface Location {
  path: Path;
  schema: Record<string, any> | undefined;
  value: unknown;
  name: string | undefined;
  parent: string | undefined;
}

const isPlain = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype;

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (v instanceof PoolRef) return 'integer';
  if (v instanceof RawJson || v instanceof Deep) return 'unknown';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v === 'object' ? 'object' : typeof v;
}

/** The branch of an anyOf/oneOf (or a type list) that `value` was generated from. */
function narrow(schema: Schema | undefined, value: unknown, resolve: Resolve): Record<string, any> | undefined {
  if (schema === undefined || typeof schema === 'boolean') return undefined;
  const s = resolve(schema) as Record<string, any>;
  if (typeof s !== 'object') return undefined;
  const options = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (options) {
    for (const option of options) {
      const o = resolve(option);
      if (typeof o !== 'object') continue;
      const types = o.type === undefined ? (o.anyOf || o.oneOf || o.enum ? undefined : ['any']) : ([] as string[]).concat(o.type);
      const t = jsonType(value);
      if (types === undefined || types.includes('any') || types.includes(t) || (t === 'integer' && types.includes('number'))) {
        if (o.enum && !o.enum.includes(value)) continue;
        return narrow(o, value, resolve);
      }
    }
    return undefined;
  }
  return s;
}

function locations(
  value: unknown,
  schema: Schema | undefined,
  resolve: Resolve,
  path: Path = [],
  name?: string,
  parent?: string,
  out: Location[] = [],
): Location[] {
  const s = narrow(schema, value, resolve);
  out.push({ path, schema: s, value, name, parent });
  if (path.length > 12) return out;
  if (Array.isArray(value)) {
    value.forEach((v, i) => locations(v, s?.items, resolve, [...path, i], name, name, out));
  } else if (isPlain(value)) {
    for (const k of Object.keys(value)) {
      const child = s?.properties?.[k] ?? (typeof s?.additionalProperties === 'object' ? s.additionalProperties : undefined);
      locations(value[k], child, resolve, [...path, k], k, name, out);
    }
  }
  return out;
}

function setAt(root: unknown, path: Path, next: unknown | typeof REMOVE): unknown {
  if (path.length === 0) return next;
  const copy = clone(root);
  let node: any = copy;
  for (const step of path.slice(0, -1)) node = node[step];
  const last = path[path.length - 1]!;
  if (next === REMOVE) {
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete node[last];
  } else if (Array.isArray(node)) node[Number(last)] = next;
  else put(node, String(last), next);
  return copy;
}
const REMOVE = Symbol('remove');

export interface Mutated {
  value: unknown;
  label: string;
}

const WRONG_TYPES: unknown[] = [42, 'text', true, null, [], {}, 1.5, '1'];
const ODD_NUMBERS = ['1.0', '1e0', '-0', '1E+0', '0.0000001e7', '9007199254740993', '1e400', '-1e400', '123456789012345678901234567890'];
export const HOSTILE_STRINGS = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udc00y',
  '\udbff',
  '\u202e\u200b\ufeff',
  '🏳️‍🌈'.repeat(3),
  '%00',
  '../../etc/passwd',
  "'; drop table users; --",
  '${7*7}{{7*7}}',
  '\\',
  '"',
  ' ',
  '\n\t',
];

/** Every change that applies at a location. */
function changes(loc: Location, resolve: Resolve): Array<() => Mutated> {
  const s = loc.schema;
  const at = loc.path.join('.') || '(body)';
  const out: Array<() => Mutated> = [];
  const v = loc.value;
  const replace = (label: string, next: unknown) => () => ({ value: next, label: `${label} at ${at}` });
  const type = s?.type;
  if (isPlain(v)) {
    for (const k of (s?.required ?? []) as string[]) if (k in v) out.push(() => ({ value: REMOVE_KEY(k), label: `missing required "${k}" at ${at}` }));
    if (s?.additionalProperties === false) out.push(replace('unknown field', addKey(v, 'unexpectedField', 1)));
    out.push(replace('NUL in a key', addKey(v, 'a\u0000b', 'x')));
    out.push(replace('prototype keys', addKey(addKey(v, '__proto__', { polluted: true }), 'constructor', { prototype: { polluted: true } })));
  }
  if (s === undefined || (typeof s === 'object' && s.additionalProperties !== undefined && s.additionalProperties !== false)) {
    for (const depth of [33, 200, 1000, 5000]) out.push(replace(`nesting ${depth} deep`, new Deep(depth, depth % 2 ? 'object' : 'array')));
  }
  if (type !== undefined || s?.enum) {
    for (const w of WRONG_TYPES) out.push(replace(`wrong type ${JSON.stringify(w)}`, w));
  }
  if (typeof v === 'string') {
    for (const h of HOSTILE_STRINGS) out.push(replace(`odd string ${JSON.stringify(h)}`, v.slice(0, 8) + h));
    out.push(replace('100k-character string', 'x'.repeat(100_000)));
    if (s?.maxLength !== undefined) out.push(replace(`longer than ${s.maxLength}`, 'a'.repeat(s.maxLength + 1)));
    if (s?.minLength) out.push(replace('empty string', ''));
    if (s?.pattern) out.push(replace('pattern mismatch', ' '), replace('pattern mismatch', '-'));
    if (s?.format === 'date-time') out.push(replace('bad date-time', 'yesterday'), replace('bad date-time', '2024-02-30T25:61:00Z'));
    if (s?.format === 'email') out.push(replace('bad email', 'not-an-email'), replace('bad email', '@'));
  }
  if (s?.enum) out.push(replace('not in enum', `NOT_${String(v)}`), replace('enum in lower case', String(v).toLowerCase()));
  if (type === 'integer' || type === 'number' || typeof v === 'number' || v instanceof PoolRef) {
    for (const raw of ODD_NUMBERS) out.push(replace(`number spelled ${raw}`, new RawJson(raw)));
    for (const n of [0, -1, 0.5, 2 ** 53, -(2 ** 53), 1e308, Number.MIN_VALUE]) out.push(replace(`number ${n}`, n));
    if (s?.minimum !== undefined) out.push(replace('below minimum', s.minimum - 1));
    if (s?.maximum !== undefined) out.push(replace('above maximum', s.maximum + 1));
    const pool = poolFor(loc.name, loc.parent);
    if (pool) out.push(replace('id of another tenant', new PoolRef(pool, 0, 'otherTenant')), replace('id as a string', `${0}1`));
  }
  if (Array.isArray(v)) {
    if (s?.maxItems !== undefined && v.length > 0)
      out.push(
        replace(
          `more than ${s.maxItems} items`,
          Array.from({ length: s.maxItems + 1 }, (_, i) => v[i % v.length]),
        ),
      );
    if (s?.minItems) out.push(replace('empty array', []));
    if (v.length > 0) out.push(replace('repeated items', [...v, ...v]));
  }
  void resolve;
  return out;
}

/** Placeholder replaced by setAt: the key removal is built when the location is known. */
function REMOVE_KEY(key: string) {
  return { [REMOVE_MARK]: key };
}
const REMOVE_MARK = '\u0001remove';

function addKey(v: Record<string, unknown>, key: string, value: unknown) {
  const copy = clone(v);
  put(copy, key, value);
  return copy;
}

/** A copy of `value` with every leaf that passes `test` replaced. */
function everywhere(value: unknown, test: (v: unknown) => boolean, replace: (v: unknown) => unknown): unknown {
  if (test(value)) return replace(value);
  if (Array.isArray(value)) return value.map((v) => everywhere(v, test, replace));
  if (isPlain(value)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value)) put(out, k, everywhere(value[k], test, replace));
    return out;
  }
  return value;
}

/** An arbitrary of one change to `valid`: a place in it, then a change that applies there. */
export function mutationArb(valid: unknown, schema: Schema | undefined, resolve: Resolve): fc.Arbitrary<Mutated> {
  const locs = locations(valid, schema, resolve);
  const whole: Mutated[] = [[], 'a string', 7, null, true].map((w) => ({ value: w, label: `body is ${JSON.stringify(w)}` }));
  return fc.tuple(fc.nat(), fc.nat(), fc.nat({ max: 19 })).map(([i, j, k]) => {
    if (k === 0) return whole[j % whole.length]!;
    // Every number, or every string, at once: reaches fields a single change rarely lands on.
    if (k === 1) {
      const raw = ['1e400', '-1e400', '1.0', '9007199254740993', '-0'][j % 5]!;
      return {
        value: everywhere(
          valid,
          (v) => typeof v === 'number' || v instanceof PoolRef,
          () => new RawJson(raw),
        ),
        label: `every number spelled ${raw}`,
      };
    }
    if (k === 2) {
      const odd = ['\u0000', '\ud800', 'x'.repeat(5000)][j % 3]!;
      return {
        value: everywhere(
          valid,
          (v) => typeof v === 'string',
          (v) => `${String(v)}${odd}`,
        ),
        label: `every string ends with ${JSON.stringify(odd.slice(0, 8))}`,
      };
    }
    const loc = locs[i % locs.length]!;
    const options = changes(loc, resolve);
    if (options.length === 0) return whole[j % whole.length]!;
    const made = options[j % options.length]!();
    const marked = isPlain(made.value) ? (made.value as Record<string, unknown>)[REMOVE_MARK] : undefined;
    if (typeof marked === 'string') return { value: setAt(valid, [...loc.path, marked], REMOVE), label: made.label };
    return { value: setAt(valid, loc.path, made.value), label: made.label };
  });
}
