import type { FastifyInstance } from 'fastify';
import type { Metrics } from './metrics.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Statements the store ran for this request so far; null unless metrics are served and it is in their sample. */
    dbStatements: number | null;
  }
}

/**
 * Counts every answered request by method, route template and status, with its duration and the
 * statements it ran. Installed first, so the statements of the credential check count too.
 */
export function installRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.decorateRequest('dbStatements', null);
  // Everything after this hook runs in the context it enters, the handler too once a body that
  // came in later packets has been read (metrics.test.ts sends one so).
  app.addHook('onRequest', (request, reply, done) => metrics.startRequest(request, reply.raw, done));
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000, request.dbStatements);
    done();
  });
}
