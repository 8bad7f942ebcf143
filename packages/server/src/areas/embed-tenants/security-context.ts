/*
 * The one place a caller's row-level context (`SecurityContext`, semantic-layer/query/access.ts)
 * is built, for every path that runs queries as someone: the data API for a user (API key or
 * data-API token), an embed session's token (and with it the data API's embed path and Python
 * runs), notification deliveries to users and to embed users, and dashboard renders and exports.
 * Built in one place, a recipient's render cannot drift from what their embed session would see.
 *
 * It lives in the embed-tenants area because the embed half needs this area's names and tables
 * (the implicit `system:tenant:{name}` group, tenant groups, embed users' attribute values), while
 * every caller already depends on the area (notifications and dashboard exports directly, the
 * data API through embed sessions) and the area depends on none of them: a shared module would
 * have to be handed these queries, and an area of its own would sit between the same two ends.
 */
import type { TenantSnapshot } from '../../cache/tenant-cache.js';
import type { Executor } from '../../db/tables.js';
import type { SecurityContext } from '../../semantic-layer/query/access.js';
import { listAttributes } from '../user-attributes/index.js';
import { creatorCatalogsOf } from './creator-catalog.js';
import { tenantGroupContextName, tenantSystemGroupName } from './names.js';
import {
  attributeValuesOfEmbedUsers,
  embedUsersWithTenant,
  globalGroupsOfEmbedUsers,
  tenantGroupsOfEmbedUsers,
  userAttributeValues,
  userGroupNames,
} from './security-context.store.js';

function parsed(text: string | null | undefined): unknown {
  if (text === null || text === undefined) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * The attribute values a context carries, for users and embed users alike: each attribute's own
 * value, else its default (reference 4.16, `user_attributes`: "effective values, defaults
 * included"; docs/api/user-attributes.md); an attribute with neither is left out. `catalog` is in
 * catalog order, which the object keeps.
 */
export function effectiveAttributes(catalog: Array<{ name: string; default_value: string | null; value: string | null | undefined }>): Record<string, unknown> {
  const entries: Array<[string, unknown]> = [];
  for (const a of catalog) {
    const value = parsed(a.value ?? a.default_value);
    if (value !== null) entries.push([a.name, value]);
  }
  // fromEntries defines own data properties: a name such as __proto__ cannot reach a prototype.
  return Object.fromEntries(entries);
}

/**
 * What the model's access policies see of a user of the account: their groups (by name) and
 * attribute values (`effectiveAttributes`), and the security context their credential carries.
 * With the request's `snapshot`, the user's part is kept under the tenant's `auth_version`, which
 * every write to groups, memberships, attributes and their values bumps (triggers, migrations
 * 0005 and 0033): a change applies to the very next query, on every process.
 */
export async function userSecurityContext(
  db: Executor,
  tenantId: number,
  userId: number,
  securityContext: Record<string, unknown>,
  snapshot?: TenantSnapshot,
): Promise<SecurityContext> {
  const load = () => userPartOf(db, tenantId, userId);
  const { groups, userAttributes } = await (snapshot !== undefined && snapshot.tenantId === tenantId ? snapshot.memo(`security:${userId}`, load) : load());
  return { userId, groups, userAttributes, securityContext };
}

/** The user's groups and attribute values; shared by the requests of one cache version, so read-only. */
async function userPartOf(db: Executor, tenantId: number, userId: number): Promise<Pick<SecurityContext, 'groups' | 'userAttributes'>> {
  const groups = await userGroupNames(db, tenantId, userId);
  return { groups, userAttributes: effectiveAttributes(await userAttributeValues(db, tenantId, userId)) };
}

/** An embed user's identity as an embed session's token carries it (reference 4.16's claims). */
export interface EmbedIdentity {
  /** The global groups, by their stored names (`groups`). */
  groups: string[];
  /** `system:tenant:{name}`, then `system:tenant:{name}:group:{group}` for each tenant group (`tenant_groups`). */
  tenantGroups: string[];
  /** Effective attribute values by name (`user_attributes`). */
  userAttributes: Record<string, unknown>;
}

/** A stored embed user's identity, with its tenant part also as provisioning answers it. */
export interface StoredEmbedIdentity extends EmbedIdentity {
  /** `system:tenant:{name}`, the first of `tenantGroups`. */
  tenantSystemGroup: string;
  /** The tenant groups by their own names, in the order of `tenantGroups`. */
  tenantGroupNames: string[];
}

/** The `tenant_groups` of an embed user of `embedTenant` in the tenant groups `names`: the implicit group first. */
export function embedTenantGroups(embedTenant: string, names: string[]): string[] {
  return [tenantSystemGroupName(embedTenant), ...names.map((n) => tenantGroupContextName(embedTenant, n))];
}

/** The row-level context of an embed user: their global groups, then their tenant's, their attribute values and `securityContext`. */
export function embedSecurityContext(identity: EmbedIdentity, securityContext: Record<string, unknown>): SecurityContext {
  return { userId: null, groups: [...identity.groups, ...identity.tenantGroups], userAttributes: identity.userAttributes, securityContext };
}

/**
 * Stored embed users' identities as their next embed session bakes them into its token, in a
 * few statements whatever their number; users not of the tenant are left out.
 */
export async function embedIdentities(db: Executor, tenantId: number, embedUserIds: number[]): Promise<Map<number, StoredEmbedIdentity>> {
  const out = new Map<number, StoredEmbedIdentity>();
  if (embedUserIds.length === 0) return out;
  const users = await embedUsersWithTenant(db, tenantId, embedUserIds);
  const globalGroups = await globalGroupsOfEmbedUsers(db, tenantId, embedUserIds);
  const tenantGroups = await tenantGroupsOfEmbedUsers(db, tenantId, embedUserIds);
  const values = await attributeValuesOfEmbedUsers(db, tenantId, embedUserIds);
  const catalog = await listAttributes(db, tenantId);
  // The embed tenant's own catalog (creator mode, 4.15) overlays the account's: a name in both is the tenant's.
  const creator = await creatorCatalogsOf(db, tenantId, embedUserIds);
  for (const user of users) {
    const own = new Map(values.filter((v) => v.embed_user_id === user.id).map((v) => [v.attribute_id, v.value]));
    const tenantGroupNames = tenantGroups.filter((g) => g.embed_user_id === user.id).map((g) => g.name);
    out.set(user.id, {
      groups: globalGroups.filter((g) => g.embed_user_id === user.id).map((g) => g.name),
      tenantGroups: embedTenantGroups(user.name, tenantGroupNames),
      tenantSystemGroup: tenantSystemGroupName(user.name),
      tenantGroupNames,
      userAttributes: {
        ...effectiveAttributes(catalog.map((a) => ({ name: a.name, default_value: a.default_value, value: own.get(a.id) }))),
        ...effectiveAttributes(creator.filter((a) => a.embed_user_id === user.id)),
      },
    });
  }
  return out;
}

/** The row-level contexts of stored embed users (notification recipients), each with the security context kept for them. */
export async function embedSecurityContexts(
  db: Executor,
  tenantId: number,
  embedUserIds: number[],
  securityContexts: Map<number, Record<string, unknown>>,
): Promise<Map<number, SecurityContext>> {
  const identities = await embedIdentities(db, tenantId, embedUserIds);
  return new Map([...identities].map(([id, identity]) => [id, embedSecurityContext(identity, securityContexts.get(id) ?? {})]));
}

/**
 * The attribute values of an embed user described by a request rather than stored (a render's
 * `renderAs`): the values given, as given (names the catalog does not hold included), and each
 * other attribute's default, as a stored embed user's session would carry it.
 */
export async function effectiveAttributesOf(db: Executor, tenantId: number, given: Array<{ name: string; value: unknown }>): Promise<Record<string, unknown>> {
  const named = new Set(given.map((a) => a.name.toLowerCase()));
  const catalog = await listAttributes(db, tenantId);
  const defaults = effectiveAttributes(catalog.filter((a) => !named.has(a.name.toLowerCase())).map((a) => ({ ...a, value: null })));
  return Object.fromEntries([...Object.entries(defaults), ...given.map((a): [string, unknown] => [a.name, a.value])]);
}
