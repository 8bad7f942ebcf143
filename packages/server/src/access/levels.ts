import type { Access, ResourceType, Role } from '../db/tables.js';

/** VIEW < EDIT < MANAGE: "can view", "can edit", "full access". */
const RANK: Record<Access, number> = { VIEW: 1, EDIT: 2, MANAGE: 3 };

export function atLeast(have: Access | null, need: Access): boolean {
  return have !== null && RANK[have] >= RANK[need];
}

export function higher(a: Access | null, b: Access | null): Access | null {
  if (a === null) return b;
  if (b === null) return a;
  return RANK[a] >= RANK[b] ? a : b;
}

/** The most a role may hold on any resource, whatever policies say. */
export const ROLE_CAP: Record<Exclude<Role, 'ADMIN'>, Access> = { DEVELOPER: 'MANAGE', EXPLORER: 'MANAGE', VIEWER: 'VIEW' };

export interface ResourceRef {
  type: ResourceType;
  id: number;
}

/** Grants held by one user, directly or through groups, keyed by `TYPE:id`; the highest wins. */
export type GrantIndex = ReadonlyMap<string, Access>;

export function grantKey(ref: ResourceRef): string {
  return `${ref.type}:${ref.id}`;
}

export interface AccessTarget {
  deploymentId: number;
  /** The resource itself (absent for the deployment), then its ancestor folders, nearest first. */
  chain: ResourceRef[];
  createdBy?: number | null;
  /** Who created the deployment: they hold MANAGE on it, which reaches everything inside it. */
  deploymentCreatedBy?: number | null;
}

export interface Subject {
  userId: number;
  role: Role;
}

/**
 * DESIGN.md, "Roles and access": admins hold MANAGE everywhere. Anyone else holds the highest of
 * MANAGE on what they created and every grant on the resource, on a folder above it, or on its
 * deployment; then capped by their role. Creating a deployment is MANAGE on it, and like a grant
 * on the deployment it reaches what is inside. Pure, so a bulk request evaluates 100 items against
 * one loaded GrantIndex without further queries.
 */
export function effectiveAccess(subject: Subject, grants: GrantIndex, target: AccessTarget): Access | null {
  if (subject.role === 'ADMIN') return 'MANAGE';
  const created = (by: number | null | undefined) => by != null && by === subject.userId;
  let best: Access | null = created(target.createdBy) || created(target.deploymentCreatedBy) ? 'MANAGE' : null;
  for (const ref of target.chain) best = higher(best, grants.get(grantKey(ref)) ?? null);
  best = higher(best, grants.get(grantKey({ type: 'DEPLOYMENT', id: target.deploymentId })) ?? null);
  if (best === null) return null;
  const cap = ROLE_CAP[subject.role];
  return RANK[best] > RANK[cap] ? cap : best;
}

/** The deployments a grant index holds a level on. */
export function deploymentsIn(grants: GrantIndex): number[] {
  const ids: number[] = [];
  for (const key of grants.keys()) if (key.startsWith('DEPLOYMENT:')) ids.push(Number(key.slice('DEPLOYMENT:'.length)));
  return ids;
}
