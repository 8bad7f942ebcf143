import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Transform, type Readable } from 'node:stream';
import { Type } from 'typebox';
import { ApiError } from '../../shared/problems.js';
import { Id } from '../../shared/schemas.js';
import type { GitHttpService } from './git-http.service.js';

const GIT_BODIES = ['application/x-git-upload-pack-request', 'application/x-git-receive-pack-request'];

/** The largest push or fetch negotiation accepted (a pack of a data model is far smaller). */
export const GIT_BODY_LIMIT = 100 * 1024 * 1024;

/** The stream, cut off with an error past `limit` bytes (a chunked push announces no length). */
function limited(source: Readable, limit: number): Readable {
  let seen = 0;
  const guard = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      done(seen > limit ? new Error(`The request sent more than ${limit} bytes`) : null, chunk);
    },
  });
  source.on('error', (error) => guard.destroy(error));
  return source.pipe(guard);
}

/**
 * `https://<host>/build/git/<deploymentId>.git`: clone, fetch and push with any git client
 * (extension). Basic auth with an API key as the password; the body is git's own protocol,
 * streamed to `git http-backend` as it arrives.
 */
export function gitHttpRoutes(service: GitHttpService): FastifyPluginAsyncTypebox {
  return async (app) => {
    // The stream itself is the body: git's pack data goes to git unparsed.
    app.addContentTypeParser(GIT_BODIES, (_request, payload, done) => done(null, payload));
    for (const method of ['GET', 'POST'] as const) {
      app.route({
        method,
        url: '/build/git/:deploymentId.git/*',
        bodyLimit: GIT_BODY_LIMIT,
        config: { credential: 'basic', contentTypes: GIT_BODIES },
        schema: {
          hide: true,
          params: Type.Object({ deploymentId: Id, '*': Type.String({ maxLength: 512 }) }),
        },
        handler: async (request, reply) => {
          const queryAt = request.url.indexOf('?');
          const declared = Number(request.headers['content-length'] ?? 0);
          if (declared > GIT_BODY_LIMIT) throw new ApiError('PAYLOAD_TOO_LARGE', `A git request may send at most ${GIT_BODY_LIMIT / (1024 * 1024)} MiB.`);
          const body = method === 'POST' ? limited(request.body as Readable, GIT_BODY_LIMIT) : null;
          const header = (name: string) => {
            const value = request.headers[name];
            return typeof value === 'string' ? value : undefined;
          };
          const response = await service.serve(request.caller, request.params.deploymentId, {
            method,
            rest: request.params['*'],
            query: queryAt === -1 ? '' : request.url.slice(queryAt + 1),
            contentType: header('content-type'),
            contentEncoding: header('content-encoding'),
            gitProtocol: header('git-protocol'),
            body,
            remoteAddr: request.ip,
          });
          response.done.catch((error: unknown) => request.log.error({ err: error }, 'a push moved branches but was not recorded; its answer was cut off'));
          return reply.code(response.status).headers(response.headers).send(response.body);
        },
      });
    }
  };
}
