import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import { mapUniqueViolation } from '../../db/errors.js';
import type { Executor, UserRow, UserUpdate } from '../../db/tables.js';
import { serialized } from '../../db/transactions.js';
import { afterId, pageRequest, toPage } from '../../shared/pagination.js';
import { ApiError, notFound } from '../../shared/problems.js';
import { timestamp, type Clock } from '../../time.js';
import type { BulkCreateUsersInput, BulkCreateUsersResult, CreateUserInput, ListUsersInput, UpdateUserInput, User } from './users.schemas.js';
import { countActiveAdmins, findUserByEmail, findUserById, insertUser, listUsers, updateUser } from './users.store.js';

export function toUser(row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    firstName: row.first_name,
    role: row.role,
    active: row.deactivated_at === null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function emailTaken(email: string): ApiError {
  return new ApiError('EMAIL_TAKEN', `A user with email ${email} already exists in this tenant (emails are compared ignoring case).`);
}

/** The check before a write covers the common case; the unique index settles concurrent writers. */
async function ensureEmailFree(db: Executor, tenantId: number, email: string, exceptUserId?: number): Promise<void> {
  const holder = await findUserByEmail(db, tenantId, email);
  if (holder && holder.id !== exceptUserId) throw emailTaken(email);
}

function withEmailConflict<T>(email: string, write: () => Promise<T>): Promise<T> {
  return mapUniqueViolation({ users_tenant_email: () => emailTaken(email) }, write);
}

/**
 * A tenant must keep an active admin, or nobody could manage it through the API. Callers hold
 * the tenant's admin lock, so two admins demoting each other at once cannot both pass.
 */
async function ensureNotLastAdmin(db: Executor, user: UserRow, losesAdmin: boolean): Promise<void> {
  if (!losesAdmin || user.role !== 'ADMIN' || user.deactivated_at !== null) return;
  if ((await countActiveAdmins(db, user.tenant_id)) <= 1) {
    throw new ApiError('LAST_ADMIN', `User ${user.id} is the last active admin of this tenant; make another user an admin first.`);
  }
}

function changesFor(user: UserRow, input: UpdateUserInput, at: string): UserUpdate {
  const changes: UserUpdate = { updated_at: at };
  if (input.email !== undefined) changes.email = input.email;
  if (input.firstName !== undefined) changes.first_name = input.firstName;
  if (input.role !== undefined) changes.role = input.role;
  // Deactivating twice keeps the first date: it records when access ended.
  if (input.active !== undefined) changes.deactivated_at = input.active ? null : (user.deactivated_at ?? at);
  return changes;
}

/** Changes to users and admin rights take this lock, so the last-admin rule holds under concurrency. */
export const adminLock = (tenantId: number) => `users:${tenantId}`;

export interface NewUserInput extends CreateUserInput {
  /** False provisions the user deactivated (SCIM `active: false`). */
  active?: boolean;
}

/**
 * The rules of every user write, run inside a transaction the caller opened: the REST routes and
 * SCIM both come through here, so the two interfaces cannot drift apart. Updates and
 * deactivations expect the tenant's admin lock (`adminLock`) to be held. `at`: the time of the
 * write, from the caller's clock.
 */
export const userWrites = {
  async create(trx: Executor, tenantId: number, input: NewUserInput, at: string): Promise<UserRow> {
    await ensureEmailFree(trx, tenantId, input.email);
    return insertUser(trx, {
      tenant_id: tenantId,
      email: input.email,
      first_name: input.firstName ?? null,
      role: input.role ?? 'EXPLORER',
      deactivated_at: input.active === false ? at : null,
      created_at: at,
      updated_at: at,
    });
  },

  async update(trx: Executor, tenantId: number, id: number, input: UpdateUserInput, at: string): Promise<UserRow> {
    const user = await findUserById(trx, tenantId, id);
    if (!user) throw notFound('USER_NOT_FOUND', 'User', id);
    if (input.email !== undefined) await ensureEmailFree(trx, tenantId, input.email, id);
    const changes = changesFor(user, input, at);
    const losesAdmin = (changes.role !== undefined && changes.role !== 'ADMIN') || typeof changes.deactivated_at === 'string';
    await ensureNotLastAdmin(trx, user, losesAdmin);
    return (await updateUser(trx, tenantId, id, changes)) ?? user;
  },

  /** Keeps the row (ownership and history stay); the user's API keys stop working at once. */
  async deactivate(trx: Executor, tenantId: number, id: number, at: string): Promise<UserRow> {
    const user = await findUserById(trx, tenantId, id);
    if (!user) throw notFound('USER_NOT_FOUND', 'User', id);
    if (user.deactivated_at !== null) return user;
    await ensureNotLastAdmin(trx, user, true);
    return (await updateUser(trx, tenantId, id, { deactivated_at: at, updated_at: at })) ?? user;
  },
};

/** Maps a unique-index violation on email, raised at write or commit time, to the same 409. */
export { withEmailConflict };

export function usersService(store: Store, now: Clock) {
  const { db } = store;

  async function create({ actor, access }: Caller, input: CreateUserInput): Promise<User> {
    access.requireAccountAdmin('create users');
    return withEmailConflict(input.email, () =>
      db.transaction().execute(async (trx) => toUser(await userWrites.create(trx, actor.tenantId, input, timestamp(now)))),
    );
  }

  async function get({ actor, access }: Caller, id: number): Promise<User> {
    if (id !== actor.userId) access.requireAdmin('view another user');
    const row = await findUserById(db, actor.tenantId, id);
    if (!row) throw notFound('USER_NOT_FOUND', 'User', id);
    return toUser(row);
  }

  return {
    create,
    get,

    me: (caller: Caller) => get(caller, caller.actor.userId),

    /**
     * Each item goes through the single create, in order, so it gets the same rules and messages.
     * Each commits on its own, so an internal error on one is recorded as its failure (and logged
     * with the users already created) rather than thrown: a 500 would hide the users created before it.
     */
    async bulkCreate(caller: Caller, input: BulkCreateUsersInput): Promise<BulkCreateUsersResult> {
      caller.access.requireAccountAdmin('create users');
      const result: BulkCreateUsersResult = { created: [], failed: [] };
      for (const [index, item] of input.users.entries()) {
        try {
          result.created.push(await create(caller, item));
        } catch (error) {
          if (error instanceof ApiError) {
            result.failed.push({ index, email: item.email, error: { status: error.status, message: error.detail } });
            continue;
          }
          caller.log.error(
            { err: error, index, committed: result.created.map((u) => `USER:${u.id}`) },
            'bulk user create: an item failed with an internal error and was rolled back; the batch went on',
          );
          result.failed.push({ index, email: item.email, error: { status: 500, message: `An internal error stopped users[${index}]; it was not created.` } });
        }
      }
      return result;
    },

    async list({ actor, access }: Caller, input: ListUsersInput) {
      access.requireAdmin('list users');
      const page = pageRequest(input);
      const rows = await listUsers(db, actor.tenantId, afterId(page), page.first + 1, { role: input.role, active: input.active });
      const { items, pageInfo } = toPage(rows, page, (r) => [r.id]);
      return { items: items.map(toUser), pageInfo };
    },

    async update({ actor, access }: Caller, id: number, input: UpdateUserInput): Promise<User> {
      access.requireAccountAdmin('change users');
      return withEmailConflict(input.email ?? '', () =>
        serialized(store, adminLock(actor.tenantId), async (trx) => toUser(await userWrites.update(trx, actor.tenantId, id, input, timestamp(now)))),
      );
    },

    /** Keeps the row (ownership and history stay) and stops the user's API keys at once. */
    async deactivate({ actor, access }: Caller, id: number): Promise<void> {
      access.requireAccountAdmin('deactivate users');
      await serialized(store, adminLock(actor.tenantId), (trx) => userWrites.deactivate(trx, actor.tenantId, id, timestamp(now)));
    },
  };
}
export type UsersService = ReturnType<typeof usersService>;
