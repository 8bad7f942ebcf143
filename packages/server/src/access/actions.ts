import type { Access, Role } from '../db/tables.js';
import { atLeast } from './levels.js';

/**
 * The reference's policy actions on a deployment, mapped once onto this product's access model
 * (DESIGN.md, "Reference permissions"): reads are VIEW on the deployment; data-model writes are
 * EDIT and a developer's role; settings, deletion and secrets are MANAGE and a developer's role.
 * Admins hold MANAGE everywhere and pass every action.
 */
export type DeploymentAction =
  'DeploymentRead' | 'SchemaRead' | 'SchemaUpdate' | 'DeploymentUpdate' | 'DeploymentDelete' | 'SecretsManage' | 'DeploymentAgentRead' | 'AgentUpdate';

const NEEDS: Record<DeploymentAction, { access: Access; role: Role }> = {
  DeploymentRead: { access: 'VIEW', role: 'VIEWER' },
  SchemaRead: { access: 'VIEW', role: 'VIEWER' },
  SchemaUpdate: { access: 'EDIT', role: 'DEVELOPER' },
  DeploymentUpdate: { access: 'MANAGE', role: 'DEVELOPER' },
  DeploymentDelete: { access: 'MANAGE', role: 'DEVELOPER' },
  SecretsManage: { access: 'MANAGE', role: 'DEVELOPER' },
  // Using an agent (chatting, its starter prompts, scheduling it) is the reference's DeploymentAgentRead: VIEW, any role.
  DeploymentAgentRead: { access: 'VIEW', role: 'VIEWER' },
  // Writing an agent shapes what every user of the deployment is answered: the data-model writers' rule.
  AgentUpdate: { access: 'EDIT', role: 'DEVELOPER' },
};

const ROLE_RANK: Record<Role, number> = { VIEWER: 1, EXPLORER: 2, DEVELOPER: 3, ADMIN: 4 };

export function needsOf(action: DeploymentAction): { access: Access; role: Role } {
  return NEEDS[action];
}

/** Whether a user of `role` holding `level` on a deployment may perform `action` on it. */
export function allows(role: Role, level: Access | null, action: DeploymentAction): boolean {
  const need = NEEDS[action];
  return ROLE_RANK[role] >= ROLE_RANK[need.role] && atLeast(level, need.access);
}
