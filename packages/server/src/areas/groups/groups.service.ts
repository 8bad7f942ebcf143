import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import { mapUniqueViolation } from '../../db/errors.js';
import type { Executor, GroupRow } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { afterId, pageRequest, toPage } from '../../shared/pagination.js';
import { ApiError, notFound } from '../../shared/problems.js';
import { timestamp, type Clock } from '../../time.js';
import { existingUserIds } from '../users/index.js';
import type { CreateGroupInput, Group, GroupDetail, ListGroupsInput, UpdateGroupInput } from './groups.schemas.js';
import {
  addMembers,
  deleteGroupCascade,
  findGroup,
  findGroupByName,
  insertGroup,
  listGroups,
  listMembers,
  removeMembers,
  updateGroup,
  type GroupChanges,
  type MemberRow,
} from './groups.store.js';

export function toGroup(row: GroupRow, memberCount: number): Group {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    memberCount,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toGroupDetail(row: GroupRow, members: MemberRow[]): GroupDetail {
  return { ...toGroup(row, members.length), members: members.map((m) => ({ id: m.id, email: m.email, firstName: m.first_name })) };
}

function nameTaken(name: string): ApiError {
  return new ApiError('GROUP_NAME_TAKEN', `A group named "${name}" already exists in this tenant (names are compared ignoring case).`);
}

/** The check before a write covers the common case; the unique index settles concurrent writers. */
export async function ensureNameFree(db: Executor, tenantId: number, name: string, exceptGroupId?: number): Promise<void> {
  const holder = await findGroupByName(db, tenantId, name);
  if (holder && holder.id !== exceptGroupId) throw nameTaken(name);
}

export function withNameConflict<T>(name: string | undefined, write: () => Promise<T>): Promise<T> {
  return name === undefined ? write() : mapUniqueViolation({ groups_tenant_name: () => nameTaken(name) }, write);
}

export async function requireGroup(db: Executor, tenantId: number, id: number): Promise<GroupRow> {
  const group = await findGroup(db, tenantId, id);
  if (!group) throw notFound('GROUP_NOT_FOUND', 'Group', id);
  return group;
}

/** All or nothing: one unknown id refuses the whole change, so a typo never half-applies. */
async function requireUsers(db: Executor, tenantId: number, userIds: number[]): Promise<void> {
  const known = await existingUserIds(db, tenantId, userIds);
  const missing = userIds.filter((id) => !known.has(id));
  if (missing.length === 0) return;
  throw new ApiError('USER_NOT_FOUND', `User ${missing.join(', ')} does not exist; no membership was changed.`, {
    errors: missing.map((id) => ({ pointer: `/body/userIds/${userIds.indexOf(id)}`, message: 'is not a user' })),
  });
}

// Membership changes and deletion of one group run one at a time, so members are never added
// to a group that a concurrent request is deleting.
export const groupLock = lockKey.group;

export function groupsService(store: Store, now: Clock) {
  const { db } = store;

  async function detail(trx: Executor, group: GroupRow): Promise<GroupDetail> {
    return toGroupDetail(group, await listMembers(trx, group.tenant_id, group.id));
  }

  /** Applies a membership change under the group's lock; membership changes count as changes to the group. */
  async function changeMembers(
    { actor, access }: Caller,
    groupId: number,
    userIds: number[],
    apply: (trx: Executor, ids: number[]) => Promise<number>,
  ): Promise<GroupDetail> {
    access.requireAccountAdmin('change group members');
    const ids = [...new Set(userIds)];
    return serialized(store, groupLock(groupId), async (trx) => {
      let group = await requireGroup(trx, actor.tenantId, groupId);
      await requireUsers(trx, actor.tenantId, ids);
      if ((await apply(trx, ids)) > 0) {
        await updateGroup(trx, actor.tenantId, groupId, { updated_at: timestamp(now) });
        group = await requireGroup(trx, actor.tenantId, groupId);
      }
      return detail(trx, group);
    });
  }

  return {
    async list({ actor }: Caller, input: ListGroupsInput) {
      const page = pageRequest(input);
      const rows = await listGroups(db, actor.tenantId, afterId(page), page.first + 1);
      const { items, pageInfo } = toPage(rows, page, (r) => [r.id]);
      return { items: items.map((r) => toGroup(r, r.member_count)), pageInfo };
    },

    async get({ actor }: Caller, id: number): Promise<GroupDetail> {
      return detail(db, await requireGroup(db, actor.tenantId, id));
    },

    async create({ actor, access }: Caller, input: CreateGroupInput): Promise<GroupDetail> {
      access.requireAccountAdmin('create groups');
      return withNameConflict(input.name, () =>
        db.transaction().execute(async (trx) => {
          await ensureNameFree(trx, actor.tenantId, input.name);
          const at = timestamp(now);
          const row = await insertGroup(trx, {
            tenant_id: actor.tenantId,
            name: input.name,
            description: input.description ?? null,
            created_at: at,
            updated_at: at,
          });
          return toGroupDetail(row, []);
        }),
      );
    },

    async update({ actor, access }: Caller, id: number, input: UpdateGroupInput): Promise<GroupDetail> {
      access.requireAccountAdmin('change groups');
      return withNameConflict(input.name, () =>
        db.transaction().execute(async (trx) => {
          await requireGroup(trx, actor.tenantId, id);
          if (input.name !== undefined) await ensureNameFree(trx, actor.tenantId, input.name, id);
          const changes: GroupChanges = { updated_at: timestamp(now) };
          if (input.name !== undefined) changes.name = input.name;
          if (input.description !== undefined) changes.description = input.description;
          await updateGroup(trx, actor.tenantId, id, changes);
          return detail(trx, await requireGroup(trx, actor.tenantId, id));
        }),
      );
    },

    /** Also removes its memberships and every policy granted to it, so no grant outlives its group. */
    async remove({ actor, access }: Caller, id: number): Promise<void> {
      access.requireAccountAdmin('delete groups');
      await serialized(store, groupLock(id), async (trx) => {
        await requireGroup(trx, actor.tenantId, id);
        await deleteGroupCascade(trx, actor.tenantId, id);
      });
    },

    /** Users already in the group are skipped. */
    addMembers: (caller: Caller, groupId: number, userIds: number[]) =>
      changeMembers(caller, groupId, userIds, (trx, ids) => addMembers(trx, caller.actor.tenantId, groupId, ids, timestamp(now))),

    /** Users not in the group are skipped. */
    removeMembers: (caller: Caller, groupId: number, userIds: number[]) =>
      changeMembers(caller, groupId, userIds, (trx, ids) => removeMembers(trx, caller.actor.tenantId, groupId, ids)),
  };
}
export type GroupsService = ReturnType<typeof groupsService>;
