import type { FastifyInstance, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The query string carries credentials (an OAuth callback's `code` and `state`): the access log shows the path only. */
    secretQuery?: boolean;
  }
}

function loggedUrl(request: FastifyRequest): string {
  if (!request.routeOptions.config?.secretQuery) return request.url;
  const at = request.url.indexOf('?');
  return at === -1 ? request.url : `${request.url.slice(0, at)}?[redacted]`;
}

/**
 * One log line per request, at info, written when the response is done: method, URL, status and
 * time, with the request id every other line of the request carries. Fastify's own request logging
 * (turned off in app.ts) writes two lines, one as the request arrives and one as it completes; the
 * second holds everything the first does, and at tens of thousands of requests a second the first
 * was a measurable share of a read's time.
 */
export function installAccessLog(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    // pino skips the line below the configured level before building anything but this object.
    request.log.info({ method: request.method, url: loggedUrl(request), statusCode: reply.statusCode, responseTime: reply.elapsedTime }, 'request completed');
    done();
  });
}
