import type { ProblemDialect } from '../../http/problem-dialect.js';
import { PROBLEMS, problemType, type FieldError, type ProblemCode } from '../../shared/problems.js';
import type { ProblemDetails } from '../../shared/schemas.js';

const DATA_API_PATH = /^\/deployments\/[^/]+\/(dev-mode\/[^/]+\/)?data-api\//;

/**
 * The data API's refusals before a request reaches a runtime (authentication, an environment that
 * does not answer): problem details with Cube's `error` member beside `detail`, since Cube's
 * clients read `error` (the message of their RequestError).
 */
export const dataApiProblemDialect: ProblemDialect = {
  matches: (request) => DATA_API_PATH.test(request.url),
  sendProblem: (reply, code: ProblemCode, detail: string, errors?: FieldError[]) => {
    const { status, title } = PROBLEMS[code];
    const body: ProblemDetails & { error: string } = {
      type: problemType(code),
      title,
      status,
      detail,
      code,
      message: detail,
      requestId: reply.request.id,
      error: detail,
    };
    if (errors && errors.length > 0) body.errors = errors;
    // Sent as written: the routes' problem schemas would drop the extension member.
    return reply.code(status).type('application/problem+json').serializer(JSON.stringify).send(body);
  },
};
