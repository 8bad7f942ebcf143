import fs from 'node:fs';
import { UsageError } from './errors.js';

/**
 * `mapi api`'s -f/-F fields, as `gh api` reads them: `key=value`, `key[sub]=value` for an object,
 * `key[]=value` to append to an array. -f keeps the value a string; -F types it: true, false,
 * null, numbers, and `@file` (`@-`: stdin) for a file's text.
 */
export interface Field {
  spec: string;
  typed: boolean;
}

function typedValue(raw: string, spec: string): unknown {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (raw === 'null') return null;
  if (/^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/.test(raw)) return Number(raw);
  if (raw.startsWith('@')) {
    const file = raw.slice(1);
    try {
      return fs.readFileSync(file === '-' ? 0 : file, 'utf8');
    } catch (error) {
      throw new UsageError(`Cannot read ${file === '-' ? 'stdin' : file} for field "${spec}": ${(error as Error).message}`);
    }
  }
  return raw;
}

/** `a[b][]` → ['a', 'b', '']; '' stands for "append". */
function keyPath(key: string, spec: string): string[] {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
  if (!match) throw new UsageError(`Field "${spec}" has a malformed key.`, 'Write key=value, key[sub]=value or key[]=value.');
  const parts = [match[1] as string, ...[...(match[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1] as string)];
  if (parts.slice(0, -1).includes('')) throw new UsageError(`Field "${spec}": [] may only end a key.`);
  return parts;
}

/** The fields as one JSON object, in the order given. */
export function fieldsToObject(fields: readonly Field[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const field of fields) {
    const at = field.spec.indexOf('=');
    if (at <= 0) throw new UsageError(`Field "${field.spec}" is not key=value.`, 'Write -f name=value (a string) or -F count=3 (typed).');
    const parts = keyPath(field.spec.slice(0, at), field.spec);
    const raw = field.spec.slice(at + 1);
    const value = field.typed ? typedValue(raw, field.spec) : raw;
    let node: Record<string, unknown> = root;
    for (const [i, part] of parts.entries()) {
      const last = i === parts.length - 1;
      const next = parts[i + 1];
      if (last) {
        node[part] = value;
      } else if (next === '') {
        const list = node[part] ?? [];
        if (!Array.isArray(list)) throw new UsageError(`Field "${field.spec}": ${part} is already a value, not a list.`);
        list.push(value);
        node[part] = list;
        break;
      } else {
        const child = node[part] ?? {};
        if (typeof child !== 'object' || child === null || Array.isArray(child))
          throw new UsageError(`Field "${field.spec}": ${part} is already a value, not an object.`);
        node[part] = child;
        node = child as Record<string, unknown>;
      }
    }
  }
  return root;
}

/** The fields as query parameters (GET, HEAD, or beside --input): lists repeat their key; objects have no spelling there. */
export function fieldsToQuery(fields: readonly Field[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (const [key, value] of Object.entries(fieldsToObject(fields))) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (typeof item === 'object' && item !== null) throw new UsageError(`Field ${key} is an object, which a query string cannot carry.`);
      pairs.push([key, String(item)]);
    }
  }
  return pairs;
}
