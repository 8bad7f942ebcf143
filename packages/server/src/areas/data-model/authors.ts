import type { Actor } from '../../access/caller.js';
import type { Executor } from '../../db/tables.js';
import type { Signature } from '../../git/objects.js';
import { findUserNameAndEmail } from '../users/index.js';

/** The calling user as a commit's author: their first name (or email) and email. */
export async function authorOf(db: Executor, actor: Actor): Promise<Signature> {
  const user = await findUserNameAndEmail(db, actor.tenantId, actor.userId);
  const email = user?.email ?? actor.email;
  return { name: user?.first_name?.trim() || email, email };
}

/** The author of commits the server makes on nobody's behalf (a repository made for an older deployment). */
export const SERVER_AUTHOR: Signature = { name: 'mapi', email: 'mapi@localhost' };
