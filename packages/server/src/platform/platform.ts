import type { Audit } from '../audit/index.js';
import type { TenantCache } from '../cache/tenant-cache.js';
import type { Store } from '../db/database.js';
import type { Jobs } from '../jobs/index.js';
import type { Outbound, OutboundLog } from '../outbound/index.js';
import type { Runtime } from '../runtime/index.js';
import type { Secrets } from '../secrets/index.js';
import type { Signing } from '../signing/index.js';
import type { Clock } from '../time.js';

/**
 * The shared services every area leans on, built once per app before any area (services.ts). An
 * area takes from here what it needs and from other areas only through `use` (area-module.ts), so
 * what an area depends on is read in its module alone.
 */
export interface Platform {
  readonly store: Store;
  /** The keys values are encrypted with at rest. */
  readonly secrets: Secrets;
  /** The tenant keyring every issued token is signed with. */
  readonly signing: Signing;
  /** Background jobs, their schedules and workers. */
  readonly jobs: Jobs;
  readonly audit: Audit;
  /** Calls to other servers. */
  readonly outbound: Outbound;
  /** Deployments' pods. */
  readonly runtime: Runtime;
  /** Per-request reads kept under each tenant's `auth_version`. */
  readonly tenantCache: TenantCache;
  /** The clock of rules that expire and of schedules; tests move it. */
  readonly now: Clock;
  /** The origin of a tenant: its issuer, and where its deployments are. */
  readonly originOf: (tenant: { id: number; slug: string }) => Promise<string>;
  /** Where background failures and outbound calls are logged (never a secret). */
  readonly log: OutboundLog;
  /** Where a service reports a failure no request sees. */
  readonly onError: (error: unknown, what: string) => void;
}
