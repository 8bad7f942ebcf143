import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import type { Built } from './build.js';
import type { Operation } from './operations.js';
import { bodySchema } from './plan.js';
import type { Schema } from './schema-arbitrary.js';
import type { CredentialName } from './world.js';

/** ajv-formats is CommonJS; its default export arrives wrapped under ESM. */
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void;

export type FindingKind =
  | 'server-error'
  | 'undocumented-status'
  | 'response-schema'
  | 'undocumented-code'
  | 'error-shape'
  | 'content-type'
  | 'invalid-body-accepted'
  | 'hostile-body-accepted'
  | 'unreadable-body-accepted'
  | 'invalid-param-accepted'
  | 'foreign-id-accepted'
  | 'unauthenticated-accepted'
  | 'scope-bypass'
  | 'timeout'
  | 'uncaught-exception'
  | 'media-type-not-refused'
  | 'hostile-in-sql'
  | 'limit-exceeded'
  | 'source-changed'
  | 'source-refused';

export interface Finding {
  kind: FindingKind;
  /** What distinguishes it within the operation and kind (a status, a parameter, a code). */
  detail: string;
  message: string;
}

const DOC_ID = 'https://fuzz.invalid/openapi.json';

/** Ajv over the served document: every `#/components/...` reference resolves into it, to any depth. */
export class Validators {
  private ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true, unicodeRegExp: true });
  private cache = new WeakMap<object, ValidateFunction>();
  private strings = new WeakMap<object, ValidateFunction>();

  constructor(document: any) {
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: DOC_ID, components: document.components ?? {} });
  }

  private rewrite(schema: unknown): unknown {
    if (Array.isArray(schema)) return schema.map((s) => this.rewrite(s));
    if (schema !== null && typeof schema === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(schema)) out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `${DOC_ID}${v}` : this.rewrite(v);
      return out;
    }
    return schema;
  }

  validator(schema: Schema): ValidateFunction {
    if (typeof schema === 'boolean') return this.ajv.compile(schema);
    let v = this.cache.get(schema);
    if (!v) {
      v = this.ajv.compile(this.rewrite(schema) as object);
      this.cache.set(schema, v);
    }
    return v;
  }

  /** A query or path value against a string schema (pattern, enum, lengths). */
  validateString = (schema: unknown, value: string): boolean => {
    if (schema === null || typeof schema !== 'object') return true;
    let v = this.strings.get(schema);
    if (!v) {
      v = this.ajv.compile(this.rewrite(schema) as object);
      this.strings.set(schema, v);
    }
    return v(value) as boolean;
  };

  errorText(v: ValidateFunction): string {
    const e = v.errors?.[0];
    return e ? `${e.instancePath || '(root)'} ${e.message ?? ''}${e.params ? ` ${JSON.stringify(e.params)}` : ''}` : 'invalid';
  }
}

const PROBLEM = 'application/problem+json';
const SCIM = 'application/scim+json';

function mediaType(header: unknown): string {
  return String(header ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
}

/** A JSON escape that is one (an even run of backslashes before it), not the text `\\u0000` inside a string. */
const ESCAPE = String.raw`(?<!\\)(?:\\\\)*\\`;
const NUL = new RegExp(`${ESCAPE}u0000`);
const LONE_SURROGATE = new RegExp(`${ESCAPE}ud[89ab][0-9a-f]{2}(?!\\\\ud[c-f])|(?<!\\\\ud[89ab][0-9a-f]{2})${ESCAPE}ud[c-f][0-9a-f]{2}`, 'i');

function hasNul(text: string): boolean {
  return text.includes('\u0000') || NUL.test(text);
}
function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}
function depthOf(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') max = Math.max(max, ++depth);
    else if (c === '}' || c === ']') depth--;
  }
  return max;
}

/**
 * Problems that report a service outside the server, not a fault of its own: no model provider
 * configured (the traffic may clear the account's) or one that fails (the traffic may point the
 * account at an address that does not answer). Documented 502 and 503 answers of these codes are
 * what the operation promises.
 */
const UPSTREAM_CODES = new Set(['AI_NOT_CONFIGURED', 'AI_PROVIDER_UNAVAILABLE']);

function upstreamProblem(body: string): boolean {
  try {
    return UPSTREAM_CODES.has(String((JSON.parse(body) as { code?: unknown }).code));
  } catch {
    return false;
  }
}

/** Everything wrong with one response. */
export function check(
  op: Operation,
  built: Built,
  credential: CredentialName,
  response: LightMyRequestResponse,
  validators: Validators,
  components: Record<string, Schema>,
): Finding[] {
  const out: Finding[] = [];
  const status = response.statusCode;
  const type = mediaType(response.headers['content-type']);
  const documented = op.responses.get(String(status)) ?? op.responses.get(`${String(status)[0]}XX`) ?? op.responses.get('default');
  if (status >= 500 && !(documented && upstreamProblem(response.body)))
    out.push({ kind: 'server-error', detail: String(status), message: `${status} ${response.body.slice(0, 200)}` });
  if (!documented && status !== 429)
    out.push({ kind: 'undocumented-status', detail: String(status), message: `${status} is not among ${[...op.responses.keys()].join(', ')}` });

  let body: unknown;
  const isJson = type.endsWith('json');
  if (isJson && response.body.length) {
    try {
      body = JSON.parse(response.body);
    } catch {
      out.push({ kind: 'response-schema', detail: `${status} not JSON`, message: `${type} body is not JSON: ${response.body.slice(0, 100)}` });
    }
  }

  if (status < 400) {
    if (documented && status !== 204 && status !== 304) {
      const schema = documented.get(type);
      if (documented.size && !schema)
        out.push({
          kind: 'content-type',
          detail: `${status} ${type}`,
          message: `content type ${type || '(none)'} is not among ${[...documented.keys()].join(', ')}`,
        });
      if (schema && body !== undefined) {
        const v = validators.validator(schema);
        if (!v(body)) out.push({ kind: 'response-schema', detail: `${status} ${validators.errorText(v).split(' ')[0]}`, message: validators.errorText(v) });
      }
    }
    if ((status === 204 || status === 304) && response.body.length)
      out.push({ kind: 'response-schema', detail: `${status} has a body`, message: response.body.slice(0, 100) });
  } else {
    const expected = op.scim ? SCIM : PROBLEM;
    if (type !== expected) out.push({ kind: 'content-type', detail: `${status} ${type}`, message: `an error answered ${type || '(none)'}, not ${expected}` });
    const schema = documented?.get(type) ?? components[op.scim ? 'ScimError' : 'ProblemDetails'];
    if (schema && body !== undefined) {
      const v = validators.validator(schema);
      if (!v(body)) {
        const code = (body as { code?: unknown }).code;
        const codeOnly = v.errors?.length === 1 && v.errors[0]!.instancePath === '/code' && v.errors[0]!.keyword === 'enum';
        if (codeOnly) out.push({ kind: 'undocumented-code', detail: `${status} ${String(code)}`, message: `code ${String(code)} is not listed for ${status}` });
        else out.push({ kind: 'error-shape', detail: `${status} ${validators.errorText(v).split(' ')[0]}`, message: validators.errorText(v) });
      }
      const said = (body as { status?: unknown }).status;
      if (said !== undefined && String(said) !== String(status))
        out.push({ kind: 'error-shape', detail: `${status} status member`, message: `body status ${String(said)} != ${status}` });
    }
  }

  // A content type the route does not take is refused before the body is read: only the
  // credential checks (401/403) and the size limit (413) may come first.
  const mode = built.body?.mode;
  if ((mode === 'text/plain' || mode === 'form') && !built.routerRefuses && ![401, 403, 413, 415].includes(status) && status < 500) {
    out.push({
      kind: 'media-type-not-refused',
      detail: `${mode} ${status}`,
      message: `a ${built.headers['content-type']} body was answered ${status}, not 415`,
    });
  }
  if (status >= 200 && status < 300) judgeAccepted(op, built, credential, validators, out);
  return out;
}

function judgeAccepted(op: Operation, built: Built, credential: CredentialName, validators: Validators, out: Finding[]) {
  if (!op.public && (credential === 'none' || credential === 'badKey' || credential === 'otherTenantKey')) {
    out.push({ kind: 'unauthenticated-accepted', detail: credential, message: `a request with credential "${credential}" was answered 2xx` });
  }
  const sameTenant = credential !== 'otherTenantHost';
  for (const name of built.invalidParams)
    out.push({ kind: 'invalid-param-accepted', detail: name, message: `parameter ${name} breaks its schema and was accepted` });
  if (sameTenant)
    for (const name of built.foreignParams)
      out.push({ kind: 'foreign-id-accepted', detail: name, message: `${name} names a row of another tenant or deployment and was accepted` });
  const body = built.body;
  if (!body) return;
  const required = op.body?.required ?? false;
  switch (body.mode) {
    case 'text/plain':
    case 'form':
    case 'bad-charset':
      out.push({ kind: 'unreadable-body-accepted', detail: body.mode, message: `a ${built.headers['content-type']} body was accepted` });
      return;
    case 'malformed':
    case 'oversize':
      out.push({ kind: 'unreadable-body-accepted', detail: body.mode, message: `a ${body.mode} body was accepted` });
      return;
    case 'no-type-empty':
    case 'json-empty':
      if (required) out.push({ kind: 'unreadable-body-accepted', detail: body.mode, message: 'an empty body was accepted where the body is required' });
      return;
    case 'scim+json':
      if (!op.body?.content.has(SCIM))
        out.push({ kind: 'unreadable-body-accepted', detail: body.mode, message: 'an application/scim+json body was accepted where only JSON is documented' });
      break;
  }
  const text = built.payload ?? '';
  if (hasNul(text)) out.push({ kind: 'hostile-body-accepted', detail: 'NUL', message: 'a body with a NUL character was accepted' });
  if (hasLoneSurrogate(text))
    out.push({ kind: 'hostile-body-accepted', detail: 'lone surrogate', message: 'a body with a lone UTF-16 surrogate was accepted' });
  const depth = depthOf(text);
  if (depth >= 100) out.push({ kind: 'hostile-body-accepted', detail: 'deep JSON', message: `a body nested ${depth} deep was accepted` });
  if (body.mutation === undefined) return;
  const schema = bodySchema(op);
  if (!schema) return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return;
  }
  const v = validators.validator(schema);
  if (!v(parsed))
    out.push({ kind: 'invalid-body-accepted', detail: body.mutation.replace(/ at .*$/, ''), message: `${body.mutation}: ${validators.errorText(v)}` });
}
