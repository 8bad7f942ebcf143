import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ProblemDialect } from '../../http/problem-dialect.js';
import { SCIM_PREFIX } from '../../http/auth.js';
import { PROBLEMS, type FieldError, type ProblemCode } from '../../shared/problems.js';

/** SCIM answers in its own media type (RFC 7644 section 3.1); plain JSON is accepted in. */
export const SCIM_MEDIA_TYPE = 'application/scim+json';
export const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
export { SCIM_PREFIX };

/** The `scimType` values of RFC 7644 section 3.12 that this server can give. */
export type ScimType =
  'invalidFilter' | 'tooMany' | 'uniqueness' | 'mutability' | 'invalidSyntax' | 'invalidPath' | 'noTarget' | 'invalidValue' | 'invalidVers' | 'sensitive';

/** A SCIM error raised by the SCIM service or routes; rendered in SCIM's error schema. */
export class ScimError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly scimType?: ScimType,
  ) {
    super(detail);
    this.name = 'ScimError';
  }
}

export const invalidValue = (detail: string) => new ScimError(400, detail, 'invalidValue');
export const invalidSyntax = (detail: string) => new ScimError(400, detail, 'invalidSyntax');
export const invalidFilter = (detail: string) => new ScimError(400, detail, 'invalidFilter');
export const invalidPath = (detail: string) => new ScimError(400, detail, 'invalidPath');
export const noTarget = (detail: string) => new ScimError(400, detail, 'noTarget');

/** True for requests to the SCIM service, whose errors use SCIM's schema instead of problem details. */
export function isScimRequest(request: FastifyRequest): boolean {
  const url = request.url;
  return url === SCIM_PREFIX || url.startsWith(`${SCIM_PREFIX}/`) || url.startsWith(`${SCIM_PREFIX}?`);
}

/** The scimType RFC 7644 section 3.12 names for a problem code, where it names one. */
const SCIM_TYPES: Partial<Record<ProblemCode, ScimType>> = {
  VALIDATION_FAILED: 'invalidValue',
  MALFORMED_JSON: 'invalidSyntax',
  EMAIL_TAKEN: 'uniqueness',
  GROUP_NAME_TAKEN: 'uniqueness',
  USER_ATTRIBUTE_NAME_TAKEN: 'uniqueness',
};

export function scimErrorBody(status: number, detail: string, scimType?: ScimType) {
  return { schemas: [SCIM_ERROR_SCHEMA], status: String(status), ...(scimType ? { scimType } : {}), detail };
}

export function sendScimError(reply: FastifyReply, status: number, detail: string, scimType?: ScimType): FastifyReply {
  return reply
    .code(status)
    .type(SCIM_MEDIA_TYPE)
    .send(JSON.stringify(scimErrorBody(status, detail, scimType)));
}

/** A request-level problem (authentication, routing, body parsing, domain rules) in SCIM's error schema. */
export function sendProblemAsScim(reply: FastifyReply, code: ProblemCode, detail: string): FastifyReply {
  return sendScimError(reply, PROBLEMS[code].status, detail, SCIM_TYPES[code]);
}

/** SCIM's error rendering, for every request under the SCIM prefix (routed or not). */
export const scimProblemDialect: ProblemDialect = {
  matches: isScimRequest,
  sendProblem: (reply, code: ProblemCode, detail: string, errors?: FieldError[]) =>
    sendProblemAsScim(reply, code, errors?.length ? `${detail} ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}` : detail),
  sendError: (reply, error) => (error instanceof ScimError ? sendScimError(reply, error.status, error.detail, error.scimType) : undefined),
};
