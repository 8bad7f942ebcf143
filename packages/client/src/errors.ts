import type { FieldError, ProblemCode, ProblemDetails } from './types.js';

/** Where each response came from; openapi-fetch hands back the Response but not the request. */
const origins = new WeakMap<object, { method: string; url: string }>();

export function recordOrigin(response: Response, request: Request): void {
  origins.set(response, { method: request.method, url: request.url });
}

/** A request-level error: the server answered with a non-2xx status. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  /**
   * The problem's stable code, one of the codes the document lists (each operation's responses
   * say which it can answer: see `ProblemCodeOf`). A newer server may add codes: keep a default branch.
   */
  readonly code?: ProblemCode;
  readonly title?: string;
  readonly detail?: string;
  readonly requestId?: string;
  /** Validation errors: one per invalid part of the request. */
  readonly errors?: FieldError[];
  /** The parsed body when it was problem details. */
  readonly problem?: ProblemDetails;
  /** The body as received when it was not problem details (a proxy's HTML page, say). */
  readonly body?: unknown;
  readonly method: string;
  readonly url: string;

  constructor(init: { status: number; method: string; url: string; problem?: ProblemDetails; body?: unknown; requestId?: string; statusText?: string }) {
    const { problem } = init;
    super(describe(init));
    this.status = init.status;
    this.method = init.method;
    this.url = init.url;
    const requestId = problem?.requestId ?? init.requestId;
    if (requestId) this.requestId = requestId;
    if (problem) {
      this.problem = problem;
      this.code = problem.code;
      this.title = problem.title;
      this.detail = problem.detail;
      if (problem.errors) this.errors = problem.errors;
    } else if (init.body !== undefined && init.body !== '') {
      this.body = init.body;
    }
  }

  /** Builds the error for a response openapi-fetch returned, with its parsed (or raw) body. */
  static from(response: Response, body: unknown): ApiError {
    const origin = origins.get(response) ?? { method: 'UNKNOWN', url: response.url };
    const requestId = response.headers.get('x-request-id') ?? undefined;
    return new ApiError({
      status: response.status,
      statusText: response.statusText,
      ...origin,
      ...(isProblem(body) ? { problem: body } : { body }),
      ...(requestId ? { requestId } : {}),
    });
  }
}

function describe(init: { status: number; method: string; url: string; problem?: ProblemDetails; body?: unknown; statusText?: string }): string {
  const { problem } = init;
  // Validation details already open with the title; saying it twice helps nobody.
  if (problem) return problem.detail.startsWith(problem.title) ? `${init.status} ${problem.detail}` : `${init.status} ${problem.title}: ${problem.detail}`;
  const text = typeof init.body === 'string' && init.body.trim() !== '' ? `: ${init.body.trim().slice(0, 200)}` : '';
  return `${init.status} ${init.statusText || 'HTTP error'} from ${init.method} ${init.url}${text}`;
}

function isProblem(body: unknown): body is ProblemDetails {
  if (typeof body !== 'object' || body === null) return false;
  const b = body as Record<string, unknown>;
  return typeof b.status === 'number' && typeof b.title === 'string' && typeof b.detail === 'string' && typeof b.code === 'string';
}

/** The `data` of a successful call, typed: no data for 204 answers. */
type DataOf<R> = R extends { data: infer D } ? ([D] extends [never] ? undefined : D) : never;

/**
 * The data of an openapi-fetch result, or an ApiError: for scripts that would rather throw than
 * branch on `error` after every call.
 */
export function unwrap<R extends { data?: unknown; error?: unknown; response: Response }>(result: R): DataOf<R> {
  if (!result.response.ok) throw ApiError.from(result.response, result.error);
  return result.data as DataOf<R>;
}
