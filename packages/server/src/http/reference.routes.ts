import type { FastifyPluginAsync } from 'fastify';
import { REFERENCE_BUNDLE_PATH, REFERENCE_PATH, REFERENCE_SCRIPT_PATH, redocBundle, referencePage, referenceScript } from './reference.js';

/** The page holds a key field: no other site may frame it; and it loads no image from elsewhere (Redoc's footer logo) and calls nothing but this server. */
const PAGE_POLICY = "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'none'; base-uri 'none'";

/**
 * `GET /api/v1/reference`: the API reference, the served OpenAPI document rendered by Redoc from
 * `node_modules` (no CDN). The page and its scripts are static and take no credential (a browser
 * cannot send one on a page load); the document they render still does (`GET /api/v1/spec`).
 * Not in the OpenAPI document: they are pages, not operations.
 */
export const referenceRoutes: FastifyPluginAsync = async (app) => {
  const page = referencePage();
  const script = referenceScript();
  const options = { config: { public: true }, schema: { hide: true } };

  app.get(REFERENCE_PATH, options, async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', PAGE_POLICY)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-cache')
      .send(page),
  );
  app.get(REFERENCE_SCRIPT_PATH, options, async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('x-content-type-options', 'nosniff').header('cache-control', 'no-cache').send(script),
  );
  app.get(REFERENCE_BUNDLE_PATH, options, async (_request, reply) =>
    reply
      .type('text/javascript; charset=utf-8')
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'public, max-age=3600')
      .send(redocBundle()),
  );
};
