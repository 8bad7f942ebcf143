import type { FastifyInstance } from 'fastify';
import type { Audit } from './index.js';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * One hook for every area: each mutating request that reached an authenticated caller is recorded
 * with its outcome (the status sent, refusals included): actor, credential, method, route pattern,
 * path parameters, request id. Never the body, the query or headers.
 *
 * In `onSend`, so the record is written before the client has its answer: a client that sees a
 * response can find its event. A failure to record is logged and does not change the answer (the
 * change itself has committed by then).
 *
 * Not recorded: data-API queries (their POSTs read, they change nothing), and requests refused
 * before a caller was known (401s; sign-in attempts are explicit events of their own).
 */
export function installAuditHook(app: FastifyInstance, audit: Audit): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const caller = request.caller;
    if (!caller || !MUTATING.has(request.method) || request.routeOptions.config?.credential === 'data-api') return payload;
    try {
      await audit.recordRequest(caller, {
        method: request.method,
        route: request.routeOptions.url ?? request.url.split('?')[0]!,
        params: (request.params ?? {}) as Record<string, unknown>,
        status: reply.statusCode,
        requestId: request.id,
      });
    } catch (error) {
      request.log.error({ err: error }, 'audit: recording the request failed');
    }
    return payload;
  });
}
