import type { Caller } from '../access/caller.js';
import type { Tenant } from './tenant.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The tenant the Host header names; set for every request. */
    tenant: Tenant;
    /** The authenticated caller; set for every route that is not public. */
    caller: Caller;
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
