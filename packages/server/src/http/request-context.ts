import type { Caller } from '../access/caller.js';
import type { EmbedPrincipal } from '../areas/embed-sessions/embed-sessions.service.js';
import type { Tenant } from './tenant.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The tenant the Host header names; set for every request. */
    tenant: Tenant;
    /** The authenticated caller; set for every route that is not public. */
    caller: Caller;
    /**
     * The embed token's principal, on the routes that take one (`config.credential: 'embed'`, and
     * the data API); null otherwise. Such a request has no `caller`: an embed user is no API key's user.
     */
    embed: EmbedPrincipal | null;
  }
  interface FastifyContextConfig {
    /** Routes that answer without a credential or tenant (health checks). */
    public?: boolean;
    /**
     * The body may be left out at the HTTP level (the spec says so of the bulk move); an absent
     * body is then validated as `{}`, so the error names the missing fields inside it.
     */
    optionalBody?: boolean;
  }
}

export {};
