import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isEmbedPath } from './auth.js';

const COMMON: FastifyCorsOptions = {
  methods: ['GET', 'HEAD', 'PUT', 'POST', 'PATCH', 'DELETE'],
  allowedHeaders: ['Authorization', 'Content-Type', 'If-Match', 'If-None-Match', 'Idempotency-Key', 'X-Request-Id'],
  // What the client reads: the request id for support, Retry-After for its backoff, ETag and Location.
  exposedHeaders: ['X-Request-Id', 'Retry-After', 'ETag', 'Location'],
  maxAge: 600,
};

export interface CorsSettings {
  /** Browser origins allowed to call the API (`*` for any); empty: none. */
  origins: string[];
  /**
   * The origins the embed routes answer, from the tenant's embed settings (`allowedOrigins`). The
   * server-wide list never answers for those routes: an account decides which sites embed it.
   */
  embedOrigins: (request: FastifyRequest) => Promise<string[]>;
}

/**
 * Lets browser code on the configured origins call the API (the client package runs in browsers).
 * The credential is an API key in the Authorization header, never a cookie, so responses do not
 * allow credentials and `*` is safe to offer: a page cannot borrow a key the browser holds for it.
 *
 * Registered before authentication on purpose: a browser sends its preflight (OPTIONS) without
 * the Authorization header, so the preflight must be answered before a credential is demanded.
 * The actual request that follows is authenticated as usual.
 */
export async function installCors(app: FastifyInstance, settings: CorsSettings): Promise<void> {
  const { origins } = settings;
  const server = origins.length === 0 ? false : origins.includes('*') ? '*' : origins;
  await app.register(cors, {
    delegator: async (request: FastifyRequest): Promise<FastifyCorsOptions> => {
      if (!isEmbedPath(request.url)) return { ...COMMON, origin: server };
      // An unknown host, or a tenant that allows no origin, answers no browser.
      const allowed = await settings.embedOrigins(request).catch(() => []);
      return { ...COMMON, origin: allowed.length === 0 ? false : allowed };
    },
  });
}
