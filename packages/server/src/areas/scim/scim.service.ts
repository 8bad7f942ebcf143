import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { Executor } from '../../db/tables.js';
import { mapUniqueViolation } from '../../db/errors.js';
import { serialized } from '../../db/transactions.js';
import { timestamp, type Clock } from '../../time.js';
import { addMembers, deleteGroupCascade, findGroupByName, insertGroup, removeMembers, updateGroup } from '../groups/index.js';
import { ensureNameFree, groupLock, withNameConflict } from '../groups/index.js';
import { adminLock, userWrites, withEmailConflict } from '../users/index.js';
import { findUserByEmail } from '../users/index.js';
import { ATTRIBUTES_SCHEMA, attributesSchemaDef, LIST_SCHEMA, type SchemaDef } from './scim.attributes.js';
import { attributeValues } from '../user-attributes/index.js';
import { invalidFilter, invalidValue, ScimError } from './scim.errors.js';
import { compileFilter, parseFilter, sortExpression, type FilterContext } from './scim.filter.js';
import { renderGroup, renderUser, splitGroup, splitUser, type BaseUrl } from './scim.mapping.js';
import { applyPatch } from './scim.patch.js';
import { resolvePath, schemasOf, type ResourceKind } from './scim.paths.js';
import { canonicalize, project, type JsonObject } from './scim.resources.js';
import {
  deleteScimUser,
  existingScimUserIds,
  findScimGroup,
  findScimUser,
  listScimGroups,
  listScimUsers,
  removeFromAllGroups,
  scimGroupsOf,
  scimMembersOf,
  upsertScimGroup,
  upsertScimUser,
  type ScimGroupRow,
  type ScimUserRow,
} from './scim.store.js';

export interface ListParams {
  filter?: string | undefined;
  startIndex?: number | undefined;
  count?: number | undefined;
  sortBy?: string | undefined;
  sortOrder?: 'ascending' | 'descending' | undefined;
  attributes?: string[] | undefined;
  excludedAttributes?: string[] | undefined;
}

export interface Projection {
  attributes?: string[] | undefined;
  excludedAttributes?: string[] | undefined;
}

export type { BaseUrl };

/** Page size when the client gives none, and the most one page returns (advertised in ServiceProviderConfig). */
export const DEFAULT_COUNT = 100;
export const MAX_COUNT = 200;

/** SCIM ids are strings (RFC 7643 section 3.1); ours are the REST integer ids, and anything else names nothing. */
function parseId(id: string, kind: ResourceKind): number {
  const n = /^[1-9][0-9]{0,15}$/.test(id) ? Number(id) : NaN;
  if (!Number.isSafeInteger(n)) throw notFound(kind, id);
  return n;
}

const notFound = (kind: ResourceKind, id: string | number) => new ScimError(404, `${kind} ${id} does not exist.`);

function checkVersion(current: string, ifMatch: string | undefined): void {
  if (ifMatch === undefined || ifMatch.trim() === '*') return;
  const tags = ifMatch.split(',').map((t) => t.trim());
  // Weak comparison (RFC 7232 section 2.3.2): W/"x" and "x" name the same version.
  const strip = (t: string) => t.replace(/^W\//, '');
  if (!tags.some((t) => strip(t) === strip(current))) {
    throw new ScimError(412, `The resource changed: its version is ${current}, not ${ifMatch}. Read it again and retry.`);
  }
}

export function scimService(store: Store, now: Clock) {
  const { db } = store;
  /** The schemas of a tenant's resources: the User's include the tenant's user-attribute extension. */
  async function schemasFor(db: Executor, tenantId: number, kind: ResourceKind): Promise<SchemaDef[]> {
    return kind === 'User' ? schemasOf('User', [attributesSchemaDef(await attributeValues.definitions(db, tenantId))]) : schemasOf('Group');
  }
  const context = (kind: ResourceKind, schemas: SchemaDef[]): FilterContext => ({ kind, schemas, dialect: store.dialect });

  async function renderUsers(trx: Executor, tenantId: number, rows: ScimUserRow[], base: BaseUrl): Promise<JsonObject[]> {
    const ids = rows.map((r) => r.id);
    const groups = await scimGroupsOf(trx, tenantId, ids);
    // Effective values, defaults included, as the REST API reports them and filters compare them.
    const attributes = await attributeValues.effective(trx, tenantId, ids);
    return rows.map((r) =>
      renderUser(
        r,
        groups.filter((g) => g.user_id === r.id),
        attributes.get(r.id) as JsonObject | undefined,
        base,
      ),
    );
  }

  async function loadUser(trx: Executor, tenantId: number, id: number, base: BaseUrl): Promise<JsonObject> {
    const row = await findScimUser(trx, tenantId, id);
    if (!row) throw notFound('User', id);
    return (await renderUsers(trx, tenantId, [row], base))[0] as JsonObject;
  }

  async function loadGroup(trx: Executor, tenantId: number, id: number, base: BaseUrl): Promise<JsonObject> {
    const row = await findScimGroup(trx, tenantId, id);
    if (!row) throw notFound('Group', id);
    return renderGroup(row, await scimMembersOf(trx, tenantId, [id]), base);
  }

  /** `absent`: a search over several types (see FilterContext); sortBy then also reads a missing attribute as unassigned. */
  function listQuery(kind: ResourceKind, schemas: SchemaDef[], params: ListParams, absent?: Set<string>) {
    const ctx = { ...context(kind, schemas), ...(absent ? { absent } : {}) };
    const where = params.filter !== undefined && params.filter.trim() !== '' ? compileFilter(parseFilter(params.filter), ctx) : undefined;
    let sortBy = params.sortBy === '' ? undefined : params.sortBy;
    // Across several types, a sortBy this type lacks leaves its resources in id order.
    if (sortBy !== undefined && absent && !resolvePath(schemas, sortBy)) {
      absent.add(sortBy.toLowerCase());
      sortBy = undefined;
    }
    const sort = sortBy !== undefined ? { expr: sortExpression(sortBy, ctx), descending: params.sortOrder === 'descending' } : undefined;
    // startIndex below 1 is read as 1 and count below 0 as 0 (RFC 7644 section 3.4.2.4). A huge
    // startIndex is capped rather than refused: past the total it gives an empty page either way.
    const startIndex = Math.min(Number.MAX_SAFE_INTEGER, Math.max(1, params.startIndex ?? 1));
    const count = Math.min(MAX_COUNT, Math.max(0, params.count ?? DEFAULT_COUNT));
    return { where, sort, offset: startIndex - 1, limit: count, startIndex };
  }

  async function renderGroups(trx: Executor, tenantId: number, rows: ScimGroupRow[], base: BaseUrl): Promise<JsonObject[]> {
    const members = await scimMembersOf(
      trx,
      tenantId,
      rows.map((r) => r.id),
    );
    // Grouped once, rather than a scan of every member per group.
    const byGroup = new Map<number, typeof members>();
    for (const m of members) {
      const list = byGroup.get(m.group_id);
      if (list) list.push(m);
      else byGroup.set(m.group_id, [m]);
    }
    return rows.map((r) => renderGroup(r, byGroup.get(r.id) ?? [], base));
  }

  function listResponse(resources: JsonObject[], total: number, startIndex: number): JsonObject {
    return { schemas: [LIST_SCHEMA], totalResults: total, itemsPerPage: resources.length, startIndex, Resources: resources };
  }

  /**
   * Writes a user's core fields through the users service's rules and its SCIM document beside
   * them. `attributeNames` (a PATCH) limits the user-attribute writes to the attributes its
   * operations named; otherwise (POST, PUT) the extension, when sent, replaces the user's values.
   */
  async function writeUser(trx: Executor, tenantId: number, id: number | undefined, doc: JsonObject, attributeNames?: string[]): Promise<number> {
    const { email, firstName, active, rest } = splitUser(doc);
    const attributes = rest[ATTRIBUTES_SCHEMA] as JsonObject | undefined;
    delete rest[ATTRIBUTES_SCHEMA];
    const at = timestamp(now);
    let userId = id;
    if (userId === undefined) {
      const holder = await findUserByEmail(trx, tenantId, email);
      if (holder && (await existingScimUserIds(trx, tenantId, [holder.id])).has(holder.id)) {
        throw new ScimError(409, `A User with userName ${email} already exists (userNames are compared ignoring case).`, 'uniqueness');
      }
      // A user made through the REST API is taken over by the identity provider rather than duplicated.
      userId = holder
        ? (await userWrites.update(trx, tenantId, holder.id, { firstName, ...(active === undefined ? {} : { active }) }, at)).id
        : (await userWrites.create(trx, tenantId, { email, firstName, ...(active === undefined ? {} : { active }) }, at)).id;
    } else {
      await userWrites.update(trx, tenantId, userId, { email, firstName, ...(active === undefined ? {} : { active }) }, at);
    }
    await upsertScimUser(trx, tenantId, userId, JSON.stringify(rest), at);
    // Values are written only when the client speaks about them; a client that never sends the
    // extension leaves values set through the REST API alone.
    const pointer = (name: string) => `${ATTRIBUTES_SCHEMA}:${name}`;
    if (attributeNames !== undefined) {
      if (attributeNames.length > 0) {
        // Own members only: a name such as "toString" must not read Object.prototype's.
        const named = Object.fromEntries(
          attributeNames.map((name) => [name, attributes !== undefined && Object.hasOwn(attributes, name) ? attributes[name] : null]),
        );
        await attributeValues.write(trx, tenantId, userId, named, { replace: false, keepDefaults: true, pointer, at });
      }
    } else if (attributes !== undefined) {
      await attributeValues.write(trx, tenantId, userId, attributes, { replace: true, keepDefaults: true, pointer, at });
    }
    return userId;
  }

  /** Sets a group's SCIM-visible members to exactly `memberIds`; members SCIM does not manage stay. */
  async function setMembers(trx: Executor, tenantId: number, groupId: number, memberIds: number[]): Promise<boolean> {
    const known = await existingScimUserIds(trx, tenantId, memberIds);
    const unknown = memberIds.filter((id) => !known.has(id));
    if (unknown.length > 0) throw invalidValue(`Member ${unknown.join(', ')} is not a User of this service; no change was made.`);
    const current = new Set((await scimMembersOf(trx, tenantId, [groupId])).map((m) => m.user_id));
    const toAdd = memberIds.filter((id) => !current.has(id));
    const toRemove = [...current].filter((id) => !memberIds.includes(id));
    if (toAdd.length > 0) await addMembers(trx, tenantId, groupId, toAdd, timestamp(now));
    if (toRemove.length > 0) await removeMembers(trx, tenantId, groupId, toRemove);
    return toAdd.length + toRemove.length > 0;
  }

  async function writeGroup(trx: Executor, tenantId: number, id: number | undefined, doc: JsonObject): Promise<number> {
    const { name, memberIds, rest } = splitGroup(doc);
    const at = timestamp(now);
    let groupId = id;
    if (groupId === undefined) {
      const holder = await findGroupByName(trx, tenantId, name);
      if (holder && (await findScimGroup(trx, tenantId, holder.id))) {
        throw new ScimError(409, `A Group named "${name}" already exists (names are compared ignoring case).`, 'uniqueness');
      }
      groupId = holder ? holder.id : (await insertGroup(trx, { tenant_id: tenantId, name, description: null, created_at: at, updated_at: at })).id;
    } else {
      const row = await findScimGroup(trx, tenantId, groupId);
      if (!row) throw notFound('Group', groupId);
      if (row.name !== name) {
        await ensureNameFree(trx, tenantId, name, groupId);
        await updateGroup(trx, tenantId, groupId, { name, updated_at: at });
      }
    }
    const before = (await findScimGroup(trx, tenantId, groupId))?.document;
    await upsertScimGroup(trx, tenantId, groupId, JSON.stringify(rest), at);
    const changed = (await setMembers(trx, tenantId, groupId, memberIds)) || before !== JSON.stringify(rest);
    if (changed) await updateGroup(trx, tenantId, groupId, { updated_at: at });
    return groupId;
  }

  /** SCIM is an account-wide interface: every operation needs an admin with an unscoped key. */
  const guard = ({ access }: Caller, action: string) => access.requireAccountAdmin(action);

  return {
    /** The tenant's user-attribute extension schema, for /Schemas. */
    async attributesSchema(caller: Caller): Promise<SchemaDef> {
      guard(caller, 'read the SCIM configuration');
      return attributesSchemaDef(await attributeValues.definitions(db, caller.actor.tenantId));
    },

    async listUsers(caller: Caller, params: ListParams, base: BaseUrl): Promise<JsonObject> {
      guard(caller, 'read SCIM users');
      const schemas = await schemasFor(db, caller.actor.tenantId, 'User');
      const q = listQuery('User', schemas, params);
      const { rows, total } = await listScimUsers(db, caller.actor.tenantId, q);
      const resources = await renderUsers(db, caller.actor.tenantId, rows, base);
      return listResponse(
        resources.map((r) => project(r, 'User', schemas, params.attributes, params.excludedAttributes)),
        total,
        q.startIndex,
      );
    },

    async getUser(caller: Caller, id: string, projection: Projection, base: BaseUrl): Promise<JsonObject> {
      guard(caller, 'read SCIM users');
      const user = await loadUser(db, caller.actor.tenantId, parseId(id, 'User'), base);
      return project(user, 'User', await schemasFor(db, caller.actor.tenantId, 'User'), projection.attributes, projection.excludedAttributes);
    },

    async createUser(caller: Caller, body: unknown, base: BaseUrl): Promise<JsonObject> {
      guard(caller, 'provision users');
      const tenantId = caller.actor.tenantId;
      const doc = canonicalize(body, await schemasFor(db, tenantId, 'User'));
      return withEmailConflict(String(doc.userName ?? ''), () =>
        serialized(store, adminLock(tenantId), async (trx) => loadUser(trx, tenantId, await writeUser(trx, tenantId, undefined, doc), base)),
      );
    },

    async replaceUser(caller: Caller, id: string, body: unknown, ifMatch: string | undefined, base: BaseUrl): Promise<JsonObject> {
      guard(caller, 'provision users');
      const userId = parseId(id, 'User');
      const tenantId = caller.actor.tenantId;
      const doc = canonicalize(body, await schemasFor(db, tenantId, 'User'));
      return withEmailConflict(String(doc.userName ?? ''), () =>
        serialized(store, adminLock(tenantId), async (trx) => {
          checkVersion(versionOf(await loadUser(trx, tenantId, userId, base)), ifMatch);
          await writeUser(trx, tenantId, userId, doc);
          return loadUser(trx, tenantId, userId, base);
        }),
      );
    },

    async patchUser(caller: Caller, id: string, body: unknown, ifMatch: string | undefined, base: BaseUrl): Promise<JsonObject> {
      guard(caller, 'provision users');
      const userId = parseId(id, 'User');
      const tenantId = caller.actor.tenantId;
      const schemas = await schemasFor(db, tenantId, 'User');
      return conflictAsUniqueness('userName', () =>
        serialized(store, adminLock(tenantId), async (trx) => {
          const current = await loadUser(trx, tenantId, userId, base);
          checkVersion(versionOf(current), ifMatch);
          const { resource: patched, paths } = applyPatch(current, body, schemas);
          // Every User has `active`; removing it leaves the user inactive, as an unassigned
          // active means (RFC 7643 section 4.1.1 defines no other default), so keys stop at once.
          if (!Object.hasOwn(patched, 'active')) patched.active = false;
          // Only the user attributes the operations named are written: the others were read as
          // effective values, and writing them back would store defaults as the user's own.
          const prefix = `${ATTRIBUTES_SCHEMA}:`;
          const names = [...new Set(paths.filter((p) => p.startsWith(prefix)).map((p) => p.slice(prefix.length).split(/[.[]/)[0] as string))];
          await writeUser(trx, tenantId, userId, canonicalize(patched, schemas), names);
          return loadUser(trx, tenantId, userId, base);
        }),
      );
    },

    /**
     * Deprovisioning: the user is deactivated (their keys stop working), leaves every group, and is
     * no longer managed through SCIM, so SCIM answers 404 for it (RFC 7644 section 3.6). The row
     * stays for the REST API, as deactivated, keeping ownership and history.
     */
    async deleteUser(caller: Caller, id: string, ifMatch: string | undefined, base: BaseUrl): Promise<void> {
      guard(caller, 'deprovision users');
      const userId = parseId(id, 'User');
      const tenantId = caller.actor.tenantId;
      await serialized(store, adminLock(tenantId), async (trx) => {
        checkVersion(versionOf(await loadUser(trx, tenantId, userId, base)), ifMatch);
        const at = timestamp(now);
        await userWrites.deactivate(trx, tenantId, userId, at);
        for (const groupId of await removeFromAllGroups(trx, tenantId, userId)) await updateGroup(trx, tenantId, groupId, { updated_at: at });
        await deleteScimUser(trx, tenantId, userId);
      });
    },

    async listGroups(caller: Caller, params: ListParams, base: BaseUrl): Promise<JsonObject> {
      guard(caller, 'read SCIM groups');
      const q = listQuery('Group', schemasOf('Group'), params);
      const { rows, total } = await listScimGroups(db, caller.actor.tenantId, q);
      const resources = await renderGroups(db, caller.actor.tenantId, rows, base);
      return listResponse(
        resources.map((r) => project(r, 'Group', schemasOf('Group'), params.attributes, params.excludedAttributes)),
        total,
        q.startIndex,
      );
    },

    /**
     * The root search (RFC 7644 section 3.4.3) over Users and Groups: one list, Users first (in
     * their order: by id, or by sortBy), then Groups; startIndex and count page through that list,
     * and totalResults counts both. An attribute one type lacks reads as unassigned there (RFC 7644
     * section 3.4.2.2); one that neither type has is invalidFilter, as on each type's own search.
     */
    async searchAll(caller: Caller, params: ListParams, base: BaseUrl): Promise<JsonObject> {
      guard(caller, 'read SCIM users and groups');
      const tenantId = caller.actor.tenantId;
      const userSchemas = await schemasFor(db, tenantId, 'User');
      const groupSchemas = schemasOf('Group');
      const [absentForUsers, absentForGroups] = [new Set<string>(), new Set<string>()];
      const userQuery = listQuery('User', userSchemas, params, absentForUsers);
      const groupQuery = listQuery('Group', groupSchemas, params, absentForGroups);
      const nowhere = [...absentForUsers].find((path) => absentForGroups.has(path));
      if (nowhere !== undefined) {
        const message = `Unknown attribute "${nowhere}"; /Schemas lists the attributes of User and Group.`;
        throw nowhere === params.sortBy?.toLowerCase() ? invalidValue(message) : invalidFilter(message);
      }
      const users = await listScimUsers(db, tenantId, userQuery);
      const groups = await listScimGroups(db, tenantId, {
        ...groupQuery,
        offset: Math.max(0, userQuery.offset - users.total),
        limit: userQuery.limit - users.rows.length,
      });
      const resources = [
        ...(await renderUsers(db, tenantId, users.rows, base)).map((r) => project(r, 'User', userSchemas, params.attributes, params.excludedAttributes)),
        ...(await renderGroups(db, tenantId, groups.rows, base)).map((r) => project(r, 'Group', groupSchemas, params.attributes, params.excludedAttributes)),
      ];
      return listResponse(resources, users.total + groups.total, userQuery.startIndex);
    },

    async getGroup(caller: Caller, id: string, projection: Projection, base: BaseUrl): Promise<JsonObject> {
      guard(caller, 'read SCIM groups');
      const group = await loadGroup(db, caller.actor.tenantId, parseId(id, 'Group'), base);
      return project(group, 'Group', schemasOf('Group'), projection.attributes, projection.excludedAttributes);
    },

    async createGroup(caller: Caller, body: unknown, base: BaseUrl): Promise<JsonObject> {
      guard(caller, 'provision groups');
      const doc = canonicalize(body, schemasOf('Group'));
      const tenantId = caller.actor.tenantId;
      return withNameConflict(String(doc.displayName ?? ''), () =>
        store.db.transaction().execute(async (trx) => loadGroup(trx, tenantId, await writeGroup(trx, tenantId, undefined, doc), base)),
      );
    },

    async replaceGroup(caller: Caller, id: string, body: unknown, ifMatch: string | undefined, base: BaseUrl): Promise<JsonObject> {
      guard(caller, 'provision groups');
      const groupId = parseId(id, 'Group');
      const doc = canonicalize(body, schemasOf('Group'));
      const tenantId = caller.actor.tenantId;
      return withNameConflict(String(doc.displayName ?? ''), () =>
        serialized(store, groupLock(groupId), async (trx) => {
          checkVersion(versionOf(await loadGroup(trx, tenantId, groupId, base)), ifMatch);
          await writeGroup(trx, tenantId, groupId, doc);
          return loadGroup(trx, tenantId, groupId, base);
        }),
      );
    },

    async patchGroup(caller: Caller, id: string, body: unknown, ifMatch: string | undefined, base: BaseUrl): Promise<JsonObject> {
      guard(caller, 'provision groups');
      const groupId = parseId(id, 'Group');
      const tenantId = caller.actor.tenantId;
      const schemas = schemasOf('Group');
      return conflictAsUniqueness('displayName', () =>
        serialized(store, groupLock(groupId), async (trx) => {
          const current = await loadGroup(trx, tenantId, groupId, base);
          checkVersion(versionOf(current), ifMatch);
          const { resource: patched } = applyPatch(current, body, schemas);
          await writeGroup(trx, tenantId, groupId, canonicalize(patched, schemas));
          return loadGroup(trx, tenantId, groupId, base);
        }),
      );
    },

    /** Deletes the group with its memberships and access policies, as the REST API's delete does. */
    async deleteGroup(caller: Caller, id: string, ifMatch: string | undefined, base: BaseUrl): Promise<void> {
      guard(caller, 'delete groups');
      const groupId = parseId(id, 'Group');
      const tenantId = caller.actor.tenantId;
      await serialized(store, groupLock(groupId), async (trx) => {
        checkVersion(versionOf(await loadGroup(trx, tenantId, groupId, base)), ifMatch);
        await deleteGroupCascade(trx, tenantId, groupId);
      });
    },
  };
}
export type ScimService = ReturnType<typeof scimService>;

/**
 * A PATCH learns its new userName or displayName only while it runs; if a concurrent writer takes
 * the name first, the unique index refuses the commit, and the client gets 409 like everyone else.
 */
function conflictAsUniqueness<T>(attribute: string, write: () => Promise<T>): Promise<T> {
  const conflict = () => new ScimError(409, `The ${attribute} is already in use (compared ignoring case).`, 'uniqueness');
  return mapUniqueViolation({ users_tenant_email: conflict, groups_tenant_name: conflict }, write);
}

function versionOf(resource: JsonObject): string {
  return String((resource.meta as JsonObject).version);
}
