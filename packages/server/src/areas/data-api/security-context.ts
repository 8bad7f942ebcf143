import type { Executor } from '../../db/tables.js';
import type { SecurityContext } from '../../semantic-layer/query/access.js';

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
 * credential carries. Read from the store for each request, so a change of group or attribute
 * applies to the next query.
 */
export async function securityContextOf(db: Executor, tenantId: number, userId: number, securityContext: Record<string, unknown>): Promise<SecurityContext> {
  const groups = await db
    .selectFrom('group_members as m')
    .innerJoin('groups as g', 'g.id', 'm.group_id')
    .select('g.name')
    .where('m.tenant_id', '=', tenantId)
    .where('m.user_id', '=', userId)
    .orderBy('g.name')
    .execute();
  const attributes = await db
    .selectFrom('user_attributes as a')
    .leftJoin('user_attribute_values as v', (join) => join.onRef('v.attribute_id', '=', 'a.id').on('v.user_id', '=', userId))
    .select(['a.name', 'a.default_value', 'v.value'])
    .where('a.tenant_id', '=', tenantId)
    .execute();
  const userAttributes: Record<string, unknown> = {};
  for (const a of attributes) {
    const value = parsed(a.value ?? a.default_value);
    if (value !== null) userAttributes[a.name] = value;
  }
  return { userId, groups: groups.map((g) => g.name), userAttributes, securityContext };
}

export const encodeSecurity = (security: SecurityContext) => Buffer.from(JSON.stringify(security), 'utf8').toString('base64url');
