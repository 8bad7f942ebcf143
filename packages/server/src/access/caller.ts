import type { Role } from '../db/tables.js';
import type { TenantSnapshot } from '../cache/tenant-cache.js';
import type { AccessContext } from './access.js';

/** Who is calling: resolved once per request from the credential, read by every service. */
export interface Actor {
  tenantId: number;
  userId: number;
  email: string;
  role: Role;
  /**
   * The credential's number: an API key's id, or for an OAuth access token the negative of its
   * grant's (or client's) number, so dev-mode branches, uploads and rate limits follow the
   * credential and never mix an API key with a token.
   */
  keyId: number;
  /** Deployments the key may target; null means every deployment. */
  scope: number[] | null;
  /** How the caller authenticated, as the audit log names it; absent: an API key. */
  credentialKind?: string;
}

/** The request's logger: every line it writes carries the request id. */
export interface RequestLog {
  error(details: object, message: string): void;
}

/**
 * What a service method receives about its caller: identity, a per-request access checker, and the
 * request's logger. An area that hangs a per-request service of its own on it declares the field
 * beside that service (module augmentation, as areas/workspace/folder-trees.ts does).
 */
export interface Caller {
  actor: Actor;
  /** The tenant the request's host named (the actor's): for the absolute URLs a response holds. */
  tenant: { id: number; slug: string };
  access: AccessContext;
  log: RequestLog;
  /** The tenant's cached lookups, valid for this request (cache/tenant-cache.ts). */
  snapshot: TenantSnapshot;
  /** The request's id (`x-request-id`), for the audit log; absent outside a request. */
  requestId?: string;
}
