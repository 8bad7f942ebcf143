import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exclusive } from '../src/db/transactions.js';
import { blobSha } from '../src/git/objects.js';
import { isValidBranchName } from '../src/git/refs.js';
import { Repositories } from '../src/git/repositories.js';
import { RefMovedError } from '../src/git/repository.js';
import { DIALECTS, createTestStore, type TestStore } from './harness.js';

/*
 * The git/ service: real repositories written with git's own commands, read back here with the
 * git command line, as any git client would read them.
 */

const git = (gitDir: string, ...args: string[]) =>
  execFileSync('git', [`--git-dir=${gitDir}`, ...args], { encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: '/nonexistent' } });
const author = { name: 'Ada Lovelace', email: 'ada@example.com' };
const serialLock = <T>(_id: number, fn: () => Promise<T>) => fn();

describe('git repositories', () => {
  let root: string;
  let repos: Repositories;
  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-git-'));
    repos = new Repositories(root, serialLock);
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('creates a bare repository whose first commit holds the files, by the author, on the named branch', async () => {
    const repo = await repos.create(1, { branch: 'main', files: new Map([['model/a.yml', 'cubes: []\n']]), author, message: 'First' }, 'main');
    const dir = repos.pathOf(1);
    expect(git(dir, 'rev-parse', '--is-bare-repository').trim()).toBe('true');
    expect(git(dir, 'log', '--format=%an|%ae|%s', 'main').trim()).toBe('Ada Lovelace|ada@example.com|First');
    expect(git(dir, 'show', 'main:model/a.yml')).toBe('cubes: []\n');
    expect(git(dir, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
    expect(await repo.head('main')).toBe(git(dir, 'rev-parse', 'main').trim());
    expect((await repo.fsck()).ok).toBe(true);
    // A second create keeps the first repository.
    await repos.create(1, { branch: 'main', files: new Map([['other.yml', 'x']]), author, message: 'Again' }, 'main');
    expect(git(dir, 'rev-list', '--count', 'main').trim()).toBe('1');
  });

  it('commits changes, deletions and awkward paths as git reads them; blob ids are git hash-object ids', async () => {
    const repo = await repos.create(
      2,
      {
        branch: 'main',
        files: new Map([
          ['keep.yml', 'k'],
          ['gone.yml', 'g'],
        ]),
        author,
        message: 'one',
      },
      'main',
    );
    const head = await repo.head('main');
    const odd = 'model/with space/"quoted" ü.yml';
    const sha = await repo.commit({
      ref: 'refs/heads/main',
      expectedHead: head,
      changes: new Map([
        ['gone.yml', null],
        [odd, 'odd\n'],
      ]),
      author,
      message: 'two\n\nbody line',
    });
    const dir = repos.pathOf(2);
    expect(git(dir, 'ls-tree', '-r', '-z', '--name-only', 'main').split('\0').filter(Boolean)).toEqual(['keep.yml', odd]);
    expect(git(dir, 'log', '-1', '--format=%B', 'main').trim()).toBe('two\n\nbody line');
    expect(git(dir, 'rev-parse', 'main').trim()).toBe(sha);
    const tree = await repo.tree(sha);
    const entry = tree.find((e) => e.path === odd);
    expect(entry?.sha).toBe(blobSha('odd\n'));
    expect(entry?.sha).toBe(execFileSync('git', ['hash-object', '--stdin'], { input: 'odd\n', encoding: 'utf8' }).trim());
    expect((await repo.blobs([entry?.sha ?? ''])).get(entry?.sha ?? '')?.toString()).toBe('odd\n');
    // No pending refs are left behind.
    expect(git(dir, 'for-each-ref', 'refs/mapi').trim()).toBe('');
    const log = await repo.log(sha, 0, 10);
    expect(log.map((c) => c.message)).toEqual(['two\n\nbody line', 'one']);
    expect(log[0]).toMatchObject({ authorName: 'Ada Lovelace', authorEmail: 'ada@example.com', parents: [head] });
  });

  it('refuses a commit computed against a head that has moved, and leaves the branch where the other writer put it', async () => {
    const repo = await repos.create(3, { branch: 'main', files: new Map([['a', '1']]), author, message: 'one' }, 'main');
    const seen = await repo.head('main');
    const theirs = await repo.commit({ ref: 'refs/heads/main', expectedHead: seen, changes: new Map([['a', '2']]), author, message: 'theirs' });
    await expect(repo.commit({ ref: 'refs/heads/main', expectedHead: seen, changes: new Map([['a', '3']]), author, message: 'ours' })).rejects.toBeInstanceOf(
      RefMovedError,
    );
    expect(await repo.head('main')).toBe(theirs);
    // Creating a branch that exists is refused the same way.
    await expect(
      repo.commit({ ref: 'refs/heads/main', expectedHead: null, parent: theirs, changes: new Map(), author, message: 'new?' }),
    ).rejects.toBeInstanceOf(RefMovedError);
    expect(git(repos.pathOf(3), 'for-each-ref', 'refs/mapi').trim()).toBe('');
  });

  it('merges three ways with git: a clean merge gives a tree, overlapping edits list the conflicting paths', async () => {
    const repo = await repos.create(
      4,
      {
        branch: 'main',
        files: new Map([
          ['a.yml', 'a\nb\nc\n'],
          ['b.yml', 'x\n'],
        ]),
        author,
        message: 'base',
      },
      'main',
    );
    const base = (await repo.head('main')) as string;
    const left = await repo.commit({
      ref: 'refs/heads/left',
      expectedHead: null,
      parent: base,
      changes: new Map([['a.yml', 'A\nb\nc\n']]),
      author,
      message: 'left',
    });
    const right = await repo.commit({
      ref: 'refs/heads/right',
      expectedHead: null,
      parent: base,
      changes: new Map([['a.yml', 'a\nb\nC\n']]),
      author,
      message: 'right',
    });
    const clean = await repo.mergeTrees(left, right);
    expect(clean.conflicts).toEqual([]);
    const merged = await repo.commitTree(clean.tree, [left, right], author, 'merge');
    expect(git(repos.pathOf(4), 'show', `${merged}:a.yml`)).toBe('A\nb\nC\n');
    const clash = await repo.commit({
      ref: 'refs/heads/clash',
      expectedHead: null,
      parent: base,
      changes: new Map([
        ['a.yml', 'Z\nb\nc\n'],
        ['b.yml', 'y\n'],
      ]),
      author,
      message: 'clash',
    });
    expect((await repo.mergeTrees(left, clash)).conflicts).toEqual(['a.yml']);
    expect(await repo.isAncestor(base, left)).toBe(true);
    expect(await repo.isAncestor(left, right)).toBe(false);
  });

  it('removes a repository whole', async () => {
    await repos.create(5, null, 'main');
    expect(await repos.exists(5)).toBe(true);
    await repos.remove(5);
    expect(await repos.exists(5)).toBe(false);
    expect(fs.existsSync(repos.pathOf(5))).toBe(false);
    await repos.remove(5);
  });

  it('checks branch names as git does', async () => {
    for (const name of ['main', 'feature/orders', 'dbt-sync/main-20260817120000-a1b2c3d4', 'dev-42-main']) expect(await isValidBranchName(name)).toBe(true);
    for (const name of ['', 'a..b', 'a b', 'x.lock', '-x', 'a~1', 'a^', 'a:b', 'a\\b', '.hidden', 'a/', 'HEAD', 'a@{1}', 'x\n'])
      expect(await isValidBranchName(name)).toBe(false);
  });
});

for (const dialect of DIALECTS) {
  describe(`repository write lock (${dialect})`, () => {
    let store: TestStore;
    let other: ReturnType<TestStore['reopen']>;
    beforeAll(async () => {
      store = await createTestStore(dialect);
      other = store.reopen();
    });
    afterAll(async () => {
      await other.close();
      await store.destroy();
    });

    it('never lets two writers of one repository overlap; writers of different repositories do not wait for each other', async () => {
      // On PostgreSQL the two stores are two pools, as two server processes would have.
      const stores = dialect === 'postgres' ? [store, other] : [store, store];
      let inside = 0;
      let most = 0;
      const section = async () => {
        inside++;
        most = Math.max(most, inside);
        await new Promise((resolve) => setImmediate(resolve));
        await new Promise((resolve) => setTimeout(resolve, 2));
        inside--;
      };
      await Promise.all(Array.from({ length: 20 }, (_, i) => exclusive(stores[i % 2] as TestStore, 'repository:1', section)));
      expect(most).toBe(1);
      let overlapped = false;
      let a = false;
      await Promise.all([
        exclusive(store, 'repository:2', async () => {
          a = true;
          await new Promise((resolve) => setTimeout(resolve, 50));
          a = false;
        }),
        exclusive(stores[1] as TestStore, 'repository:3', async () => {
          await new Promise((resolve) => setTimeout(resolve, 10));
          overlapped = a;
        }),
      ]);
      expect(overlapped).toBe(true);
    });
  });
}
