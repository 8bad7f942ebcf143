import type { Audit } from '../../audit/index.js';
import type { Store } from '../../db/database.js';
import type { AgentTaskRow, AgentTaskRunRow } from '../../db/tables.js';
import { lockKey } from '../../db/transactions.js';
import { DueClaims, type JobContext, type Jobs } from '../../jobs/index.js';
import type { Clock } from '../../time.js';
import { AGENT_TASK_JOB, type TasksService } from './tasks.service.js';
import { advanceTask, dueTasks, findRun, findTaskById, startRun, updateRun } from './tasks.store.js';

/** What a task's run is given: the task as it stands, and the job's signal and log. */
export interface AgentTaskRunInput {
  tenantId: number;
  deploymentId: number;
  agentId: number;
  taskId: number;
  runId: number;
  /** The task's owner, whose access the answer is computed with. */
  ownerUserId: number;
  prompt: string;
  signal: AbortSignal;
  log: (line: string) => Promise<void>;
}

/** What a run produced: the answer's text and the thread it was written to, if any. */
export interface AgentTaskRunResult {
  answer: string;
  threadId: string | null;
}

/**
 * Runs one scheduled task: the answering loop, given to the area by services.ts. A throw records
 * the run as failed with the error's message.
 */
export type AgentTaskRunner = (input: AgentTaskRunInput) => Promise<AgentTaskRunResult>;

/** Until a model provider is plugged in, every run fails saying so. */
export const NO_MODEL_PROVIDER = 'No model provider is configured';
export const noModelRunner: AgentTaskRunner = () => Promise.reject(new Error(NO_MODEL_PROVIDER));

/** A run's job gets this long. */
const RUN_TIMEOUT_MS = 15 * 60_000;

/**
 * Claims due tasks once across processes and runs them as `agent-task` jobs. The due-time loop is
 * the jobs service's `DueClaims` (jobs/due-claims.ts; tests drive it with `tick()`): a claim moves
 * `next_run_at` on with a compare-and-set, so of two processes seeing one occurrence, one claims
 * it, and a process that was away for several occurrences runs the newest only.
 */
export class AgentTaskScheduler {
  readonly #loop: DueClaims<AgentTaskRow, AgentTaskRunRow>;

  constructor(
    private readonly store: Store,
    jobs: Jobs,
    private readonly tasks: TasksService,
    private readonly options: { now: Clock; runner: AgentTaskRunner; audit: Audit; tickMs?: number; onError?: (error: unknown) => void },
  ) {
    jobs.register<{ runId: number }, { status: string }>({
      kind: AGENT_TASK_JOB,
      maxAttempts: 1,
      timeoutMs: RUN_TIMEOUT_MS,
      run: (ctx) => this.#run(ctx),
    });
    this.#loop = new DueClaims<AgentTaskRow, AgentTaskRunRow>(store, jobs, {
      name: 'agents.tasks.due',
      everyMs: options.tickMs ?? 30_000,
      ...(options.onError ? { onError: options.onError } : {}),
      now: options.now,
      due: dueTasks,
      lock: (task) => lockKey.agentTask(task.id),
      advance: advanceTask,
      record: (trx, task, scheduledFor) => this.tasks.enqueueRun(task, 'schedule', scheduledFor, trx),
      enqueue: (run) => this.tasks.startJob(run),
    });
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
  }

  /** Claims and enqueues what is due now; resolves with how many occurrences this call claimed. */
  tick(): Promise<number> {
    return this.#loop.tick();
  }

  async #run(ctx: JobContext<{ runId: number }>): Promise<{ status: string }> {
    const { db } = this.store;
    const stamp = () => this.options.now().toISOString();
    const run = await startRun(db, ctx.payload.runId, stamp());
    if (!run) return { status: 'taken' };
    const task = await findTaskById(db, run.task_id);
    if (!task) return { status: 'deleted' };
    const record = async (status: 'succeeded' | 'failed', details: Record<string, string | number | null>) =>
      this.options.audit.recordFor(
        task.tenant_id,
        { userId: task.owner_id, email: null, credentialKind: 'agent-task', credentialId: String(task.id) },
        { action: `agent-task.run-${status}`, target: { deploymentId: task.deployment_id, taskId: task.id, runId: run.id }, details },
      );
    try {
      const result = await this.options.runner({
        tenantId: task.tenant_id,
        deploymentId: task.deployment_id,
        agentId: task.agent_id,
        taskId: task.id,
        runId: run.id,
        ownerUserId: task.owner_id,
        prompt: task.prompt,
        signal: ctx.signal,
        log: ctx.log,
      });
      await updateRun(db, run.id, { status: 'succeeded', answer: result.answer, thread_id: result.threadId, finished_at: stamp() });
      await record('succeeded', { threadId: result.threadId });
      return { status: 'succeeded' };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await updateRun(db, run.id, { status: 'failed', error: message, finished_at: stamp() });
      await record('failed', { error: message });
      // The job fails with the run, so the jobs list and the run's row agree.
      throw error;
    }
  }

  /** A run by id (tests and the loop read it back). */
  run(id: number) {
    return findRun(this.store.db, id);
  }
}
