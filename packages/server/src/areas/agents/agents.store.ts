import type { AgentMessageRow, AgentRow, AgentTable, AgentThreadRow, AgentThreadTable, Executor } from '../../db/tables.js';

/*
 * Agents, their chat threads and messages (migration 0035). Every read is bounded by the tenant
 * and the deployment of the path, so another deployment's agent is simply not found.
 */

export type NewAgent = Omit<AgentTable, 'id'>;
export type AgentChanges = Partial<Pick<AgentTable, 'name' | 'description' | 'instructions' | 'members' | 'starter_prompts' | 'updated_at'>>;

export async function insertAgent(db: Executor, values: NewAgent): Promise<AgentRow> {
  return db.insertInto('agents').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function findAgent(db: Executor, tenantId: number, deploymentId: number, id: number): Promise<AgentRow | undefined> {
  return db
    .selectFrom('agents')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('deployment_id', '=', deploymentId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function findAgentByName(db: Executor, deploymentId: number, name: string): Promise<AgentRow | undefined> {
  return db.selectFrom('agents').selectAll().where('deployment_id', '=', deploymentId).where('name', '=', name).executeTakeFirst();
}

export async function updateAgent(db: Executor, tenantId: number, id: number, changes: AgentChanges): Promise<AgentRow> {
  return db.updateTable('agents').set(changes).where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function deleteAgent(db: Executor, tenantId: number, id: number): Promise<void> {
  await db.deleteFrom('agents').where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}

/** A deployment's agents, newest first, before `beforeId` when given. */
export async function listAgents(db: Executor, tenantId: number, deploymentId: number, beforeId: number | undefined, limit: number): Promise<AgentRow[]> {
  let query = db.selectFrom('agents').selectAll().where('tenant_id', '=', tenantId).where('deployment_id', '=', deploymentId);
  if (beforeId !== undefined) query = query.where('id', '<', beforeId);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

/** Every agent of a deployment, oldest first (the starter prompts). */
export async function allAgents(db: Executor, tenantId: number, deploymentId: number): Promise<AgentRow[]> {
  return db.selectFrom('agents').selectAll().where('tenant_id', '=', tenantId).where('deployment_id', '=', deploymentId).orderBy('id').execute();
}

/** Users as the API shows an owner, by id. */
export async function usersByIds(
  db: Executor,
  tenantId: number,
  ids: number[],
): Promise<Map<number, { id: number; email: string; first_name: string | null }>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'email', 'first_name']).where('tenant_id', '=', tenantId).where('id', 'in', unique).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

export async function insertThread(db: Executor, values: Omit<AgentThreadTable, 'id'>): Promise<AgentThreadRow> {
  return db.insertInto('agent_threads').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function findThread(db: Executor, tenantId: number, deploymentId: number, publicId: string): Promise<AgentThreadRow | undefined> {
  return db
    .selectFrom('agent_threads')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('deployment_id', '=', deploymentId)
    .where('public_id', '=', publicId)
    .executeTakeFirst();
}

export async function findThreadByPublicId(db: Executor, publicId: string): Promise<AgentThreadRow | undefined> {
  return db.selectFrom('agent_threads').selectAll().where('public_id', '=', publicId).executeTakeFirst();
}

/** A console user's (or an embed user's) threads with one agent, newest first, before `beforeId` when given. */
export async function listThreads(
  db: Executor,
  tenantId: number,
  agentId: number,
  owner: { userId: number } | { embedUserId: number },
  beforeId: number | undefined,
  limit: number,
) {
  let query = db.selectFrom('agent_threads').selectAll().where('tenant_id', '=', tenantId).where('agent_id', '=', agentId);
  query = 'userId' in owner ? query.where('user_id', '=', owner.userId) : query.where('embed_user_id', '=', owner.embedUserId);
  if (beforeId !== undefined) query = query.where('id', '<', beforeId);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

/** Appends after the thread's last message; the caller holds the thread's lock (transactions.ts), so seqs never collide. */
export async function appendMessageRow(db: Executor, values: Omit<AgentMessageRow, 'id' | 'seq'>): Promise<AgentMessageRow> {
  const last = await db
    .selectFrom('agent_messages')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('thread_id', '=', values.thread_id)
    .executeTakeFirst();
  const seq = Number(last?.seq ?? 0) + 1;
  const row = await db
    .insertInto('agent_messages')
    .values({ ...values, seq })
    .returningAll()
    .executeTakeFirstOrThrow();
  await db.updateTable('agent_threads').set({ updated_at: values.created_at }).where('id', '=', values.thread_id).execute();
  return row;
}

export async function messagesOf(db: Executor, threadId: number): Promise<AgentMessageRow[]> {
  return db.selectFrom('agent_messages').selectAll().where('thread_id', '=', threadId).orderBy('seq').execute();
}
