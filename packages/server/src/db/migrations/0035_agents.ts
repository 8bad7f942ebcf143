import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * Agents of a deployment (areas/agents/): their chat threads and messages, scheduled agent tasks
 * and their runs, and the AI-widget threads of a published dashboard (reference 8.G.4).
 *
 * `agents`: the name is unique per deployment (a unique index, so two creations at once cannot
 * both win). `members` and `starter_prompts` are JSON text; `members` null means every member the
 * caller can see.
 *
 * `agent_threads` are addressed by a random `public_id`; the owner is a console user or an embed
 * user. `agent_messages` carry a `seq` unique per thread: appends take the thread's lock, so two
 * processes appending to one thread keep their order, and the index refuses a duplicate if one
 * ever got past it.
 *
 * `agent_tasks` keep the cron expression, its zone and `next_run_at` (UTC), which the due-time
 * schedule reads through a partial index of active rows and advances with a compare-and-set, so
 * an occurrence is claimed once across processes. `agent_task_runs` holds the 50 most recent runs
 * of each task (pruned as each is added).
 *
 * `dashboards.ai_widget_threads`: JSON object of widget id to `{threadId, checksum}`, never the
 * answer's text, so a reload regenerates it.
 */
export function agents(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref, table } = columnsFor(dialect);
      const tenant = (c: any) => c.notNull().references('tenants.id').onDelete('cascade');
      const deployment = (c: any) => c.notNull().references('deployments.id').onDelete('cascade');

      await table(db, 'agents')
        .addColumn('tenant_id', ref, tenant)
        .addColumn('deployment_id', ref, deployment)
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('instructions', 'text', (c) => c.notNull())
        .addColumn('members', 'text')
        .addColumn('starter_prompts', 'text', (c) => c.notNull())
        .addColumn('created_by', ref, (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('agents_name').on('agents').columns(['deployment_id', 'name']).unique().execute();

      await table(db, 'agent_threads')
        .addColumn('public_id', 'text', (c) => c.notNull().unique())
        .addColumn('tenant_id', ref, tenant)
        .addColumn('deployment_id', ref, deployment)
        .addColumn('agent_id', ref, (c) => c.notNull().references('agents.id').onDelete('cascade'))
        .addColumn('user_id', ref, (c) => c.references('users.id').onDelete('cascade'))
        .addColumn('embed_user_id', ref, (c) => c.references('embed_users.id').onDelete('cascade'))
        .addColumn('title', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      // A user's threads with one agent, newest first.
      await db.schema.createIndex('agent_threads_owner').on('agent_threads').columns(['agent_id', 'user_id', 'id']).execute();

      await table(db, 'agent_messages')
        .addColumn('tenant_id', ref, tenant)
        .addColumn('thread_id', ref, (c) => c.notNull().references('agent_threads.id').onDelete('cascade'))
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('steps', 'text')
        .addColumn('usage', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('agent_messages_seq').on('agent_messages').columns(['thread_id', 'seq']).unique().execute();

      await table(db, 'agent_tasks')
        .addColumn('tenant_id', ref, tenant)
        .addColumn('deployment_id', ref, deployment)
        .addColumn('agent_id', ref, (c) => c.notNull().references('agents.id').onDelete('cascade'))
        .addColumn('owner_id', ref, (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('prompt', 'text', (c) => c.notNull())
        .addColumn('cron', 'text', (c) => c.notNull())
        .addColumn('timezone', 'text', (c) => c.notNull())
        .addColumn('active', 'integer', (c) => c.notNull())
        .addColumn('next_run_at', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('agent_tasks_deployment').on('agent_tasks').columns(['deployment_id', 'id']).execute();
      await db.schema.createIndex('agent_tasks_owner').on('agent_tasks').columns(['owner_id', 'active']).execute();
      await sql`create index agent_tasks_due on agent_tasks (next_run_at) where active = 1`.execute(db);

      await table(db, 'agent_task_runs')
        .addColumn('tenant_id', ref, tenant)
        .addColumn('task_id', ref, (c) => c.notNull().references('agent_tasks.id').onDelete('cascade'))
        .addColumn('trigger', 'text', (c) => c.notNull())
        .addColumn('scheduled_for', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('job_id', ref)
        .addColumn('thread_id', 'text')
        .addColumn('answer', 'text')
        .addColumn('error', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text')
        .addColumn('finished_at', 'text')
        .execute();
      await db.schema.createIndex('agent_task_runs_history').on('agent_task_runs').columns(['task_id', 'id']).execute();

      await db.schema.alterTable('dashboards').addColumn('ai_widget_threads', 'text').execute();
    },
  };
}
