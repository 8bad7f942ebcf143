import type { Executor } from '../../db/tables.js';
import { findTenantBySlug } from '../tenants/index.js';

/** The tenant a slug names. */
export async function tenantBySlug(db: Executor, slug: string): Promise<{ id: number; slug: string } | null> {
  const row = await findTenantBySlug(db, slug);
  return row ? { id: row.id, slug: row.slug } : null;
}

/** The branch of a deployment's branch id (staging-<id>, development-<id>). */
export async function branchName(db: Executor, deploymentId: number, branchId: number): Promise<string | null> {
  const row = await db.selectFrom('branches').select('name').where('deployment_id', '=', deploymentId).where('id', '=', branchId).executeTakeFirst();
  return row?.name ?? null;
}
