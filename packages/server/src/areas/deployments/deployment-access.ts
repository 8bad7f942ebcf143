import type { Caller } from '../../access/caller.js';
import { needsOf, type DeploymentAction } from '../../access/actions.js';
import type { TenantSnapshot } from '../../cache/tenant-cache.js';
import type { Access, DeploymentRow, Executor } from '../../db/tables.js';
import { ApiError, notFound } from '../../shared/problems.js';
import { findDeployment } from './deployments.store.js';

/**
 * The deployment's row as of the request's cache `snapshot` (for reads only: the row is shared
 * and must not be changed). Every write to deployments bumps the tenant's `auth_version`
 * (migration 0005), so the row is never older than the request's version; an id that names no
 * deployment is not kept (any number can be sent).
 */
async function cachedDeployment(db: Executor, snapshot: TenantSnapshot, tenantId: number, id: number): Promise<DeploymentRow | undefined> {
  if (snapshot.tenantId !== tenantId) return findDeployment(db, tenantId, id);
  const key = `deployment:${id}`;
  const row = await snapshot.memo(key, () => findDeployment(db, tenantId, id));
  if (!row) snapshot.forget(key);
  return row;
}

/**
 * The first check of every operation on one deployment: 404 when it is not in the caller's
 * tenant, then 403 when the caller's role and access there, and their custom roles, do not allow `action`.
 */
export async function authorizeDeployment(
  db: Executor,
  { actor, access }: Caller,
  id: number,
  action: DeploymentAction,
  snapshot?: TenantSnapshot,
): Promise<{ row: DeploymentRow; level: Access | null }> {
  const row = snapshot === undefined ? await findDeployment(db, actor.tenantId, id) : await cachedDeployment(db, snapshot, actor.tenantId, id);
  if (!row) throw notFound('DEPLOYMENT_NOT_FOUND', 'Deployment', id);
  const level = await access.level({ deploymentId: row.id, chain: [], createdBy: row.created_by });
  if (!(await access.allowsOnDeployment(row.id, level, action))) {
    const need = needsOf(action);
    const role = need.role === 'VIEWER' ? '' : ` and the role ${need.role} or above`;
    const have = level === null ? 'no access' : `${level} access`;
    throw new ApiError('FORBIDDEN', `${action} on deployment ${id} needs ${need.access} access${role}; you have ${have} as ${actor.role}.`);
  }
  return { row, level };
}
