import type { RuntimeEnvironmentType } from '../db/tables.js';

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
