import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Repository, type Changes } from './repository.js';
import { runGit } from './run.js';
import type { Signature } from './objects.js';
import { PRE_RECEIVE_HOOK } from './push-hook.js';
import { ensurePrivateDir } from '../shared/private-files.js';

/** Runs `fn` while no other writer of repository `id` runs, in any process (see repository-lock.ts). */
export type RepositoryLock = <T>(id: number, fn: () => Promise<T>) => Promise<T>;

export interface InitialCommit {
  branch: string;
  files: Changes;
  author: Signature;
  message: string;
}

/**
 * The bare repositories of every deployment, one directory each under `root`. Every process
 * serving the same database must see the same `root` (a shared mount), as every process sees the
 * same rows. Reads need no lock; every write goes through `write`.
 */
export class Repositories {
  constructor(
    readonly root: string,
    private readonly lock: RepositoryLock,
  ) {}

  pathOf(id: number): string {
    return path.join(this.root, `${id}.git`);
  }

  open(id: number): Repository {
    return new Repository(this.pathOf(id));
  }

  async exists(id: number): Promise<boolean> {
    return fs.stat(path.join(this.pathOf(id), 'HEAD')).then(
      () => true,
      () => false,
    );
  }

  /** Runs a write on repository `id` alone: no other writer of it runs meanwhile, in any process. */
  write<T>(id: number, fn: (repo: Repository) => Promise<T>): Promise<T> {
    return this.lock(id, () => fn(this.open(id)));
  }

  /**
   * Creates repository `id` with `initial` as its first commit (or no commit when `initial` is
   * null), unless it exists. It is built in a scratch directory and renamed into place, so a
   * reader or a crash never sees half a repository.
   */
  async create(id: number, initial: InitialCommit | null, defaultBranch: string): Promise<Repository> {
    ensurePrivateDir(this.root);
    const scratch = path.join(this.root, `.new-${id}-${randomUUID()}`);
    try {
      await runGit({ args: ['init', '--quiet', '--bare', `--initial-branch=${defaultBranch}`, scratch] });
      await configure(scratch);
      if (initial) {
        await new Repository(scratch).commit({
          ref: `refs/heads/${initial.branch}`,
          expectedHead: null,
          changes: initial.files,
          author: initial.author,
          message: initial.message,
        });
      }
      await fs.rename(scratch, this.pathOf(id)).catch(async (error: NodeJS.ErrnoException) => {
        // Another process created it first: theirs stands.
        if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
      });
    } finally {
      await fs.rm(scratch, { recursive: true, force: true });
    }
    return this.open(id);
  }

  async remove(id: number): Promise<void> {
    // Renamed away first, so no reader finds a repository half deleted.
    const target = this.pathOf(id);
    const doomed = path.join(this.root, `.deleted-${id}-${randomUUID()}`);
    try {
      await fs.rename(target, doomed);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    await fs.rm(doomed, { recursive: true, force: true });
  }
}

const REPOSITORY_CONFIG = `[receive]
\tdenyNonFastForwards = true
\tdenyDeletes = true
[http]
\treceivepack = true
[core]
\tlogAllRefUpdates = true
`;

/**
 * Settings every repository carries. Pushes over HTTP may only fast-forward and never delete
 * (branches are deleted through the API, which re-parents their children); the pre-receive hook
 * applies the per-credential rules the server hands it.
 */
async function configure(gitDir: string): Promise<void> {
  // Appended to the config `git init` wrote (one file write instead of a git process per key).
  await fs.appendFile(path.join(gitDir, 'config'), REPOSITORY_CONFIG);
  const hook = path.join(gitDir, 'hooks', 'pre-receive');
  await fs.mkdir(path.dirname(hook), { recursive: true });
  await fs.writeFile(hook, PRE_RECEIVE_HOOK, { mode: 0o755 });
}
