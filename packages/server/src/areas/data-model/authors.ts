import type { Actor } from '../../access/caller.js';
import type { Executor } from '../../db/tables.js';
import type { Signature } from '../../git/objects.js';

/** The calling user as a commit's author: their first name (or email) and email. */
export async function authorOf(db: Executor, actor: Actor): Promise<Signature> {
  const user = await db.selectFrom('users').select(['first_name', 'email']).where('tenant_id', '=', actor.tenantId).where('id', '=', actor.userId).executeTakeFirst();
  const email = user?.email ?? actor.email;
  return { name: user?.first_name?.trim() || email, email };
}

/** The author of commits the server makes on nobody's behalf (a repository made for an older deployment). */
export const SERVER_AUTHOR: Signature = { name: 'mapi', email: 'mapi@localhost' };
