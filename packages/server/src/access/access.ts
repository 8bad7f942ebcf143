import type { Access, Db } from '../db/tables.js';
import { ApiError } from '../http/problems.js';
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
  ) {}

  grants(): Promise<GrantIndex> {
    this.#grants ??= this.#load();
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

  async #load(): Promise<GrantIndex> {
    const index = new Map<string, Access>();
    for (const row of await grantsOfUser(this.db, this.tenantId, this.subject.userId)) {
      const key = grantKey({ type: row.resource_type, id: row.resource_id });
      index.set(key, higher(index.get(key) ?? null, row.access) as Access);
    }
    return index;
  }
}
