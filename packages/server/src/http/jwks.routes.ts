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
    n: Type.Optional(Type.String()),
    e: Type.Optional(Type.String()),
  },
  { description: 'A public key (RFC 7517); never a private parameter.' },
);

const KeySet = Type.Object({ keys: Type.Array(Jwk) });
const PublicProblems = {
  404: { description: 'No tenant answers on this host (`code` TENANT_NOT_FOUND), or the OIDC issuer is off (`code` ROUTE_NOT_FOUND)', ...ProblemRef },
  429: { description: 'Too many requests from this address (`code` RATE_LIMITED); see `Retry-After`', ...ProblemRef },
};

/**
 * The tenant's public keys, no credential, limited per client address; the tenant comes from the
 * Host header as for every route.
 *
 * - `/api/v1/data-api/jwks.json` (extension): what verifies the data-API tokens it issues (1.16, 1.19).
 * - `/.well-known/openid-configuration` and `/.well-known/jwks.json`: the tenant as the OIDC issuer
 *   of workload identity (reference 5.14): its discovery document and the RS256 keys of its
 *   workload tokens only, served while the tenant's `oidcEnabled` is on, 404 otherwise.
 */
export function jwksRoutes(signing: Signing, resolveTenant: (request: FastifyRequest) => Promise<Tenant>, issuer: WorkloadIssuer): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/data-api/jwks.json',
      {
        config: { public: true },
        schema: {
          operationId: 'getDataApiJwks',
          extension: true,
          tags: ['Meta'],
          summary: 'The keys of the tenant’s data-API tokens (extension; no credential)',
          description: `The keys that may still verify a data-API token the tenant issued: the current one and, after a rotation, the previous one until its tokens have expired. Cacheable for ${MAX_AGE_SECONDS} s.`,
          security: [],
          response: { 200: KeySet, ...PublicProblems },
        },
      },
      async (request, reply) => {
        const tenant = await resolveTenant(request);
        reply.header('cache-control', `public, max-age=${MAX_AGE_SECONDS}`);
        return signing.jwks(tenant);
      },
    );

    app.get(
      '/.well-known/openid-configuration',
      {
        config: { public: true },
        schema: {
          operationId: 'getWorkloadIssuerConfiguration',
          tags: ['Workload identity'],
          summary: 'The tenant’s OIDC discovery document as the issuer of workload tokens (reference 5.14; no credential)',
          description:
            'Served while the tenant’s `oidcEnabled` is on (PUT /api/v1/tenant/settings); 404 otherwise. Cloud token exchanges (AWS, GCP, Azure) read it and the key set it names.',
          security: [],
          response: {
            200: Type.Object(
              {
                issuer: Type.String(),
                jwks_uri: Type.String(),
                response_types_supported: Type.Array(Type.String()),
                subject_types_supported: Type.Array(Type.String()),
                id_token_signing_alg_values_supported: Type.Array(Type.String()),
                claims_supported: Type.Array(Type.String()),
              },
              { additionalProperties: true },
            ),
            ...PublicProblems,
          },
        },
      },
      async (request, reply) => {
        const tenant = await resolveTenant(request);
        const origin = await issuer(tenant);
        reply.header('cache-control', `public, max-age=${MAX_AGE_SECONDS}`);
        return {
          issuer: origin,
          jwks_uri: `${origin}/.well-known/jwks.json`,
          response_types_supported: ['id_token'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
          claims_supported: [
            'iss',
            'sub',
            'aud',
            'exp',
            'iat',
            'jti',
            'mapi:config',
            'mapi:component',
            'mapi:deployment_id',
            'mapi:environment',
            'mapi:region',
          ],
        };
      },
    );

    app.get(
      '/.well-known/jwks.json',
      {
        config: { public: true },
        schema: {
          operationId: 'getJwks',
          tags: ['Workload identity'],
          summary: 'The keys of the tenant’s workload tokens (reference 5.14; no credential)',
          description: `RS256 keys of workload identity only: the current one and, after a rotation, the previous one until its tokens have expired. Served while \`oidcEnabled\` is on; 404 otherwise. Cacheable for ${MAX_AGE_SECONDS} s.`,
          security: [],
          response: { 200: KeySet, ...PublicProblems },
        },
      },
      async (request, reply) => {
        const tenant = await resolveTenant(request);
        await issuer(tenant);
        reply.header('cache-control', `public, max-age=${MAX_AGE_SECONDS}`);
        return signing.jwks(tenant, 'workload');
      },
    );
  };
}

/** The tenant's issuer origin while it issues workload tokens; throws the 404 while `oidcEnabled` is off. */
export type WorkloadIssuer = (tenant: Tenant) => Promise<string>;
