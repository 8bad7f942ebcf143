import type { Executor } from '../../db/tables.js';
import type { SecurityContext } from '../../semantic-layer/query/access.js';
import { embedSecurityContexts } from '../embed-tenants/index.js';

/**
 * The row-level context an embed recipient's render runs with: the very context their embed
 * session would carry (built by the same function), with the security context kept with the recipient.
 */
export async function embedRecipientContexts(
  db: Executor,
  tenantId: number,
  embedUserIds: number[],
  securityContexts: Map<number, Record<string, unknown>>,
): Promise<Map<number, SecurityContext>> {
  return embedSecurityContexts(db, tenantId, embedUserIds, securityContexts);
}
