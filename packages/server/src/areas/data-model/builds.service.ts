import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { BuildMode, BuildRow, DeploymentRow } from '../../db/tables.js';
import type { JobContext, Jobs } from '../../jobs/index.js';
import type { Build, BuildStatusResponse } from './builds.schemas.js';
import { findDeployment } from '../deployments/index.js';
import { timestamp, type Clock } from '../../time.js';
import { authorizeDeployment } from '../deployments/index.js';
import { failUnfinished, findBuild, findBuildById, insertBuild, latestBuild, listBuilds, updateBuild } from './builds.store.js';
import type { DeploymentRepositories } from './deployment-repositories.js';
import { modelFilesAt } from './model-files.js';
import { compileModel, registerModelTasks } from './model-tasks.js';

export const BUILD_JOB = 'data-model.build';
/** A build that runs longer than this is stopped and failed. */
const BUILD_TIMEOUT_MS = 10 * 60 * 1000;
/** Error lines a build writes to its log before it only counts the rest. */
const LOGGED_ERRORS = 200;

export function toBuild(row: BuildRow): Build {
  return {
    id: row.id,
    branchName: row.branch_name,
    mode: row.mode,
    status: row.status,
    commit: row.commit_sha,
    filesHash: row.files_hash,
    errorText: row.error_text,
    cubesCount: row.cubes_count,
    cause: row.cause,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

export const modeOf = (row: DeploymentRow, branch: string): BuildMode => (branch === row.deploy_branch_name ? 'production' : 'dev_mode');

/**
 * Builds (reference 1.8): the model of one commit compiled into an artifact (the cubes and views
 * with their members, as JSON) by the validator the validate route uses, as a job of the jobs
 * service, so any process may run it and a process that dies leaves it failed or re-run.
 */
export function buildsService(store: Store, repositories: DeploymentRepositories, jobs: Jobs, now: Clock, built: () => Promise<void> = async () => undefined) {
  const { db } = store;
  const at = () => timestamp(now);
  registerModelTasks(jobs.workers);

  async function run({ payload, log, signal }: JobContext<{ buildId: number }>): Promise<{ status: string }> {
    const build = await findBuildById(db, payload.buildId);
    if (!build) return { status: 'gone' };
    const row = await findDeployment(db, build.tenant_id, build.deployment_id);
    if (!row) {
      await failUnfinished(db, build.id, 'The deployment was deleted.', at());
      return { status: 'failed' };
    }
    const started = performance.now();
    const startedAt = at();
    await updateBuild(db, build.id, { status: 'building', started_at: startedAt, finished_at: null, error_text: null }, startedAt);
    await log(`Building ${build.branch_name} at ${build.commit_sha}${row.deploy_project_root ? ` (project root ${row.deploy_project_root})` : ''}`);
    const repo = await repositories.open(row);
    const filesHash = await repo.treeOf(build.commit_sha);
    const files = await modelFilesAt(repo, build.commit_sha, row.deploy_project_root);
    await log(`Read ${files.length} model file${files.length === 1 ? '' : 's'}`);
    signal.throwIfAborted();
    // On the worker pool: a big model holds a CPU for seconds.
    const result = await compileModel(jobs.workers, files);
    if (!result.valid) {
      for (const error of result.errors.slice(0, LOGGED_ERRORS))
        await log(`${error.fileName ?? '(model)'}${error.line ? `:${error.line}:${error.column ?? 1}` : ''} ${error.message}`);
      if (result.errors.length > LOGGED_ERRORS) await log(`… and ${result.errors.length - LOGGED_ERRORS} more errors`);
      const first = result.errors[0];
      const errorText = `${result.errors.length} error${result.errors.length === 1 ? '' : 's'} in the data model; the first: ${first?.fileName ?? '(model)'}${first?.line ? `:${first.line}` : ''} ${first?.message ?? ''}`;
      const failedAt = at();
      await updateBuild(
        db,
        build.id,
        { status: 'failed', files_hash: filesHash, error_text: errorText, cubes_count: result.cubesCount, finished_at: failedAt },
        failedAt,
      );
      await log(`Failed after ${Math.round(performance.now() - started)} ms`);
      return { status: 'failed' };
    }
    const artifact = result.artifact ?? { cubes: [], views: [] };
    const finished = at();
    await updateBuild(
      db,
      build.id,
      { status: 'success', files_hash: filesHash, cubes_count: result.cubesCount, artifact: JSON.stringify(artifact), finished_at: finished },
      finished,
    );
    await log(
      `Compiled ${artifact.cubes.length} cube${artifact.cubes.length === 1 ? '' : 's'} and ${artifact.views.length} view${artifact.views.length === 1 ? '' : 's'} in ${Math.round(performance.now() - started)} ms`,
    );
    // Its environments' runtimes move to it now rather than at the next reconcile.
    void built();
    return { status: 'success' };
  }

  jobs.register<{ buildId: number }, { status: string }>({
    kind: BUILD_JOB,
    // A second attempt after the process running the first died (jobs service: kill -9 rule).
    maxAttempts: 2,
    timeoutMs: BUILD_TIMEOUT_MS,
    async run(ctx) {
      try {
        return await run(ctx);
      } catch (error) {
        // The last attempt's failure is the build's; an earlier one is retried.
        if (ctx.attempt >= 2 || ctx.signal.aborted) await failUnfinished(db, ctx.payload.buildId, `The build stopped: ${(error as Error).message}`, at());
        throw error;
      }
    },
  });

  /**
   * A build whose job ended without it (its process died on the last attempt, it was cancelled)
   * is failed when it is next read, so no build is reported building forever.
   */
  async function settled(build: BuildRow): Promise<BuildRow> {
    if ((build.status !== 'queued' && build.status !== 'building') || build.job_id === null) return build;
    const job = await jobs.get(build.tenant_id, build.job_id);
    if (!job || job.state === 'queued' || job.state === 'running') return build;
    if (job.state !== 'succeeded') await failUnfinished(db, build.id, job.error ?? `The build's job was ${job.state}.`, at());
    return (await findBuildById(db, build.id)) ?? build;
  }

  return {
    /** Queues a build of `commit` on `branch`; the jobs service runs it. */
    async enqueue(row: DeploymentRow, branch: string, commit: string, cause: string): Promise<BuildRow> {
      const build = await insertBuild(db, { tenantId: row.tenant_id, deploymentId: row.id, branch, mode: modeOf(row, branch), commit, cause }, at());
      // A process whose worker starts on demand (AppOptions.startJobs) starts it with its first build.
      await jobs.start();
      const job = await jobs.enqueue(row.tenant_id, BUILD_JOB, { buildId: build.id });
      await updateBuild(db, build.id, { job_id: job.id }, at());
      return { ...build, job_id: job.id };
    },

    /**
     * Queues a build of `commit` on `branch` unless its newest build is of that commit or still
     * under way (a branch's environment woken by a request, a staging flag switched on).
     */
    async ensureBuilt(row: DeploymentRow, branch: string, commit: string, cause: string): Promise<void> {
      const latest = await latestBuild(db, row.id, branch);
      if (latest && (latest.commit_sha === commit || latest.status === 'queued' || latest.status === 'building')) return;
      await this.enqueue(row, branch, commit, cause);
    },

    /** Waits until a build has finished (for callers that asked to wait, such as an upload with awaitGitOperations). */
    async waitFor(build: BuildRow, timeoutMs: number): Promise<BuildRow> {
      if (build.job_id !== null) await jobs.waitFor(build.tenant_id, build.job_id, { timeoutMs }).catch(() => undefined);
      return settled((await findBuildById(db, build.id)) ?? build);
    },

    /** Reference 1.8. */
    async status(caller: Caller, deploymentId: number, branchName: string | undefined): Promise<BuildStatusResponse> {
      const { row } = await authorizeDeployment(db, caller, deploymentId, 'DeploymentRead');
      const branch = branchName ?? row.deploy_branch_name;
      const base = { deploymentId: row.id, branchName: branch, mode: modeOf(row, branch), deploymentStatus: null };
      const head = await (await repositories.open(row)).head(branch);
      if (head === null) return { ...base, status: 'failed', buildJobId: null, errorText: 'Bad branch', filesHash: null, lastHash: null, updatedAt: null };
      const found = await latestBuild(db, row.id, branch);
      if (!found) return { ...base, status: 'building', buildJobId: null, errorText: 'Branch is not active', filesHash: null, lastHash: head, updatedAt: null };
      const build = await settled(found);
      return {
        ...base,
        mode: build.mode,
        status: build.status,
        buildJobId: build.id,
        errorText: build.error_text,
        filesHash: build.files_hash,
        lastHash: build.commit_sha,
        updatedAt: build.updated_at,
      };
    },

    async list(caller: Caller, deploymentId: number, filter: { branchName?: string; beforeId?: number; limit: number }): Promise<Build[]> {
      const { row } = await authorizeDeployment(db, caller, deploymentId, 'DeploymentRead');
      const rows = await listBuilds(db, row.id, {
        limit: filter.limit,
        ...(filter.branchName === undefined ? {} : { branch: filter.branchName }),
        ...(filter.beforeId === undefined ? {} : { beforeId: filter.beforeId }),
      });
      return Promise.all(rows.map(async (r) => toBuild(await settled(r))));
    },

    async get(caller: Caller, deploymentId: number, buildId: number): Promise<BuildRow | undefined> {
      const { row } = await authorizeDeployment(db, caller, deploymentId, 'DeploymentRead');
      const build = await findBuild(db, row.id, buildId);
      return build ? settled(build) : undefined;
    },

    async logs(caller: Caller, deploymentId: number, buildId: number, options: { afterSeq?: number; limit: number }) {
      const { row } = await authorizeDeployment(db, caller, deploymentId, 'DeploymentRead');
      const build = await findBuild(db, row.id, buildId);
      if (!build) return undefined;
      return build.job_id === null ? [] : jobs.logs(build.tenant_id, build.job_id, options);
    },
  };
}
export type BuildsService = ReturnType<typeof buildsService>;
