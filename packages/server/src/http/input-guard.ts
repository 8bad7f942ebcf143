import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, type FieldError } from '../shared/problems.js';
import { MAX_BODY_DEPTH } from '../shared/json-depth.js';

/**
 * Checks every request's strings and the shape of its body before schema validation, so that
 * both stores see the same input and none of it can crash a handler:
 * - no string (a value or an object key, in the body, the query or the path) holds a NUL, which
 *   PostgreSQL refuses and SQLite stores, or a lone UTF-16 surrogate, which the two stores rewrite
 *   differently;
 * - no number in a body is infinite: JSON.parse reads `1e400` as Infinity, which JSON cannot hold,
 *   so it would be stored as null or break the response that shows it;
 * - no body nests deeper than MAX_BODY_DEPTH, a safety net under the per-field bound that request
 *   validation puts on open JSON (validation.ts).
 * The walks are iterative and take no paths until something is wrong, so large ordinary bodies
 * cost one pass over their values.
 */
export function installInputGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const errors = [...partErrors(request, 'params', '/path'), ...partErrors(request, 'querystring', '/query'), ...bodyErrors(request.body)];
    if (errors.length === 0) return;
    const summary = errors.map((e) => `${e.pointer} ${e.message}`).join('; ');
    throw new ApiError('VALIDATION_FAILED', `The request is not valid: ${summary}.`, { errors });
  });
}

const MAX_REPORTED = 10;

/** Path and query values are checked where the route declares them: others are never read. */
function partErrors(request: FastifyRequest, part: 'params' | 'querystring', prefix: string): FieldError[] {
  if (!request.routeOptions.schema?.[part]) return [];
  const values = part === 'params' ? request.params : request.query;
  return badValues(values) ? valueErrors(values, prefix) : [];
}

function bodyErrors(body: unknown): FieldError[] {
  if (typeof body === 'string') return badString(body) ? [{ pointer: '/body', message: stringMessage(body) }] : [];
  // Parsed JSON only: a route's own parser may hand over a Buffer or a stream, which is not text.
  if (!isJsonContainer(body)) return [];
  const deep = tooDeep(body);
  if (deep !== undefined) return [{ pointer: deep, message: `nests deeper than ${MAX_BODY_DEPTH} levels` }];
  return badValues(body) ? valueErrors(body, '/body') : [];
}

function isJsonContainer(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return Array.isArray(value) || prototype === Object.prototype || prototype === null;
}

const isWellFormed = (value: string) => (value as unknown as { isWellFormed(): boolean }).isWellFormed();
const badString = (value: string) => value.includes('\u0000') || !isWellFormed(value);
const stringMessage = (value: string) =>
  value.includes('\u0000') ? 'must not contain a NUL character (\\u0000)' : 'must be well-formed Unicode (it holds a lone UTF-16 surrogate)';

const children = (node: object): Iterable<[string, unknown]> =>
  Array.isArray(node) ? node.map((v, i) => [String(i), v] as [string, unknown]) : Object.entries(node);

const INFINITE = 'must be a finite number (it is beyond what a 64-bit float holds)';

/** The first pass: is any string, key or number bad? Depth is already bounded when it runs on a body. */
function badValues(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === 'string') {
      if (badString(node)) return true;
    } else if (typeof node === 'number') {
      if (!Number.isFinite(node)) return true;
    } else if (Array.isArray(node)) {
      for (const inner of node) stack.push(inner);
    } else if (typeof node === 'object' && node !== null) {
      for (const [key, inner] of Object.entries(node)) {
        if (badString(key)) return true;
        stack.push(inner);
      }
    }
  }
  return false;
}

/** The second pass, only for a request already known to be bad: where, in document order. */
function valueErrors(root: unknown, prefix: string): FieldError[] {
  const errors: FieldError[] = [];
  const stack: Array<[unknown, string]> = [[root, prefix]];
  while (stack.length > 0 && errors.length < MAX_REPORTED) {
    const [node, pointer] = stack.pop()!;
    if (typeof node === 'string') {
      if (badString(node)) errors.push({ pointer, message: stringMessage(node) });
    } else if (typeof node === 'number') {
      if (!Number.isFinite(node)) errors.push({ pointer, message: INFINITE });
    } else if (typeof node === 'object' && node !== null) {
      const entries = [...children(node)];
      for (const [key, inner] of entries.reverse()) {
        const at = `${pointer}/${escape(key)}`;
        if (!Array.isArray(node) && badString(key)) errors.push({ pointer: at, message: `field name ${stringMessage(key)}` });
        stack.push([inner, at]);
      }
    }
  }
  return errors.slice(0, MAX_REPORTED);
}

/** Where a body nests past MAX_BODY_DEPTH: the pointer to the top-level field holding it, or undefined. */
function tooDeep(body: object): string | undefined {
  const stack: Array<[object, number, string]> = [];
  for (const [key, inner] of children(body)) {
    if (typeof inner === 'object' && inner !== null) stack.push([inner, 2, `/body/${escape(key)}`]);
  }
  while (stack.length > 0) {
    const [node, depth, top] = stack.pop()!;
    if (depth > MAX_BODY_DEPTH) return top;
    for (const inner of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof inner === 'object' && inner !== null) stack.push([inner, depth + 1, top]);
    }
  }
  return undefined;
}

function escape(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}
