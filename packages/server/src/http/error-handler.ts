import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ModelProviderError } from '../ai/index.js';
import { ApiError, PROBLEMS, problemType, type FieldError, type MissingMemberDetail, type ProblemCode } from '../shared/problems.js';
import { fieldErrors } from './validation.js';
import type { ProblemDetails } from '../shared/schemas.js';
import type { ProblemDialect } from './problem-dialect.js';
import { undeclaredAnswer } from './declared-problems.js';
import { DEFAULT_BODY_LIMIT, formatBytes } from './body.js';

/** Fastify's own error codes that are the client's fault, by the problem they are. */
const FASTIFY_CODES: Record<string, ProblemCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'VALIDATION_FAILED',
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'MALFORMED_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'MALFORMED_JSON',
  FST_ERR_CTP_EMPTY_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
};

/** Other client errors Fastify or a plugin may raise, by status, so the status is never lost. */
const STATUS_CODES: Record<number, ProblemCode> = {
  400: 'VALIDATION_FAILED',
  404: 'ROUTE_NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  503: 'UNAVAILABLE',
};

declare module 'fastify' {
  interface FastifyInstance {
    /** The error dialects in force (see problem-dialect.ts); child contexts inherit them. */
    problemDialects: ProblemDialect[];
    /** Tests turn this on: an answer a route's OpenAPI responses do not list becomes a loud 500. */
    strictProblemCodes: boolean;
  }
}

/** In strict mode, the reason an answer breaks its route's document, logged loudly; else undefined. */
function brokenContract(request: FastifyRequest, code: ProblemCode | undefined, status: number): string | undefined {
  if (!request.server.strictProblemCodes) return undefined;
  const reason = undeclaredAnswer(request, code, status);
  if (reason) {
    request.log.error({ code, status }, reason);
    process.emitWarning(reason, 'UndeclaredProblemCode');
  }
  return reason;
}

function dialectOf(request: FastifyRequest): ProblemDialect | undefined {
  return request.server.problemDialects.find((dialect) => dialect.matches(request));
}

export function sendProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  code: ProblemCode,
  detail: string,
  errors?: FieldError[],
  conflicts?: string[],
  missingMembers?: MissingMemberDetail[],
): FastifyReply {
  const broken = brokenContract(request, code, PROBLEMS[code].status);
  if (broken) return sendProblem(request, reply, 'INTERNAL', broken);
  const dialect = dialectOf(request);
  if (dialect) return dialect.sendProblem(reply, code, detail, errors);
  const { status, title } = PROBLEMS[code];
  const body: ProblemDetails = { type: problemType(code), title, status, detail, code, message: detail, requestId: request.id };
  if (errors && errors.length > 0) body.errors = errors;
  if (conflicts) body.conflicts = conflicts;
  if (missingMembers) body.missingMembers = missingMembers;
  return reply.code(status).type('application/problem+json').send(body);
}

export function installErrorHandler(app: FastifyInstance, dialects: ProblemDialect[] = [], options: { strictProblemCodes?: boolean } = {}): void {
  app.decorate('problemDialects', dialects);
  app.decorate('strictProblemCodes', options.strictProblemCodes ?? false);
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    // A dialect's own errors carry their status; in strict mode it must be one the route lists.
    const ownStatus = (error as { status?: unknown }).status;
    const broken = error instanceof ApiError || typeof ownStatus !== 'number' ? undefined : brokenContract(request, undefined, ownStatus);
    if (broken) return sendProblem(request, reply, 'INTERNAL', broken);
    const own = dialectOf(request)?.sendError?.(reply, error);
    if (own) return own;
    // The model client's one error, wherever an AI feature let it through: the provider's fault, not ours.
    if (error instanceof ModelProviderError) return sendProblem(request, reply, 'AI_PROVIDER_UNAVAILABLE', error.message);
    if (error instanceof ApiError) {
      if (error.extra.headers) reply.headers(error.extra.headers);
      return sendProblem(request, reply, error.code, error.detail, error.extra.errors, error.extra.conflicts, error.extra.missingMembers);
    }
    if (error.validation) {
      const errors = fieldErrors(error.validation as never, error.validationContext ?? 'body');
      const summary = errors.map((e) => `${e.pointer} ${e.message}`).join('; ');
      return sendProblem(request, reply, 'VALIDATION_FAILED', `The request is not valid: ${summary}.`, errors);
    }
    const mapped = error.code ? FASTIFY_CODES[error.code] : undefined;
    if (mapped) {
      const detail =
        mapped === 'UNSUPPORTED_MEDIA_TYPE'
          ? `Content-Type ${request.headers['content-type'] ?? '(none)'} is not accepted; send application/json.`
          : mapped === 'PAYLOAD_TOO_LARGE'
            ? `The request body exceeds this operation's limit of ${formatBytes(request.routeOptions.bodyLimit ?? DEFAULT_BODY_LIMIT)}.`
            : mapped === 'MALFORMED_JSON'
              ? `The request body is not valid JSON: ${error.message}`
              : error.message;
      return sendProblem(request, reply, mapped, detail);
    }
    const byStatus = error.statusCode === undefined ? undefined : STATUS_CODES[error.statusCode];
    if (byStatus) return sendProblem(request, reply, byStatus, error.message);
    // Internals stay in the log, tied to the request id the client sees.
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(request, reply, 'INTERNAL', `Something went wrong on our side. Quote request id ${request.id} when reporting it.`);
  });
}
