import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../shared/problems.js';

/**
 * What a route accepts as a body. Every route gets the safe defaults; a route that needs more
 * declares it where it is added, next to its schema:
 *
 *   app.post('/build/api/v1/deployments/:deploymentId/data-model/upload/file', {   // reference 2.7
 *     bodyLimit: 50 * 1024 * 1024,                 // Fastify's own route option, in bytes
 *     config: { contentTypes: ['multipart/form-data'] },
 *     ...
 *   })
 *
 * - `bodyLimit`: the largest body in bytes (default DEFAULT_BODY_LIMIT, 1 MiB); a larger one is
 *   413 PAYLOAD_TOO_LARGE, whose detail states the route's own limit.
 * - `config.contentTypes`: the media types the route accepts (default: application/json, plus what
 *   the route's plugin registered a parser for, as SCIM does for application/scim+json). Anything
 *   else is 415 UNSUPPORTED_MEDIA_TYPE. A type other than JSON also needs its parser, registered
 *   with `addContentTypeParser` in the route's plugin.
 * - `config.optionalBody`: an empty body is accepted and validated as `{}` (request-context.ts).
 *
 * Bodies are UTF-8 (RFC 8259 section 8.1): a charset parameter naming anything else is a 400.
 */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Media types this route accepts (see http/body.ts); absent: JSON. */
    contentTypes?: readonly string[];
  }
}

/** `1 MiB`, `50 MiB`, `512 KiB`, `100 bytes`: a limit as a person would say it. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

function mediaType(request: FastifyRequest): { type: string; charset: string | undefined } | undefined {
  const header = request.headers['content-type'];
  if (header === undefined) return undefined;
  const [type = '', ...parameters] = header.split(';');
  const charset = parameters
    .map((p) => p.trim().split('='))
    .find(([name]) => name?.trim().toLowerCase() === 'charset')?.[1]
    ?.trim()
    .replace(/^"(.*)"$/, '$1');
  return { type: type.trim().toLowerCase(), charset };
}

const hasBody = (request: FastifyRequest) => request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;

export function installBodyRules(app: FastifyInstance): void {
  // Fastify reads text/plain by default; a JSON API answers it 415 instead of a confusing 400.
  app.removeContentTypeParser('text/plain');
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    // Routes whose body is optional take an empty one; elsewhere it is MALFORMED_JSON.
    if (body.length === 0 && request.routeOptions.config?.optionalBody) return done(null, undefined);
    // Fastify's parser answers through `done`; what it returns is not awaited.
    void json(request, body as string, done);
  });

  app.addHook('preParsing', async (request) => {
    if (!hasBody(request)) return;
    const media = mediaType(request);
    if (media?.charset !== undefined && !/^utf-?8$/i.test(media.charset)) {
      throw new ApiError('MALFORMED_JSON', `The request body must be UTF-8; Content-Type names charset "${media.charset}".`);
    }
    const accepted = request.routeOptions.config?.contentTypes;
    if (accepted && media && !accepted.includes(media.type)) {
      throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `Content-Type ${media.type} is not accepted here; send ${accepted.join(' or ')}.`);
    }
  });
}
