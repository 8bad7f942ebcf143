import type { Caller } from '../../access/caller.js';
import { DEPLOYMENT_ROLE_ACTIONS, GLOBAL_ROLE_ACTIONS, isDeploymentResource } from '../../access/custom-roles.js';
import type { Audit } from '../../audit/index.js';
import type { Store } from '../../db/database.js';
import type { Executor, RoleRow } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { afterId, pageRequest, toPage } from '../../shared/pagination.js';
import { ApiError, notFound, type FieldError } from '../../shared/problems.js';
import { timestamp, type Clock } from '../../time.js';
import { findGroup, groupLock } from '../groups/index.js';
import { findUserById } from '../users/index.js';
import type { CreateRoleInput, ListRolesInput, Role, RolePolicy, UpdateRoleInput } from './roles.schemas.js';
import {
  assignToGroup,
  assignToUser,
  deleteRole,
  findRole,
  findRoleByName,
  insertRole,
  listRoles,
  unassignFromGroup,
  unassignFromUser,
  updateRole,
} from './roles.store.js';

/** Reference 8.D.2: the built-in roles' names, which no custom role may take (compared ignoring case). */
export const BUILT_IN_ROLE_NAMES = ['Admin', 'Developer', 'AIBIDeveloper', 'D3User', 'AIBIUser', 'AIBIViewer', 'Guest', 'EmbedUser'] as const;
const BUILT_IN = new Set(BUILT_IN_ROLE_NAMES.map((n) => n.toLowerCase()));

const ACTIONS: Record<string, ReadonlySet<string>> = {
  Deployment: new Set(DEPLOYMENT_ROLE_ACTIONS),
  Global: new Set(GLOBAL_ROLE_ACTIONS),
};

export function toRole(row: RoleRow): Role {
  return { id: row.id, name: row.name, description: row.description, policies: JSON.parse(row.policies) as RolePolicy[] };
}

/**
 * Reference 8.D.2: an action outside the vocabulary of its resource type, or a `Deployment`
 * resource that is neither a deployment id written as a string of digits nor `All`, is refused
 * (400) with a pointer to each. The schema has already refused empty `actions` and `resources`.
 * Ids are checked for shape only: a role may name a deployment that is gone or not yet made.
 */
function checkPolicies(policies: readonly RolePolicy[]): void {
  const errors: FieldError[] = [];
  policies.forEach((policy, i) => {
    const known = ACTIONS[policy.resourceType]!;
    policy.actions.forEach((action, j) => {
      if (!known.has(action)) errors.push({ pointer: `/body/policies/${i}/actions/${j}`, message: `is not a ${policy.resourceType} action` });
    });
    if (policy.resourceType !== 'Deployment') return;
    policy.resources.forEach((resource, j) => {
      if (!isDeploymentResource(resource))
        errors.push({ pointer: `/body/policies/${i}/resources/${j}`, message: 'is not a deployment id (digits, as a string) or All' });
    });
  });
  if (errors.length === 0) return;
  const detail = errors.map((e) => `${e.pointer.replace('/body/', '')} ${e.message}`).join('; ');
  throw new ApiError('VALIDATION_FAILED', `The role's policies are not valid: ${detail}.`, { errors });
}

/** The same policies, each action and resource once, in the order first given. */
function normalized(policies: readonly RolePolicy[]): RolePolicy[] {
  return policies.map((p) => ({ resourceType: p.resourceType, actions: [...new Set(p.actions)], resources: [...new Set(p.resources)] }));
}

function checkName(name: string): void {
  if (BUILT_IN.has(name.trim().toLowerCase())) {
    throw new ApiError('ROLE_NAME_RESERVED', `"${name}" is the name of a built-in role (${BUILT_IN_ROLE_NAMES.join(', ')}); choose another.`, {
      errors: [{ pointer: '/body/name', message: 'is the name of a built-in role' }],
    });
  }
}

async function ensureNameFree(db: Executor, tenantId: number, name: string, exceptId?: number): Promise<void> {
  const holder = await findRoleByName(db, tenantId, name);
  if (holder && holder.id !== exceptId)
    throw new ApiError('ROLE_NAME_TAKEN', `A role named "${name}" already exists in this tenant (names are compared ignoring case).`);
}

/**
 * Only custom roles have ids here. The built-in roles are the account roles of users (set with
 * `PUT /api/v1/users/{id}`), so no id of this API names one, Admin included: no call here can
 * make an account admin (reference 8.D.6), nor change or delete a built-in role (8.D.4, 8.D.5).
 */
async function requireRole(db: Executor, tenantId: number, id: number): Promise<RoleRow> {
  const row = await findRole(db, tenantId, id);
  if (!row) throw notFound('ROLE_NOT_FOUND', 'Role', id);
  return row;
}

export function rolesService(store: Store, options: { now: Clock; audit: Audit }) {
  const { db } = store;
  const { now, audit } = options;

  /** Assigning and unassigning: idempotent, audited only when something changed. */
  async function changeUser(caller: Caller, roleId: number, userId: number, assign: boolean): Promise<void> {
    const { actor, access } = caller;
    access.requireAccountAdmin(assign ? 'assign roles' : 'unassign roles');
    const changed = await serialized(store, lockKey.role(roleId), async (trx) => {
      const role = await requireRole(trx, actor.tenantId, roleId);
      if (!(await findUserById(trx, actor.tenantId, userId))) throw notFound('USER_NOT_FOUND', 'User', userId);
      const done = assign
        ? await assignToUser(trx, actor.tenantId, roleId, userId, timestamp(now))
        : await unassignFromUser(trx, actor.tenantId, roleId, userId);
      return done ? role : null;
    });
    if (changed)
      await audit.record(caller, { action: assign ? 'role.assigned' : 'role.unassigned', target: { roleId, userId }, details: { name: changed.name } });
  }

  /** The same for a group, under its lock too, so an assignment never lands on a group being deleted. */
  async function changeGroup(caller: Caller, roleId: number, groupId: number, assign: boolean): Promise<void> {
    const { actor, access } = caller;
    access.requireAccountAdmin(assign ? 'assign roles' : 'unassign roles');
    const changed = await serialized(store, [lockKey.role(roleId), groupLock(groupId)], async (trx) => {
      const role = await requireRole(trx, actor.tenantId, roleId);
      if (!(await findGroup(trx, actor.tenantId, groupId))) throw notFound('GROUP_NOT_FOUND', 'Group', groupId);
      const done = assign
        ? await assignToGroup(trx, actor.tenantId, roleId, groupId, timestamp(now))
        : await unassignFromGroup(trx, actor.tenantId, roleId, groupId);
      return done ? role : null;
    });
    if (changed)
      await audit.record(caller, { action: assign ? 'role.assigned' : 'role.unassigned', target: { roleId, groupId }, details: { name: changed.name } });
  }

  return {
    /** Reference 8.D.1: custom roles only, newest first. */
    async list({ actor, access }: Caller, input: ListRolesInput) {
      access.requireAdmin('list roles');
      const page = pageRequest({ first: input.first ?? undefined, after: input.after ?? undefined });
      const rows = await listRoles(db, actor.tenantId, afterId(page), page.first + 1);
      const { items, pageInfo } = toPage(rows, page, (r) => [r.id]);
      return { items: items.map(toRole), pageInfo };
    },

    /** Reference 8.D.3. */
    async get({ actor, access }: Caller, id: number): Promise<Role> {
      access.requireAdmin('read roles');
      return toRole(await requireRole(db, actor.tenantId, id));
    },

    /** Reference 8.D.2. */
    async create(caller: Caller, input: CreateRoleInput): Promise<Role> {
      const { actor, access } = caller;
      access.requireAccountAdmin('create roles');
      checkName(input.name);
      checkPolicies(input.policies);
      const row = await serialized(store, lockKey.roleNames(actor.tenantId), async (trx) => {
        await ensureNameFree(trx, actor.tenantId, input.name);
        const at = timestamp(now);
        return insertRole(trx, {
          tenant_id: actor.tenantId,
          name: input.name,
          description: input.description ?? null,
          policies: JSON.stringify(normalized(input.policies)),
          created_by: actor.userId,
          created_at: at,
          updated_at: at,
        });
      });
      await audit.record(caller, { action: 'role.created', target: { roleId: row.id }, details: { name: row.name, policies: input.policies.length } });
      return toRole(row);
    },

    /** Reference 8.D.4: a field left out keeps its value; `policies` replaces them all. */
    async update(caller: Caller, id: number, input: UpdateRoleInput): Promise<Role> {
      const { actor, access } = caller;
      access.requireAccountAdmin('change roles');
      if (input.name !== undefined) checkName(input.name);
      if (input.policies !== undefined) checkPolicies(input.policies);
      const locks = [lockKey.role(id), ...(input.name === undefined ? [] : [lockKey.roleNames(actor.tenantId)])];
      const { before, after } = await serialized(store, locks, async (trx) => {
        const before = await requireRole(trx, actor.tenantId, id);
        if (input.name !== undefined) await ensureNameFree(trx, actor.tenantId, input.name, id);
        await updateRole(trx, actor.tenantId, id, {
          updated_at: timestamp(now),
          ...(input.name === undefined ? {} : { name: input.name }),
          ...(input.description === undefined ? {} : { description: input.description }),
          ...(input.policies === undefined ? {} : { policies: JSON.stringify(normalized(input.policies)) }),
        });
        return { before, after: await requireRole(trx, actor.tenantId, id) };
      });
      await audit.record(caller, {
        action: 'role.updated',
        target: { roleId: id },
        details: { name: after.name, ...(before.name === after.name ? {} : { previousName: before.name }), policiesReplaced: input.policies !== undefined },
      });
      return toRole(after);
    },

    /** Reference 8.D.5: its assignments, to users and to groups, go with it. */
    async remove(caller: Caller, id: number): Promise<void> {
      const { actor, access } = caller;
      access.requireAccountAdmin('delete roles');
      const row = await serialized(store, lockKey.role(id), async (trx) => {
        const row = await requireRole(trx, actor.tenantId, id);
        await deleteRole(trx, actor.tenantId, id);
        return row;
      });
      await audit.record(caller, { action: 'role.deleted', target: { roleId: id }, details: { name: row.name } });
    },

    /** Reference 8.D.6. */
    assignUser: (caller: Caller, roleId: number, userId: number) => changeUser(caller, roleId, userId, true),
    /** Reference 8.D.7. */
    unassignUser: (caller: Caller, roleId: number, userId: number) => changeUser(caller, roleId, userId, false),
    assignGroup: (caller: Caller, roleId: number, groupId: number) => changeGroup(caller, roleId, groupId, true),
    unassignGroup: (caller: Caller, roleId: number, groupId: number) => changeGroup(caller, roleId, groupId, false),
  };
}
export type RolesService = ReturnType<typeof rolesService>;
