import { TenantSnapshot } from '../cache/tenant-cache.js';
import type { Access, Db } from '../db/tables.js';
import { ApiError } from '../shared/problems.js';
import { requireUnscopedKey } from './key-scope.js';
import { grantsOfUser } from './grants.store.js';
import { atLeast, effectiveAccess, grantKey, higher, type AccessTarget, type GrantIndex, type Subject } from './levels.js';

/**
 * Access checks for one request's caller. The caller's grants are read once, on first use, and
 * every later check in the request is evaluated in memory.
 */
export class AccessContext {
  #grants: Promise<GrantIndex> | undefined;

  constructor(
    private readonly db: Db,
    readonly tenantId: number,
    readonly subject: Subject,
    /** Deployments the caller's key is limited to; null for every deployment. */
    readonly keyScope: number[] | null = null,
    /** Where the grants are cached between requests; by default, nowhere. */
    private readonly snapshot: TenantSnapshot = TenantSnapshot.uncached(tenantId),
  ) {}

  grants(): Promise<GrantIndex> {
    // Shared by every request of this tenant under the same auth version; read-only.
    this.#grants ??= this.snapshot.memo(`grants:${this.subject.userId}`, () => this.#load());
    return this.#grants;
  }

  async level(target: AccessTarget): Promise<Access | null> {
    if (this.subject.role === 'ADMIN') return 'MANAGE';
    return effectiveAccess(this.subject, await this.grants(), target);
  }

  async has(target: AccessTarget, need: Access): Promise<boolean> {
    return atLeast(await this.level(target), need);
  }

  get isAdmin(): boolean {
    return this.subject.role === 'ADMIN';
  }

  /** Throws 403 unless the caller is an admin. */
  requireAdmin(action: string): void {
    if (!this.isAdmin) throw new ApiError('FORBIDDEN', `Only an admin may ${action}.`);
  }

  /**
   * Account-wide writes (users, groups, grants, new deployments) need an admin using an unscoped
   * key: a key limited to some deployments must not reach beyond them, for instance by promoting a
   * user or granting access elsewhere (spec: Authentication 4 and 7).
   */
  requireAccountAdmin(action: string): void {
    this.requireAdmin(action);
    requireUnscopedKey(this.keyScope, action);
  }

  async #load(): Promise<GrantIndex> {
    const index = new Map<string, Access>();
    for (const row of await grantsOfUser(this.db, this.tenantId, this.subject.userId)) {
      const key = grantKey({ type: row.resource_type, id: row.resource_id });
      index.set(key, higher(index.get(key) ?? null, row.access) as Access);
    }
    return index;
  }
}
