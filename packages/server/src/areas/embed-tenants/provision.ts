import type { EmbedTenantRow, EmbedUserRow, Executor } from '../../db/tables.js';
import { lockKey, lockWithin } from '../../db/transactions.js';
import { ApiError } from '../../shared/problems.js';
import { timestamp, type Clock } from '../../time.js';
import { listAttributes } from '../user-attributes/index.js';
import { matchesType, type AttributeValue } from '../user-attributes/index.js';
import type { EmbedUser, EmbedUserProfile } from './embed-tenants.schemas.js';
import { deleteAttributeValue, globalGroupsByName, setGlobalGroups, setTenantGroups, tenantGroupsByName, upsertAttributeValue } from './memberships.store.js';
import { SYSTEM_PREFIX, isEmbedTenantName, normalizeExternalId, syntheticEmail } from './names.js';
import { embedIdentities } from './security-context.js';
import {
  creatorDefinitions,
  deleteCreatorValue,
  insertCreatorDefinition,
  insertTenantGroupUnlessTaken,
  matchesCreatorType,
  updateCreatorDefinition,
  upsertCreatorValue,
  type CreatorAttributeType,
} from './creator-catalog.js';
import { setGroupDescription } from './embed-groups.store.js';
import { findEmbedTenant, insertEmbedTenant, insertEmbedTenantUnlessTaken, setEmbedTenantDisplayName } from './embed-tenants.store.js';
import {
  countAccountEmbedUsers,
  findEmbedUserByExternalId,
  insertEmbedUser,
  insertEmbedUserUnlessTaken,
  insertEmbedUsers,
  updateEmbedUser,
  type EmbedUserChanges,
} from './embed-users.store.js';

/**
 * What provisioning (4.4, 4.5, 4.12) and a session (4.15) ask for. Left out (undefined) or null
 * keeps what is stored, except `email: null`, which goes back to the synthetic address; a list
 * replaces, `[]` clears.
 */
export interface ProvisionEmbedUserRequest {
  /** Lowercased here; must match the 4.0 pattern. */
  embedTenantName: string;
  /** `embedTenantProfile.displayName` of a session; a string or null sets it, undefined keeps it. */
  embedTenantDisplayName?: string | null | undefined;
  /** Trimmed and lowercased here. */
  externalId: string;
  email?: string | null | undefined;
  userProfile?: EmbedUserProfile | null | undefined;
  /** Names of the account's existing groups (never created here). */
  groups?: string[] | null | undefined;
  /** Names of this embed tenant's groups (4.7). */
  tenantGroups?: string[] | null | undefined;
  /**
   * Typed by the account's attribute catalog, or in creator mode by the embed tenant's own; a
   * value of null clears it; other names keep theirs.
   */
  userAttributes?: Array<{ name: string; value: unknown }> | null | undefined;
  /** A creator-mode session (4.15): `userAttributes` resolve against the embed tenant's catalog. */
  creatorMode?: boolean | undefined;
  /** Creator mode: tenant groups created, or their description updated, before `tenantGroups` is applied. */
  tenantGroupDefinitions?: Array<{ name: string; description?: string | null | undefined }> | null | undefined;
  /** Creator mode: the embed tenant's attribute catalog, upserted by name; a type never changes. */
  userAttributeDefinitions?: CreatorAttributeDefinition[] | null | undefined;
}

/** One entry of 4.15's `userAttributeDefinitions`. */
export interface CreatorAttributeDefinition {
  name: string;
  type: CreatorAttributeType;
  displayName?: string | null | undefined;
  defaultValue?: unknown;
  description?: string | null | undefined;
}

/** What a session bakes into its token, and what provisioning answers. */
export interface ProvisionedEmbedUser {
  embedTenant: { id: number; name: string; displayName: string | null; created: boolean };
  user: { id: number; externalId: string; username: string; email: string; displayName: string | null; picture: string | null; created: boolean };
  /** The global groups, by their stored names: they go verbatim into the security context. */
  groups: string[];
  /** The tenant groups as the security context names them: `system:tenant:{name}:group:{group}`. */
  tenantGroups: string[];
  /** The same groups by their own names, as 4.7 made them. */
  tenantGroupNames: string[];
  /** The embed tenant's implicit sharing group, `system:tenant:{name}`. */
  tenantSystemGroup: string;
  /** Effective attribute values by name: the user's own, else the attribute's default. */
  userAttributes: Record<string, AttributeValue>;
  /** The user as the REST API shows it (EmbedUser). */
  embedUser: EmbedUser;
}

export interface ProvisionOptions {
  /** The account-wide cap (config `embedUserLimit`); creating a user past it is 429. */
  userLimit: number;
  /** Where the request's members are, for the JSON pointers of errors; default `/body`. */
  pointer?: string;
  /**
   * The caller holds the account's embed-people lock shared (`{ shared: lockKey.embedPeople }`),
   * so that other sessions run at the same time: the embed tenant and the user are created by
   * inserts that yield to a racing creator, the user's row is locked while it is written, and the
   * cap is left to `confirmEmbedUserCap`, which the caller runs as the transaction's last step
   * when `user.created`. Without it the lock is taken exclusively here and the cap checked at once.
   */
  concurrent?: boolean;
  /** The app's clock, which the users and tenants created are stamped with. */
  now: Clock;
}

export function toEmbedUser(row: EmbedUserRow): EmbedUser {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    externalId: row.external_id,
    firstName: row.display_name,
    createdAt: row.created_at,
    lastLogin: row.last_login,
  };
}

function invalid(pointer: string, message: string, detail: string): ApiError {
  return new ApiError('VALIDATION_FAILED', detail, { errors: [{ pointer, message }] });
}

/** A tenant name from a path or body, lowercased; 400 when it does not fit the 4.0 pattern. */
export function canonicalEmbedTenantName(name: string, pointer = '/params/embedTenantName'): string {
  const canonical = name.toLowerCase();
  if (!isEmbedTenantName(canonical)) {
    throw invalid(
      pointer,
      'is not an embed tenant name',
      `"${name}" is not an embed tenant name: 2-36 characters a-z, 0-9 and -, starting with a letter and ending with a letter or digit.`,
    );
  }
  return canonical;
}

/**
 * Serialises the account's embed-people writes on PostgreSQL inside the caller's transaction
 * (the same advisory lock `serialized(store, lockKey.embedPeople(tenantId))` takes, and taking it
 * twice is harmless), so the cap is exact when sessions and provisioning race. On SQLite one
 * writer runs at a time already.
 */
async function lockEmbedPeople(trx: Executor, tenantId: number): Promise<void> {
  await lockWithin(trx, lockKey.embedPeople(tenantId));
}

/**
 * The cap, for a transaction that created an embed user while holding the embed-people lock
 * shared (a session): its last step, so the count's lock is held only until the commit that
 * follows. Sessions that create users take the count's lock one after another, and each count
 * sees every creation committed before it plus its own, so the account never ends up past the
 * cap; exclusive holders of the embed-people lock (provisioning) run while no session does. On
 * SQLite one writer runs at a time and the count is exact as it is. Past the cap: 429, and the
 * caller's transaction, the user with it, is rolled back.
 */
export async function confirmEmbedUserCap(trx: Executor, tenantId: number, externalId: string, userLimit: number): Promise<void> {
  await lockWithin(trx, lockKey.embedUserCount(tenantId));
  const count = await countAccountEmbedUsers(trx, tenantId);
  if (count > userLimit) {
    throw new ApiError(
      'EMBED_USER_LIMIT',
      `The account holds ${count - 1} embed users, its limit of ${userLimit}; "${externalId}" was not created. Delete embed tenants or users no longer needed, or ask the operator to raise EMBED_USER_LIMIT.`,
    );
  }
}

function distinct(names: string[]): string[] {
  const seen = new Map<string, string>();
  for (const name of names) if (!seen.has(name.toLowerCase())) seen.set(name.toLowerCase(), name);
  return [...seen.values()];
}

function notFoundGroups(kind: string, missing: string[]): ApiError {
  return new ApiError('GROUPS_NOT_FOUND', `Groups with names ${missing.map((n) => `"${n}"`).join(', ')} not found${kind}; nothing was changed.`);
}

interface Checked {
  globalGroupIds?: number[];
  /** Tenant groups by name: some may exist only once `tenantGroupDefinitions` are written. */
  tenantGroupNames?: string[];
  attributes: Array<{ id: number; value: unknown }>;
  /** Creator mode: values of the embed tenant's catalog, by attribute name (resolved once the definitions are written). */
  creatorAttributes: Array<{ name: string; value: unknown }>;
}

/** Every check that needs no writes, done before any write, so a refused request changes nothing. */
async function check(
  trx: Executor,
  tenantId: number,
  embedTenant: EmbedTenantRow | undefined,
  request: ProvisionEmbedUserRequest,
  at: string,
): Promise<Checked> {
  const checked: Checked = { attributes: [], creatorAttributes: [] };
  if (request.groups != null) {
    const names = distinct(request.groups);
    const reserved = names.filter((n) => n.toLowerCase().startsWith(SYSTEM_PREFIX));
    if (reserved.length > 0) {
      // A global group called like a system group would pass for one in the security context.
      throw new ApiError(
        'VALIDATION_FAILED',
        `Groups ${reserved.map((n) => `"${n}"`).join(', ')} cannot be given to embed users: names starting with "system:" are reserved for embedding.`,
        {
          errors: [{ pointer: `${at}/groups`, message: 'holds a reserved name' }],
        },
      );
    }
    const found = await globalGroupsByName(trx, tenantId, names);
    const known = new Set(found.map((g) => g.name.toLowerCase()));
    const missing = names.filter((n) => !known.has(n.toLowerCase()));
    if (missing.length > 0) throw notFoundGroups(' (global groups are made by an admin, never by embedding)', missing);
    checked.globalGroupIds = found.map((g) => g.id);
  }
  const defined = new Set<string>();
  for (const [i, definition] of (request.tenantGroupDefinitions ?? []).entries()) {
    const key = definition.name.toLowerCase();
    if (key.startsWith(SYSTEM_PREFIX))
      throw invalid(
        `${at}/tenantGroupDefinitions/${i}/name`,
        'is reserved',
        `"${definition.name}" starts with "system:", which is reserved for the groups the system keeps; choose another name.`,
      );
    if (defined.has(key))
      throw invalid(`${at}/tenantGroupDefinitions/${i}/name`, 'is repeated', `Tenant group "${definition.name}" is defined twice; define each group once.`);
    defined.add(key);
  }
  if (request.tenantGroups != null) {
    const names = distinct(request.tenantGroups);
    const found = embedTenant ? await tenantGroupsByName(trx, tenantId, embedTenant.id, names) : [];
    const known = new Set([...found.map((g) => g.name.toLowerCase()), ...defined]);
    const missing = names.filter((n) => !known.has(n.toLowerCase()));
    if (missing.length > 0) throw notFoundGroups(` in embed tenant "${request.embedTenantName.toLowerCase()}" (create them first)`, missing);
    checked.tenantGroupNames = names;
  }
  if (request.creatorMode === true) {
    await checkCreatorCatalog(trx, tenantId, embedTenant, request, at, checked);
    return checked;
  }
  if (request.userAttributes != null && request.userAttributes.length > 0) {
    const catalog = new Map((await listAttributes(trx, tenantId)).map((a) => [a.name.toLowerCase(), a]));
    const seen = new Set<string>();
    const unknown: string[] = [];
    for (const [i, { name, value }] of request.userAttributes.entries()) {
      const key = name.toLowerCase();
      if (seen.has(key)) throw invalid(`${at}/userAttributes/${i}/name`, 'is repeated', `User attribute "${name}" is given twice; give each attribute once.`);
      seen.add(key);
      const def = catalog.get(key);
      if (!def) {
        unknown.push(name);
        continue;
      }
      if (value !== null && !matchesType(def.type, value)) {
        throw invalid(
          `${at}/userAttributes/${i}/value`,
          `must be of type ${def.type}`,
          `User attribute "${def.name}" is of type ${def.type}; the value given is not (its type cannot change).`,
        );
      }
      checked.attributes.push({ id: def.id, value });
    }
    if (unknown.length > 0)
      throw new ApiError(
        'USER_ATTRIBUTES_NOT_FOUND',
        `User attributes not found: ${unknown.map((n) => `"${n}"`).join(', ')} (see GET /api/v1/user-attributes).`,
      );
  }
  return checked;
}

/**
 * Creator mode (4.15): the definitions against the embed tenant's catalog (a repeated name, a
 * default of another type, or a name the catalog holds with another type is 400), then the
 * values against the catalog as the definitions will leave it. Reads only.
 */
async function checkCreatorCatalog(
  trx: Executor,
  tenantId: number,
  embedTenant: EmbedTenantRow | undefined,
  request: ProvisionEmbedUserRequest,
  at: string,
  checked: Checked,
): Promise<void> {
  const stored = embedTenant ? await creatorDefinitions(trx, tenantId, embedTenant.id) : [];
  const types = new Map<string, { name: string; type: CreatorAttributeType }>(stored.map((d) => [d.name.toLowerCase(), { name: d.name, type: d.type }]));
  const seen = new Set<string>();
  for (const [i, definition] of (request.userAttributeDefinitions ?? []).entries()) {
    const key = definition.name.toLowerCase();
    const pointer = `${at}/userAttributeDefinitions/${i}`;
    if (seen.has(key)) throw invalid(`${pointer}/name`, 'is repeated', `User attribute "${definition.name}" is defined twice; define each attribute once.`);
    seen.add(key);
    const existing = types.get(key);
    if (existing && existing.type !== definition.type) {
      throw invalid(
        `${pointer}/type`,
        'cannot change type',
        `User attribute "${existing.name}" is of type ${existing.type} and cannot change type to ${definition.type}; nothing was changed.`,
      );
    }
    if (definition.defaultValue !== undefined && definition.defaultValue !== null && !matchesCreatorType(definition.type, definition.defaultValue)) {
      throw invalid(
        `${pointer}/defaultValue`,
        `must be of type ${definition.type}`,
        `The default of user attribute "${definition.name}" is not of type ${definition.type}.`,
      );
    }
    if (!existing) types.set(key, { name: definition.name, type: definition.type });
  }
  const given = new Set<string>();
  const unknown: string[] = [];
  for (const [i, { name, value }] of (request.userAttributes ?? []).entries()) {
    const key = name.toLowerCase();
    if (given.has(key)) throw invalid(`${at}/userAttributes/${i}/name`, 'is repeated', `User attribute "${name}" is given twice; give each attribute once.`);
    given.add(key);
    const def = types.get(key);
    if (!def) {
      unknown.push(name);
      continue;
    }
    if (value !== null && !matchesCreatorType(def.type, value)) {
      throw invalid(
        `${at}/userAttributes/${i}/value`,
        `must be of type ${def.type}`,
        `User attribute "${def.name}" is of type ${def.type}; the value given is not (its type cannot change).`,
      );
    }
    checked.creatorAttributes.push({ name: def.name, value });
  }
  if (unknown.length > 0)
    throw new ApiError(
      'USER_ATTRIBUTES_NOT_FOUND',
      `User attributes not found: ${unknown.map((n) => `"${n}"`).join(', ')} in the catalog of embed tenant "${request.embedTenantName.toLowerCase()}" (creator mode resolves attributes there; define them with userAttributeDefinitions).`,
    );
}

/** Creator mode: the request's tenant groups and attribute definitions, upserted by name (types never change: checked before). */
async function writeCreatorDefinitions(trx: Executor, tenantId: number, embedTenant: EmbedTenantRow, request: ProvisionEmbedUserRequest, at: string) {
  const groups = request.tenantGroupDefinitions ?? [];
  if (groups.length > 0) {
    const existing = new Map(
      (
        await tenantGroupsByName(
          trx,
          tenantId,
          embedTenant.id,
          groups.map((g) => g.name),
        )
      ).map((g) => [g.name.toLowerCase(), g]),
    );
    for (const definition of groups) {
      const found = existing.get(definition.name.toLowerCase());
      if (!found) await insertTenantGroupUnlessTaken(trx, tenantId, embedTenant.id, definition.name, definition.description ?? null, at);
      else if (definition.description !== undefined && definition.description !== found.description)
        await setGroupDescription(trx, tenantId, found.id, definition.description, at);
    }
  }
  const attributes = request.userAttributeDefinitions ?? [];
  if (attributes.length > 0) {
    const existing = new Map((await creatorDefinitions(trx, tenantId, embedTenant.id)).map((d) => [d.name.toLowerCase(), d]));
    const json = (value: unknown) => (value === undefined || value === null ? null : JSON.stringify(value));
    for (const definition of attributes) {
      const found = existing.get(definition.name.toLowerCase());
      if (!found) {
        const inserted = await insertCreatorDefinition(trx, {
          tenant_id: tenantId,
          embed_tenant_id: embedTenant.id,
          name: definition.name,
          type: definition.type,
          display_name: definition.displayName ?? null,
          default_value: json(definition.defaultValue),
          description: definition.description ?? null,
          created_at: at,
          updated_at: at,
        });
        if (!inserted) {
          // A concurrent session defined it first: its type must be this one too.
          const raced = (await creatorDefinitions(trx, tenantId, embedTenant.id)).find((d) => d.name.toLowerCase() === definition.name.toLowerCase());
          if (raced && raced.type !== definition.type)
            throw invalid(
              '/body/userAttributeDefinitions',
              'cannot change type',
              `User attribute "${raced.name}" is of type ${raced.type} and cannot change type to ${definition.type}; nothing was changed.`,
            );
        }
        continue;
      }
      // Left out: kept; null: cleared.
      const changes: Parameters<typeof updateCreatorDefinition>[3] = {};
      if (definition.displayName !== undefined && definition.displayName !== found.display_name) changes.display_name = definition.displayName;
      if (definition.defaultValue !== undefined && json(definition.defaultValue) !== found.default_value) changes.default_value = json(definition.defaultValue);
      if (definition.description !== undefined && definition.description !== found.description) changes.description = definition.description;
      if (Object.keys(changes).length > 0) await updateCreatorDefinition(trx, tenantId, found.id, { ...changes, updated_at: at });
    }
  }
}

/**
 * Creates bare users (no email, profile, groups or attributes given) for external ids the embed
 * tenant does not have yet, in a few statements, within the cap (else 429 and nothing is created).
 * Group membership adds (4.12) provision this way; run under the account's embed-people lock.
 */
export async function createBareEmbedUsers(
  trx: Executor,
  tenantId: number,
  embedTenant: EmbedTenantRow,
  externalIds: string[],
  options: ProvisionOptions,
): Promise<EmbedUserRow[]> {
  if (externalIds.length === 0) return [];
  await lockEmbedPeople(trx, tenantId);
  const count = await countAccountEmbedUsers(trx, tenantId);
  if (count + externalIds.length > options.userLimit) {
    throw new ApiError(
      'EMBED_USER_LIMIT',
      `The account holds ${count} embed users, its limit is ${options.userLimit}, and ${externalIds.length} more were asked for; nobody was added. Delete embed tenants or users no longer needed, or ask the operator to raise EMBED_USER_LIMIT.`,
    );
  }
  const at = timestamp(options.now);
  return insertEmbedUsers(
    trx,
    externalIds.map((externalId) => ({
      tenant_id: tenantId,
      embed_tenant_id: embedTenant.id,
      external_id: externalId,
      username: externalId,
      email: syntheticEmail(externalId, embedTenant.name),
      display_name: null,
      picture: null,
      created_at: at,
      updated_at: at,
      last_login: null,
    })),
  );
}

/**
 * Creates or updates one embed user as `request` describes, inside the caller's transaction: the
 * embed tenant is created on demand; the user is found by external id (created past no cap, else
 * 429 EMBED_USER_LIMIT); email, profile, global groups, tenant groups and attribute values are
 * applied with the rules of reference 4.4 and 4.15. Unknown groups or attributes, a repeated
 * attribute, a value of the wrong type or an invalid tenant name throw an ApiError (400) before
 * anything is written. Returns what a session needs for its token.
 *
 * @example
 * const identity = await serialized(store, lockKey.embedPeople(tenantId), (trx) =>
 *   provisionEmbedUser(trx, tenantId, { embedTenantName: 'acme', externalId: 'u-1', groups: ['Sales'] }, { userLimit }));
 */
export async function provisionEmbedUser(
  trx: Executor,
  tenantId: number,
  request: ProvisionEmbedUserRequest,
  options: ProvisionOptions,
): Promise<ProvisionedEmbedUser> {
  const pointer = options.pointer ?? '/body';
  const name = canonicalEmbedTenantName(request.embedTenantName, `${pointer}/embedTenantName`);
  const externalId = normalizeExternalId(request.externalId);
  if (externalId === '') throw invalid(`${pointer}/externalId`, 'is empty once trimmed', 'The externalId is empty once trimmed.');
  const concurrent = options.concurrent === true;
  if (!concurrent) await lockEmbedPeople(trx, tenantId);
  const at = timestamp(options.now);

  let embedTenant = await findEmbedTenant(trx, tenantId, name);
  const checked = await check(trx, tenantId, embedTenant, request, pointer);
  let tenantCreated = false;
  if (!embedTenant) {
    const created = concurrent
      ? await insertEmbedTenantUnlessTaken(trx, tenantId, name, request.embedTenantDisplayName ?? null, at)
      : await insertEmbedTenant(trx, tenantId, name, request.embedTenantDisplayName ?? null, at);
    // A racing session created it first (and has committed): it is there to be found now.
    embedTenant = created ?? (await findEmbedTenant(trx, tenantId, name));
    if (!embedTenant) throw new Error(`Embed tenant "${name}" was neither created nor found`);
    tenantCreated = created !== undefined;
  }
  if (!tenantCreated && request.embedTenantDisplayName !== undefined && request.embedTenantDisplayName !== embedTenant.display_name) {
    await setEmbedTenantDisplayName(trx, tenantId, embedTenant.id, request.embedTenantDisplayName);
    embedTenant = { ...embedTenant, display_name: request.embedTenantDisplayName };
  }

  const email = (given: string | null | undefined) => (given == null ? syntheticEmail(externalId, name) : given.toLowerCase());
  // Concurrent: the row stays locked until the commit, so sessions of one user write it in turn.
  let user = await findEmbedUserByExternalId(trx, tenantId, embedTenant.id, externalId, { lock: concurrent });
  let userCreated = user === undefined;
  if (!user && concurrent) {
    user = await insertEmbedUserUnlessTaken(trx, {
      tenant_id: tenantId,
      embed_tenant_id: embedTenant.id,
      external_id: externalId,
      username: externalId,
      email: email(request.email),
      display_name: request.userProfile?.displayName ?? null,
      picture: request.userProfile?.picture ?? null,
      created_at: at,
      updated_at: at,
      last_login: null,
    });
    userCreated = user !== undefined;
    // A racing session created the user first: from here on it is an existing user.
    user ??= await findEmbedUserByExternalId(trx, tenantId, embedTenant.id, externalId, { lock: true });
    if (!user) throw new Error(`Embed user "${externalId}" was neither created nor found`);
    if (!userCreated) user = await applyUserChanges(trx, tenantId, user, request, email, at);
  } else if (!user) {
    const count = await countAccountEmbedUsers(trx, tenantId);
    if (count >= options.userLimit) {
      throw new ApiError(
        'EMBED_USER_LIMIT',
        `The account holds ${count} embed users, its limit of ${options.userLimit}; "${externalId}" was not created. Delete embed tenants or users no longer needed, or ask the operator to raise EMBED_USER_LIMIT.`,
      );
    }
    user = await insertEmbedUser(trx, {
      tenant_id: tenantId,
      embed_tenant_id: embedTenant.id,
      external_id: externalId,
      username: externalId,
      email: email(request.email),
      display_name: request.userProfile?.displayName ?? null,
      picture: request.userProfile?.picture ?? null,
      created_at: at,
      updated_at: at,
      last_login: null,
    });
  } else if (!userCreated) {
    user = await applyUserChanges(trx, tenantId, user, request, email, at);
  }

  if (request.creatorMode === true) await writeCreatorDefinitions(trx, tenantId, embedTenant, request, at);
  if (checked.globalGroupIds) await setGlobalGroups(trx, tenantId, user.id, checked.globalGroupIds, at);
  if (checked.tenantGroupNames) {
    const groups = await tenantGroupsByName(trx, tenantId, embedTenant.id, checked.tenantGroupNames);
    await setTenantGroups(
      trx,
      tenantId,
      user.id,
      groups.map((g) => g.id),
      at,
    );
  }
  if (checked.creatorAttributes.length > 0) {
    const catalog = new Map((await creatorDefinitions(trx, tenantId, embedTenant.id)).map((d) => [d.name.toLowerCase(), d.id]));
    for (const { name, value } of checked.creatorAttributes) {
      const id = catalog.get(name.toLowerCase());
      if (id === undefined) throw new Error(`User attribute "${name}" was defined but not found`);
      if (value === null) await deleteCreatorValue(trx, tenantId, user.id, id);
      else await upsertCreatorValue(trx, tenantId, user.id, id, JSON.stringify(value), at);
    }
  }
  for (const { id, value } of checked.attributes) {
    if (value === null) await deleteAttributeValue(trx, tenantId, user.id, id);
    else await upsertAttributeValue(trx, tenantId, user.id, id, JSON.stringify(value), at);
  }

  // What the session's token carries, as every other path builds an embed user's context (security-context.ts).
  const identity = (await embedIdentities(trx, tenantId, [user.id])).get(user.id);
  if (!identity) throw new Error(`Embed user "${externalId}" was written but not found`);
  return {
    embedTenant: { id: embedTenant.id, name: embedTenant.name, displayName: embedTenant.display_name, created: tenantCreated },
    user: { id: user.id, externalId, username: user.username, email: user.email, displayName: user.display_name, picture: user.picture, created: userCreated },
    groups: identity.groups,
    // The implicit group leads the identity's tenant groups; it is answered on its own here.
    tenantGroups: identity.tenantGroups.filter((g) => g !== identity.tenantSystemGroup),
    tenantGroupNames: identity.tenantGroupNames,
    tenantSystemGroup: identity.tenantSystemGroup,
    userAttributes: identity.userAttributes as Record<string, AttributeValue>,
    embedUser: toEmbedUser(user),
  };
}

/** Email and profile as the request sets them (left out keeps, `email: null` the synthetic address). */
async function applyUserChanges(
  trx: Executor,
  tenantId: number,
  user: EmbedUserRow,
  request: ProvisionEmbedUserRequest,
  email: (given: string | null | undefined) => string,
  at: string,
): Promise<EmbedUserRow> {
  const changes: EmbedUserChanges = {};
  if (request.email !== undefined && email(request.email) !== user.email) changes.email = email(request.email);
  if (request.userProfile?.displayName !== undefined && request.userProfile.displayName !== user.display_name)
    changes.display_name = request.userProfile.displayName;
  if (request.userProfile?.picture !== undefined && request.userProfile.picture !== user.picture) changes.picture = request.userProfile.picture;
  return Object.keys(changes).length > 0 ? updateEmbedUser(trx, tenantId, user.id, { ...changes, updated_at: at }) : user;
}
