import { STATUS_CODES } from 'node:http';
import type { FastifyRequest, RouteOptions } from 'fastify';
import { Type } from 'typebox';
import { PROBLEMS, type ProblemCode } from '../shared/problems.js';

declare module 'fastify' {
  interface FastifySchema {
    /**
     * The problem codes this route's own rules can answer (DEPLOYMENT_NOT_FOUND, FOLDER_NAME_TAKEN, ...),
     * found by following its service. The generic ones are added by `genericProblems`; together
     * they become the route's documented error responses.
     */
    problems?: readonly ProblemCode[];
  }
  interface FastifyContextConfig {
    /** Set when the route is added: what its OpenAPI responses promise (see `declareProblems`). */
    declaredErrors?: DeclaredErrors;
  }
}

export interface DeclaredErrors {
  /** Problem-details routes: every code they document. */
  codes?: ReadonlySet<ProblemCode>;
  /** Every error status they document (routes with an error schema of their own declare only these). */
  statuses: ReadonlySet<number>;
}

/** Methods whose requests Fastify reads a body for, whether or not the route declares one. */
const BODYLESS = new Set(['GET', 'HEAD']);

/**
 * The codes any authenticated route can answer, from its shape alone: who is calling and on which
 * host, limits, and the checks every input and every body goes through before the handler runs.
 * One place, so a new route cannot forget them.
 */
export function genericProblems(route: Pick<RouteOptions, 'method' | 'url' | 'schema'>): ProblemCode[] {
  const schema = (route.schema ?? {}) as Record<string, unknown>;
  const methods = [route.method].flat().map((m) => String(m).toUpperCase());
  const readsBody = methods.some((m) => !BODYLESS.has(m));
  const codes: ProblemCode[] = ['UNAUTHENTICATED', 'TENANT_NOT_FOUND', 'RATE_LIMITED', 'INTERNAL', 'UNAVAILABLE'];
  // Checked before the body is read, from the path alone (spec, Authentication 4).
  if (route.url.includes(':deploymentId')) codes.push('KEY_SCOPE_FORBIDDEN');
  // Any request can be refused for its headers alone (two Host headers, http/tenant.ts).
  codes.push('VALIDATION_FAILED');
  // Fastify parses a body sent with DELETE too, so its parse errors are not only for routes that
  // declare one; a body that trickles in is cut off by the body timer (timeouts.ts).
  if (readsBody) codes.push('MALFORMED_JSON', 'REQUEST_TIMEOUT', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  // Every cursor list checks its cursor (shared/pagination.ts).
  const query = schema.querystring as { properties?: Record<string, unknown> } | undefined;
  if (query?.properties?.after) codes.push('INVALID_CURSOR');
  return codes;
}

const codeList = (codes: readonly ProblemCode[]) => codes.map((code) => `- \`${code}\`: ${PROBLEMS[code].title}`).join('\n');

/**
 * The OpenAPI response for one error status: problem details whose `status` and `code` are
 * narrowed to what this route answers with that status, so a generated client can switch on them.
 */
export function problemResponse(status: number, codes: readonly ProblemCode[]) {
  return {
    description:
      codes.length === 1
        ? `${STATUS_CODES[status] ?? 'Error'}: \`${codes[0]}\` (${PROBLEMS[codes[0]!].title}).`
        : `${STATUS_CODES[status] ?? 'Error'}. \`code\` is one of:\n${codeList(codes)}`,
    content: {
      'application/problem+json': {
        schema: {
          allOf: [
            Type.Ref('ProblemDetails'),
            {
              type: 'object',
              required: ['status', 'code'],
              properties: { status: { type: 'integer', const: status }, code: { type: 'string', enum: [...codes] } },
            },
          ],
        },
      },
    },
  };
}

/** Codes grouped by their status (from PROBLEMS), each group in table order. */
function byStatus(codes: Iterable<ProblemCode>): Map<number, ProblemCode[]> {
  const wanted = new Set(codes);
  const groups = new Map<number, ProblemCode[]>();
  for (const code of Object.keys(PROBLEMS) as ProblemCode[]) {
    if (!wanted.has(code)) continue;
    const { status } = PROBLEMS[code];
    groups.set(status, [...(groups.get(status) ?? []), code]);
  }
  return new Map([...groups].sort(([a], [b]) => a - b));
}

const isErrorStatus = (key: string) => /^[45]/.test(key);

/**
 * Writes a route's error responses from its generic and declared codes, and records them in the
 * route's config for the strict check. A route that describes error responses itself (SCIM, in
 * its own error schema) keeps them; only their statuses are recorded.
 */
export function declareProblems(route: RouteOptions): void {
  const schema = (route.schema ??= {}) as Record<string, unknown> & { problems?: readonly ProblemCode[] };
  route.config = { ...route.config, declaredErrors: declaredFor(route, schema) };
}

/** The HEAD route Fastify adds beside a GET shares the GET's schema object: declare it once. */
const declaredBySchema = new WeakMap<object, DeclaredErrors>();

function declaredFor(route: RouteOptions, schema: Record<string, unknown> & { problems?: readonly ProblemCode[] }): DeclaredErrors {
  const done = declaredBySchema.get(schema);
  if (done) return done;
  const response = (schema.response ??= {}) as Record<string, unknown>;
  const own = Object.keys(response).filter(isErrorStatus);
  let declared: DeclaredErrors;
  if (own.length > 0) {
    if (schema.problems) throw new Error(`${route.url}: declare errors either as \`problems\` or as error responses, not both`);
    declared = { statuses: new Set(own.map(Number)) };
  } else {
    const codes = new Set([...genericProblems(route), ...(schema.problems ?? [])]);
    const groups = byStatus(codes);
    for (const [status, group] of groups) response[status] = problemResponse(status, group);
    declared = { codes, statuses: new Set(groups.keys()) };
  }
  declaredBySchema.set(schema, declared);
  return declared;
}

/**
 * Why answering `code` (with `status`) breaks the route's documented contract, or undefined when
 * it keeps it. Requests that matched no route, and public routes, promise nothing.
 */
export function undeclaredAnswer(request: FastifyRequest, code: ProblemCode | undefined, status: number): string | undefined {
  const declared = request.routeOptions.config?.declaredErrors;
  if (!declared || request.routeOptions.url === undefined) return undefined;
  const route = `${request.method} ${request.routeOptions.url}`;
  if (declared.codes && code !== undefined && !declared.codes.has(code)) {
    return `${route} answered ${code} (${status}), which its OpenAPI responses do not list; add it to the route's \`problems\`.`;
  }
  if (!declared.statuses.has(status)) return `${route} answered status ${status}, which its OpenAPI responses do not list.`;
  return undefined;
}

type Response = {
  $ref?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: { allOf?: Array<{ properties?: { code?: { enum?: string[] } } }> } }>;
};
type Document = { paths?: Record<string, Record<string, { responses?: Record<string, Response> }>>; components?: { responses?: Record<string, Response> } };

/** Headers that come with a problem, documented on its shared response. */
const PROBLEM_HEADERS: Partial<Record<ProblemCode, Record<string, unknown>>> = {
  UNAUTHENTICATED: {
    'WWW-Authenticate': { description: 'The Bearer challenge (RFC 6750), with `error` when a credential was sent.', schema: { type: 'string' } },
  },
  RATE_LIMITED: { 'Retry-After': { description: 'Seconds until the key may send again.', schema: { type: 'integer', minimum: 0 } } },
  DEPLOYMENT_BUSY: {
    'Retry-After': {
      description: 'With `DEPLOYMENT_BUSY`: seconds after which the same request may be sent again (nothing was changed).',
      schema: { type: 'integer', minimum: 1 },
    },
  },
};

/** `RATE_LIMITED` -> `RateLimited`: the name of its shared response. */
const responseName = (code: string) => code.toLowerCase().replace(/(^|_)([a-z])/g, (_m, _sep, letter: string) => letter.toUpperCase());

/**
 * An error response with a single code (401, 429, 500, 503 on every operation) is the same
 * everywhere: it moves to `components.responses` under the code's name and operations point to
 * it, which keeps the document and the generated client small. Idempotent.
 */
export function shareProblemResponses<D extends object>(document: D): D {
  const doc = document as Document;
  const shared = ((doc.components ??= {}).responses ??= {});
  for (const methods of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(methods)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const codes = response.content?.['application/problem+json']?.schema?.allOf?.[1]?.properties?.code?.enum;
        if (!response.$ref && codes && codes.length > 1) {
          // Stays with its operation; the headers of any of its codes are documented there.
          const headers = Object.assign({}, ...codes.map((code) => PROBLEM_HEADERS[code as ProblemCode] ?? {})) as Record<string, unknown>;
          if (Object.keys(headers).length > 0) response.headers = { ...headers, ...response.headers };
        }
        if (response.$ref || codes?.length !== 1) continue;
        const code = codes[0] as ProblemCode;
        const name = responseName(code);
        const headers = PROBLEM_HEADERS[code];
        shared[name] ??= headers ? { ...response, headers } : response;
        operation.responses![status] = { $ref: `#/components/responses/${name}` };
      }
    }
  }
  return document;
}
