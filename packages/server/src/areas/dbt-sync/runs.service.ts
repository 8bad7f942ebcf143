import { randomBytes, randomUUID } from 'node:crypto';
import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { DbtSyncRunRow, DbtSyncStatus, DeploymentRow } from '../../db/tables.js';
import { DEAD_WORKER, type Jobs } from '../../jobs/index.js';
import { isValidBranchName } from '../../git/refs.js';
import { ApiError, notFound } from '../../shared/problems.js';
import { timestamp, type Clock } from '../../time.js';
import { isPersonalBranch } from '../data-model/index.js';
import type { DeploymentRepositories } from '../data-model/index.js';
import { authorizeDeployment } from '../deployments/index.js';
import { checkManifest } from './generator/index.js';
import type { DbtSyncLogEntry, DbtSyncResultResponse, DbtSyncRun, DbtSyncStatusResponse, StartDbtSyncInput } from './runs.schemas.js';
import { appendLog, dropExpiredFiles, findRun, insertRun, listRuns, readLogs, runningRun, updateRunning, updateRun } from './runs.store.js';
import type { DbtSyncSettingsService } from './settings.service.js';
import type { Outbound } from '../../outbound/index.js';
import { SYNC_JOB, SYNC_TIMEOUT_MS, syncJob, type RunOptions, type SyncHooks } from './sync-job.js';
import { registerSyncTasks } from './worker/thread.js';

const json = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

export function toRun(row: DbtSyncRunRow): DbtSyncRun {
  return {
    syncJobId: row.public_id,
    deploymentId: row.deployment_id,
    status: row.status,
    trigger: row.trigger,
    source: row.source,
    branchName: row.branch_name,
    startedAt: row.started_at,
    completedAt: row.completed_at,
    durationMs: row.duration_ms,
    errorMessage: row.status === 'FAILED' ? row.error_message : null,
    failedPhase: row.failed_phase,
    lastStage: row.last_stage,
    gitRef: row.git_ref,
    // Reference 7.0: absent while running.
    ...(row.status === 'RUNNING' ? {} : { phases: json(row.phases) }),
    stats: json(row.stats),
    triggerContext: json(row.trigger_context),
    userId: row.user_id,
  };
}

/** `yyyymmddhhmmss` in UTC. */
const stamp = (at: Date) => at.toISOString().replace(/[-:T]/g, '').slice(0, 14);

const isUniqueViolation = (error: unknown) => {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE';
};

const syncNotFound = (id: string) => notFound('DBT_SYNC_NOT_FOUND', 'Sync', id);

/**
 * Transformation-project syncs (reference 7.1-7.7): runs on the jobs service, their history,
 * status, log, result and generated files. One running sync per deployment, held by a unique
 * index on the running row.
 */
export function dbtSyncService(
  store: Store,
  repositories: DeploymentRepositories,
  jobs: Jobs,
  settings: DbtSyncSettingsService,
  outbound: Outbound,
  now: Clock,
) {
  const { db } = store;
  const hooks: SyncHooks = { beforeStage: async () => undefined, working: async () => undefined };
  registerSyncTasks(jobs.workers);
  const runJob = syncJob(store, repositories, { outbound, token: (deploymentId, url) => settings.token(deploymentId, url) }, hooks, jobs.workers, now);

  jobs.register<{ runId: number }, { status: string }>({ kind: SYNC_JOB, maxAttempts: 1, timeoutMs: SYNC_TIMEOUT_MS, run: runJob });

  /**
   * A running run whose job ended without finishing it (its process was killed, the job was
   * cancelled while queued) is ended when it is next read, with a log line saying why: it is
   * never reported running forever.
   */
  async function settled(run: DbtSyncRunRow): Promise<DbtSyncRunRow> {
    if (run.status !== 'RUNNING' || run.job_id === null) return run;
    const job = await jobs.get(run.tenant_id, run.job_id);
    if (job && (job.state === 'queued' || job.state === 'running')) return run;
    const at = timestamp(now);
    let status: DbtSyncStatus;
    let error: string | null = null;
    let line: string;
    if (!job) {
      status = 'UNKNOWN';
      line = 'The record of this sync’s job was lost; its outcome is unknown';
    } else if (job.state === 'cancelled') {
      status = 'CANCELLED';
      line = 'Cancelled before it began; no branch was changed';
    } else if (job.state === 'failed') {
      status = 'FAILED';
      error =
        job.error === DEAD_WORKER
          ? 'The server running this sync stopped before it ended (it was killed or crashed). Start the sync again.'
          : `The sync stopped: ${job.error ?? 'unknown error'}`;
      line = error;
    } else {
      status = 'UNKNOWN';
      line = 'The sync’s job ended without recording an outcome';
    }
    if (
      await updateRunning(
        db,
        run.id,
        {
          status,
          ...(status === 'FAILED' ? { stage: 'FAILED' } : {}),
          error_message: error,
          completed_at: at,
          manifest: null,
          message: status === 'CANCELLED' ? 'cancelled' : null,
        },
        at,
      )
    ) {
      await appendLog(db, run.id, { level: 'error', message: line }, at);
    }
    return (await findRun(db, run.deployment_id, run.public_id)) ?? run;
  }

  async function runOf(
    caller: Caller,
    deploymentId: number,
    syncJobId: string,
    action: 'SchemaRead' | 'DeploymentRead' | 'SchemaUpdate',
  ): Promise<{ row: DeploymentRow; run: DbtSyncRunRow }> {
    const { row } = await authorizeDeployment(db, caller, deploymentId, action);
    const run = await findRun(db, row.id, syncJobId);
    if (!run) throw syncNotFound(syncJobId);
    return { row, run: await settled(run) };
  }

  /** The branch a run writes to: given (checked) or generated. */
  async function branchFor(row: DeploymentRow, input: StartDbtSyncInput, refWord: string, output: 'branch' | 'files'): Promise<string> {
    if (input.branchName == null) return `dbt-sync/${refWord}-${stamp(now())}-${randomBytes(4).toString('hex')}`;
    const name = input.branchName;
    const invalid = (message: string) => new ApiError('INVALID_BRANCH', message, { errors: [{ pointer: '/body/branchName', message }] });
    if (!(await isValidBranchName(name)))
      throw new ApiError('VALIDATION_FAILED', `${JSON.stringify(name)} is not a branch name git accepts.`, {
        errors: [{ pointer: '/body/branchName', message: 'is not a valid git branch name' }],
      });
    if (output === 'files') return name;
    if (name === row.deploy_branch_name) throw invalid(`${name} is the deploy branch; a sync writes to a new branch for review.`);
    if (isPersonalBranch(name)) throw invalid('Names starting with dev- are kept for dev-mode branches.');
    if ((await (await repositories.open(row)).head(name)) !== null) throw invalid(`Branch ${name} exists already; a sync writes to a new branch.`);
    return name;
  }

  return {
    hooks,

    /** Reference 7.1. */
    async start(caller: Caller, deploymentId: number, input: StartDbtSyncInput): Promise<{ syncJobId: string; workflowId: string; branchName: string }> {
      const { row } = await authorizeDeployment(db, caller, deploymentId, 'SchemaUpdate');
      const saved = await settings.current(row.id);
      const source = input.source ?? 'git';
      const output = input.output ?? 'branch';
      let manifest: string | null = null;
      if (source === 'manifest') {
        if (input.manifest == null)
          throw new ApiError('VALIDATION_FAILED', 'source manifest needs the manifest (the contents of target/manifest.json) in `manifest`.', {
            errors: [{ pointer: '/body/manifest', message: 'is required when source is manifest' }],
          });
        const checked = checkManifest(input.manifest);
        if (!checked.manifest) {
          const errors = checked.problems.map((p) => ({ pointer: `/body/manifest${p.pointer}`, message: p.message }));
          throw new ApiError(
            'VALIDATION_FAILED',
            `The manifest is not a dbt manifest the sync can read: ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}.`,
            { errors },
          );
        }
        manifest = JSON.stringify(input.manifest);
      }
      const ref = source === 'git' ? (input.ref ?? saved.ref ?? row.deploy_branch_name) : null;
      if (ref !== null && (/^[0-9a-f]{40}$/i.test(ref) || !(await isValidBranchName(ref)))) {
        throw new ApiError('VALIDATION_FAILED', `ref ${JSON.stringify(ref)} must be a branch or tag name, not a commit SHA.`, {
          errors: [{ pointer: '/body/ref', message: 'is not a branch or tag name' }],
        });
      }
      const branchName = await branchFor(row, input, ref ?? 'manifest', output);
      const options: RunOptions = {
        repositoryUrl: source === 'git' && saved.repository === 'url' ? saved.repositoryUrl : null,
        manifestPath: saved.manifestPath,
        outputPath: saved.outputPath,
        selector: saved.selector,
      };

      const at = timestamp(now);
      await dropExpiredFiles(db, row.id, at);
      const running = await runningRun(db, row.id);
      if (running) await settled(running);
      let run: DbtSyncRunRow;
      try {
        run = await insertRun(
          db,
          {
            public_id: randomUUID(),
            tenant_id: row.tenant_id,
            deployment_id: row.id,
            job_id: null,
            status: 'RUNNING',
            stage: 'INITIALIZING',
            message: 'Queued',
            trigger: 'api',
            source,
            output,
            branch_name: branchName,
            git_ref: ref,
            user_id: caller.actor.userId,
            options: JSON.stringify(options),
            manifest,
            started_at: at,
            completed_at: null,
            duration_ms: null,
            error_message: null,
            failed_phase: null,
            last_stage: null,
            phases: null,
            stats: null,
            trigger_context: null,
            commit_sha: null,
            generated_files: null,
            files: null,
            files_expire_at: null,
          },
          at,
        );
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        const other = await runningRun(db, row.id);
        throw new ApiError(
          'DBT_SYNC_RUNNING',
          `Sync ${other?.public_id ?? '(unknown)'} is still running on deployment ${row.id}; wait for it to end or cancel it.`,
        );
      }
      await appendLog(db, run.id, { level: 'info', message: `Queued by user ${caller.actor.userId}` }, at);
      // A process whose worker starts on demand (AppOptions.startJobs) starts it with its first job.
      await jobs.start();
      const job = await jobs.enqueue(row.tenant_id, SYNC_JOB, { runId: run.id });
      await updateRun(db, run.id, { job_id: job.id }, timestamp(now));
      return { syncJobId: run.public_id, workflowId: String(job.id), branchName };
    },

    /** Reference 7.2: newest first. */
    async history(
      caller: Caller,
      deploymentId: number,
      filter: { status?: DbtSyncStatus; trigger?: string; beforeId?: number; limit: number },
    ): Promise<Array<DbtSyncRun & { id: number }>> {
      const { row } = await authorizeDeployment(db, caller, deploymentId, 'SchemaRead');
      // At most one run is running (a unique index): ending it first, if its job died, keeps the status filter right.
      const running = await runningRun(db, row.id);
      if (running) await settled(running);
      const rows = await listRuns(db, row.id, filter);
      return rows.map((r) => ({ ...toRun(r), id: r.id }));
    },

    /** Reference 7.3: a cancelled run is FAILED with error "cancelled", so pollers waiting for COMPLETED or FAILED stop. */
    async status(caller: Caller, deploymentId: number, syncJobId: string): Promise<DbtSyncStatusResponse> {
      const { run } = await runOf(caller, deploymentId, syncJobId, 'SchemaRead');
      const terminal = run.status === 'COMPLETED' ? 'COMPLETED' : run.status === 'RUNNING' ? null : 'FAILED';
      const status = terminal ?? run.stage;
      const error =
        terminal === 'FAILED'
          ? run.status === 'CANCELLED'
            ? 'cancelled'
            : (run.error_message ?? (run.status === 'UNKNOWN' ? 'The outcome of this sync is unknown' : 'failed'))
          : null;
      return {
        syncJobId: run.public_id,
        status,
        progress: { stage: status, percentComplete: run.percent, message: run.message },
        updatedAt: run.updated_at,
        ...(error === null ? {} : { error }),
      };
    },

    /** Reference 7.4: a queued run ends at once; a running one before its next stage. */
    async cancel(caller: Caller, deploymentId: number, syncJobId: string): Promise<{ message: string }> {
      const { run } = await runOf(caller, deploymentId, syncJobId, 'SchemaUpdate');
      if (run.status !== 'RUNNING' || run.job_id === null)
        throw new ApiError('DBT_SYNC_NOT_RUNNING', `Sync ${run.public_id} is not running (it is ${run.status}); there is nothing to cancel.`);
      const job = await jobs.cancel(run.tenant_id, run.job_id);
      if (job?.state === 'cancelled') await settled(run);
      return { message: `Sync ${run.public_id} is being cancelled: it stops before its next stage and leaves the branch unchanged.` };
    },

    /** Reference 7.5. */
    async result(caller: Caller, deploymentId: number, syncJobId: string): Promise<DbtSyncResultResponse> {
      const { run } = await runOf(caller, deploymentId, syncJobId, 'SchemaRead');
      if (run.status !== 'COMPLETED')
        throw new ApiError('DBT_SYNC_NOT_COMPLETED', `Sync ${run.public_id} is ${run.status}; a result exists once it is COMPLETED.`);
      const stats = json<{ cubeCount: number; models: number; sources: number; macros: number }>(run.stats);
      return {
        syncJobId: run.public_id,
        generatedFiles: (json<string[]>(run.generated_files) ?? []).map((path) => ({ path })),
        manifestStats: { models: stats?.models ?? 0, sources: stats?.sources ?? 0, macros: stats?.macros ?? 0 },
        cubeCount: stats?.cubeCount ?? 0,
        completedAt: run.completed_at ?? run.updated_at,
        durationMs: run.duration_ms ?? 0,
      };
    },

    /** Reference 7.6, oldest first. */
    async logs(
      caller: Caller,
      deploymentId: number,
      syncJobId: string,
      page: { afterSeq?: number; limit: number },
    ): Promise<Array<DbtSyncLogEntry & { seq: number }>> {
      const { run } = await runOf(caller, deploymentId, syncJobId, 'SchemaRead');
      const rows = await readLogs(db, run.id, page.afterSeq ?? 0, page.limit);
      return rows.map((l) => ({
        seq: l.seq,
        timestamp: l.at,
        level: l.level,
        stream: l.stream,
        message: l.message,
        phase: l.phase,
        durationMs: l.duration_ms,
      }));
    },

    /** Reference 7.7: the files of an `output: files` run, for an hour after it completed. */
    async files(caller: Caller, deploymentId: number, syncJobId: string): Promise<Array<{ path: string; content: string }>> {
      const { row, run } = await runOf(caller, deploymentId, syncJobId, 'DeploymentRead');
      await dropExpiredFiles(db, row.id, timestamp(now));
      if (run.output !== 'files')
        throw new ApiError('DBT_SYNC_FILES_NOT_FOUND', `Sync ${run.public_id} committed to branch ${run.branch_name}; read the files there.`);
      if (run.status === 'RUNNING')
        throw new ApiError('DBT_SYNC_NOT_COMPLETED', `Sync ${run.public_id} is still running; its files are ready once it is COMPLETED.`);
      const fresh = await findRun(db, row.id, run.public_id);
      if (fresh?.status !== 'COMPLETED' || fresh.files === null)
        throw new ApiError('DBT_SYNC_FILES_NOT_FOUND', `Sync ${run.public_id} has no generated files: they are kept for one hour after a completed sync.`);
      return JSON.parse(fresh.files) as Array<{ path: string; content: string }>;
    },
  };
}
export type DbtSyncService = ReturnType<typeof dbtSyncService>;
