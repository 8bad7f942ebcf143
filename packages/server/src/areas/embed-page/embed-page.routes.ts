import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Tenant } from '../../http/tenant.js';
import { ApiError } from '../../shared/problems.js';
import type { PageFiles } from './embed-page.assets.js';

/** Where the page is served; the iframe's `src` (docs/api/embedding.md). */
export const EMBED_PAGE_PATH = '/embed/dashboard/:publicId';
/** Where its fingerprinted files are served (Vite's `base` in packages/embed/vite.config.ts). */
export const EMBED_ASSETS_PATH = '/embed/assets/:file';

export interface EmbedPageRouteOptions {
  resolveTenant: (request: FastifyRequest) => Promise<Tenant>;
  /** The tenant's embed `allowedOrigins`: the sites that may frame the page. */
  allowedOrigins: (tenantId: number) => Promise<readonly string[]>;
  /** Page views a minute per client address (EMBED_EXCHANGE_PER_IP_PER_MINUTE, as each view exchanges once); 0: unlimited. */
  perIpPerMinute: number;
}

/**
 * The page's Content-Security-Policy: its own scripts, styles and calls only (no inline script,
 * no eval: charts interpret their expressions, see packages/embed/src/chart.ts; no inline style),
 * and framed only by the tenant's allowed origins, `'none'` when it names none.
 */
export function pagePolicy(allowedOrigins: readonly string[]): string {
  const ancestors = allowedOrigins.length > 0 ? allowedOrigins.join(' ') : "'none'";
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${ancestors}`,
  ].join('; ');
}

/** The allowed origins, for the page to check who it talks to with postMessage: a meta element before `</head>`. */
function withOrigins(html: string, allowedOrigins: readonly string[]): string {
  const escaped = JSON.stringify(allowedOrigins).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  return html.replace('</head>', `<meta name="mapi-allowed-origins" content="${escaped}">\n</head>`);
}

/**
 * `GET /embed/dashboard/{publicId}`: the embedded dashboard page (a customer's iframe), and its
 * files. No credential: the page takes the session id from its URL and exchanges it itself
 * (reference 4.16). Not in the OpenAPI document: pages and files, not operations.
 */
export function embedPageRoutes(files: PageFiles, options: EmbedPageRouteOptions): FastifyPluginAsync {
  return async (app) => {
    // The session id in the URL is a one-time credential: the access log leaves the query out.
    const rateLimit = options.perIpPerMinute > 0 ? { max: options.perIpPerMinute } : (false as const);
    const page = { config: { public: true, secretQuery: true, rateLimit }, schema: { hide: true } };
    app.get<{ Params: { publicId: string } }>(EMBED_PAGE_PATH, page, async (request, reply) => {
      const tenant = await options.resolveTenant(request);
      if (files.html === null) throw new ApiError('UNAVAILABLE', 'The embedded dashboard page is not built on this server (npm run build builds it).');
      const origins = await options.allowedOrigins(tenant.id);
      return reply
        .type('text/html; charset=utf-8')
        .header('content-security-policy', pagePolicy(origins))
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'no-referrer')
        .header('cache-control', 'no-cache')
        .send(withOrigins(files.html, origins));
    });

    const asset = { config: { public: true, rateLimit: false as const }, schema: { hide: true } };
    app.get<{ Params: { file: string } }>(EMBED_ASSETS_PATH, asset, async (request, reply) => {
      const file = files.assets.get(request.params.file);
      if (!file) throw new ApiError('ROUTE_NOT_FOUND', `No file ${JSON.stringify(request.params.file)} in the embedded page's assets.`);
      return reply.type(file.type).header('x-content-type-options', 'nosniff').header('cache-control', 'public, max-age=31536000, immutable').send(file.body);
    });
  };
}
