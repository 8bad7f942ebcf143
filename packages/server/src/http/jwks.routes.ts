import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ProblemRef } from '../shared/schemas.js';
import type { Signing } from '../signing/index.js';
import type { Tenant } from './tenant.js';

/** How long a data API may keep the key set: well inside a rotation's overlap. */
export const MAX_AGE_SECONDS = 300;

export const Jwk = Type.Object(
  {
    kty: Type.String(),
    kid: Type.String(),
    alg: Type.String(),
    use: Type.String(),
    crv: Type.Optional(Type.String()),
    x: Type.Optional(Type.String()),
    y: Type.Optional(Type.String()),
  },
  { description: 'A public key (RFC 7517); never a private parameter.' },
);

/**
 * The tenant's public key set (extension): what verifies the tokens it issues (data-API tokens
 * now; embed and workload-identity tokens later). No credential; limited per client address.
 * The tenant comes from the Host header as for every route.
 */
export function jwksRoutes(signing: Signing, resolveTenant: (request: FastifyRequest) => Promise<Tenant>): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/.well-known/jwks.json',
      {
        config: { public: true },
        schema: {
          operationId: 'getJwks',
          tags: ['Meta'],
          summary: 'The tenant’s public signing keys (extension; no credential)',
          description: `The keys that may still verify a token the tenant issued: the current one and, after a rotation, the previous one until its tokens have expired. Cacheable for ${MAX_AGE_SECONDS} s.`,
          security: [],
          response: {
            200: Type.Object({ keys: Type.Array(Jwk) }),
            404: { description: 'No tenant answers on this host (`code` TENANT_NOT_FOUND)', ...ProblemRef },
            429: { description: 'Too many requests from this address (`code` RATE_LIMITED); see `Retry-After`', ...ProblemRef },
          },
        },
      },
      async (request, reply) => {
        const tenant = await resolveTenant(request);
        reply.header('cache-control', `public, max-age=${MAX_AGE_SECONDS}`);
        return signing.jwks(tenant);
      },
    );
  };
}
