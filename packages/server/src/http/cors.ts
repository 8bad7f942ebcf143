import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/**
 * Lets browser code on the configured origins call the API (the client package runs in browsers).
 * The credential is an API key in the Authorization header, never a cookie, so responses do not
 * allow credentials and `*` is safe to offer: a page cannot borrow a key the browser holds for it.
 *
 * Registered before authentication on purpose: a browser sends its preflight (OPTIONS) without
 * the Authorization header, so the preflight must be answered before a credential is demanded.
 * The actual request that follows is authenticated as usual.
 */
export async function installCors(app: FastifyInstance, origins: string[]): Promise<void> {
  await app.register(cors, {
    origin: origins.includes('*') ? '*' : origins,
    methods: ['GET', 'HEAD', 'PUT', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'If-Match', 'If-None-Match', 'Idempotency-Key', 'X-Request-Id'],
    // What the client reads: the request id for support, Retry-After for its backoff, ETag and Location.
    exposedHeaders: ['X-Request-Id', 'Retry-After', 'ETag', 'Location'],
    maxAge: 600,
  });
}
