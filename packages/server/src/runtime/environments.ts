import type { Executor, RuntimeEnvironmentType } from '../db/tables.js';
import { findLiveBranchRuntime, type EnvironmentKey } from './runtimes.store.js';

/*
 * A deployment's environments: what they are called, which branch each serves, and whether one
 * runs now. Areas read branches and dev sessions in their own tables and come here for what those
 * make of an environment; the runtime's own rows are read only through this module and the runtime.
 */

/**
 * A deployment's environments as the API names them (the environments list, tokens, the SQL API's
 * database names, reference 1.17): `production`, `staging-<branch id>` for a branch whose staging
 * flag is on, `development-<branch id>` for a branch a credential is in dev mode on. The runtime
 * calls a development environment `dev` (its pods' type); the two names meet only here.
 */
export type EnvironmentKind = 'production' | 'staging' | 'development';

/** The runtime's type of an environment of this kind. */
export const runtimeTypeOf = (kind: EnvironmentKind): RuntimeEnvironmentType => (kind === 'development' ? 'dev' : kind);

/** The API's kind of an environment of this runtime type. */
export const kindOf = (type: RuntimeEnvironmentType): EnvironmentKind => (type === 'dev' ? 'development' : type);

/** The id of an environment: `production`, or its kind and its branch's id. */
export function environmentIdOf(kind: EnvironmentKind, branchId: number | null): string {
  if (kind === 'production') return 'production';
  if (branchId === null) throw new TypeError(`A ${kind} environment is a branch's: it needs the branch's id.`);
  return `${kind}-${branchId}`;
}

const BRANCH_ENVIRONMENT = /^(staging|development)-([1-9][0-9]{0,15})$/;

/** What an environment id names, or undefined when it is not one. */
export function parseEnvironmentId(id: string): { kind: 'production' } | { kind: 'staging' | 'development'; branchId: number } | undefined {
  if (id === 'production') return { kind: 'production' };
  const match = BRANCH_ENVIRONMENT.exec(id);
  if (!match) return undefined;
  const branchId = Number(match[2]);
  return Number.isSafeInteger(branchId) ? { kind: match[1] as 'staging' | 'development', branchId } : undefined;
}

/** An environment of a deployment: its id, its kind as the API names it, its pods' type, and the branch it serves. */
export interface Environment {
  id: string;
  kind: EnvironmentKind;
  type: RuntimeEnvironmentType;
  branch: string;
}

function environment(kind: EnvironmentKind, branchId: number | null, branch: string): Environment {
  return { id: environmentIdOf(kind, branchId), kind, type: runtimeTypeOf(kind), branch };
}

/** Production serves the deploy branch. */
export const productionEnvironment = (deployBranch: string): Environment => environment('production', null, deployBranch);

/** The staging environment of a shared branch (running at all times while its flag is on, on demand otherwise). */
export const stagingEnvironment = (branch: { id: number; name: string }): Environment => environment('staging', branch.id, branch.name);

/** The development environment of a dev-mode branch (the branch a credential owns). */
export const developmentEnvironment = (branch: { id: number; name: string }): Environment => environment('development', branch.id, branch.name);

/**
 * The environment a branch other than the deploy branch maps to: development for a dev-mode
 * branch (one a credential owns), staging for a shared one.
 */
export function branchEnvironment(branch: { id: number; name: string; owner_key_id: number | null }): Environment {
  return branch.owner_key_id === null ? stagingEnvironment(branch) : developmentEnvironment(branch);
}

/** What the runtime knows an environment of a deployment by. */
export function environmentKey(deployment: { tenantId: number; deploymentId: number }, env: Environment): EnvironmentKey {
  return { tenantId: deployment.tenantId, deploymentId: deployment.deploymentId, environmentId: env.id, type: env.type, branch: env.branch };
}

/** Whether an environment of the branch is running or starting now (an on-demand one someone is using). */
export async function branchRunning(db: Executor, deploymentId: number, branch: string): Promise<boolean> {
  return (await findLiveBranchRuntime(db, deploymentId, branch)) !== undefined;
}
