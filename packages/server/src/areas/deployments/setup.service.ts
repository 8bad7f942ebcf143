import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { CreationStep } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { notFound } from '../../shared/problems.js';
import { timestamp, type Clock } from '../../time.js';
import { authorizeDeployment } from './deployment-access.js';
import type { Deployment } from './deployments.schemas.js';
import { toDeployment, type DeploymentUrlOf } from './deployments.service.js';
import { findDeployment, updateDeployment } from './deployments.store.js';

/**
 * The setup wizard (reference 1.13, 1.14; `DeploymentUpdate`). The creation step is the wizard's
 * bookmark and the reference does not restrict its moves, so `advance` goes to any step, back or
 * forward, as creating a deployment may start at any step (1.1). Nothing in the server reads the
 * step beyond the list's filter: whether production has built is build status's (1.8) to say, not
 * a precondition here (docs/api/access.md, the setup wizard). Advancing to the current step
 * changes nothing; `reset` goes back to `project`.
 */
export function setupService(store: Store, urlOf: DeploymentUrlOf, now: Clock) {
  const { db } = store;

  async function moveTo(caller: Caller, id: number, step: CreationStep): Promise<Deployment> {
    const { level } = await authorizeDeployment(db, caller, id, 'DeploymentUpdate');
    const row = await serialized(store, lockKey.deployment(id), async (trx) => {
      const current = await findDeployment(trx, caller.actor.tenantId, id);
      if (!current) return undefined;
      if (current.creation_step === step) return current;
      return updateDeployment(trx, caller.actor.tenantId, id, { creation_step: step, updated_at: timestamp(now) });
    });
    if (!row) throw notFound('DEPLOYMENT_NOT_FOUND', 'Deployment', id);
    return toDeployment(row, level, await urlOf(caller.tenant));
  }

  return {
    advance: (caller: Caller, id: number, step: CreationStep) => moveTo(caller, id, step),
    reset: (caller: Caller, id: number) => moveTo(caller, id, 'project'),
  };
}
export type SetupService = ReturnType<typeof setupService>;
