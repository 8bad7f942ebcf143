import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { EmbedTenantRow, EmbedUserRow, Executor } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { afterId, toPage } from '../../shared/pagination.js';
import { ApiError } from '../../shared/problems.js';
import { timestamp, type Clock } from '../../time.js';
import type { CreateEmbedGroupInput, EmbedGroup, EmbedGroupMemberInput, UpdateEmbedGroupInput } from './embed-groups.schemas.js';
import type { EmbedPageInput, EmbedUser } from './embed-tenants.schemas.js';
import { nullablePage, requireEmbedTenant, type EmbedPeopleOptions } from './embed-tenants.service.js';
import {
  deleteGroup,
  findGroupByName,
  findTenantGroup,
  insertTenantGroup,
  listGroupMembers,
  listTenantGroups,
  memberIdsOf,
  removeMembers,
  setGroupDescription,
  type EmbedGroupWithCount,
} from './embed-groups.store.js';
import { addMemberships } from './memberships.store.js';
import { SYSTEM_PREFIX, normalizeExternalId } from './names.js';
import { createBareEmbedUsers, toEmbedUser } from './provision.js';
import { findEmbedUsersByExternalIds, findEmbedUsersByIds } from './embed-users.store.js';

function toEmbedGroup(row: EmbedGroupWithCount): EmbedGroup {
  return { id: row.id, name: row.name, description: row.description, userCount: row.user_count };
}

async function requireGroup(db: Executor, tenantId: number, embedTenant: EmbedTenantRow, id: number): Promise<EmbedGroupWithCount> {
  const group = await findTenantGroup(db, tenantId, embedTenant.id, id);
  if (!group) throw new ApiError('EMBED_GROUP_NOT_FOUND', `Embed tenant "${embedTenant.name}" has no group ${id}.`);
  return group;
}

type Member = { externalId: string } | { embedUserId: number };

/** Each entry names its user one way, exactly (4.12). */
function membersOf(entries: EmbedGroupMemberInput[]): Member[] {
  return entries.map((entry, i) => {
    const hasExternal = entry.externalId != null;
    const hasId = entry.embedUserId != null;
    if (hasExternal === hasId) {
      throw new ApiError('VALIDATION_FAILED', `Member ${i} must give exactly one of externalId and embedUserId.`, {
        errors: [{ pointer: `/body/members/${i}`, message: 'must have exactly one of externalId and embedUserId' }],
      });
    }
    if (hasExternal) {
      const externalId = normalizeExternalId(entry.externalId as string);
      if (externalId === '')
        throw new ApiError('VALIDATION_FAILED', `Member ${i} has an externalId that is empty once trimmed.`, {
          errors: [{ pointer: `/body/members/${i}/externalId`, message: 'is empty once trimmed' }],
        });
      return { externalId };
    }
    return { embedUserId: entry.embedUserId as number };
  });
}

/**
 * An embed tenant's own groups and their members (reference 4.6-4.13). Every change runs under the
 * account's embed-people lock, the one provisioning takes: adding members may create users (the
 * cap), and a group is never deleted while members are being added to it.
 */
export function embedGroupsService(store: Store, options: EmbedPeopleOptions, now: Clock) {
  const { db } = store;
  const locked = <T>(tenantId: number, fn: (trx: Executor) => Promise<T>) => serialized(store, lockKey.embedPeople(tenantId), fn);

  /** The users the entries name, in request order, each once; unknown external ids are provisioned when `provision`. */
  async function resolve(trx: Executor, tenantId: number, embedTenant: EmbedTenantRow, members: Member[], provision: boolean): Promise<EmbedUserRow[]> {
    const ids = members.flatMap((m) => ('embedUserId' in m ? [m.embedUserId] : []));
    const externalIds = members.flatMap((m) => ('externalId' in m ? [m.externalId] : []));
    const byId = new Map((await findEmbedUsersByIds(trx, tenantId, embedTenant.id, ids)).map((u) => [u.id, u]));
    const byExternal = new Map((await findEmbedUsersByExternalIds(trx, tenantId, embedTenant.id, externalIds)).map((u) => [u.external_id, u]));
    const missing = [...new Set(ids.filter((id) => !byId.has(id)))];
    if (provision && missing.length > 0) {
      throw new ApiError('EMBED_USER_NOT_FOUND', `Embed tenant "${embedTenant.name}" has no user ${missing.join(', ')}; no membership was changed.`, {
        errors: missing.map((id) => ({
          pointer: `/body/members/${members.findIndex((m) => 'embedUserId' in m && m.embedUserId === id)}/embedUserId`,
          message: 'is not a user of this embed tenant',
        })),
      });
    }
    if (provision) {
      const unknown = [...new Set(externalIds.filter((id) => !byExternal.has(id)))];
      for (const user of await createBareEmbedUsers(trx, tenantId, embedTenant, unknown, { userLimit: options.userLimit, now }))
        byExternal.set(user.external_id, user);
    }
    const out = new Map<number, EmbedUserRow>();
    for (const member of members) {
      const user = 'embedUserId' in member ? byId.get(member.embedUserId) : byExternal.get(member.externalId);
      if (user && !out.has(user.id)) out.set(user.id, user);
    }
    return [...out.values()];
  }

  return {
    async list({ actor, access }: Caller, embedTenantName: string, input: EmbedPageInput) {
      access.requireAdmin('list embed groups');
      const embedTenant = await requireEmbedTenant(db, actor.tenantId, embedTenantName);
      const page = nullablePage(input);
      const rows = await listTenantGroups(db, actor.tenantId, embedTenant.id, afterId(page), page.first + 1);
      const { items, pageInfo } = toPage(rows, page, (r) => [r.id]);
      return { items: items.map(toEmbedGroup), pageInfo };
    },

    async get({ actor, access }: Caller, embedTenantName: string, id: number): Promise<EmbedGroup> {
      access.requireAdmin('view embed groups');
      const embedTenant = await requireEmbedTenant(db, actor.tenantId, embedTenantName);
      return toEmbedGroup(await requireGroup(db, actor.tenantId, embedTenant, id));
    },

    async create({ actor, access }: Caller, embedTenantName: string, input: CreateEmbedGroupInput): Promise<EmbedGroup> {
      access.requireAccountAdmin('create embed groups');
      if (input.name.toLowerCase().startsWith(SYSTEM_PREFIX)) {
        throw new ApiError(
          'EMBED_GROUP_NAME_RESERVED',
          `"${input.name}" starts with "system:", which is reserved for the groups the system keeps; choose another name.`,
          {
            errors: [{ pointer: '/body/name', message: 'starts with system:' }],
          },
        );
      }
      return locked(actor.tenantId, async (trx) => {
        const embedTenant = await requireEmbedTenant(trx, actor.tenantId, embedTenantName);
        const holder = await findGroupByName(trx, embedTenant.id, input.name);
        if (holder)
          throw new ApiError(
            'EMBED_GROUP_NAME_TAKEN',
            `Embed tenant "${embedTenant.name}" already has a group named "${holder.name}" (names are compared ignoring case).`,
          );
        const row = await insertTenantGroup(
          trx,
          actor.tenantId,
          embedTenant.id,
          input.name,
          input.description === '' ? null : (input.description ?? null),
          timestamp(now),
        );
        return toEmbedGroup({ ...row, user_count: 0 });
      });
    },

    /** The description only: the name is fixed, since data-model policies match the group by name (4.9). */
    async update({ actor, access }: Caller, embedTenantName: string, id: number, input: UpdateEmbedGroupInput): Promise<EmbedGroup> {
      access.requireAccountAdmin('change embed groups');
      return locked(actor.tenantId, async (trx) => {
        const embedTenant = await requireEmbedTenant(trx, actor.tenantId, embedTenantName);
        const group = await requireGroup(trx, actor.tenantId, embedTenant, id);
        if (input.description === undefined) return toEmbedGroup(group);
        const description = input.description === '' ? null : input.description;
        await setGroupDescription(trx, actor.tenantId, id, description, timestamp(now));
        return toEmbedGroup({ ...group, description });
      });
    },

    async remove({ actor, access }: Caller, embedTenantName: string, id: number): Promise<void> {
      access.requireAccountAdmin('delete embed groups');
      await locked(actor.tenantId, async (trx) => {
        const embedTenant = await requireEmbedTenant(trx, actor.tenantId, embedTenantName);
        const group = await requireGroup(trx, actor.tenantId, embedTenant, id);
        if (group.user_count > 0) {
          throw new ApiError(
            'EMBED_GROUP_HAS_MEMBERS',
            `Group "${group.name}" still has ${group.user_count} member${group.user_count === 1 ? '' : 's'}; remove them first (DELETE .../groups/${id}/users).`,
          );
        }
        await deleteGroup(trx, actor.tenantId, id);
      });
    },

    async listMembers({ actor, access }: Caller, embedTenantName: string, id: number, input: EmbedPageInput) {
      access.requireAdmin('list embed group members');
      const embedTenant = await requireEmbedTenant(db, actor.tenantId, embedTenantName);
      await requireGroup(db, actor.tenantId, embedTenant, id);
      const page = nullablePage(input);
      const rows = await listGroupMembers(db, actor.tenantId, id, afterId(page), page.first + 1);
      const { items, pageInfo } = toPage(rows, page, (r) => [r.membership_id]);
      return { items: items.map(toEmbedUser), pageInfo };
    },

    /** Adds, never replaces; unknown external ids are provisioned; an unknown embedUserId refuses the whole request. */
    async addMembers({ actor, access }: Caller, embedTenantName: string, id: number, entries: EmbedGroupMemberInput[]) {
      access.requireAccountAdmin('add embed group members');
      const members = membersOf(entries);
      return locked(actor.tenantId, async (trx) => {
        const embedTenant = await requireEmbedTenant(trx, actor.tenantId, embedTenantName);
        await requireGroup(trx, actor.tenantId, embedTenant, id);
        const users = await resolve(trx, actor.tenantId, embedTenant, members, true);
        const already = await memberIdsOf(
          trx,
          id,
          users.map((u) => u.id),
        );
        const addedMembers: EmbedUser[] = [];
        const unchangedMembers: EmbedUser[] = [];
        for (const user of users) (already.has(user.id) ? unchangedMembers : addedMembers).push(toEmbedUser(user));
        await addMemberships(
          trx,
          actor.tenantId,
          addedMembers.map((u) => ({ groupId: id, userId: u.id })),
          timestamp(now),
        );
        return { addedMembers, unchangedMembers };
      });
    },

    /** Only this group's memberships; unknown users are skipped and never provisioned. */
    async removeMembers({ actor, access }: Caller, embedTenantName: string, id: number, entries: EmbedGroupMemberInput[]): Promise<void> {
      access.requireAccountAdmin('remove embed group members');
      const members = membersOf(entries);
      await locked(actor.tenantId, async (trx) => {
        const embedTenant = await requireEmbedTenant(trx, actor.tenantId, embedTenantName);
        await requireGroup(trx, actor.tenantId, embedTenant, id);
        const users = await resolve(trx, actor.tenantId, embedTenant, members, false);
        await removeMembers(
          trx,
          actor.tenantId,
          id,
          users.map((u) => u.id),
        );
      });
    },
  };
}
export type EmbedGroupsService = ReturnType<typeof embedGroupsService>;
