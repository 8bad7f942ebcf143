import type { TenantSnapshot } from '../../cache/tenant-cache.js';
import type { Executor } from '../../db/tables.js';
import type { SecurityContext } from '../../semantic-layer/query/access.js';
import { attributeValuesOf, groupNamesOf } from './data-api.store.js';

function parsed(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * What the model's access policies see of a caller: the user's groups (by name) and attribute
 * values (each attribute's default where the user has none), and the security context their
 * credential carries. With the request's `snapshot`, the user's part is kept under the tenant's
 * `auth_version`, which every write to groups, memberships, attributes and their values bumps
 * (triggers, migrations 0005 and 0033): a change applies to the very next query, on every process.
 */
export async function securityContextOf(
  db: Executor,
  tenantId: number,
  userId: number,
  securityContext: Record<string, unknown>,
  snapshot?: TenantSnapshot,
): Promise<SecurityContext> {
  const load = () => userContextOf(db, tenantId, userId);
  const { groups, userAttributes } = await (snapshot !== undefined && snapshot.tenantId === tenantId ? snapshot.memo(`security:${userId}`, load) : load());
  return { userId, groups, userAttributes, securityContext };
}

/** The user's groups and attribute values; shared by the requests of one cache version, so read-only. */
async function userContextOf(db: Executor, tenantId: number, userId: number): Promise<Pick<SecurityContext, 'groups' | 'userAttributes'>> {
  const groups = await groupNamesOf(db, tenantId, userId);
  const attributes = await attributeValuesOf(db, tenantId, userId);
  const userAttributes: Record<string, unknown> = {};
  for (const a of attributes) {
    const value = parsed(a.value ?? a.default_value);
    if (value !== null) userAttributes[a.name] = value;
  }
  return { groups: groups.map((g) => g.name), userAttributes };
}

export const encodeSecurity = (security: SecurityContext) => Buffer.from(JSON.stringify(security), 'utf8').toString('base64url');
