import type { Access, Role } from '../db/tables.js';
import type { DeploymentAction } from './actions.js';

/**
 * Custom roles (reference 8.D) in the access model. A role is a list of policies
 * `{resourceType, actions, resources}`: `Deployment` policies name deployments by id (a string of
 * digits) or `All`; `Global` policies carry the license tier (`AIBIView`, `AIBIExplore`,
 * `AIBIDevelop`). The action `All` is full access. A user holds the union of their roles: their
 * built-in role, the custom roles assigned to them, and those assigned to their groups.
 *
 * How they take effect (docs/decisions/custom-roles.md):
 * - A role grants the deployment actions it names, on the deployments it names, whatever the
 *   user's access level there; every action but the tier-free ones also needs the develop tier.
 * - `DeploymentRead` on a deployment is VIEW on it, and `All` is MANAGE (full access), so what is
 *   inside (folders, workbooks, reports) is reached as a policy on the deployment would reach it.
 * - A tier counts as the built-in role of that tier: it lifts the cap on the user's access levels
 *   and meets the role an action needs, as `VIEWER`, `EXPLORER` or `DEVELOPER` would.
 * Pure: the grants are loaded once per request (access.ts) and evaluated here.
 */

export const ROLE_RESOURCE_TYPES = ['Deployment', 'Global'] as const;
export type RoleResourceType = (typeof ROLE_RESOURCE_TYPES)[number];

/** The deployment actions of the reference's policy vocabulary; `All` is every one of them. */
export const DEPLOYMENT_ROLE_ACTIONS = [
  'All',
  'DeploymentRead',
  'DeploymentUpdate',
  'DeploymentDelete',
  'SchemaRead',
  'SchemaUpdate',
  'SchemaUpdateDevBranches',
  'SecretsManage',
  'DeploymentAgentRead',
  'AgentUpdate',
  'DownloadData',
  'ChatHistoryRead',
] as const;

export const TIERS = ['AIBIView', 'AIBIExplore', 'AIBIDevelop'] as const;
export type Tier = (typeof TIERS)[number];

/** The account-wide actions: the tiers, and what the reference names beside them. `All` is the develop tier. */
export const GLOBAL_ROLE_ACTIONS = ['All', ...TIERS, 'DeploymentCreate', 'OAuthIntegrationsManage', 'OAuthIntegrationsIssueTokens'] as const;

/** The resource that names every deployment, those created later included. */
export const EVERY_DEPLOYMENT = 'All';

/** The reference's console lets any tier do these; every other deployment action needs the develop tier. */
export const TIER_FREE_ACTIONS: ReadonlySet<string> = new Set(['DeploymentRead', 'DeploymentAgentRead', 'DownloadData', 'ChatHistoryRead']);

export interface RolePolicy {
  resourceType: string;
  actions: string[];
  resources: string[];
}

/** What a user's custom roles grant, merged. */
export interface RoleGrants {
  /** Actions per deployment, keyed by the id as roles write it (`"12"`) or `All`. */
  deployments: ReadonlyMap<string, ReadonlySet<string>>;
  /** The highest tier among the roles' `Global` policies; null when none names one. */
  tier: Tier | null;
}

export const NO_ROLE_GRANTS: RoleGrants = { deployments: new Map(), tier: null };

const TIER_RANK: Record<Tier, number> = { AIBIView: 1, AIBIExplore: 2, AIBIDevelop: 3 };
const TIER_OF_ROLE: Record<Role, Tier> = { VIEWER: 'AIBIView', EXPLORER: 'AIBIExplore', DEVELOPER: 'AIBIDevelop', ADMIN: 'AIBIDevelop' };
const ROLE_OF_TIER: Record<Tier, Exclude<Role, 'ADMIN'>> = { AIBIView: 'VIEWER', AIBIExplore: 'EXPLORER', AIBIDevelop: 'DEVELOPER' };
const ROLE_RANK: Record<Role, number> = { VIEWER: 1, EXPLORER: 2, DEVELOPER: 3, ADMIN: 4 };

function higherTier(a: Tier | null, b: Tier | null): Tier | null {
  if (a === null) return b;
  if (b === null) return a;
  return TIER_RANK[a] >= TIER_RANK[b] ? a : b;
}

/** Merges the policies of every role a user holds. */
export function roleGrantsOf(policies: readonly RolePolicy[]): RoleGrants {
  const deployments = new Map<string, Set<string>>();
  let tier: Tier | null = null;
  for (const policy of policies) {
    if (policy.resourceType === 'Global') {
      for (const action of policy.actions) {
        if (action === 'All') tier = 'AIBIDevelop';
        else if ((TIERS as readonly string[]).includes(action)) tier = higherTier(tier, action as Tier);
      }
    } else if (policy.resourceType === 'Deployment') {
      for (const resource of policy.resources) {
        const held = deployments.get(resource) ?? new Set<string>();
        for (const action of policy.actions) held.add(action);
        deployments.set(resource, held);
      }
    }
  }
  return { deployments, tier };
}

/** The built-in role a user counts as for caps and the role an action needs: theirs, or their roles' tier if higher. */
export function effectiveRole(builtIn: Role, grants: RoleGrants): Role {
  if (grants.tier === null) return builtIn;
  const fromTier = ROLE_OF_TIER[grants.tier];
  return ROLE_RANK[fromTier] > ROLE_RANK[builtIn] ? fromTier : builtIn;
}

function actionsOn(grants: RoleGrants, deploymentId: number): Set<string> {
  return new Set([...(grants.deployments.get(String(deploymentId)) ?? []), ...(grants.deployments.get(EVERY_DEPLOYMENT) ?? [])]);
}

/** Whether the user's roles grant `action` on the deployment, the develop tier included where the action needs it. */
export function rolesAllow(builtIn: Role, grants: RoleGrants, deploymentId: number, action: DeploymentAction): boolean {
  const actions = actionsOn(grants, deploymentId);
  if (!actions.has(action) && !actions.has('All')) return false;
  if (TIER_FREE_ACTIONS.has(action)) return true;
  return TIER_RANK[higherTier(TIER_OF_ROLE[builtIn], grants.tier)!] >= TIER_RANK.AIBIDevelop;
}

/** The access level the roles give on a deployment before any cap: `All` is MANAGE, `DeploymentRead` VIEW. */
export function roleLevelOn(actions: ReadonlySet<string>): Access | null {
  if (actions.has('All')) return 'MANAGE';
  if (actions.has('DeploymentRead')) return 'VIEW';
  return null;
}

/** Whether a `Deployment` resource is written as the reference writes it: a deployment id as a string of digits, or `All`. */
export function isDeploymentResource(resource: string): boolean {
  return resource === EVERY_DEPLOYMENT || /^[1-9][0-9]{0,15}$/.test(resource);
}
