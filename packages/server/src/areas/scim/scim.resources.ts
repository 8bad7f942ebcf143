import { createHash } from 'node:crypto';
import { findAttr, type AttrDef, type SchemaDef } from './scim.attributes.js';
import { invalidValue } from './scim.errors.js';
import { resolvePath, type ResourceKind } from './scim.paths.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** Attributes a client never sets: the server assigns or derives them (RFC 7643 section 3.1). */
const SERVER_ATTRIBUTES = new Set(['id', 'meta', 'schemas']);

function coerce(def: AttrDef, value: unknown, where: string): Json | undefined {
  if (value === null || value === undefined) return undefined;
  if (def.multiValued) {
    // A single value where a list is expected is taken as a one-element list, as some clients send it.
    const list = Array.isArray(value) ? value : [value];
    const items = list.map((item, i) => coerceOne(def, item, `${where}[${i}]`)).filter((v): v is Json => v !== undefined);
    // An empty list is an unassigned attribute (RFC 7643 section 2.5), so it is not kept: a PATCH
    // that removes the last value leaves no attribute (RFC 7644 section 3.5.2.2).
    return items.length > 0 ? items : undefined;
  }
  if (Array.isArray(value)) throw invalidValue(`"${where}" takes a single value, not a list.`);
  return coerceOne(def, value, where);
}

function coerceOne(def: AttrDef, value: unknown, where: string): Json | undefined {
  if (value === null || value === undefined) return undefined;
  switch (def.type) {
    case 'complex': {
      // Entra ID sends a manager as its bare id: a string for a complex attribute means its value.
      if ((typeof value === 'string' || typeof value === 'number') && findAttr(def.subAttributes, 'value')) return { value: String(value) };
      if (typeof value !== 'object' || Array.isArray(value)) throw invalidValue(`"${where}" must be an object.`);
      const out: JsonObject = {};
      for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
        const sub = findAttr(def.subAttributes, key);
        // Unknown sub-attributes are ignored, like unknown attributes (see canonicalize).
        if (!sub || sub.mutability === 'readOnly') continue;
        const coerced = coerce(sub, v, `${where}.${sub.name}`);
        if (coerced !== undefined) out[sub.name] = coerced;
      }
      return Object.keys(out).length > 0 ? out : undefined;
    }
    case 'boolean':
      // Entra ID sends "True" / "False" as strings.
      if (typeof value === 'boolean') return value;
      if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
      throw invalidValue(`"${where}" must be a boolean, got ${JSON.stringify(value)}.`);
    case 'integer':
    case 'decimal':
      if (typeof value === 'number') return value;
      throw invalidValue(`"${where}" must be a number, got ${JSON.stringify(value)}.`);
    default:
      if (typeof value === 'string') return value;
      if (typeof value === 'number' || typeof value === 'boolean') return String(value);
      throw invalidValue(`"${where}" must be a string, got ${JSON.stringify(value)}.`);
  }
}

/**
 * Takes a client's resource body and returns it with every attribute name in canonical case and
 * every value of its declared type. Unknown attributes are ignored (RFC 7644 section 3.3 lets a
 * service provider ignore what it does not support) and read-only ones are dropped (section 3.5.1).
 */
export function canonicalize(body: unknown, schemas: SchemaDef[]): JsonObject {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidValue('The request body must be a JSON object.');
  const [core, ...extensions] = schemas as [SchemaDef, ...SchemaDef[]];
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (SERVER_ATTRIBUTES.has(key.toLowerCase()) || value === null) continue;
    const extension = extensions.find((s) => s.id.toLowerCase() === key.toLowerCase());
    if (extension) {
      const coerced = coerceOne({ ...attrLike(extension), subAttributes: extension.attributes }, value, extension.id);
      if (coerced !== undefined) out[extension.id] = coerced;
      continue;
    }
    if (key.toLowerCase() === 'externalid') {
      if (typeof value !== 'string') throw invalidValue('"externalId" must be a string.');
      out.externalId = value;
      continue;
    }
    const def = findAttr(core.attributes, key);
    if (!def || def.mutability === 'readOnly') continue;
    const coerced = coerce(def, value, def.name);
    if (coerced !== undefined) out[def.name] = coerced;
  }
  return out;
}

function attrLike(schema: SchemaDef): AttrDef {
  return {
    name: schema.id,
    type: 'complex',
    multiValued: false,
    description: '',
    required: false,
    caseExact: false,
    mutability: 'readWrite',
    returned: 'default',
    uniqueness: 'none',
  };
}

/** A weak entity tag over the whole representation: any visible change gives a new one (RFC 7644 section 3.14). */
export function etagOf(resource: JsonObject): string {
  const hash = createHash('sha256').update(JSON.stringify(resource)).digest('base64url').slice(0, 22);
  return `W/"${hash}"`;
}

/**
 * `attributes` / `excludedAttributes` (RFC 7644 section 3.4.2.5): `id` (returned "always", RFC 7643
 * section 3.1), `schemas` and `meta` are always returned. Sub-attributes (`name.familyName`) and extension URNs work;
 * a value filter on an attribute name (`emails[type eq "work"]`) selects the whole attribute.
 */
export function project(resource: JsonObject, _kind: ResourceKind, schemas: SchemaDef[], attributes?: string[], excluded?: string[]): JsonObject {
  if (!attributes?.length && !excluded?.length) return resource;
  const paths = (list: string[]) =>
    list
      .map((p) => {
        const name = p.replace(/\[.*\]/, '');
        // A whole extension, named by its URN.
        const extension = schemas.slice(1).find((s) => s.id.toLowerCase() === name.toLowerCase());
        if (extension) return { top: extension.id, inner: undefined, sub: undefined };
        const resolved = resolvePath(schemas, name);
        if (!resolved) return undefined;
        return {
          top: resolved.core ? resolved.attr.name : resolved.schema.id,
          inner: resolved.core ? resolved.sub?.name : resolved.attr.name,
          sub: resolved.core ? undefined : resolved.sub?.name,
        };
      })
      .filter((p) => p !== undefined);
  const always = new Set(['id', 'schemas', 'meta']);
  if (attributes?.length) {
    const out: JsonObject = {};
    for (const key of Object.keys(resource)) if (always.has(key)) out[key] = resource[key] as Json;
    for (const p of paths(attributes)) {
      if (!Object.hasOwn(resource, p.top)) continue;
      const value = resource[p.top] as Json;
      if (p.inner === undefined) out[p.top] = value;
      else if (Array.isArray(value)) out[p.top] = value.map((item) => pick(item, p.inner as string));
      else out[p.top] = { ...((out[p.top] as JsonObject) ?? {}), ...pick(value, p.inner, p.sub) };
    }
    return out;
  }
  const out: JsonObject = structuredClone(resource);
  for (const p of paths(excluded ?? [])) {
    if (always.has(p.top)) continue;
    const value = out[p.top];
    if (p.inner === undefined) delete out[p.top];
    // A sub-attribute of a multi-valued attribute (members.display) is left out of every element.
    else if (Array.isArray(value)) out[p.top] = value.map((item) => omit(item, p.inner as string, p.sub));
    else if (value !== undefined) out[p.top] = omit(value, p.inner, p.sub);
  }
  return out;
}

/** `value` without `inner` (or without `inner.sub`); non-objects are returned as they are. */
function omit(value: Json, inner: string, sub?: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const out: JsonObject = { ...value };
  if (!Object.hasOwn(out, inner)) return out;
  const v = out[inner];
  if (sub === undefined) delete out[inner];
  else if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
    const rest: JsonObject = { ...v };
    delete rest[sub];
    out[inner] = rest;
  }
  return out;
}

function pick(value: Json, inner: string, sub?: string): JsonObject {
  // Own members only: a user attribute may be named "toString" or "constructor".
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, inner)) return {};
  const v = value[inner] as Json;
  if (sub === undefined) return { [inner]: v };
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.hasOwn(v, sub) ? { [inner]: { [sub]: v[sub] as Json } } : {};
}
