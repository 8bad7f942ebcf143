import type { Executor } from '../../db/tables.js';
import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { CreationStep } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { ApiError, notFound } from '../../shared/problems.js';
import { timestamp, type Clock } from '../../time.js';
import { stepRefusal } from './creation-steps.js';
import { authorizeDeployment } from './deployment-access.js';
import type { Deployment } from './deployments.schemas.js';
import { toDeployment, type DeploymentUrlOf } from './deployments.service.js';
import { findDeployment, updateDeployment } from './deployments.store.js';

/** The setup wizard (reference 1.13, 1.14; `DeploymentUpdate`): its moves are in creation-steps.ts. */
/** Whether a branch of the deployment has a successful build (the builds', given at the composition root). */
export type HasSuccessfulBuild = (db: Executor, deploymentId: number, branch: string) => Promise<boolean>;

export function setupService(store: Store, urlOf: DeploymentUrlOf, hasSuccessfulBuild: HasSuccessfulBuild, now: Clock) {
  const { db } = store;

  async function moveTo(caller: Caller, id: number, step: CreationStep, check: boolean): Promise<Deployment> {
    const { row: before, level } = await authorizeDeployment(db, caller, id, 'DeploymentUpdate');
    const built = step === 'ready' ? await hasSuccessfulBuild(db, id, before.deploy_branch_name) : true;
    const row = await serialized(store, lockKey.deployment(id), async (trx) => {
      const current = await findDeployment(trx, caller.actor.tenantId, id);
      if (!current) return undefined;
      const refusal = check ? stepRefusal(current.creation_step, step, built) : null;
      if (refusal !== null) throw new ApiError('CREATION_STEP_REFUSED', refusal);
      if (current.creation_step === step) return current;
      return updateDeployment(trx, caller.actor.tenantId, id, { creation_step: step, updated_at: timestamp(now) });
    });
    if (!row) throw notFound('DEPLOYMENT_NOT_FOUND', 'Deployment', id);
    return toDeployment(row, level, await urlOf(caller.tenant));
  }

  return {
    advance: (caller: Caller, id: number, step: CreationStep) => moveTo(caller, id, step, true),
    reset: (caller: Caller, id: number) => moveTo(caller, id, 'project', false),
  };
}
export type SetupService = ReturnType<typeof setupService>;
