import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import { mapUniqueViolation } from '../../db/errors.js';
import type { Executor, UserAttributeRow, UserAttributeType } from '../../db/tables.js';
import { ApiError, notFound } from '../../shared/problems.js';
import { timestamp, type Clock } from '../../time.js';
import { findUserById } from '../users/index.js';
import type {
  CreateUserAttributeInput,
  SetUserAttributeValuesInput,
  UpdateUserAttributeInput,
  UserAttribute,
  UserAttributeValues,
} from './user-attributes.schemas.js';
import {
  deleteValues,
  findAttribute,
  findAttributeByName,
  insertAttribute,
  listAttributes,
  updateAttribute,
  upsertValue,
  valuesOf,
} from './user-attributes.store.js';
import { adminLock } from '../users/index.js';
import { serialized } from '../../db/transactions.js';

export type AttributeValue = string | number | boolean | string[];

function toAttribute(row: UserAttributeRow): UserAttribute {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    defaultValue: row.default_value === null ? null : (JSON.parse(row.default_value) as AttributeValue),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Whether `value` is of the attribute type; JSON types are never coerced ("5" is not a number). */
export function matchesType(type: UserAttributeType, value: unknown): value is AttributeValue {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'string-list':
      return Array.isArray(value) && value.every((v) => typeof v === 'string');
  }
}

function typeError(pointer: string, type: UserAttributeType): ApiError {
  const message = `must be ${type === 'string-list' ? 'a list of strings' : `a ${type}`}`;
  return new ApiError('VALIDATION_FAILED', `The request is not valid: ${pointer} ${message}.`, { errors: [{ pointer, message }] });
}

function invalid(pointer: string, message: string, detail: string): ApiError {
  return new ApiError('VALIDATION_FAILED', detail, { errors: [{ pointer, message }] });
}

/**
 * A `userAttributes` list (`[{name, value}]`, the shape sessions, embed users, renders and the
 * values route take) checked with its rules: each name once (ignoring case, as names are unique),
 * every name an attribute of the tenant (400 USER_ATTRIBUTES_NOT_FOUND), every value of its
 * attribute's type. `pointer` is where the list is in the body. Each entry comes back with its
 * definition, so callers use the attribute's own spelling of the name.
 */
export function checkedAttributeList(
  definitions: UserAttributeRow[],
  list: ReadonlyArray<{ name: string; value: unknown }>,
  pointer: string,
): Array<{ definition: UserAttributeRow; value: unknown }> {
  const byName = new Map(definitions.map((d) => [d.name.toLowerCase(), d]));
  const seen = new Set<string>();
  const out: Array<{ definition: UserAttributeRow; value: unknown }> = [];
  const unknown: Array<{ name: string; index: number }> = [];
  for (const [index, { name, value }] of list.entries()) {
    const key = name.toLowerCase();
    if (seen.has(key)) throw invalid(`${pointer}/${index}/name`, 'is repeated', `User attribute "${name}" is given twice; give each attribute once.`);
    seen.add(key);
    const definition = byName.get(key);
    if (!definition) {
      unknown.push({ name, index });
      continue;
    }
    if (value !== null && !matchesType(definition.type, value)) throw typeError(`${pointer}/${index}/value`, definition.type);
    out.push({ definition, value });
  }
  if (unknown.length > 0)
    throw new ApiError(
      'USER_ATTRIBUTES_NOT_FOUND',
      `User attributes not found: ${unknown.map((u) => `"${u.name}"`).join(', ')} (see GET /api/v1/user-attributes).`,
      { errors: unknown.map((u) => ({ pointer: `${pointer}/${u.index}/name`, message: 'is not a user attribute' })) },
    );
  return out;
}

function nameTaken(name: string): ApiError {
  return new ApiError('USER_ATTRIBUTE_NAME_TAKEN', `A user attribute named "${name}" already exists in this tenant (names are compared ignoring case).`);
}

function withNameConflict<T>(name: string | undefined, write: () => Promise<T>): Promise<T> {
  return name === undefined ? write() : mapUniqueViolation({ user_attributes_tenant_name: () => nameTaken(name) }, write);
}

/**
 * Reading and writing users' attribute values, shared by the REST routes and SCIM's extension so
 * both apply the same names and types. Only a user's own values are stored; defaults apply on read.
 */
export const attributeValues = {
  definitions: (db: Executor, tenantId: number) => listAttributes(db, tenantId),

  /**
   * Each user's own values by attribute name (defaults not included). A Map, not an object:
   * names are chosen by clients, and `toString` or `constructor` must not find Object.prototype.
   */
  async read(db: Executor, tenantId: number, userIds: number[]): Promise<Map<number, Map<string, AttributeValue>>> {
    const definitions = new Map((await listAttributes(db, tenantId)).map((a) => [a.id, a]));
    const out = new Map<number, Map<string, AttributeValue>>();
    for (const row of await valuesOf(db, tenantId, userIds)) {
      const def = definitions.get(row.attribute_id);
      if (!def) continue;
      const values = out.get(row.user_id) ?? new Map<string, AttributeValue>();
      values.set(def.name, JSON.parse(row.value) as AttributeValue);
      out.set(row.user_id, values);
    }
    return out;
  },

  /**
   * Each user's effective values by attribute name: their own, else the attribute's default (what
   * the REST API reports with isDefault). Names follow the definitions' order.
   */
  async effective(db: Executor, tenantId: number, userIds: number[]): Promise<Map<number, Record<string, AttributeValue>>> {
    const definitions = await listAttributes(db, tenantId);
    const own = await attributeValues.read(db, tenantId, userIds);
    const out = new Map<number, Record<string, AttributeValue>>();
    for (const userId of userIds) {
      const mine = own.get(userId);
      const entries: Array<[string, AttributeValue]> = [];
      for (const d of definitions) {
        const value = mine?.get(d.name) ?? (d.default_value === null ? undefined : (JSON.parse(d.default_value) as AttributeValue));
        if (value !== undefined) entries.push([d.name, value]);
      }
      // fromEntries defines own data properties: no name can reach a prototype.
      if (entries.length > 0) out.set(userId, Object.fromEntries(entries));
    }
    return out;
  },

  /**
   * Sets values by attribute name (any case); null removes the user's own value. With `replace`,
   * attributes not named lose their values too (a SCIM PUT). All are checked before any is written.
   * With `keepDefaults`, a value equal to the default of an attribute the user has no value of is
   * not stored: SCIM clients send back the effective values they read, and storing the defaults
   * among them would pin those users to today's default. `at`: the time of the write, from the
   * caller's clock.
   */
  async write(
    trx: Executor,
    tenantId: number,
    userId: number,
    values: Record<string, unknown> | Map<string, unknown>,
    options: { replace: boolean; keepDefaults?: boolean; pointer: (name: string) => string; at: string },
  ): Promise<void> {
    const definitions = await listAttributes(trx, tenantId);
    const byName = new Map(definitions.map((d) => [d.name.toLowerCase(), d]));
    const writes: Array<[UserAttributeRow, unknown]> = [];
    for (const [name, value] of values instanceof Map ? values : Object.entries(values)) {
      const def = byName.get(name.toLowerCase());
      if (!def) {
        const pointer = options.pointer(name);
        throw new ApiError(
          'VALIDATION_FAILED',
          `The request is not valid: ${pointer} is not a user attribute of this tenant (see GET /api/v1/user-attributes).`,
          {
            errors: [{ pointer, message: 'is not a user attribute' }],
          },
        );
      }
      if (value !== null && !matchesType(def.type, value)) throw typeError(options.pointer(name), def.type);
      writes.push([def, value]);
    }
    const { at } = options;
    const own = options.keepDefaults ? new Set((await valuesOf(trx, tenantId, [userId])).map((v) => v.attribute_id)) : undefined;
    if (options.replace) await deleteValues(trx, tenantId, userId);
    for (const [def, value] of writes) {
      if (value === null) await deleteValues(trx, tenantId, userId, [def.id]);
      else if (own && !own.has(def.id) && def.default_value !== null && JSON.stringify(value) === def.default_value) continue;
      else await upsertValue(trx, tenantId, userId, def.id, JSON.stringify(value), at);
    }
  },
};

export function userAttributesService(store: Store, now: Clock) {
  const { db } = store;

  async function requireAttribute(trx: Executor, tenantId: number, id: number): Promise<UserAttributeRow> {
    const row = await findAttribute(trx, tenantId, id);
    if (!row) throw notFound('USER_ATTRIBUTE_NOT_FOUND', 'User attribute', id);
    return row;
  }

  async function values(trx: Executor, tenantId: number, userId: number): Promise<UserAttributeValues> {
    const own = (await attributeValues.read(trx, tenantId, [userId])).get(userId);
    const definitions = await listAttributes(trx, tenantId);
    const userAttributes = definitions.map((d) => {
      const mine = own?.get(d.name);
      const value = mine ?? (d.default_value === null ? null : (JSON.parse(d.default_value) as AttributeValue));
      return { name: d.name, value, isDefault: mine === undefined, attributeId: d.id, type: d.type };
    });
    // `values` is the deprecated name of the same list, kept for clients that read it.
    return { userId, userAttributes, values: userAttributes };
  }

  return {
    async list({ actor, access }: Caller) {
      access.requireAdmin('list user attributes');
      return { items: (await listAttributes(db, actor.tenantId)).map(toAttribute) };
    },

    async get({ actor, access }: Caller, id: number): Promise<UserAttribute> {
      access.requireAdmin('view user attributes');
      return toAttribute(await requireAttribute(db, actor.tenantId, id));
    },

    async create({ actor, access }: Caller, input: CreateUserAttributeInput): Promise<UserAttribute> {
      access.requireAccountAdmin('create user attributes');
      if (input.defaultValue != null && !matchesType(input.type, input.defaultValue)) throw typeError('/body/defaultValue', input.type);
      return withNameConflict(input.name, () =>
        db.transaction().execute(async (trx) => {
          if (await findAttributeByName(trx, actor.tenantId, input.name)) throw nameTaken(input.name);
          const at = timestamp(now);
          const row = await insertAttribute(trx, {
            tenant_id: actor.tenantId,
            name: input.name,
            type: input.type,
            default_value: input.defaultValue == null ? null : JSON.stringify(input.defaultValue),
            created_at: at,
            updated_at: at,
          });
          return toAttribute(row);
        }),
      );
    },

    async update({ actor, access }: Caller, id: number, input: UpdateUserAttributeInput): Promise<UserAttribute> {
      access.requireAccountAdmin('change user attributes');
      return withNameConflict(input.name, () =>
        db.transaction().execute(async (trx) => {
          const row = await requireAttribute(trx, actor.tenantId, id);
          if (input.defaultValue != null && !matchesType(row.type, input.defaultValue)) throw typeError('/body/defaultValue', row.type);
          if (input.name !== undefined) {
            const holder = await findAttributeByName(trx, actor.tenantId, input.name);
            if (holder && holder.id !== id) throw nameTaken(input.name);
          }
          const changes: Parameters<typeof updateAttribute>[3] = { updated_at: timestamp(now) };
          if (input.name !== undefined) changes.name = input.name;
          if (input.defaultValue !== undefined) changes.default_value = input.defaultValue === null ? null : JSON.stringify(input.defaultValue);
          await updateAttribute(trx, actor.tenantId, id, changes);
          return toAttribute(await requireAttribute(trx, actor.tenantId, id));
        }),
      );
    },

    /** A user's values, defaults filled in: the user themselves or an admin. */
    async getValues({ actor, access }: Caller, userId: number): Promise<UserAttributeValues> {
      if (userId !== actor.userId) access.requireAdmin("view another user's attributes");
      if (!(await findUserById(db, actor.tenantId, userId))) throw notFound('USER_NOT_FOUND', 'User', userId);
      return values(db, actor.tenantId, userId);
    },

    /**
     * Sets some of a user's values from `userAttributes` (`[{name, value}]`) or, deprecated,
     * `values` (name → value), never both.
     */
    async setValues({ actor, access }: Caller, userId: number, input: SetUserAttributeValuesInput): Promise<UserAttributeValues> {
      access.requireAccountAdmin("set users' attributes");
      const { userAttributes: list, values: legacy } = input;
      if (list !== undefined && legacy !== undefined)
        throw invalid('/body/values', 'is not allowed with userAttributes', 'Send `userAttributes` or the deprecated `values`, not both.');
      if (list === undefined && legacy === undefined)
        throw invalid('/body/userAttributes', 'is required', 'Send `userAttributes`: the values to set, as `[{name, value}]`.');
      // The lock SCIM's user writes hold while they read and rewrite values: without it a SCIM
      // PATCH or PUT could write back what it read before this change, and undo it.
      return serialized(store, adminLock(actor.tenantId), async (trx) => {
        if (!(await findUserById(trx, actor.tenantId, userId))) throw notFound('USER_NOT_FOUND', 'User', userId);
        const given =
          list !== undefined
            ? new Map(checkedAttributeList(await listAttributes(trx, actor.tenantId), list, '/body/userAttributes').map((e) => [e.definition.name, e.value]))
            : (legacy ?? {});
        await attributeValues.write(trx, actor.tenantId, userId, given, {
          replace: false,
          at: timestamp(now),
          pointer: (name) => `/body/values/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`,
        });
        return values(trx, actor.tenantId, userId);
      });
    },
  };
}
export type UserAttributesService = ReturnType<typeof userAttributesService>;
