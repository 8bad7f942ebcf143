import { TenantSnapshot } from '../cache/tenant-cache.js';
import type { Access, Db, Role } from '../db/tables.js';
import { ApiError } from '../shared/problems.js';
import { allows, type DeploymentAction } from './actions.js';
import { EVERY_DEPLOYMENT, effectiveRole, roleGrantsOf, roleLevelOn, rolesAllow, type RoleGrants } from './custom-roles.js';
import { requireUnscopedKey } from './key-scope.js';
import { atLeast, effectiveAccess, grantKey, higher, type AccessTarget, type GrantIndex, type Subject } from './levels.js';
import { deploymentIdsOf, heldByUser } from './role-grants.store.js';

/** What one user holds: grants by resource (policies, and what their custom roles give), and their roles' grants. */
interface Held {
  index: GrantIndex;
  roles: RoleGrants;
  /** The built-in role they count as once their roles' tier is taken in (custom-roles.ts). */
  role: Role;
}

/**
 * Access checks for one request's caller. The caller's grants are read once, on first use, and
 * every later check in the request is evaluated in memory.
 */
export class AccessContext {
  #held: Promise<Held> | undefined;

  constructor(
    private readonly db: Db,
    readonly tenantId: number,
    readonly subject: Subject,
    /** Deployments the caller's key is limited to; null for every deployment. */
    readonly keyScope: number[] | null = null,
    /** Where the grants are cached between requests; by default, nowhere. */
    private readonly snapshot: TenantSnapshot = TenantSnapshot.uncached(tenantId),
  ) {}

  #heldNow(): Promise<Held> {
    // Shared by every request of this tenant under the same auth version; read-only.
    this.#held ??= this.snapshot.memo(`grants:${this.subject.userId}`, () => this.#load());
    return this.#held;
  }

  /** Grants by resource: the policies that apply to the caller, and the deployments their custom roles reach. */
  async grants(): Promise<GrantIndex> {
    return (await this.#heldNow()).index;
  }

  async level(target: AccessTarget): Promise<Access | null> {
    if (this.subject.role === 'ADMIN') return 'MANAGE';
    const held = await this.#heldNow();
    return effectiveAccess({ userId: this.subject.userId, role: held.role }, held.index, target);
  }

  /**
   * Whether the caller, holding `level` on the deployment, may perform `action` there: by the
   * reference's permission map (actions.ts) with the role they count as, or because one of their
   * custom roles grants the action there (custom-roles.ts).
   */
  async allowsOnDeployment(deploymentId: number, level: Access | null, action: DeploymentAction): Promise<boolean> {
    if (this.subject.role === 'ADMIN') return true;
    const held = await this.#heldNow();
    return allows(held.role, level, action) || rolesAllow(this.subject.role, held.roles, deploymentId, action);
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

  async #load(): Promise<Held> {
    const index = new Map<string, Access>();
    const grant = (deploymentId: number, access: Access | null) => {
      if (access === null) return;
      const key = grantKey({ type: 'DEPLOYMENT', id: deploymentId });
      index.set(key, higher(index.get(key) ?? null, access) as Access);
    };
    const held = await heldByUser(this.db, this.tenantId, this.subject.userId);
    for (const row of held.grants) {
      const key = grantKey({ type: row.resource_type, id: row.resource_id });
      index.set(key, higher(index.get(key) ?? null, row.access) as Access);
    }
    const roles = roleGrantsOf(held.rolePolicies.flat());
    // A role names deployments by id or as `All`; a level is kept only for deployments that exist,
    // so the id of a deleted deployment grants nothing (and a later one with another id is not it).
    const every = roles.deployments.get(EVERY_DEPLOYMENT);
    const ids = new Set(roles.deployments.size === 0 ? [] : await deploymentIdsOf(this.db, this.tenantId));
    for (const [resource, actions] of roles.deployments) {
      if (resource === EVERY_DEPLOYMENT) continue;
      if (ids.has(Number(resource))) grant(Number(resource), roleLevelOn(actions));
    }
    if (every !== undefined) for (const id of ids) grant(id, roleLevelOn(every));
    return { index, roles, role: effectiveRole(this.subject.role, roles) };
  }
}
