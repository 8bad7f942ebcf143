import { scimPatch, type ScimPatchOperation } from 'scim-patch';
import { parse, stringify, type Filter } from 'scim2-parse-filter';
import { findAttr, PATCH_SCHEMA, type SchemaDef } from './scim.attributes.js';
import { invalidPath, invalidSyntax, invalidValue, noTarget, ScimError } from './scim.errors.js';
import { resolvePath } from './scim.paths.js';
import type { Json, JsonObject } from './scim.resources.js';

/**
 * PATCH (RFC 7644 section 3.5.2) in the forms identity providers send: operation names in any
 * case, path-less `add`/`replace` whose keys are dotted paths or extension URNs, removal of
 * members by a list of values, filtered paths such as `members[value eq "…"]`, attribute names in
 * any case. Operations are rewritten into canonical RFC form here and applied by `scim-patch`;
 * the result is then validated like a PUT body, so a PATCH can never store what a PUT could not.
 */
export function applyPatch(resource: JsonObject, body: unknown, schemas: SchemaDef[]): { resource: JsonObject; paths: string[] } {
  const operations = readOperations(body);
  const canonical = operations.flatMap((op, i) => normalize(op, i, schemas));
  // The canonical path of every operation, so the caller can tell which attributes were named.
  const paths = canonical.map((op) => (op as { path?: string }).path).filter((p): p is string => typeof p === 'string');
  try {
    const patched = scimPatch({ ...resource, meta: {} } as never, canonical, { mutateDocument: false, treatMissingAsAdd: true }) as unknown as JsonObject;
    return { resource: patched, paths };
  } catch (error) {
    const message = (error as Error).message;
    if (/target|not found/i.test(message)) throw noTarget(message);
    throw invalidValue(message);
  }
}

function readOperations(body: unknown): Array<Record<string, unknown>> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidSyntax('A PATCH body must be a PatchOp message object.');
  const entries = Object.entries(body as Record<string, unknown>);
  const schemas = entries.find(([k]) => k.toLowerCase() === 'schemas')?.[1];
  if (schemas !== undefined && !(Array.isArray(schemas) && schemas.includes(PATCH_SCHEMA))) {
    throw invalidSyntax(`A PATCH body's "schemas" must contain "${PATCH_SCHEMA}".`);
  }
  const operations = entries.find(([k]) => k.toLowerCase() === 'operations')?.[1];
  if (!Array.isArray(operations) || operations.length === 0) throw invalidSyntax('A PATCH body needs a non-empty "Operations" array.');
  if (operations.length > 1000) throw invalidValue('A PATCH may carry at most 1000 operations.');
  return operations.map((op, i) => {
    if (typeof op !== 'object' || op === null || Array.isArray(op)) throw invalidSyntax(`Operations[${i}] must be an object.`);
    // Member names of the operation itself ("Op", "Path", "Value") are matched ignoring case too.
    return Object.fromEntries(Object.entries(op as Record<string, unknown>).map(([k, v]) => [k.toLowerCase(), v]));
  });
}

function normalize(raw: Record<string, unknown>, index: number, schemas: SchemaDef[]): ScimPatchOperation[] {
  const op = typeof raw.op === 'string' ? raw.op.toLowerCase() : '';
  if (op !== 'add' && op !== 'replace' && op !== 'remove') {
    throw invalidSyntax(`Operations[${index}].op must be "add", "replace" or "remove", got ${JSON.stringify(raw.op)}.`);
  }
  const path = raw.path;
  if (path !== undefined && (typeof path !== 'string' || path.trim() === '')) throw invalidPath(`Operations[${index}].path must be a non-empty string.`);
  const value = raw.value as Json | undefined;

  // A path naming a whole extension schema: its URN holds a dot ("2.0") that must not split it,
  // so the operation is applied attribute by attribute, as on a complex attribute (RFC 7644 3.5.2).
  const extension = typeof path === 'string' ? extensionNamed(path.trim(), schemas) : undefined;

  if (op === 'remove') {
    if (path === undefined) throw noTarget(`Operations[${index}]: "remove" needs a path (RFC 7644 section 3.5.2.2).`);
    if (extension) return extension.attributes.map((a) => ({ op: 'remove', path: `${extension.id}:${a.name}` }) as ScimPatchOperation);
    const canonical = canonicalPath(path, schemas);
    // `{"op":"remove","path":"members","value":[{"value":"id"}]}` removes just those members.
    if (Array.isArray(value) && !canonical.includes('[')) {
      return value.map((item) => {
        const v = typeof item === 'object' && item !== null && !Array.isArray(item) ? (item as JsonObject).value : item;
        if (typeof v !== 'string' && typeof v !== 'number') throw invalidValue(`Operations[${index}].value must list objects with a "value".`);
        return { op: 'remove', path: `${canonical}[value eq ${JSON.stringify(String(v))}]` } as ScimPatchOperation;
      });
    }
    return [{ op: 'remove', path: canonical } as ScimPatchOperation];
  }

  if (value === undefined) throw invalidValue(`Operations[${index}]: "${op}" needs a value.`);
  if (extension) {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw invalidValue(`Operations[${index}]: the value for ${extension.id} must be an object of its attributes.`);
    return extensionOps(op, extension, value, schemas);
  }
  if (path !== undefined) return [{ op, path: canonicalPath(path, schemas), value } as ScimPatchOperation];

  // Without a path the value is an object of attributes to add or replace (RFC 7644 3.5.2.1 / 3.5.2.3);
  // its keys may be dotted paths ("name.givenName") or URNs of extension attributes.
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidValue(`Operations[${index}]: without a path, the value must be an object of attributes.`);
  }
  const out: ScimPatchOperation[] = [];
  for (const [key, v] of Object.entries(value)) {
    if (['id', 'schemas', 'meta'].includes(key.toLowerCase())) continue;
    const named = extensionNamed(key, schemas);
    if (named && typeof v === 'object' && v !== null && !Array.isArray(v)) {
      out.push(...extensionOps(op, named, v, schemas));
      continue;
    }
    // Unknown attributes are ignored, as in POST and PUT.
    if (!resolvePath(schemas, key.replace(/\[.*\]/, ''))) continue;
    out.push({ op, path: canonicalPath(key, schemas), value: v } as ScimPatchOperation);
  }
  return out;
}

/** The extension schema (not the core one) whose URN is exactly `path`, ignoring case. */
function extensionNamed(path: string, schemas: SchemaDef[]): SchemaDef | undefined {
  return schemas.slice(1).find((s) => s.id.toLowerCase() === path.toLowerCase());
}

/** `add`/`replace` of an extension's attributes; attributes it does not define are ignored, as in POST and PUT. */
function extensionOps(op: 'add' | 'replace', extension: SchemaDef, value: JsonObject, schemas: SchemaDef[]): ScimPatchOperation[] {
  return Object.entries(value)
    .filter(([sub]) => findAttr(extension.attributes, sub.split('.')[0] ?? sub))
    .map(([sub, subValue]) => ({ op, path: canonicalPath(`${extension.id}:${sub}`, schemas), value: subValue }) as ScimPatchOperation);
}

/** Rewrites a PATCH path with canonical attribute names; an unknown attribute is `invalidPath`. */
export function canonicalPath(path: string, schemas: SchemaDef[]): string {
  let prefix = '';
  let rest = path.trim();
  const schema = schemas.find((s) => rest.toLowerCase().startsWith(`${s.id.toLowerCase()}:`));
  if (schema) {
    rest = rest.slice(schema.id.length + 1);
    if (schema !== schemas[0]) prefix = `${schema.id}:`;
  }
  const match = /^([^.[\]]+)(?:\[(.*)\])?(?:\.([^.[\]]+))?$/.exec(rest);
  if (!match) throw invalidPath(`The path ${JSON.stringify(path)} is not a valid attribute path (RFC 7644 section 3.5.2).`);
  const [, name = '', filter, subName] = match;
  const resolved = resolvePath(prefix ? [schemas.find((s) => `${s.id}:` === prefix) as SchemaDef] : schemas, name);
  if (!resolved) throw invalidPath(`Unknown attribute ${JSON.stringify(name)} in path ${JSON.stringify(path)}; /Schemas lists the attributes.`);
  // Read-only attributes (id, meta, a user's groups) cannot be targeted (RFC 7644 section 3.5.2).
  if (resolved.attr.mutability === 'readOnly' || (resolved.core && ['id', 'meta'].includes(resolved.attr.name))) {
    throw new ScimError(400, `"${resolved.attr.name}" is read-only; change group membership through the Group resource.`, 'mutability');
  }
  let out = `${prefix}${resolved.attr.name}`;
  if (filter !== undefined) {
    if (!resolved.attr.multiValued) throw invalidPath(`"${resolved.attr.name}" is not multi-valued, so "${path}" cannot filter it.`);
    let ast: Filter;
    try {
      ast = parse(filter);
    } catch (error) {
      throw invalidPath(`The filter in path ${JSON.stringify(path)} is not valid: ${(error as Error).message}.`);
    }
    out += `[${stringify(renameSubAttributes(ast, resolved.attr.subAttributes ?? []))}]`;
  }
  if (subName !== undefined) {
    const sub = findAttr(resolved.attr.subAttributes, subName);
    if (!sub) throw invalidPath(`"${resolved.attr.name}" has no sub-attribute ${JSON.stringify(subName)}.`);
    out += `.${sub.name}`;
  }
  return out;
}

function renameSubAttributes(filter: Filter, subs: Array<{ name: string }>): Filter {
  switch (filter.op) {
    case 'and':
    case 'or':
      return { ...filter, filters: filter.filters.map((f) => renameSubAttributes(f, subs)) };
    case 'not':
      return { ...filter, filter: renameSubAttributes(filter.filter, subs) };
    case '[]':
      return filter;
    default: {
      const sub = subs.find((s) => s.name.toLowerCase() === filter.attrPath.toLowerCase());
      // A filter on a sub-attribute that does not exist could never select a value.
      if (!sub) throw invalidPath(`There is no sub-attribute ${JSON.stringify(filter.attrPath)} to filter on.`);
      return { ...filter, attrPath: sub.name };
    }
  }
}
