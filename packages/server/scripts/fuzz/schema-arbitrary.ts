import fc from 'fast-check';
import { PoolRef, put, type PoolName, type Reach } from './values.js';

/** A JSON Schema (2020-12, as OpenAPI 3.1 embeds it); `true`/`false` allowed. */
export type Schema = Record<string, any> | boolean;

const MAX_DEPTH = 8;
const MAX_ARRAY = 4;

/** Follows `#/...` references through any number of hops. */
export function makeResolver(document: unknown) {
  const lookup = (ref: string): Schema => {
    if (!ref.startsWith('#/')) throw new Error(`external $ref ${ref} is not supported`);
    let node: any = document;
    for (const raw of ref.slice(2).split('/')) {
      const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      node = node?.[key];
      if (node === undefined) throw new Error(`$ref ${ref} names nothing`);
    }
    return node as Schema;
  };
  return (schema: Schema): Schema => {
    let current = schema;
    for (let hops = 0; typeof current === 'object' && typeof current.$ref === 'string'; hops++) {
      if (hops > 64) throw new Error(`$ref cycle at ${String(current.$ref)}`);
      // Siblings of $ref (2020-12 allows them) are merged over the target.
      const { $ref, ...siblings } = current;
      const target = lookup($ref as string);
      current = Object.keys(siblings).length && typeof target === 'object' ? { ...target, ...siblings } : target;
    }
    return current;
  };
}
export type Resolve = ReturnType<typeof makeResolver>;

/** Which id pool a property or parameter name points at, if any. */
export function poolFor(name: string | undefined, parent?: string): PoolName | undefined {
  if (!name) return undefined;
  const n = name.replace(/Ids?$/, 'Id');
  if (n === 'id' && parent === 'principal') return 'principal';
  if (n === 'id' && parent === 'resource') return 'resource';
  if (n === 'id') return 'item';
  const table: Record<string, PoolName> = {
    deploymentId: 'deployment',
    folderId: 'folder',
    parentId: 'folder',
    workbookId: 'workbook',
    reportId: 'report',
    itemId: 'item',
    userId: 'user',
    createdBy: 'user',
    groupId: 'group',
    principalId: 'principal',
    resourceId: 'resource',
    policyId: 'policy',
    apiKeyId: 'apiKey',
    attributeId: 'attribute',
    agentId: 'agent',
  };
  return table[n];
}

export const reachArb: fc.Arbitrary<Reach> = fc.constantFrom<Reach>(
  'same',
  'same',
  'same',
  'same',
  'same',
  'same',
  'otherDeployment',
  'otherTenant',
  'missing',
);

export function poolRefArb(pool: PoolName, asString = false): fc.Arbitrary<PoolRef> {
  return fc.tuple(fc.nat(), reachArb).map(([pick, reach]) => new PoolRef(pool, pick, reach, asString));
}

/** Open JSON (a schema that says nothing), small and well-formed. */
export const openJson: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 3 }).map((v) => (typeof v === 'string' ? v.replace(/\0/g, '') : v));

/**
 * Strings matching an anchored pattern. fast-check generates from a regular expression without
 * lookarounds: those (a hostname's `(?=.{1,253}$)`) are left out of the generator, and what it
 * generates is kept only when the whole pattern matches.
 */
function matching(source: string): fc.Arbitrary<string> {
  const generator = source.replace(/\(\?<?[=!](?:[^()\\]|\\.)*\)/g, '');
  try {
    return fc.stringMatching(new RegExp(generator, 'u'));
  } catch {
    return fc.string({ minLength: 1, maxLength: 64, unit: 'grapheme-ascii' });
  }
}

function stringArb(schema: Record<string, any>): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = Math.min(schema.maxLength ?? 40, Math.max(min, 40));
  const fits = (s: string) => [...s].length >= min && s.length <= (schema.maxLength ?? Infinity);
  if (schema.format === 'date-time') {
    return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
  }
  if (schema.format === 'email') {
    return fc
      .tuple(fc.stringMatching(/^[a-z][a-z0-9.]{0,15}$/), fc.constantFrom('example.com', 'example.org', 'sub.example.net'))
      .map(([local, domain]) => `${local.replace(/\.+$/, '').replace(/\.\./g, '.')}@${domain}`)
      .filter((s) => !s.startsWith('.') && fits(s));
  }
  if (schema.format === 'uri') return fc.webUrl();
  if (typeof schema.pattern === 'string') {
    const pattern = new RegExp(schema.pattern, 'u');
    const anchored = schema.pattern.startsWith('^');
    const base = anchored ? matching(schema.pattern) : fc.string({ minLength: Math.max(1, min), maxLength: max, unit: 'grapheme-ascii' });
    return base.map((s) => s.slice(0, schema.maxLength ?? 255).replace(/\0/g, '')).filter((s) => pattern.test(s) && fits(s));
  }
  const unit = fc.oneof(
    { weight: 4, arbitrary: fc.constant<'grapheme-ascii'>('grapheme-ascii') },
    { weight: 1, arbitrary: fc.constant<'grapheme'>('grapheme') },
  );
  return unit
    .chain((u) => fc.string({ minLength: min, maxLength: max, unit: u }))
    .map((s) => s.replace(/\0/g, ' '))
    .filter(fits);
}

function integerArb(schema: Record<string, any>, name: string | undefined, parent: string | undefined): fc.Arbitrary<unknown> {
  const min = Math.max(schema.minimum ?? Number.MIN_SAFE_INTEGER, schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : -Infinity);
  const max = Math.min(schema.maximum ?? Number.MAX_SAFE_INTEGER, schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : Infinity);
  const plain = fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: Math.max(min, -1000), max: Math.max(Math.min(max, 1000), Math.max(min, -1000)) }) },
    { weight: 1, arbitrary: fc.integer({ min, max }) },
    { weight: 1, arbitrary: fc.constantFrom(min, max) },
  );
  const pool = poolFor(name, parent);
  return pool ? fc.oneof({ weight: 5, arbitrary: poolRefArb(pool) }, { weight: 1, arbitrary: plain }) : plain;
}

function numberArb(schema: Record<string, any>): fc.Arbitrary<number> {
  const min = schema.minimum ?? -1e12;
  const max = schema.maximum ?? 1e12;
  return fc.oneof(
    fc.integer({ min: Math.max(min, -1000), max: Math.min(max, 1000) }),
    fc.double({ min, max, noNaN: true, noDefaultInfinity: true }).map((x) => (Object.is(x, -0) ? 0 : x)),
  );
}

export interface GenContext {
  resolve: Resolve;
  /** Names of keys for free-form maps under a property (user attribute names for `values`). */
  mapKeys?: (property: string | undefined) => fc.Arbitrary<string> | undefined;
}

/**
 * An arbitrary of values valid against `schema`. Property names steer integer ids to pools of real
 * rows. Past MAX_DEPTH only what is required is generated, so recursive schemas stay finite.
 */
export function arbitraryFor(schema: Schema, ctx: GenContext, name?: string, parent?: string, depth = 0): fc.Arbitrary<unknown> {
  const s = ctx.resolve(schema);
  if (
    s === true ||
    (typeof s === 'object' && Object.keys(s).filter((k) => !['description', 'title', 'deprecated', 'default', 'examples'].includes(k)).length === 0)
  )
    return openJson;
  if (s === false) return fc.constant(null);
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  if (Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) {
    const options = (s.anyOf ?? s.oneOf) as Schema[];
    return fc.oneof(...options.map((o) => arbitraryFor(o, ctx, name, parent, depth)));
  }
  if (Array.isArray(s.allOf)) {
    const parts = (s.allOf as Schema[]).map((p) => ctx.resolve(p)).filter((p): p is Record<string, any> => typeof p === 'object');
    const merged = parts.reduce<Record<string, any>>(
      (acc, p) => ({ ...acc, ...p, properties: { ...acc.properties, ...p.properties }, required: [...(acc.required ?? []), ...(p.required ?? [])] }),
      {},
    );
    const { allOf: _allOf, ...rest } = s;
    return arbitraryFor({ ...merged, ...rest, properties: { ...merged.properties, ...rest.properties } }, ctx, name, parent, depth);
  }
  if (Array.isArray(s.type)) return fc.oneof(...(s.type as string[]).map((t) => arbitraryFor({ ...s, type: t }, ctx, name, parent, depth)));
  switch (s.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return integerArb(s, name, parent);
    case 'number':
      return numberArb(s);
    case 'string':
      return stringArb(s);
    case 'array':
      return arrayArb(s, ctx, name, depth);
    case 'object':
      return objectArb(s, ctx, name, depth);
    default:
      if (s.properties) return objectArb(s, ctx, name, depth);
      return openJson;
  }
}

function arrayArb(s: Record<string, any>, ctx: GenContext, name: string | undefined, depth: number) {
  const min = s.minItems ?? 0;
  const max = depth >= MAX_DEPTH ? min : Math.min(s.maxItems ?? MAX_ARRAY, Math.max(min, MAX_ARRAY));
  const item = arbitraryFor(s.items ?? true, ctx, name, name, depth + 1);
  return s.uniqueItems
    ? fc.uniqueArray(item, { minLength: min, maxLength: max, selector: (v) => JSON.stringify(v) })
    : fc.array(item, { minLength: min, maxLength: max });
}

function objectArb(s: Record<string, any>, ctx: GenContext, name: string | undefined, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = (s.properties ?? {}) as Record<string, Schema>;
  const required = new Set<string>(s.required ?? []);
  const keys = Object.keys(properties).filter((k) => depth < MAX_DEPTH || required.has(k));
  const fields = keys.map((k) =>
    fc.tuple(fc.constant(k), required.has(k) ? fc.constant(true) : fc.boolean(), arbitraryFor(properties[k]!, ctx, k, name, depth + 1)),
  );
  const extra = s.additionalProperties;
  let extras: fc.Arbitrary<Array<[string, unknown]>> = fc.constant([]);
  if (extra !== false && extra !== undefined && depth < MAX_DEPTH && Object.keys(properties).length === 0) {
    const keyArb =
      ctx.mapKeys?.(name) ??
      fc.oneof(fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9_]{0,12}$/), fc.constantFrom('__proto__', 'constructor', 'toString', 'valueOf', ''));
    extras = fc.array(fc.tuple(keyArb, arbitraryFor(extra === true ? {} : extra, ctx, undefined, name, depth + 1)), { maxLength: 4 });
  }
  return fc.tuple(fc.tuple(...fields), extras).map(([chosen, more]) => {
    const out: Record<string, unknown> = {};
    for (const [k, include, v] of chosen) if (include) put(out, k, v);
    for (const [k, v] of more) if (!(k in properties)) put(out, k, v);
    return out;
  });
}
