import type { Executor } from '../../db/tables.js';
import type { SecurityContext } from '../../semantic-layer/query/access.js';
import { tenantGroupContextName, tenantSystemGroupName } from '../embed-tenants/index.js';
import { attributeValuesOfEmbedUsers, embedUsersWithTenant, globalGroupsOfEmbedUsers, tenantGroupsOfEmbedUsers } from './recipient-context.store.js';

/**
 * The row-level context an embed recipient's render runs with, as their embed session would:
 * their global groups, their embed tenant's implicit group and the tenant groups they are in, their attribute values,
 * and the security context kept with the recipient.
 */
export async function embedRecipientContexts(
  db: Executor,
  tenantId: number,
  embedUserIds: number[],
  securityContexts: Map<number, Record<string, unknown>>,
): Promise<Map<number, SecurityContext>> {
  const out = new Map<number, SecurityContext>();
  if (embedUserIds.length === 0) return out;
  const users = await embedUsersWithTenant(db, tenantId, embedUserIds);
  const globalGroups = await globalGroupsOfEmbedUsers(db, tenantId, embedUserIds);
  const tenantGroups = await tenantGroupsOfEmbedUsers(db, tenantId, embedUserIds);
  const attributes = await attributeValuesOfEmbedUsers(db, tenantId, embedUserIds);
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
