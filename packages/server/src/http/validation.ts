import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import type { FieldError } from '../shared/problems.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../shared/json-depth.js';

// ajv-formats ships CommonJS with a default export that ESM sees nested.
const addFormats = ((ajvFormats as unknown as { default?: unknown }).default ?? ajvFormats) as (ajv: Ajv) => Ajv;

/**
 * Two validators: bodies are JSON and must carry the declared types exactly ("5" is not an id),
 * while path and query parameters are strings on the wire and are coerced to their declared type.
 */
export function installValidators(app: FastifyInstance, sharedSchemas: object[]): void {
  const compilers = compilersFor(sharedSchemas);
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const key = `${httpPart}\u0000${JSON.stringify(schema)}`;
    const compile = (): ValidateFunction => {
      let compiled = compilers.compiled.get(key);
      if (!compiled) {
        compiled = httpPart === 'body' ? compilers.body.compile(boundOpenJson(schema) as object) : compilers.param.compile(schema);
        compilers.compiled.set(key, compiled);
      }
      return compiled;
    };
    // Compiled on the route's first request, not at start: a process serves a few of its hundreds
    // of routes, and compiling them all took most of a start's seconds.
    let compiled: ValidateFunction | undefined = compilers.compiled.get(key);
    const validate =
      compiled ??
      (((data: unknown) => {
        compiled ??= compile();
        const valid = compiled(data);
        validate.errors = compiled.errors;
        return valid;
      }) as ValidateFunction);
    if (httpPart === 'params') return canonicalIntegers(schema, validate, CANONICAL_ID, ID_MESSAGE);
    return httpPart === 'querystring' ? canonicalIntegers(schema, validate, CANONICAL_INTEGER, INTEGER_MESSAGE) : validate;
  });
}

interface Compilers {
  body: Ajv;
  param: Ajv;
  /** Compiled validators by HTTP part and schema text. */
  compiled: Map<string, ValidateFunction>;
}

/**
 * Compiling the validators is most of what building an app costs; every app of a process (the
 * server has one, a test worker builds many) registers the same shared schemas and routes, so the
 * compilers and what they compiled are kept per set of shared schemas, for the process's life.
 * A compiled validator holds no state of the app it was compiled for.
 */
const compilersByShared = new Map<string, Compilers>();

function compilersFor(sharedSchemas: object[]): Compilers {
  const key = JSON.stringify(sharedSchemas);
  let compilers = compilersByShared.get(key);
  if (compilers) return compilers;
  const base: Options = { allErrors: true, useDefaults: true, removeAdditional: false, strict: false };
  const body = addFormats(new Ajv({ ...base, coerceTypes: false }));
  const param = addFormats(new Ajv({ ...base, coerceTypes: 'array' }));
  body.addKeyword({
    keyword: JSON_DEPTH_KEYWORD,
    schemaType: 'number',
    errors: true,
    validate: function depthBound(limit: number, data: unknown) {
      if (!nestsDeeperThan(data, limit)) return true;
      (depthBound as { errors?: Partial<ErrorObject>[] }).errors = [
        { keyword: JSON_DEPTH_KEYWORD, message: `nests deeper than ${limit} levels`, params: { limit } },
      ];
      return false;
    },
  });
  for (const schema of sharedSchemas) {
    body.addSchema(boundOpenJson(schema) as object);
    param.addSchema(schema);
  }
  compilers = { body, param, compiled: new Map() };
  compilersByShared.set(key, compilers);
  return compilers;
}

/**
 * Open JSON (a value of any shape: settings, meta, a dashboard's config, undeclared fields of a
 * document that keeps them) nests at most MAX_JSON_DEPTH levels, so that storing, merging and
 * serializing it can never exhaust the stack. Rather than ask every area to remember it, body
 * schemas are copied with this keyword on each open part, and the error names that part.
 */
const JSON_DEPTH_KEYWORD = 'x-json-depth';
/** Keywords that describe a schema without constraining it: `{ description }` is still open. */
const ANNOTATIONS = new Set(['description', 'title', 'default', 'examples', '$comment', 'deprecated', 'readOnly', 'writeOnly', '$id', '$schema', 'nullable']);
const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SUBSCHEMAS = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems'];

type Schema = Record<string, unknown>;
const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);
const isAny = (value: unknown): boolean => value === true || (isSchema(value) && Object.keys(value).every((k) => ANNOTATIONS.has(k)));

/** An object of anything: a record of `{}`, or `{ additionalProperties: true }` with no declared fields. */
function isOpenObject(schema: Schema): boolean {
  if (schema.type !== 'object' || (schema.properties && Object.keys(schema.properties).length > 0)) return false;
  const patterns = isSchema(schema.patternProperties) ? Object.values(schema.patternProperties) : [];
  return (patterns.length > 0 && patterns.every(isAny)) || (patterns.length === 0 && isAny(schema.additionalProperties));
}

/** A copy of `schema` with the depth keyword on every open part (schemas are tiny; this runs once per route). */
function boundOpenJson(schema: unknown): unknown {
  if (!isSchema(schema)) return schema;
  if (isAny(schema) || isOpenObject(schema)) return { ...schema, [JSON_DEPTH_KEYWORD]: MAX_JSON_DEPTH };
  const copy: Schema = { ...schema };
  for (const key of SUBSCHEMA_MAPS) {
    if (isSchema(copy[key])) copy[key] = Object.fromEntries(Object.entries(copy[key]).map(([name, inner]) => [name, boundOpenJson(inner)]));
  }
  for (const key of SUBSCHEMA_LISTS) if (Array.isArray(copy[key])) copy[key] = copy[key].map(boundOpenJson);
  // Undeclared fields a document keeps (`additionalProperties: true`) are open JSON each.
  if (copy.additionalProperties === true) copy.additionalProperties = { [JSON_DEPTH_KEYWORD]: MAX_JSON_DEPTH };
  for (const key of SUBSCHEMAS) if (isSchema(copy[key])) copy[key] = boundOpenJson(copy[key]);
  return copy;
}

/** The only spelling of a path integer: `1`, never `01`, `1.0`, `+1`, ` 1`, `1e0` or `0x1`. */
const CANONICAL_ID = /^[1-9][0-9]{0,15}$/;
const ID_MESSAGE = 'must be a positive whole number written with digits only (no sign, leading zero, space, point or exponent)';
/**
 * A query integer (ids such as `userId`, page sizes, SCIM's `count` which may be 0): digits only,
 * with 0 and a minus sign allowed and no length bound, since SCIM reads a `startIndex` past any
 * total as an empty page; the schema's range (an id's maximum) applies after.
 */
const CANONICAL_INTEGER = /^(0|-?[1-9][0-9]*)$/;
const INTEGER_MESSAGE = 'must be a whole number written with digits only (no plus sign, leading zero, space, point or exponent)';

/**
 * Path and query integers (every id, shared/schemas.ts `Id`) must be written canonically. Ajv's
 * coercion would read `1.0`, `02` or a lone tab as 1, 2 and 0 and act on those rows, so the raw
 * strings are checked before it runs; the OpenAPI document keeps them typed integer.
 */
function canonicalIntegers(schema: unknown, validate: ValidateFunction, pattern: RegExp, message: string): ValidateFunction {
  const properties = isSchema(schema) && isSchema(schema.properties) ? schema.properties : {};
  const integers = Object.keys(properties).filter((name) => isSchema(properties[name]) && properties[name].type === 'integer');
  if (integers.length === 0) return validate;
  const strict = ((data: unknown): boolean => {
    const params = (isSchema(data) ? data : {}) as Record<string, unknown>;
    const errors: Partial<ErrorObject>[] = [];
    for (const name of integers) {
      const raw = Object.hasOwn(params, name) ? params[name] : undefined;
      if (typeof raw !== 'string') continue;
      if (!pattern.test(raw) || (pattern === CANONICAL_ID && !Number.isSafeInteger(Number(raw)))) {
        errors.push({ instancePath: `/${escape(name)}`, keyword: 'canonicalInteger', message });
      }
    }
    if (errors.length > 0) {
      strict.errors = errors as ErrorObject[];
      return false;
    }
    const valid = validate(data);
    strict.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  return strict;
}

const PART_NAMES: Record<string, string> = { querystring: 'query', params: 'path', body: 'body', headers: 'headers' };

/** Turns Ajv's errors into one entry per offending field, with a JSON pointer into the request. */
export function fieldErrors(errors: ErrorObject[], context: string): FieldError[] {
  const byPointer = new Map<string, string[]>();
  const typeOnly = new Set<string>();
  const seen = new Set<string>();
  for (const error of errors) {
    let pointer = `/${PART_NAMES[context] ?? context}${error.instancePath}`;
    let message = error.message ?? 'is invalid';
    if (error.keyword === 'required') {
      pointer += `/${escape(String(error.params.missingProperty))}`;
      message = 'is required';
    } else if (error.keyword === 'additionalProperties') {
      pointer += `/${escape(String(error.params.additionalProperty))}`;
      message = 'is not a known field';
    } else if (error.keyword === 'enum') {
      message = `must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    } else if (error.keyword === 'type' && Array.isArray(error.params.type)) {
      message = `must be ${(error.params.type as string[]).join(' or ')}`;
    } else if (error.keyword === 'anyOf' || error.keyword === 'oneOf') {
      continue; // the alternatives' own messages say more
    }
    const list = byPointer.get(pointer) ?? [];
    if (!list.includes(message)) list.push(message);
    byPointer.set(pointer, list);
    if (error.keyword === 'type' && !seen.has(pointer)) typeOnly.add(pointer);
    else if (error.keyword !== 'type') typeOnly.delete(pointer);
    seen.add(pointer);
  }
  // `[1, "a"]` against "array of integers or null" fails both ways; the deeper error is the
  // useful one, so "must be null" on the array itself is dropped.
  const pointers = [...byPointer.keys()];
  return [...byPointer]
    .filter(([pointer]) => !(typeOnly.has(pointer) && pointers.some((p) => p.startsWith(`${pointer}/`))))
    .map(([pointer, messages]) => ({ pointer, message: joinAlternatives(messages) }));
}

function joinAlternatives(messages: string[]): string {
  // "must be integer" + "must be null" reads better as "must be integer or null".
  if (messages.length > 1 && messages.every((m) => m.startsWith('must be '))) {
    return `must be ${messages.map((m) => m.slice('must be '.length)).join(' or ')}`;
  }
  return messages.join('; ');
}

function escape(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}
