import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { FastifyInstance } from 'fastify';
import { sendProblem } from './error-handler.js';

/**
 * Fastify answers an unknown method on a known path with 404; clients deserve 405 and an
 * `Allow` header. We mirror every route into a router of our own to find the other methods.
 */
export function installNotFound(app: FastifyInstance): void {
  const mirror = FindMyWay({ ignoreTrailingSlash: true });
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).map((m) => m.toUpperCase()) as HTTPMethod[];
    for (const method of methods) {
      if (method === 'HEAD' || method === 'OPTIONS') continue;
      try {
        mirror.on(method, route.url, () => undefined);
      } catch {
        // the same route registered under two prefixes: already mirrored
      }
    }
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = (['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const).filter((m) => mirror.find(m, path) !== null);
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return sendProblem(request, reply, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}.`);
    }
    return sendProblem(request, reply, 'ROUTE_NOT_FOUND', `There is no route ${request.method} ${path}.`);
  });
}
