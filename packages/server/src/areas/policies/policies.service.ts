import type { Actor, Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import { mapUniqueViolation } from '../../db/errors.js';
import type { Executor, PolicyRow } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { afterId, pageRequest, toPage } from '../../shared/pagination.js';
import { ApiError, notFound } from '../../shared/problems.js';
import { timestamp, type Clock } from '../../time.js';
import { findDeployment } from '../deployments/index.js';
import { findUserById } from '../users/index.js';
import type { CreatePolicyInput, ListPoliciesInput, Policy } from './policies.schemas.js';
import { findGroup } from '../groups/index.js';
import { deploymentOfItem } from '../workspace/index.js';
import { deletePolicy, findPolicyFor, insertPolicy, listPolicies } from './policies.store.js';

export function toPolicy(row: PolicyRow): Policy {
  return {
    id: row.id,
    principal: { type: row.principal_type, id: row.principal_id },
    resource: { type: row.resource_type, id: row.resource_id },
    access: row.access,
    createdBy: row.created_by,
    createdAt: row.created_at,
  };
}

function policyExists(input: CreatePolicyInput): ApiError {
  const { principal: p, resource: r } = input;
  return new ApiError('POLICY_EXISTS', `${p.type} ${p.id} already has a policy on ${r.type} ${r.id}; delete it before granting a different access.`);
}

/** The principal, and a deployment resource, must exist in the caller's tenant. */
async function checkReferences(db: Executor, tenantId: number, input: CreatePolicyInput): Promise<void> {
  const { principal, resource } = input;
  if (principal.type === 'USER' && !(await findUserById(db, tenantId, principal.id))) throw notFound('USER_NOT_FOUND', 'User', principal.id);
  if (principal.type === 'GROUP' && !(await findGroup(db, tenantId, principal.id))) throw notFound('GROUP_NOT_FOUND', 'Group', principal.id);
  if (resource.type === 'DEPLOYMENT') {
    if (!(await findDeployment(db, tenantId, resource.id))) throw notFound('DEPLOYMENT_NOT_FOUND', 'Deployment', resource.id);
  } else if ((await deploymentOfItem(db, tenantId, resource.type, resource.id)) === undefined) {
    throw ITEM_NOT_FOUND[resource.type](resource.id);
  }
}

const ITEM_NOT_FOUND = {
  FOLDER: (id: number) => notFound('FOLDER_NOT_FOUND', 'Folder', id),
  WORKBOOK: (id: number) => notFound('WORKBOOK_NOT_FOUND', 'Workbook', id),
  REPORT: (id: number) => notFound('REPORT_NOT_FOUND', 'Report', id),
};

/** Checks what the grant names and inserts it, inside the caller's locked transaction. */
async function insertChecked(trx: Executor, actor: Actor, input: CreatePolicyInput, at: string): Promise<Policy> {
  await checkReferences(trx, actor.tenantId, input);
  if (await findPolicyFor(trx, actor.tenantId, input.principal, input.resource)) throw policyExists(input);
  // A concurrent create of the same grant (another principal lock, or none) may pass the check too.
  const row = await mapUniqueViolation({ policies_principal_resource: () => policyExists(input) }, () =>
    insertPolicy(trx, {
      tenant_id: actor.tenantId,
      principal_type: input.principal.type,
      principal_id: input.principal.id,
      resource_type: input.resource.type,
      resource_id: input.resource.id,
      access: input.access,
      created_by: actor.userId,
      created_at: at,
    }),
  );
  return toPolicy(row);
}

export function policiesService(store: Store, now: Clock) {
  const { db } = store;
  return {
    async create({ actor, access }: Caller, input: CreatePolicyInput): Promise<Policy> {
      access.requireAccountAdmin('grant access');
      // Under the locks that deleting the group, the deployment or a workspace item takes (items
      // are deleted under their deployment's lock), so the grant cannot outlive what it names.
      const { resource } = input;
      const deploymentId = resource.type === 'DEPLOYMENT' ? resource.id : await deploymentOfItem(store.db, actor.tenantId, resource.type, resource.id);
      if (deploymentId === undefined && resource.type !== 'DEPLOYMENT') throw ITEM_NOT_FOUND[resource.type](resource.id);
      const locks = [
        ...(input.principal.type === 'GROUP' ? [lockKey.group(input.principal.id)] : []),
        ...(deploymentId === undefined ? [] : [lockKey.deployment(deploymentId)]),
      ];
      return serialized(store, locks, (trx) => insertChecked(trx, actor, input, timestamp(now)));
    },

    /** Admins see every policy; anyone else sees the policies that apply to them. */
    async list({ actor, access }: Caller, input: ListPoliciesInput) {
      const page = pageRequest(input);
      const filter = {
        principalType: input.principalType,
        principalId: input.principalId,
        resourceType: input.resourceType,
        resourceId: input.resourceId,
        appliesTo: access.isAdmin ? undefined : actor.userId,
      };
      const rows = await listPolicies(db, actor.tenantId, filter, afterId(page), page.first + 1);
      const { items, pageInfo } = toPage(rows, page, (r) => [r.id]);
      return { items: items.map(toPolicy), pageInfo };
    },

    /** Takes effect on the next request: access is computed per request from the policies. */
    async remove({ actor, access }: Caller, id: number): Promise<void> {
      access.requireAccountAdmin('revoke access');
      if (!(await deletePolicy(db, actor.tenantId, id))) throw notFound('POLICY_NOT_FOUND', 'Policy', id);
    },
  };
}
export type PoliciesService = ReturnType<typeof policiesService>;
