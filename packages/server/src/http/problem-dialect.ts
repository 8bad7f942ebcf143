import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FieldError, ProblemCode } from '../shared/problems.js';

/**
 * A part of the API that answers errors in a schema of its own (SCIM's, RFC 7644 section 3.12)
 * instead of problem details. The app picks one per request from the path, before routing, so
 * unknown routes, authentication failures and body errors under that part speak its dialect too.
 * The area owns the rendering; the HTTP plumbing only asks whether a dialect applies.
 */
export interface ProblemDialect {
  /** True for requests this dialect answers (usually a path prefix). */
  matches(request: FastifyRequest): boolean;
  /** Renders a request-level problem known by its code. */
  sendProblem(reply: FastifyReply, code: ProblemCode, detail: string, errors?: FieldError[]): FastifyReply;
  /** Renders an error of the area's own type; returns undefined for errors it does not know. */
  sendError?(reply: FastifyReply, error: unknown): FastifyReply | undefined;
}
