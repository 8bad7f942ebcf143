import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { Jwk, MAX_AGE_SECONDS } from '../../http/jwks.routes.js';
import type { Tenant } from '../../http/tenant.js';
import { ProblemRef, ref } from '../../shared/schemas.js';
import type { Signing } from '../../signing/index.js';
import { ExchangeSessionInputSchema, GenerateSessionInputSchema, RevokeSessionInputSchema } from './embed-sessions.schemas.js';
import type { EmbedSessionsService } from './embed-sessions.service.js';

const tags = ['Embedding'];

export interface EmbedSessionRouteOptions {
  signing: Signing;
  resolveTenant: (request: FastifyRequest) => Promise<Tenant>;
  /** Exchanges a minute per client address; 0: unlimited. */
  exchangePerIpPerMinute: number;
}

/** Signed embedding sessions (reference 4.15-4.17) and the key set that verifies their tokens. */
export function embedSessionsRoutes(service: EmbedSessionsService, options: EmbedSessionRouteOptions): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/v1/embed/generate-session',
      {
        schema: {
          operationId: 'generateEmbedSession',
          tags,
          summary: 'Generate a signed embed session (reference 4.15; an admin’s key)',
          description:
            'A one-time session id (32 lowercase hex characters), to be exchanged within 5 minutes by the embedding page (POST /api/v1/embed/session/token). ' +
            'It captures the deployment, the identity, the groups, the attributes, the security context, the settings and the branch, resolved now. ' +
            'An `externalId` user is created or updated now in its embed tenant (created on demand; `default` when none is named), as provisioning does (4.4): groups and attributes must exist (they are never created here), values typed by the catalog, nothing written on any refusal; past the account’s cap of embed users, 429. `creatorMode: true` (with the account’s `useCreatorMode` embed setting on, 403 CREATOR_MODE_DISABLED otherwise) issues a creator-mode session: `tenantGroupDefinitions` and `userAttributeDefinitions` are upserted into the embed tenant first (an attribute’s type never changes: another type fails the whole request, 400, and writes nothing), `tenantGroups` may name them, and `userAttributes` resolve against the embed tenant’s own catalog. Accepts `Authorization: Api-Key <key>` as well as `Bearer`.',
          body: ref(GenerateSessionInputSchema),
          response: { 200: Type.Ref('EmbedSession') },
          problems: [
            'FORBIDDEN',
            'KEY_SCOPE_FORBIDDEN',
            'EMBEDDING_DISABLED',
            'DEPLOYMENT_NOT_FOUND',
            'BRANCH_NOT_FOUND',
            'BRANCH_NOT_SERVED',
            'USER_NOT_FOUND',
            'CREATOR_MODE_REQUIRED',
            'CREATOR_MODE_DISABLED',
            'GROUPS_NOT_FOUND',
            'USER_ATTRIBUTES_NOT_FOUND',
            'EMBED_USER_LIMIT',
            'UNAVAILABLE',
          ],
        },
      },
      async (request) => service.generate(request.caller, request.body),
    );

    app.post(
      '/api/v1/embed/session/token',
      {
        config: { public: true, ...(options.exchangePerIpPerMinute > 0 ? { rateLimit: { max: options.exchangePerIpPerMinute } } : { rateLimit: false }) },
        schema: {
          operationId: 'exchangeEmbedSession',
          tags,
          summary: 'Exchange a session id for an embed token (reference 4.16; no credential)',
          description:
            'Single use: the first exchange wins, every later one (and one after 5 minutes, or after a revoke) is 401. The token is a JWT (ES256, `typ` embed+jwt, `kid`) valid 24 hours, ' +
            `verifiable with GET /api/v1/embed/jwks.json. Limited per client address (EMBED_EXCHANGE_PER_IP_PER_MINUTE, default 120 a minute).`,
          security: [],
          body: ref(ExchangeSessionInputSchema),
          response: { 200: Type.Ref('EmbedToken') },
          problems: ['UNAUTHENTICATED', 'TENANT_NOT_FOUND', 'RATE_LIMITED'],
        },
      },
      async (request) => service.exchange(await options.resolveTenant(request), request.body.sessionId),
    );

    app.post(
      '/api/v1/embed/session/revoke',
      {
        schema: {
          operationId: 'revokeEmbedSession',
          tags,
          summary: 'Revoke an embed session (reference 4.17; an admin’s key)',
          description:
            '204 whatever the state of the id (unknown, expired, already revoked). Before its exchange the id can no longer be exchanged; after it, the token is refused (401) from its next request on, on every server process.',
          body: ref(RevokeSessionInputSchema),
          response: { 204: Type.Null({ description: 'Revoked, or nothing to revoke.' }) },
          problems: ['FORBIDDEN', 'EMBEDDING_DISABLED'],
        },
      },
      async (request, reply) => {
        await service.revoke(request.caller, request.body.sessionId);
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/api/v1/embed/jwks.json',
      {
        config: { public: true },
        schema: {
          operationId: 'getEmbedJwks',
          extension: true,
          tags,
          summary: 'The public keys of embed tokens (extension; no credential)',
          description: `The keys that may verify an embed token of this tenant, and only those: the current one and, after a rotation, the previous one until its tokens have expired. Cacheable for ${MAX_AGE_SECONDS} s.`,
          security: [],
          response: {
            200: Type.Object({ keys: Type.Array(Jwk) }),
            404: { description: 'No tenant answers on this host (`code` TENANT_NOT_FOUND)', ...ProblemRef },
            429: { description: 'Too many requests from this address (`code` RATE_LIMITED); see `Retry-After`', ...ProblemRef },
          },
        },
      },
      async (request, reply) => {
        const tenant = await options.resolveTenant(request);
        reply.header('cache-control', `public, max-age=${MAX_AGE_SECONDS}`);
        return options.signing.jwks(tenant, 'embed');
      },
    );
  };
}
