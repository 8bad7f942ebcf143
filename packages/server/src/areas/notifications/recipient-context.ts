import type { Executor } from '../../db/tables.js';
import type { SecurityContext } from '../../semantic-layer/query/access.js';
import { tenantGroupContextName, tenantSystemGroupName } from '../embed-tenants/index.js';

/**
 * The row-level context an embed recipient's render runs with, as their embed session would:
 * their global groups, their embed tenant's implicit group and the tenant groups they are in, their attribute values,
 * and the security context kept with the recipient.
 */
export async function embedRecipientContexts(db: Executor, tenantId: number, embedUserIds: number[], securityContexts: Map<number, Record<string, unknown>>): Promise<Map<number, SecurityContext>> {
  const out = new Map<number, SecurityContext>();
  if (embedUserIds.length === 0) return out;
  const users = await db
    .selectFrom('embed_users as eu')
    .innerJoin('embed_tenants as et', 'et.id', 'eu.embed_tenant_id')
    .select(['eu.id', 'et.name'])
    .where('eu.tenant_id', '=', tenantId)
    .where('eu.id', 'in', embedUserIds)
    .execute();
  const globalGroups = await db
    .selectFrom('embed_user_groups as ug')
    .innerJoin('groups as g', 'g.id', 'ug.group_id')
    .select(['ug.embed_user_id', 'g.name'])
    .where('ug.tenant_id', '=', tenantId)
    .where('ug.embed_user_id', 'in', embedUserIds)
    .execute();
  const tenantGroups = await db
    .selectFrom('embed_group_members as m')
    .innerJoin('embed_groups as g', 'g.id', 'm.embed_group_id')
    .select(['m.embed_user_id', 'g.name'])
    .where('m.tenant_id', '=', tenantId)
    .where('m.embed_user_id', 'in', embedUserIds)
    .where('g.kind', '=', 'tenant-group')
    .execute();
  const attributes = await db
    .selectFrom('embed_user_attribute_values as v')
    .innerJoin('user_attributes as a', 'a.id', 'v.attribute_id')
    .select(['v.embed_user_id', 'a.name', 'v.value'])
    .where('v.tenant_id', '=', tenantId)
    .where('v.embed_user_id', 'in', embedUserIds)
    .execute();
  for (const user of users) {
    out.set(user.id, {
      userId: null,
      groups: [
        ...globalGroups.filter((g) => g.embed_user_id === user.id).map((g) => g.name),
        tenantSystemGroupName(user.name),
        ...tenantGroups.filter((g) => g.embed_user_id === user.id).map((g) => tenantGroupContextName(user.name, g.name)),
      ],
      userAttributes: Object.fromEntries(attributes.filter((a) => a.embed_user_id === user.id).map((a) => [a.name, JSON.parse(a.value) as unknown])),
      securityContext: securityContexts.get(user.id) ?? {},
    });
  }
  return out;
}
