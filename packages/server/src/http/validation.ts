import { Ajv, type ErrorObject, type Options } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import type { FieldError } from '../shared/problems.js';

// ajv-formats ships CommonJS with a default export that ESM sees nested.
const addFormats = ((ajvFormats as unknown as { default?: unknown }).default ?? ajvFormats) as (ajv: Ajv) => Ajv;

/**
 * Two validators: bodies are JSON and must carry the declared types exactly ("5" is not an id),
 * while path and query parameters are strings on the wire and are coerced to their declared type.
 */
export function installValidators(app: FastifyInstance, sharedSchemas: object[]): void {
  const base: Options = { allErrors: true, useDefaults: true, removeAdditional: false, strict: false };
  const bodyAjv = addFormats(new Ajv({ ...base, coerceTypes: false }));
  const paramAjv = addFormats(new Ajv({ ...base, coerceTypes: 'array' }));
  for (const schema of sharedSchemas) {
    bodyAjv.addSchema(schema);
    paramAjv.addSchema(schema);
  }
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : paramAjv).compile(schema));
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
