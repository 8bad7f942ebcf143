import type { Store } from '../../db/database.js';
import type { DbtSyncRunRow, DeploymentRow } from '../../db/tables.js';
import { readRemoteFile, RemoteReadError } from '../../git/remote.js';
import { JobAbort, type JobContext, type WorkerPool } from '../../jobs/index.js';
import { OutboundError, type Outbound } from '../../outbound/index.js';
import { timestamp, type Clock } from '../../time.js';
import { SERVER_AUTHOR } from '../data-model/index.js';
import { insertBranch } from '../data-model/index.js';
import type { DeploymentRepositories } from '../data-model/index.js';
import { findDeployment } from '../deployments/index.js';
import type { ModelSelector } from './generator/index.js';
import { planSync, type SyncPlan } from './plan.js';
import { Progress, SyncFailure } from './progress.js';
import type { Stage, SyncStats } from './runs.schemas.js';
import { findRunById, updateRunning } from './runs.store.js';
import type { WorkerGeneration } from './worker/protocol.js';
import { SyncThread } from './worker/thread.js';
import { findUserNameAndEmail } from '../users/index.js';

export const SYNC_JOB = 'dbt-sync.run';
/** A sync running longer than this is stopped and failed. */
export const SYNC_TIMEOUT_MS = 15 * 60 * 1000;
/** `output: files` keeps the generated files this long after the run (reference 7.7). */
export const FILES_KEPT_MS = 60 * 60 * 1000;
/** Model errors written to the log of a run whose model does not validate. */
const LOGGED_ERRORS = 50;

/** The settings a run was started with, kept on its row (a later change of settings does not change it). */
export interface RunOptions {
  /** The transformation repository's URL when it is not the deployment's own (its token stays sealed in the settings). */
  repositoryUrl?: string | null;
  manifestPath: string;
  outputPath: string;
  selector: ModelSelector;
}

/** Lets a caller see a run from inside (tests pause a run at a stage to cancel it, or look at it while its worker thread works). */
export interface SyncHooks {
  beforeStage(runId: number, stage: Stage): Promise<void>;
  /** Called as a phase's work is handed to the worker thread, with that work still running. */
  working(runId: number, phase: string, work: Promise<unknown>): Promise<void>;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

async function authorOfRun(store: Store, run: DbtSyncRunRow) {
  if (run.user_id === null) return SERVER_AUTHOR;
  const user = await findUserNameAndEmail(store.db, run.tenant_id, run.user_id);
  return user ? { name: user.first_name?.trim() || user.email, email: user.email } : SERVER_AUTHOR;
}

/** The other repository a `git` sync reads: reached through the outbound guard, with the token the settings hold for it. */
export interface RemoteRepositories {
  outbound: Outbound;
  token(deploymentId: number, url: string): Promise<string | null>;
}

const compiledManifestRequired = (manifestPath: string, ref: string, commit: string) =>
  `A compiled manifest is required: there is no ${manifestPath} on ${ref} (${commit.slice(0, 12)}). dbt-sync never runs dbt or any code from the repository; run \`dbt compile\` and commit ${manifestPath}, or start the sync with source \`manifest\`.`;

/** The manifest text: the request's, or the compiled one committed at the run's ref (git is only read; nothing from it runs). */
async function manifestText(
  repositories: DeploymentRepositories,
  remote: RemoteRepositories,
  row: DeploymentRow,
  run: DbtSyncRunRow,
  options: RunOptions,
): Promise<string> {
  if (run.source === 'manifest') return run.manifest ?? '';
  const ref = run.git_ref ?? row.deploy_branch_name;
  if (options.repositoryUrl) return remoteManifestText(remote, row, options.repositoryUrl, ref, options.manifestPath);
  const repo = await repositories.open(row);
  const commit = (await repo.resolve(`refs/heads/${ref}`)) ?? (await repo.resolve(`refs/tags/${ref}`));
  if (commit === null) throw new SyncFailure(`The repository has no branch or tag ${ref}.`);
  const entry = (await repo.tree(commit)).find((e) => e.path === options.manifestPath);
  if (!entry) throw new SyncFailure(compiledManifestRequired(options.manifestPath, ref, commit));
  return (await repo.blobs([entry.sha])).get(entry.sha)?.toString('utf8') ?? '';
}

/** The manifest committed at `ref` of another server's repository, read with git over HTTPS at the address the guard checked. */
async function remoteManifestText(remote: RemoteRepositories, row: DeploymentRow, repositoryUrl: string, ref: string, manifestPath: string): Promise<string> {
  const url = new URL(repositoryUrl);
  try {
    const address = await remote.outbound.pinnedAddress(url);
    const token = await remote.token(row.id, repositoryUrl);
    const { commit, content } = await readRemoteFile({
      url,
      address,
      token,
      ref,
      filePath: manifestPath,
      trustedCertificates: remote.outbound.trustedCertificates,
      timeoutMs: remote.outbound.timeoutMs,
    });
    if (content === null) throw new SyncFailure(compiledManifestRequired(manifestPath, ref, commit));
    return content.toString('utf8');
  } catch (error) {
    if (error instanceof OutboundError) throw new SyncFailure(`The transformation repository was not called: ${error.message}.`);
    if (error instanceof RemoteReadError) throw new SyncFailure(error.message);
    throw error;
  }
}

function statsOf(generation: WorkerGeneration): SyncStats {
  const { stats } = generation;
  return {
    cubeCount: generation.cubeCount,
    generatedFileCount: generation.files.length,
    models: stats.models,
    sources: stats.sources,
    macros: stats.macros,
    dbtVersion: stats.dbtVersion,
    manifestGeneratedAt: stats.manifestGeneratedAt,
  };
}

/**
 * The job of one sync run: read the manifest, generate the cubes, validate the model they make
 * with the deploy branch's, then commit them to the new branch (one commit, made from the deploy
 * branch; none when nothing changed) or keep them for `generated-files`. A cancel is honoured
 * before each stage, so a cancelled run never touches the branch; the commit itself is atomic.
 */
export function syncJob(store: Store, repositories: DeploymentRepositories, remote: RemoteRepositories, hooks: SyncHooks, pool: WorkerPool, now: Clock) {
  const { db } = store;

  /**
   * Parses the manifest, generates the cubes and validates the model they make with the deploy
   * branch's. These hold a CPU for seconds on a big project, so they run on the jobs service's
   * worker pool and the server keeps answering meanwhile; only git is read here.
   */
  async function processManifest(
    run: DbtSyncRunRow,
    row: DeploymentRow,
    progress: Progress,
    text: string,
    options: RunOptions,
  ): Promise<{ generation: WorkerGeneration; base: string; plan: SyncPlan }> {
    const thread = new SyncThread(pool);
    const onThread = async <T>(phase: string, work: Promise<T>): Promise<T> => {
      await hooks.working(run.id, phase, work);
      return work;
    };
    try {
      await progress.phase(
        'parse-manifest',
        () => onThread('parse-manifest', thread.parse(text)),
        (m) => `Parsed the manifest (dbt ${m.dbtVersion ?? 'version unknown'}, ${plural(m.nodes, 'node')})`,
      );
      const generation = await progress.phase(
        'generate-cubes',
        () => onThread('generate-cubes', thread.generate({ outputPath: options.outputPath, selector: options.selector })),
        (g) => `Generated ${plural(g.cubeCount, 'cube')} from ${plural(g.stats.models, 'model')}`,
      );
      await updateRunning(db, run.id, { stats: JSON.stringify(statsOf(generation)) }, timestamp(now));
      const repo = await repositories.open(row);
      const base = await repo.head(row.deploy_branch_name);
      if (base === null) throw new SyncFailure(`The deploy branch ${row.deploy_branch_name} does not exist.`);
      const plan = await progress.phase(
        'validate',
        () => planSync(repo, base, row.deploy_project_root, options.outputPath, generation.files, (model) => onThread('validate', thread.validate(model))),
        (p) => (p.errors.length === 0 ? `The model with the generated cubes is valid (${plural(p.changes.size, 'file')} to change)` : 'The model is not valid'),
      );
      return { generation, base, plan };
    } finally {
      await thread.close();
    }
  }

  async function execute(ctx: JobContext<{ runId: number }>, run: DbtSyncRunRow, row: DeploymentRow, progress: Progress): Promise<void> {
    const options = JSON.parse(run.options) as RunOptions;
    const checkpoint = async (stage: Stage, message: string) => {
      await hooks.beforeStage(run.id, stage);
      if (ctx.signal.aborted) throw ctx.signal.reason;
      await progress.enter(stage, message);
    };

    const where = `${options.manifestPath} at ${run.git_ref ?? row.deploy_branch_name}`;
    const from = run.source === 'manifest' ? 'the manifest sent with the request' : options.repositoryUrl ? `${where} of ${options.repositoryUrl}` : where;
    await checkpoint('INITIALIZING', `Sync ${run.public_id}: reading ${from}; output ${run.output === 'branch' ? `branch ${run.branch_name}` : 'files'}`);
    const text = await progress.phase(
      'read-manifest',
      () => manifestText(repositories, remote, row, run, options),
      (t) => `Read the manifest (${Math.round(t.length / 1024)} KiB)`,
    );

    await checkpoint('PROCESSING_MANIFEST', 'Processing the manifest');
    const { generation, base, plan } = await processManifest(run, row, progress, text, options);
    const { files } = generation;
    if (plan.errors.length > 0) {
      for (const e of plan.errors.slice(0, LOGGED_ERRORS))
        await progress.log(`${e.fileName ?? '(model)'}${e.line ? `:${e.line}:${e.column ?? 1}` : ''} ${e.message}`, { level: 'error', phase: 'validate' });
      progress.failedPhase = 'validate';
      const first = plan.errors[0];
      throw new SyncFailure(
        `The generated model does not validate (${plural(plan.errors.length, 'error')}; the first: ${first?.fileName ?? '(model)'}${first?.line ? `:${first.line}` : ''} ${first?.message ?? ''}). Nothing was committed.`,
      );
    }

    await checkpoint(
      'WRITING_CUBE_FILES',
      run.output === 'branch' ? `Writing ${plural(files.length, 'file')} to ${run.branch_name}` : `Keeping ${plural(files.length, 'file')} for an hour`,
    );
    const commit = await progress.phase(
      'write-files',
      () => (run.output === 'branch' ? commitToBranch(run, row, base, plan.changes) : Promise.resolve(null)),
      (sha) =>
        run.output === 'files'
          ? `Kept ${plural(files.length, 'file')}; nothing was committed`
          : sha === base
            ? `The generated model is unchanged: branch ${run.branch_name} was created at ${base.slice(0, 12)} without a commit`
            : `Committed ${plural(plan.changes.size, 'change')} to ${run.branch_name} (${String(sha).slice(0, 12)})`,
    );

    // Past the commit a cancel or a stop no longer undoes anything: the run completes.
    await progress.enter('FINALIZING', 'Finalizing');
    const at = timestamp(now);
    await updateRunning(
      db,
      run.id,
      {
        status: 'COMPLETED',
        stage: 'COMPLETED',
        percent: 100,
        message: null,
        completed_at: at,
        duration_ms: progress.elapsed(),
        phases: JSON.stringify(progress.phases),
        stats: JSON.stringify(statsOf(generation)),
        commit_sha: commit,
        generated_files: JSON.stringify(files.map((f) => f.path)),
        files: run.output === 'files' ? JSON.stringify(files) : null,
        files_expire_at: run.output === 'files' ? new Date(Date.parse(at) + FILES_KEPT_MS).toISOString() : null,
        manifest: null,
      },
      at,
    );
    await progress.log(`Completed in ${progress.elapsed()} ms: ${plural(generation.cubeCount, 'cube')}`);
  }

  /** Creates the branch from the deploy branch's `base` with one commit of the changes; at `base` itself when nothing changed. */
  async function commitToBranch(run: DbtSyncRunRow, row: DeploymentRow, base: string, changes: Map<string, string | null>): Promise<string> {
    const author = await authorOfRun(store, run);
    const sha = await repositories.write(row, async (repo) => {
      if ((await repo.head(run.branch_name)) !== null)
        throw new SyncFailure(`Branch ${run.branch_name} was created by someone else meanwhile; nothing was committed.`);
      if (changes.size === 0) {
        await repo.moveRefs([{ ref: `refs/heads/${run.branch_name}`, to: base, from: null }]);
        return base;
      }
      const message = `dbt-sync ${run.public_id}: ${run.source === 'manifest' ? 'from a manifest' : `from ${run.git_ref ?? row.deploy_branch_name}`}`;
      return repo.commit({ ref: `refs/heads/${run.branch_name}`, expectedHead: null, parent: base, changes, author, message });
    });
    await insertBranch(
      db,
      { tenantId: row.tenant_id, deploymentId: row.id, name: run.branch_name, parent: row.deploy_branch_name, ownerKeyId: null },
      timestamp(now),
    );
    return sha;
  }

  return async function run(ctx: JobContext<{ runId: number }>): Promise<{ status: string }> {
    const run = await findRunById(db, ctx.payload.runId);
    if (!run || run.status !== 'RUNNING') return { status: 'gone' };
    const progress = new Progress(db, run.id, now);
    const row = await findDeployment(db, run.tenant_id, run.deployment_id);
    try {
      if (!row) throw new SyncFailure('The deployment was deleted.');
      if (run.last_stage !== null) await progress.log('Starting again from the beginning: the server running this sync stopped before it ended');
      await execute(ctx, run, row, progress);
      return { status: 'completed' };
    } catch (error) {
      const abort = error instanceof JobAbort ? error : ctx.signal.aborted ? (ctx.signal.reason as JobAbort) : null;
      // A stopping server hands the job back to the queue; the run starts again in some process.
      if (abort?.why === 'shutdown') {
        await progress.log('The server is stopping; the sync will start again');
        throw error;
      }
      const at = timestamp(now);
      const ended = { completed_at: at, duration_ms: progress.elapsed(), phases: JSON.stringify(progress.phases), last_stage: progress.stage, manifest: null };
      if (abort?.why === 'cancelled') {
        await updateRunning(db, run.id, { ...ended, status: 'CANCELLED', message: 'cancelled' }, at);
        await progress.log(`Cancelled before ${progress.stage === 'INITIALIZING' ? 'it began' : `the stage after ${progress.stage}`}; no branch was changed`, {
          level: 'error',
        });
        return { status: 'cancelled' };
      }
      const message = error instanceof SyncFailure ? error.message : abort ? abort.message : `The sync failed: ${(error as Error).message}`;
      await updateRunning(db, run.id, { ...ended, status: 'FAILED', stage: 'FAILED', error_message: message, failed_phase: progress.failedPhase }, at);
      await progress.log(message, { level: 'error', ...(progress.failedPhase ? { phase: progress.failedPhase } : {}) });
      return { status: 'failed' };
    }
  };
}
