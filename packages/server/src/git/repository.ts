import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runGit, gitText, GitError } from './run.js';
import { NO_OBJECT, quotePath, signatureEnv, signatureLine, type Signature } from './objects.js';

export interface TreeEntry {
  path: string;
  /** The blob id (git's SHA-1 of the content). */
  sha: string;
  size: number;
}

export interface CommitInfo {
  sha: string;
  parents: string[];
  authorName: string;
  authorEmail: string;
  authoredAt: string;
  committedAt: string;
  message: string;
}

/** What a commit changes: new content for a path, or null to delete it. */
export type Changes = ReadonlyMap<string, string | Buffer | null>;

export interface CommitRequest {
  /** The ref the commit lands on: `refs/heads/<branch>`, or a ref of the server's own. */
  ref: string;
  /** The ref's value the changes were computed against (null: the ref is new); a moved ref fails with RefMovedError. */
  expectedHead: string | null;
  /** The first parent; defaults to `expectedHead`. A new branch may start from another branch's commit. */
  parent?: string | null;
  changes: Changes;
  author: Signature;
  message: string;
}

/** The branch moved between reading it and writing it: someone else committed first. */
export class RefMovedError extends Error {
  constructor(readonly ref: string) {
    super(`${ref} moved while this change was being written`);
    this.name = 'RefMovedError';
  }
}

const isRefLockFailure = (error: unknown) =>
  error instanceof GitError && /cannot lock ref|is at .* but expected|reference already exists|unable to resolve reference/.test(error.stderr);

/**
 * One bare repository, read and written with git's own commands: every object and commit here is
 * git's, readable by any git client. Writes compare-and-swap the branch ref (update-ref with the
 * old value), so two writers can never lose each other's commits, whatever locks are held above.
 */
export class Repository {
  constructor(readonly gitDir: string) {}

  /** The commit a branch points to, or null when there is no such branch. */
  head(branch: string): Promise<string | null> {
    return this.resolve(`refs/heads/${branch}`);
  }

  /** The commit a full ref name points to, or null when there is no such ref. */
  async resolve(ref: string): Promise<string | null> {
    const { stdout, code } = await runGit({ gitDir: this.gitDir, args: ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], okCodes: [1] });
    return code === 0 ? stdout.toString('utf8').trim() : null;
  }

  /** Every branch and its head. */
  async branches(): Promise<Map<string, string>> {
    const text = await gitText({ gitDir: this.gitDir, args: ['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads/'] });
    const result = new Map<string, string>();
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const space = line.indexOf(' ');
      result.set(line.slice(space + 1 + 'refs/heads/'.length), line.slice(0, space));
    }
    return result;
  }

  /** The files of a commit, recursively, sorted by path. */
  async tree(commit: string): Promise<TreeEntry[]> {
    const { stdout } = await runGit({ gitDir: this.gitDir, args: ['ls-tree', '-r', '-z', '--long', '--full-tree', commit] });
    const entries: TreeEntry[] = [];
    for (const record of stdout.toString('utf8').split('\0')) {
      if (record === '') continue;
      // <mode> SP <type> SP <object> SP+ <size> TAB <path>
      const tab = record.indexOf('\t');
      const [, type, sha, size] = record.slice(0, tab).split(/ +/);
      if (type !== 'blob' || sha === undefined) continue;
      entries.push({ path: record.slice(tab + 1), sha, size: Number(size) });
    }
    return entries;
  }

  /** The contents of blobs, by id, in one `cat-file --batch` run. */
  async blobs(shas: readonly string[]): Promise<Map<string, Buffer>> {
    const unique = [...new Set(shas)];
    const result = new Map<string, Buffer>();
    if (unique.length === 0) return result;
    const { stdout } = await runGit({ gitDir: this.gitDir, args: ['cat-file', '--batch'], input: unique.map((s) => `${s}\n`).join('') });
    let at = 0;
    for (const sha of unique) {
      const newline = stdout.indexOf(0x0a, at);
      const header = stdout.subarray(at, newline).toString('utf8');
      const [, type, size] = header.split(' ');
      if (type !== 'blob') throw new Error(`object ${sha} is not a blob: ${header}`);
      const length = Number(size);
      result.set(sha, stdout.subarray(newline + 1, newline + 1 + length));
      at = newline + 1 + length + 1;
    }
    return result;
  }

  /** Commits reachable from `rev`, newest first, `skip` commits in. */
  async log(rev: string, skip: number, limit: number): Promise<CommitInfo[]> {
    const format = '%H%n%P%n%an%n%ae%n%aI%n%cI%n%B';
    const { stdout } = await runGit({ gitDir: this.gitDir, args: ['log', '-z', `--format=${format}`, `--skip=${skip}`, `--max-count=${limit}`, rev, '--'] });
    const commits: CommitInfo[] = [];
    for (const record of stdout.toString('utf8').split('\0')) {
      if (record === '') continue;
      const lines = record.split('\n');
      const [sha = '', parents = '', authorName = '', authorEmail = '', authoredAt = '', committedAt = ''] = lines;
      commits.push({
        sha,
        parents: parents === '' ? [] : parents.split(' '),
        authorName,
        authorEmail,
        authoredAt: new Date(authoredAt).toISOString(),
        committedAt: new Date(committedAt).toISOString(),
        message: lines.slice(6).join('\n').replace(/\n+$/, ''),
      });
    }
    return commits;
  }

  /** Whether `ancestor` is reachable from `descendant` (a merge of it would change nothing). */
  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    const { code } = await runGit({ gitDir: this.gitDir, args: ['merge-base', '--is-ancestor', ancestor, descendant], okCodes: [1] });
    return code === 0;
  }

  /** The tree id of a commit. */
  async treeOf(commit: string): Promise<string> {
    return gitText({ gitDir: this.gitDir, args: ['rev-parse', `${commit}^{tree}`] });
  }

  /**
   * A real three-way merge of `theirs` into `ours` (git merge-tree --write-tree): the merged tree,
   * or the paths that conflict. Nothing is written to any branch.
   */
  async mergeTrees(ours: string, theirs: string): Promise<{ tree: string; conflicts: string[] }> {
    const { stdout, code } = await runGit({
      gitDir: this.gitDir,
      args: ['merge-tree', '--write-tree', '-z', '--name-only', '--no-messages', ours, theirs],
      okCodes: [1],
    });
    const [tree = '', ...paths] = stdout.toString('utf8').split('\0');
    return { tree, conflicts: code === 1 ? [...new Set(paths.filter((p) => p !== ''))].sort() : [] };
  }

  /**
   * `tree` with some paths replaced by blobs (or removed, for null): the tree a merge resolution
   * writes. Built in a throwaway index, so no work tree or shared index is involved.
   */
  async withEntries(tree: string, entries: ReadonlyMap<string, string | null>): Promise<string> {
    const index = path.join(os.tmpdir(), `mapi-index-${randomUUID()}`);
    const env = { GIT_INDEX_FILE: index };
    try {
      await runGit({ gitDir: this.gitDir, args: ['read-tree', tree], env });
      // Mode 0 removes a path; -z takes paths as they are, whatever characters they hold.
      const records = [...entries].map(([p, sha]) => (sha === null ? `0 ${NO_OBJECT}\t${p}` : `100644 ${sha}\t${p}`));
      await runGit({ gitDir: this.gitDir, args: ['update-index', '-z', '--index-info'], input: `${records.join('\0')}\0`, env });
      return await gitText({ gitDir: this.gitDir, args: ['write-tree'], env });
    } finally {
      await fs.rm(index, { force: true });
    }
  }

  /** A commit of an existing tree (a merge result) with the given parents; refs are not touched. */
  async commitTree(tree: string, parents: readonly string[], author: Signature, message: string): Promise<string> {
    return gitText({
      gitDir: this.gitDir,
      args: ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p])],
      input: message.endsWith('\n') ? message : `${message}\n`,
      env: signatureEnv(author),
    });
  }

  /**
   * Writes `changes` as one commit on top of the parent and moves the ref to it, only if the
   * ref is still at `expectedHead`. fast-import writes every blob, tree and the commit in one
   * process, however many files change; the commit lands on a ref of its own, which the same
   * atomic ref transaction that moves the branch then deletes.
   */
  async commit(request: CommitRequest): Promise<string> {
    const pending = `refs/mapi/incoming/${randomUUID()}`;
    const parent = request.parent === undefined ? request.expectedHead : request.parent;
    const parts: Buffer[] = [];
    const push = (text: string) => parts.push(Buffer.from(text, 'utf8'));
    const message = Buffer.from(request.message.endsWith('\n') ? request.message : `${request.message}\n`, 'utf8');
    push(`commit ${pending}\nmark :1\nauthor ${signatureLine(request.author)}\ncommitter ${signatureLine(request.author)}\ndata ${message.length}\n`);
    parts.push(message);
    if (parent) push(`from ${parent}\n`);
    for (const [path, content] of request.changes) {
      if (content === null) {
        push(`D ${quotePath(path)}\n`);
        continue;
      }
      const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
      push(`M 100644 inline ${quotePath(path)}\ndata ${bytes.length}\n`);
      parts.push(bytes);
      push('\n');
    }
    push('\nget-mark :1\n');
    const { stdout } = await runGit({ gitDir: this.gitDir, args: ['fast-import', '--quiet', '--date-format=raw'], input: Buffer.concat(parts) });
    const sha = stdout.toString('utf8').trim();
    try {
      await this.moveRefs([
        { ref: request.ref, to: sha, from: request.expectedHead },
        { ref: pending, to: null, from: sha },
      ]);
    } catch (error) {
      // The commit stays an unreachable object, which git's gc prunes.
      await this.moveRefs([{ ref: pending, to: null, from: sha }]).catch(() => undefined);
      throw error;
    }
    return sha;
  }

  /**
   * Moves refs all together or not at all, each only if it still points where the caller saw it
   * (`from`; null: must not exist). `to: null` deletes.
   */
  async moveRefs(moves: ReadonlyArray<{ ref: string; to: string | null; from: string | null }>): Promise<void> {
    const lines = moves.map(({ ref, to, from }) => `update ${ref} ${to ?? NO_OBJECT} ${from ?? NO_OBJECT}\n`);
    try {
      await runGit({ gitDir: this.gitDir, args: ['update-ref', '--stdin'], input: `start\n${lines.join('')}prepare\ncommit\n` });
    } catch (error) {
      if (isRefLockFailure(error)) throw new RefMovedError(moves[0]?.ref ?? '');
      throw error;
    }
  }

  /** `git fsck --strict`: whether every object is sound and every ref resolves. */
  async fsck(): Promise<{ ok: boolean; output: string }> {
    try {
      const { stdout } = await runGit({ gitDir: this.gitDir, args: ['fsck', '--strict', '--no-progress'] });
      return { ok: true, output: stdout.toString('utf8') };
    } catch (error) {
      if (error instanceof GitError) return { ok: false, output: error.stderr };
      throw error;
    }
  }
}
