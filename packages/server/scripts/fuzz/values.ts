/**
 * Values a generated request carries before it is sent: plain JSON plus three markers that the
 * serializer turns into text. A pool reference becomes a real id of the world at send time (so a
 * plan generated in advance still hits rows that exist then); raw JSON keeps number spellings such
 * as `1.0` or `1e0` that JSON.stringify would normalise; deep nesting is written without recursion.
 */

/** Which rows an id should name. */
export type PoolName =
  | 'deployment'
  | 'folder'
  | 'workbook'
  | 'report'
  | 'item'
  | 'user'
  | 'group'
  | 'principal'
  | 'resource'
  | 'policy'
  | 'apiKey'
  | 'attribute'
  | 'agent'
  | 'scimUser'
  | 'scimGroup'
  | 'any';

/** Where the id comes from: this tenant's rows, another deployment's, another tenant's, or none. */
export type Reach = 'same' | 'otherDeployment' | 'otherTenant' | 'missing';

export class PoolRef {
  constructor(
    readonly pool: PoolName,
    readonly pick: number,
    readonly reach: Reach,
    readonly asString = false,
  ) {}
}

export class RawJson {
  constructor(readonly text: string) {}
}

export class Deep {
  constructor(
    readonly depth: number,
    readonly kind: 'array' | 'object',
  ) {}
}

export type IdResolver = (ref: PoolRef) => number;

export function deepText(deep: Deep): string {
  return deep.kind === 'array' ? '['.repeat(deep.depth) + ']'.repeat(deep.depth) : '{"a":'.repeat(deep.depth) + '1' + '}'.repeat(deep.depth);
}

/** The table an id names when a sibling `type` says which (`{type: "GROUP", id}`, `{type: "REPORT", id}`). */
const TYPED_POOLS: Record<string, PoolName> = {
  USER: 'user',
  GROUP: 'group',
  DEPLOYMENT: 'deployment',
  FOLDER: 'folder',
  WORKBOOK: 'workbook',
  REPORT: 'report',
};

export function typedPool(type: unknown): PoolName | undefined {
  return typeof type === 'string' ? TYPED_POOLS[type] : undefined;
}

/** JSON text of a planned value, markers resolved. Recursion is bounded by the generators' depth. */
export function serialize(value: unknown, resolve: IdResolver): string {
  if (value instanceof RawJson) return value.text;
  if (value instanceof Deep) return deepText(value);
  if (value instanceof PoolRef) return value.asString ? JSON.stringify(String(resolve(value))) : String(resolve(value));
  if (Array.isArray(value)) return `[${value.map((v) => serialize(v, resolve)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const pool = typedPool(record.type);
    return `{${Object.keys(record)
      .map((k) => {
        let v = record[k];
        if (k === 'id' && pool && v instanceof PoolRef) v = new PoolRef(pool, v.pick, v.reach, v.asString);
        return `${JSON.stringify(k)}:${serialize(v, resolve)}`;
      })
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Sets a key as an own property, so `__proto__` is a key like any other and never a prototype. */
export function put(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A copy of a planned value (markers are immutable and shared). */
export function clone<T>(value: T): T {
  if (Array.isArray(value)) return value.map(clone) as T;
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value)) put(out, k, clone((value as Record<string, unknown>)[k]));
    return out as T;
  }
  return value;
}

/** Whether a planned value holds a marker of `kind` anywhere. */
export function contains(value: unknown, test: (v: unknown) => boolean): boolean {
  if (test(value)) return true;
  if (Array.isArray(value)) return value.some((v) => contains(v, test));
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.keys(value).some((k) => test(k) || contains((value as Record<string, unknown>)[k], test));
  }
  return false;
}
