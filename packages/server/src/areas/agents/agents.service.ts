import type { Caller } from '../../access/caller.js';
import type { Audit } from '../../audit/index.js';
import type { Store } from '../../db/database.js';
import type { AgentMessageRow, AgentRow, AgentThreadRow, Executor } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { afterId, pageRequest, toPage } from '../../shared/pagination.js';
import { ApiError } from '../../shared/problems.js';
import { randomId } from '../../shared/random-id.js';
import type { Clock } from '../../time.js';
import { authorizeDeployment } from '../deployments/index.js';
import type { ResourceOwner } from '../workspace/index.js';
import type { Agent, AgentMessage, AgentSuggestions, AgentThread, CreateAgentInput, ListInput, ThreadsInput, UpdateAgentInput } from './agents.schemas.js';
import {
  allAgents,
  appendMessageRow,
  deleteAgent,
  findAgent,
  findAgentByName,
  findThread,
  findThreadByPublicId,
  insertAgent,
  insertThread,
  listAgents,
  listThreads,
  messagesOf,
  updateAgent,
  usersByIds,
  type AgentChanges,
} from './agents.store.js';

const json = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

export async function ownersOf(db: Executor, tenantId: number, ids: Array<number | null>): Promise<Map<number, ResourceOwner>> {
  const users = await usersByIds(
    db,
    tenantId,
    ids.filter((id): id is number => id !== null),
  );
  return new Map([...users.values()].map((u) => [u.id, { id: u.id, email: u.email, firstName: u.first_name, picture: null }]));
}

function toAgent(row: AgentRow, owners: Map<number, ResourceOwner>): Agent {
  return {
    id: row.id,
    deploymentId: row.deployment_id,
    name: row.name,
    description: row.description,
    instructions: row.instructions,
    members: json<string[]>(row.members),
    starterPrompts: json<string[]>(row.starter_prompts) ?? [],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    createdBy: row.created_by === null ? null : (owners.get(row.created_by) ?? null),
  };
}

function toThread(row: AgentThreadRow): AgentThread {
  return {
    id: row.public_id,
    deploymentId: row.deployment_id,
    agentId: row.agent_id,
    userId: row.user_id,
    embedUserId: row.embed_user_id,
    title: row.title,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toMessage(row: AgentMessageRow): AgentMessage {
  return {
    seq: row.seq,
    role: row.role as AgentMessage['role'],
    text: row.text,
    steps: json<unknown[]>(row.steps),
    usage: json<Record<string, unknown>>(row.usage),
    createdAt: row.created_at,
  };
}

function nameTaken(deploymentId: number, name: string): ApiError {
  return new ApiError(
    'AGENT_NAME_TAKEN',
    `Deployment ${deploymentId} already has an agent named ${JSON.stringify(name)}; agent names are unique in a deployment.`,
  );
}

/** Who owns a thread: a console user or an embed user. */
export type ThreadOwner = { userId: number } | { embedUserId: number };

/** Whether `owner` owns the thread: console users by user id, embed users by embed user id. */
export function ownedBy(row: Pick<AgentThreadRow, 'user_id' | 'embed_user_id'>, owner: ThreadOwner): boolean {
  return 'userId' in owner ? row.user_id === owner.userId && row.embed_user_id === null : row.embed_user_id === owner.embedUserId;
}

/** What the answering loop adds to a thread. */
export interface NewMessage {
  role: 'user' | 'assistant';
  text: string;
  /** The tool calls and their results behind an answer. */
  steps?: unknown[] | null;
  /** The model's token counts. */
  usage?: Record<string, unknown> | null;
}

/** A thread as the answering loop holds it: its row's ids and the owner. */
export interface StoredThread extends AgentThread {
  tenantId: number;
}

/**
 * Agents of a deployment and their chat threads. Reading and using an agent is the reference's
 * DeploymentAgentRead (VIEW on the deployment, any role); writing one is AgentUpdate (EDIT and a
 * developer's role). A thread is its owner's: others get 404, except admins (ChatHistoryRead).
 */
export function agentsService(store: Store, options: { now: Clock; audit: Audit }) {
  const { db } = store;
  const at = () => options.now().toISOString();

  async function requireAgent(executor: Executor, tenantId: number, deploymentId: number, id: number): Promise<AgentRow> {
    const row = await findAgent(executor, tenantId, deploymentId, id);
    if (!row) throw new ApiError('AGENT_NOT_FOUND', `Deployment ${deploymentId} has no agent ${id}.`);
    return row;
  }

  async function view(row: AgentRow): Promise<Agent> {
    return toAgent(row, await ownersOf(db, row.tenant_id, [row.created_by]));
  }

  function threadNotFound(threadId: string): ApiError {
    return new ApiError('AGENT_THREAD_NOT_FOUND', `You have no chat thread ${JSON.stringify(threadId)} in this deployment.`);
  }

  /** ChatHistoryRead: admins read other users' chat history. */
  function requireChatHistoryRead(caller: Caller): void {
    caller.access.requireAdmin("read another user's chat history (ChatHistoryRead)");
  }

  return {
    /** Checks DeploymentAgentRead and returns the agent (other areas' use: scheduled tasks, the answering loop). */
    async usable(caller: Caller, deploymentId: number, agentId: number): Promise<AgentRow> {
      await authorizeDeployment(db, caller, deploymentId, 'DeploymentAgentRead', caller.snapshot);
      return requireAgent(db, caller.actor.tenantId, deploymentId, agentId);
    },

    async list(caller: Caller, deploymentId: number, input: ListInput) {
      const { row: deployment } = await authorizeDeployment(db, caller, deploymentId, 'DeploymentAgentRead', caller.snapshot);
      const page = pageRequest(input);
      const rows = await listAgents(db, caller.actor.tenantId, deployment.id, afterId(page), page.first + 1);
      const { items, pageInfo } = toPage(rows, page, (r) => [r.id]);
      const owners = await ownersOf(
        db,
        caller.actor.tenantId,
        items.map((r) => r.created_by),
      );
      return { items: items.map((r) => toAgent(r, owners)), pageInfo };
    },

    async get(caller: Caller, deploymentId: number, id: number): Promise<Agent> {
      await authorizeDeployment(db, caller, deploymentId, 'DeploymentAgentRead', caller.snapshot);
      return view(await requireAgent(db, caller.actor.tenantId, deploymentId, id));
    },

    async create(caller: Caller, deploymentId: number, input: CreateAgentInput): Promise<Agent> {
      const { row: deployment } = await authorizeDeployment(db, caller, deploymentId, 'AgentUpdate', caller.snapshot);
      const name = input.name.trim();
      const row = await serialized(store, lockKey.deployment(deployment.id), async (trx) => {
        if (await findAgentByName(trx, deployment.id, name)) throw nameTaken(deployment.id, name);
        const stamp = at();
        const created = await insertAgent(trx, {
          tenant_id: caller.actor.tenantId,
          deployment_id: deployment.id,
          name,
          description: input.description ?? null,
          instructions: input.instructions ?? '',
          members: input.members == null ? null : JSON.stringify(input.members),
          starter_prompts: JSON.stringify(input.starterPrompts ?? []),
          created_by: caller.actor.userId,
          created_at: stamp,
          updated_at: stamp,
        });
        return created;
      });
      // After the commit: the audit log reads the tenant's setting on the store, which a SQLite transaction holds.
      await options.audit.record(caller, { action: 'agent.created', target: { deploymentId: deployment.id, agentId: row.id }, details: { name } });
      return view(row);
    },

    /** Fields left out stay; `members: null` means every member again. */
    async update(caller: Caller, deploymentId: number, id: number, input: UpdateAgentInput): Promise<Agent> {
      const { row: deployment } = await authorizeDeployment(db, caller, deploymentId, 'AgentUpdate', caller.snapshot);
      const row = await serialized(store, lockKey.deployment(deployment.id), async (trx) => {
        const current = await requireAgent(trx, caller.actor.tenantId, deployment.id, id);
        const changes: AgentChanges = { updated_at: at() };
        if (input.name !== undefined) {
          const name = input.name.trim();
          const other = await findAgentByName(trx, deployment.id, name);
          if (other && other.id !== current.id) throw nameTaken(deployment.id, name);
          changes.name = name;
        }
        if (input.description !== undefined) changes.description = input.description;
        if (input.instructions !== undefined) changes.instructions = input.instructions;
        if (input.members !== undefined) changes.members = input.members === null ? null : JSON.stringify(input.members);
        if (input.starterPrompts !== undefined) changes.starter_prompts = JSON.stringify(input.starterPrompts);
        return updateAgent(trx, caller.actor.tenantId, current.id, changes);
      });
      await options.audit.record(caller, {
        action: 'agent.updated',
        target: { deploymentId: deployment.id, agentId: id },
        details: { fields: Object.keys(input).sort().join(',') },
      });
      return view(row);
    },

    /** Deletes the agent with its threads and scheduled tasks. */
    async remove(caller: Caller, deploymentId: number, id: number): Promise<void> {
      const { row: deployment } = await authorizeDeployment(db, caller, deploymentId, 'AgentUpdate', caller.snapshot);
      const row = await serialized(store, lockKey.deployment(deployment.id), async (trx) => {
        const found = await requireAgent(trx, caller.actor.tenantId, deployment.id, id);
        await deleteAgent(trx, caller.actor.tenantId, found.id);
        return found;
      });
      await options.audit.record(caller, { action: 'agent.deleted', target: { deploymentId: deployment.id, agentId: id }, details: { name: row.name } });
    },

    /** Reference 9: the starter prompts of the agents the caller may use, agent by agent. */
    async suggestions(caller: Caller, deploymentId: number): Promise<AgentSuggestions> {
      const { row: deployment } = await authorizeDeployment(db, caller, deploymentId, 'DeploymentAgentRead', caller.snapshot);
      const agents = await allAgents(db, caller.actor.tenantId, deployment.id);
      return {
        items: agents.flatMap((a) => (json<string[]>(a.starter_prompts) ?? []).map((prompt) => ({ agentId: a.id, agentName: a.name, prompt }))),
      };
    },

    /** The caller's threads with an agent; `userId` another's, for admins (ChatHistoryRead). */
    async threads(caller: Caller, deploymentId: number, agentId: number, input: ThreadsInput) {
      const { row: deployment } = await authorizeDeployment(db, caller, deploymentId, 'DeploymentAgentRead', caller.snapshot);
      const agent = await requireAgent(db, caller.actor.tenantId, deployment.id, agentId);
      const userId = input.userId ?? caller.actor.userId;
      if (userId !== caller.actor.userId) requireChatHistoryRead(caller);
      const page = pageRequest(input);
      const rows = await listThreads(db, caller.actor.tenantId, agent.id, { userId }, afterId(page), page.first + 1);
      const { items, pageInfo } = toPage(rows, page, (r) => [r.id]);
      return { items: items.map(toThread), pageInfo };
    },

    /** A thread with its messages: the caller's own, or anyone's for admins (ChatHistoryRead). */
    async thread(caller: Caller, deploymentId: number, threadId: string) {
      const { row: deployment } = await authorizeDeployment(db, caller, deploymentId, 'DeploymentAgentRead', caller.snapshot);
      const row = await findThread(db, caller.actor.tenantId, deployment.id, threadId);
      if (!row) throw threadNotFound(threadId);
      if (row.user_id !== caller.actor.userId && !caller.access.isAdmin) throw threadNotFound(threadId);
      return { ...toThread(row), messages: (await messagesOf(db, row.id)).map(toMessage) };
    },

    /** An agent of a deployment without a caller's check: an embed session's, whose token names the deployment. */
    async agentOf(tenantId: number, deploymentId: number, agentId: number): Promise<AgentRow> {
      return requireAgent(db, tenantId, deploymentId, agentId);
    },

    /** The deployment's oldest agent, which answers AI widgets that name none; null when it has none. */
    async firstAgentId(tenantId: number, deploymentId: number): Promise<number | null> {
      return (await allAgents(db, tenantId, deploymentId))[0]?.id ?? null;
    },

    /** An embed user's (or an internal session's user's) own threads with an agent, newest first. */
    async threadsOf(tenantId: number, deploymentId: number, agentId: number, owner: ThreadOwner, input: ListInput) {
      const agent = await requireAgent(db, tenantId, deploymentId, agentId);
      const page = pageRequest(input);
      const rows = await listThreads(db, tenantId, agent.id, owner, afterId(page), page.first + 1);
      const { items, pageInfo } = toPage(rows, page, (r) => [r.id]);
      return { items: items.map(toThread), pageInfo };
    },

    /** A thread of `owner` with its messages; anyone else's is a 404. */
    async threadOf(tenantId: number, deploymentId: number, owner: ThreadOwner, threadId: string) {
      const row = await findThread(db, tenantId, deploymentId, threadId);
      if (!row || !ownedBy(row, owner)) throw threadNotFound(threadId);
      return { ...toThread(row), messages: (await messagesOf(db, row.id)).map(toMessage) };
    },

    // The store API of the answering loop: it checks access with `usable` first.

    /** Starts a thread of `owner` with an agent (one the caller was allowed to use). */
    async createThread(agent: Pick<AgentRow, 'id' | 'tenant_id' | 'deployment_id'>, owner: ThreadOwner, title: string | null = null): Promise<StoredThread> {
      const stamp = at();
      const row = await insertThread(db, {
        public_id: randomId(16),
        tenant_id: agent.tenant_id,
        deployment_id: agent.deployment_id,
        agent_id: agent.id,
        user_id: 'userId' in owner ? owner.userId : null,
        embed_user_id: 'embedUserId' in owner ? owner.embedUserId : null,
        title,
        created_at: stamp,
        updated_at: stamp,
      });
      return { ...toThread(row), tenantId: row.tenant_id };
    },

    /** A thread by its public id, without access checks (the loop's, which knows whose it is). */
    async findThread(threadId: string): Promise<StoredThread | undefined> {
      const row = await findThreadByPublicId(db, threadId);
      return row ? { ...toThread(row), tenantId: row.tenant_id } : undefined;
    },

    /**
     * Appends a message with the thread's next seq. Appends to one thread take turns on its lock
     * (in this process and, on PostgreSQL, across processes), so the seqs follow the order the
     * appends got the lock, without gaps or duplicates.
     */
    async appendMessage(threadId: string, message: NewMessage): Promise<AgentMessage> {
      const thread = await findThreadByPublicId(db, threadId);
      if (!thread) throw new Error(`No chat thread ${threadId}`);
      const row = await serialized(store, lockKey.agentThread(thread.id), (trx) =>
        appendMessageRow(trx, {
          tenant_id: thread.tenant_id,
          thread_id: thread.id,
          role: message.role,
          text: message.text,
          steps: message.steps == null ? null : JSON.stringify(message.steps),
          usage: message.usage == null ? null : JSON.stringify(message.usage),
          created_at: at(),
        }),
      );
      return toMessage(row);
    },

    /** A thread's messages in order. */
    async messages(threadId: string): Promise<AgentMessage[]> {
      const thread = await findThreadByPublicId(db, threadId);
      return thread ? (await messagesOf(db, thread.id)).map(toMessage) : [];
    },
  };
}
export type AgentsService = ReturnType<typeof agentsService>;
