import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';

/*
 * Issue 13, "Dev mode, files, branches" (reference 2.0-2.4, 2.9-2.18): dev mode per credential,
 * file writes as pending changes of a personal dev-… branch, commits pushed to the parent, shared
 * branches and real merges. The repository is read with git itself.
 */

const git = (gitDir: string, ...args: string[]) =>
  execFileSync('git', [`--git-dir=${gitDir}`, ...args], { encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: '/nonexistent' } });
const STARTER = 'model/cubes/starter.yml';
type Json = Record<string, any>;

for (const dialect of DIALECTS) {
  describe(`data model: dev mode, files and branches (${dialect})`, () => {
    let t: TestApp;
    let repositoriesDir: string;
    let dev: Caller;
    const base = (id: number) => `/build/api/v1/deployments/${id}`;
    const dir = (id: number) => path.join(repositoriesDir, `${id}.git`);
    const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown, key: string = dev.key) =>
      t.request({ method, url, key, ...(body === undefined ? {} : { body }) });
    const ok = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown, key?: string): Promise<Json> => {
      const res = await call(method, url, body, key);
      if (res.statusCode !== 200) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
      return res.json() as Json;
    };
    const deployment = async (name: string) => {
      const res = await t.request({ method: 'POST', url: '/build/api/v1/deployments/', body: { name } });
      const id = (res.json() as { id: number }).id;
      await t.grant({ type: 'USER', id: dev.userId }, { type: 'DEPLOYMENT', id }, 'EDIT');
      return id;
    };
    const show = (id: number, rev: string, file: string) => git(dir(id), 'show', `${rev}:${file}`);
    const files = (id: number, rev: string) => git(dir(id), 'ls-tree', '-r', '--name-only', rev).trim().split('\n').filter(Boolean);
    const head = (id: number, branch: string) => git(dir(id), 'rev-parse', `refs/heads/${branch}`).trim();
    const newKey = async (userId = dev.userId) => t.key(userId);

    beforeAll(async () => {
      repositoriesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-dev-mode-'));
      t = await TestApp.create(dialect, { repositoriesDir });
      dev = await t.user('DEVELOPER');
      await t.store.db.updateTable('users').set({ first_name: 'Dana' }).where('id', '=', dev.userId).execute();
    });
    afterAll(async () => {
      await t.close();
      fs.rmSync(repositoriesDir, { recursive: true, force: true });
    });

    describe('dev mode (2.0, 2.9, 2.10)', () => {
      it('forks a personal dev-… branch from the deploy branch, reuses it on the next entry, and gives each credential its own', async () => {
        const id = await deployment('forks');
        const first = await ok('POST', `${base(id)}/dev-mode`);
        expect(first).toMatchObject({ active: true, parentBranch: 'main' });
        expect(first.branchName).toMatch(/^dev-/);
        expect(head(id, first.branchName)).toBe(head(id, 'main'));
        expect((await ok('POST', `${base(id)}/dev-mode`, {})).branchName).toBe(first.branchName);
        const other = await newKey();
        const second = await ok('POST', `${base(id)}/dev-mode`, { branchName: null }, other);
        expect(second.branchName).toMatch(/^dev-/);
        expect(second.branchName).not.toBe(first.branchName);
      });

      it('forks are keyed by their parent: another shared branch gets another dev branch', async () => {
        const id = await deployment('parents');
        await ok('POST', `${base(id)}/branches`, { name: 'feature/orders' });
        const onMain = await ok('POST', `${base(id)}/dev-mode`);
        const onFeature = await ok('POST', `${base(id)}/dev-mode`, { branchName: 'feature/orders' });
        expect(onFeature).toMatchObject({ active: true, parentBranch: 'feature/orders' });
        expect(onFeature.branchName).not.toBe(onMain.branchName);
        expect(git(dir(id), 'check-ref-format', '--branch', onFeature.branchName).trim()).toBe(onFeature.branchName);
      });

      it('refuses an unknown parent (404) and a dev-mode branch as parent (400)', async () => {
        const id = await deployment('bad parents');
        problem(await call('POST', `${base(id)}/dev-mode`, { branchName: 'nope' }), 404, 'BRANCH_NOT_FOUND');
        const mine = await ok('POST', `${base(id)}/dev-mode`);
        problem(await call('POST', `${base(id)}/dev-mode`, { branchName: mine.branchName }), 400, 'INVALID_BRANCH');
      });

      it('leaving releases the session: writes without a branch are refused again; leaving twice is fine', async () => {
        const id = await deployment('leave');
        await ok('POST', `${base(id)}/dev-mode`);
        expect(await ok('DELETE', `${base(id)}/dev-mode`)).toEqual({ success: true });
        expect(await ok('DELETE', `${base(id)}/dev-mode`)).toEqual({ success: true });
        problem(await call('PUT', `${base(id)}/data-model/files`, { files: [{ path: 'a.yml', content: 'a' }] }), 400, 'NO_DEV_MODE');
      });
    });

    describe('files (2.1-2.5)', () => {
      it('writes only to a dev-… branch: none active is 400, the deploy branch is 400 naming it, another credential’s dev branch is 403', async () => {
        const id = await deployment('write targets');
        problem(await call('PUT', `${base(id)}/data-model/files`, { files: [{ path: 'a.yml', content: 'a' }] }), 400, 'NO_DEV_MODE');
        const refused = problem(
          await call('PUT', `${base(id)}/data-model/files`, { files: [{ path: 'a.yml', content: 'a' }], branchName: 'main' }),
          400,
          'NOT_A_DEV_BRANCH',
        );
        expect(refused.detail).toContain('"main" is not a dev-mode branch');
        const theirs = await ok('POST', `${base(id)}/dev-mode`, undefined, await newKey());
        problem(
          await call('PUT', `${base(id)}/data-model/files`, { files: [{ path: 'a.yml', content: 'a' }], branchName: theirs.branchName }),
          403,
          'FORBIDDEN',
        );
        expect(files(id, 'main')).toEqual([STARTER]);
      });

      it('keeps writes as pending changes of the dev branch: the tree and live hashes show them, the branches’ commits do not', async () => {
        const id = await deployment('pending');
        const { branchName } = await ok('POST', `${base(id)}/dev-mode`);
        const devHead = head(id, branchName);
        await ok('PUT', `${base(id)}/data-model/files`, { files: [{ path: 'model/cubes/orders.yml', content: 'cubes: []\n' }] });
        expect(head(id, branchName)).toBe(devHead);
        expect(files(id, branchName)).toEqual([STARTER]);
        const tree = await ok('GET', `${base(id)}/data-model/files?withContent=true`);
        expect(tree.items).toHaveLength(1);
        expect(tree.items[0]).toMatchObject({ type: 'directory', name: 'model', path: 'model' });
        const cubes = tree.items[0].children[0];
        expect(cubes.children.map((n: Json) => n.name)).toEqual(['orders.yml', 'starter.yml']);
        expect(cubes.children[0]).toMatchObject({ type: 'file', path: 'model/cubes/orders.yml', content: 'cubes: []\n', size: 10 });
        expect(tree.data).toEqual(tree.items);
        // The deploy branch does not see them.
        const main = await ok('GET', `${base(id)}/data-model/files?branchName=main`);
        expect(main.items[0].children[0].children.map((n: Json) => n.name)).toEqual(['starter.yml']);
        const committed = await ok('GET', `${base(id)}/data-model/file-hashes`);
        expect(Object.keys(committed)).toEqual([STARTER]);
        const live = await ok('GET', `${base(id)}/data-model/file-hashes?live=true`);
        expect(live['model/cubes/orders.yml']).toEqual({
          hash: execFileSync('git', ['hash-object', '--stdin'], { input: 'cubes: []\n', encoding: 'utf8' }).trim(),
        });
      });

      it('keeps pending changes across a restart of the server', async () => {
        const id = await deployment('restart');
        await ok('POST', `${base(id)}/dev-mode`);
        await ok('PUT', `${base(id)}/data-model/files`, { files: [{ path: 'kept.yml', content: 'k: 1\n' }] });
        const again = await buildApp({ store: t.store, baseDomain: null, repositoriesDir, tenantCacheMs: 0 });
        try {
          const res = await again.inject({ url: `${base(id)}/data-model/files?withContent=true`, headers: { authorization: `Bearer ${dev.key}` } });
          expect((res.json() as Json).items.find((n: Json) => n.path === 'kept.yml')).toMatchObject({ content: 'k: 1\n' });
        } finally {
          await again.close();
        }
      });

      it('deletes and renames pending files; an unknown source is 404, a taken target 409, and a refused request changes nothing', async () => {
        const id = await deployment('edits');
        await ok('POST', `${base(id)}/dev-mode`);
        await ok('PUT', `${base(id)}/data-model/files`, {
          files: [
            { path: 'a.yml', content: 'a: 1\n' },
            { path: 'b.yml', content: 'b: 1\n' },
          ],
        });
        await ok('POST', `${base(id)}/data-model/files/rename`, { files: [{ path: 'a.yml', newPath: 'model/a2.yml' }] });
        problem(await call('POST', `${base(id)}/data-model/files/rename`, { files: [{ path: 'b.yml', newPath: 'model/a2.yml' }] }), 409, 'FILE_EXISTS');
        problem(await call('POST', `${base(id)}/data-model/files/rename`, { files: [{ path: 'nope.yml', newPath: 'x.yml' }] }), 404, 'FILE_NOT_FOUND');
        problem(await call('DELETE', `${base(id)}/data-model/files`, { files: [{ path: 'b.yml' }, { path: 'nope.yml' }] }), 404, 'FILE_NOT_FOUND');
        let hashes = await ok('GET', `${base(id)}/data-model/file-hashes?live=true`);
        expect(Object.keys(hashes).sort()).toEqual(['b.yml', STARTER, 'model/a2.yml'].sort());
        await ok('DELETE', `${base(id)}/data-model/files`, { files: [{ path: 'b.yml' }] });
        // A swap keeps both files.
        await ok('PUT', `${base(id)}/data-model/files`, {
          files: [
            { path: 'x.yml', content: 'x\n' },
            { path: 'y.yml', content: 'y\n' },
          ],
        });
        await ok('POST', `${base(id)}/data-model/files/rename`, {
          files: [
            { path: 'x.yml', newPath: 'y.yml' },
            { path: 'y.yml', newPath: 'x.yml' },
          ],
        });
        hashes = await ok('GET', `${base(id)}/data-model/file-hashes?live=true`);
        expect(Object.keys(hashes).sort()).toEqual([STARTER, 'model/a2.yml', 'x.yml', 'y.yml'].sort());
        const tree = await ok('GET', `${base(id)}/data-model/files?withContent=true`);
        expect(tree.items.find((n: Json) => n.path === 'x.yml').content).toBe('y\n');
      });

      it('confines paths to the repository and enforces the size limits (400, 413), writing nothing', async () => {
        const id = await deployment('paths');
        await ok('POST', `${base(id)}/dev-mode`);
        for (const bad of ['../up.yml', '/abs.yml', 'a/../../b.yml', '.git/config', 'a\\b.yml', 'a//b.yml', 'nul\u0000.yml', 'a/./b.yml', 'dir/']) {
          const res = problem(
            await call('PUT', `${base(id)}/data-model/files`, {
              files: [
                { path: 'fine.yml', content: 'f' },
                { path: bad, content: 'x' },
              ],
            }),
            400,
            'VALIDATION_FAILED',
          );
          expect(res.errors?.[0]?.pointer).toBe('/body/files/1/path');
        }
        problem(
          await call('PUT', `${base(id)}/data-model/files`, {
            files: [
              { path: 'a.yml', content: 'a' },
              { path: 'a.yml', content: 'b' },
            ],
          }),
          400,
          'VALIDATION_FAILED',
        );
        problem(
          await call('PUT', `${base(id)}/data-model/files`, { files: [{ path: 'big.yml', content: 'x'.repeat(1024 * 1024 + 1) }] }),
          413,
          'PAYLOAD_TOO_LARGE',
        );
        problem(
          await call('PUT', `${base(id)}/data-model/files`, { files: [{ path: 'model', content: 'a file where a directory is' }] }),
          400,
          'VALIDATION_FAILED',
        );
        problem(
          await call('PUT', `${base(id)}/data-model/files`, { files: [{ path: `${STARTER}/below.yml`, content: 'below a file' }] }),
          400,
          'VALIDATION_FAILED',
        );
        expect(Object.keys(await ok('GET', `${base(id)}/data-model/file-hashes?live=true`))).toEqual([STARTER]);
        problem(
          await call('PUT', `${base(id)}/data-model/files`, { files: Array.from({ length: 1001 }, (_, i) => ({ path: `f${i}.yml`, content: '' })) }),
          400,
          'VALIDATION_FAILED',
        );
      });

      it('pages through the top-level nodes of the tree only (2.1)', async () => {
        const id = await deployment('tree pages');
        await ok('POST', `${base(id)}/dev-mode`);
        await ok('PUT', `${base(id)}/data-model/files`, { files: ['z.yml', 'a.yml', 'docs/readme.md', 'm.yml'].map((p) => ({ path: p, content: p })) });
        const first = await ok('GET', `${base(id)}/data-model/files?first=2`);
        expect(first.items.map((n: Json) => n.name)).toEqual(['docs', 'model']);
        expect(first.items[1].children[0].children[0].name).toBe('starter.yml');
        expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
        const second = await ok('GET', `${base(id)}/data-model/files?first=2&after=${first.pageInfo.endCursor}`);
        expect(second.items.map((n: Json) => n.name)).toEqual(['a.yml', 'm.yml']);
        const third = await ok('GET', `${base(id)}/data-model/files?first=2&after=${second.pageInfo.endCursor}`);
        expect(third.items.map((n: Json) => n.name)).toEqual(['z.yml']);
        expect(third.pageInfo.hasNextPage).toBe(false);
        expect((await ok('GET', `${base(id)}/data-model/files`)).items).toHaveLength(5);
        problem(await call('GET', `${base(id)}/data-model/files?after=bogus`), 400, 'INVALID_CURSOR');
      });
    });

    describe('commit (2.15)', () => {
      it('turns the pending changes into one commit by the calling user and pushes it to the parent', async () => {
        const id = await deployment('commit');
        const { branchName } = await ok('POST', `${base(id)}/dev-mode`);
        await ok('PUT', `${base(id)}/data-model/files`, { files: [{ path: 'model/cubes/orders.yml', content: 'cubes: []\n' }] });
        await ok('DELETE', `${base(id)}/data-model/files`, { files: [{ path: STARTER }] });
        expect(await ok('POST', `${base(id)}/commit`, { message: 'Orders instead of the starter' })).toEqual({ success: true });
        expect(git(dir(id), 'log', '-1', '--format=%an|%ae|%s', branchName).trim()).toBe(`Dana|${dev.email}|Orders instead of the starter`);
        expect(head(id, 'main')).toBe(head(id, branchName));
        expect(files(id, 'main')).toEqual(['model/cubes/orders.yml']);
        expect(git(dir(id), 'for-each-ref', 'refs/mapi').trim()).toBe('');
        // Without a message, one is made from the changed files; exitDevMode ends the session.
        await ok('PUT', `${base(id)}/data-model/files`, { files: [{ path: 'model/cubes/orders.yml', content: 'cubes: [] # v2\n' }] });
        await ok('POST', `${base(id)}/commit`, { exitDevMode: true });
        expect(git(dir(id), 'log', '-1', '--format=%s', 'main').trim()).toBe('Update model/cubes/orders.yml');
        problem(await call('POST', `${base(id)}/commit`, {}), 400, 'NO_DEV_MODE');
        git(dir(id), 'fsck', '--strict');
      });

      it('is refused with 403 when the parent is a read-only deploy branch, committing nothing and keeping the pending changes', async () => {
        const id = await deployment('read only');
        const { branchName } = await ok('POST', `${base(id)}/dev-mode`);
        await ok('PUT', `${base(id)}/data-model/files`, { files: [{ path: 'x.yml', content: 'x\n' }] });
        expect((await t.request({ method: 'PUT', url: `/api/v1/deployments/${id}`, body: { deployBranchReadOnly: true } })).statusCode).toBe(200);
        const before = head(id, branchName);
        problem(await call('POST', `${base(id)}/commit`, {}), 403, 'FORBIDDEN');
        expect(head(id, branchName)).toBe(before);
        expect(Object.keys(await ok('GET', `${base(id)}/data-model/file-hashes?live=true`))).toContain('x.yml');
      });

      it('merges work of two credentials that changed different files; the same file is a 409 listing it, and resolveMergeConflict keeps the committing branch’s version', async () => {
        const id = await deployment('two devs');
        const other = await newKey();
        await ok('POST', `${base(id)}/dev-mode`);
        const theirs = await ok('POST', `${base(id)}/dev-mode`, undefined, other);
        await ok('PUT', `${base(id)}/data-model/files`, { files: [{ path: 'a.yml', content: 'a\n' }] });
        await ok('PUT', `${base(id)}/data-model/files`, { files: [{ path: 'b.yml', content: 'b\n' }] }, other);
        await ok('POST', `${base(id)}/commit`, { message: 'a' });
        await ok('POST', `${base(id)}/commit`, { message: 'b' }, other);
        expect(files(id, 'main').sort()).toEqual(['a.yml', 'b.yml', STARTER].sort());
        expect(git(dir(id), 'log', '-1', '--format=%P', 'main').trim().split(' ')).toHaveLength(2);

        await ok('PUT', `${base(id)}/data-model/files`, { files: [{ path: STARTER, content: 'cubes: [] # mine\n' }] });
        await ok('PUT', `${base(id)}/data-model/files`, { files: [{ path: STARTER, content: 'cubes: [] # theirs\n' }] }, other);
        await ok('POST', `${base(id)}/commit`, { message: 'mine' });
        const mainBefore = head(id, 'main');
        const conflict = problem(await call('POST', `${base(id)}/commit`, { message: 'theirs' }, other), 409, 'MERGE_CONFLICT');
        expect(conflict.conflicts).toEqual([STARTER]);
        expect(head(id, 'main')).toBe(mainBefore);
        expect(show(id, theirs.branchName, STARTER)).toBe('cubes: [] # theirs\n');
        await ok('POST', `${base(id)}/commit`, { resolveMergeConflict: true }, other);
        expect(show(id, 'main', STARTER)).toBe('cubes: [] # theirs\n');
        git(dir(id), 'fsck', '--strict');
      });
    });

    describe('branches (2.11-2.14, 2.16)', () => {
      it('lists, creates and validates branches; activate points the session without making the branch writable', async () => {
        const id = await deployment('branches');
        const created = await ok('POST', `${base(id)}/branches`, { name: 'feature/x', from: null, activate: true });
        expect(created).toEqual({ active: true, branchName: 'feature/x', parentBranch: 'main' });
        expect(head(id, 'feature/x')).toBe(head(id, 'main'));
        const list = await ok('GET', `${base(id)}/branches`);
        expect(list.items.map((b: Json) => b.name)).toEqual(['main', 'feature/x']);
        expect(list.items[1]).toMatchObject({ parentBranch: 'main', lastHash: head(id, 'main'), isStagingEnvironmentEnabled: false });
        expect(list.data).toEqual(list.items);
        problem(await call('PUT', `${base(id)}/data-model/files`, { files: [{ path: 'a.yml', content: 'a' }] }), 400, 'NOT_A_DEV_BRANCH');
        problem(await call('POST', `${base(id)}/branches`, { name: 'feature/x' }), 409, 'BRANCH_EXISTS');
        problem(await call('POST', `${base(id)}/branches`, { name: 'a..b' }), 400, 'VALIDATION_FAILED');
        problem(await call('POST', `${base(id)}/branches`, { name: 'dev-mine' }), 400, 'INVALID_BRANCH');
        problem(await call('POST', `${base(id)}/branches`, { name: 'y', from: 'nope' }), 404, 'BRANCH_NOT_FOUND');
        const page = await ok('GET', `${base(id)}/branches?first=1`);
        expect(page.items.map((b: Json) => b.name)).toEqual(['main']);
        expect((await ok('GET', `${base(id)}/branches?first=1&after=${page.pageInfo.endCursor}`)).items.map((b: Json) => b.name)).toEqual(['feature/x']);
      });

      it('deletes a branch: the deploy branch is 400, an unknown or already deleted one 404; children take its parent; open sessions fall back', async () => {
        const id = await deployment('delete');
        await ok('POST', `${base(id)}/branches`, { name: 'parent' });
        await ok('POST', `${base(id)}/branches`, { name: 'child', from: 'parent' });
        const watcher = await newKey();
        await ok('POST', `${base(id)}/branches`, { name: 'watched', from: 'parent', activate: true }, watcher);
        problem(await call('DELETE', `${base(id)}/branches?branchName=main`), 400, 'INVALID_BRANCH');
        problem(await call('DELETE', `${base(id)}/branches?branchName=nope`), 404, 'BRANCH_NOT_FOUND');
        expect(await ok('DELETE', `${base(id)}/branches?branchName=parent&removeOnUpstream=false`)).toEqual({ success: true });
        problem(await call('DELETE', `${base(id)}/branches?branchName=parent`), 404, 'BRANCH_NOT_FOUND');
        const listed = await ok('GET', `${base(id)}/branches`);
        expect(listed.items.find((b: Json) => b.name === 'child').parentBranch).toBe('main');
        expect(git(dir(id), 'for-each-ref', '--format=%(refname)', 'refs/heads/parent').trim()).toBe('');
        await ok('DELETE', `${base(id)}/branches?branchName=watched`);
        // The watcher's session fell back to the deploy branch: its tree is main's.
        expect((await ok('GET', `${base(id)}/data-model/files`, undefined, watcher)).items[0].name).toBe('model');
      });

      it('deleting a dev-… branch ends its session', async () => {
        const id = await deployment('end session');
        const { branchName } = await ok('POST', `${base(id)}/dev-mode`);
        await ok('DELETE', `${base(id)}/branches?branchName=${encodeURIComponent(branchName)}`);
        problem(await call('PUT', `${base(id)}/data-model/files`, { files: [{ path: 'a.yml', content: 'a' }] }), 400, 'NO_DEV_MODE');
      });

      it('switches the staging environment of shared branches only (2.14)', async () => {
        const id = await deployment('staging');
        await ok('POST', `${base(id)}/branches`, { name: 'stage' });
        expect((await ok('PUT', `${base(id)}/branches/staging-environment`, { enabled: true, branchName: 'stage' })).data).toMatchObject({
          name: 'stage',
          isStagingEnvironmentEnabled: true,
        });
        const listed = await ok('GET', `${base(id)}/branches`);
        expect(listed.items.find((b: Json) => b.name === 'stage').isStagingEnvironmentEnabled).toBe(true);
        const branchId = listed.items.find((b: Json) => b.name === 'stage').id;
        expect((await ok('PUT', `${base(id)}/branches/staging-environment`, { enabled: false, branchId })).data.isStagingEnvironmentEnabled).toBe(false);
        problem(await call('PUT', `${base(id)}/branches/staging-environment`, { enabled: true, branchName: 'main' }), 400, 'INVALID_BRANCH');
        const { branchName } = await ok('POST', `${base(id)}/dev-mode`);
        problem(await call('PUT', `${base(id)}/branches/staging-environment`, { enabled: true, branchName }), 400, 'INVALID_BRANCH');
        problem(await call('PUT', `${base(id)}/branches/staging-environment`, { enabled: true, branchName: 'nope' }), 404, 'BRANCH_NOT_FOUND');
        problem(await call('PUT', `${base(id)}/branches/staging-environment`, { enabled: true }), 400, 'VALIDATION_FAILED');
      });

      it('pull answers buildTriggered false while no upstream is connected (2.16)', async () => {
        const id = await deployment('pull');
        expect(await ok('POST', `${base(id)}/pull`, { branchName: 'main' })).toEqual({ buildTriggered: false });
        problem(await call('POST', `${base(id)}/pull`, { branchName: 'nope' }), 404, 'BRANCH_NOT_FOUND');
      });
    });

    describe('merges (2.17, 2.18)', () => {
      /** A shared branch `feature` whose dev fork committed `file`. */
      const featureWith = async (id: number, file: string, content: string, key = dev.key) => {
        await ok('POST', `${base(id)}/branches`, { name: 'feature' }, key).catch(() => undefined);
        await ok('POST', `${base(id)}/dev-mode`, { branchName: 'feature' }, key);
        await ok('PUT', `${base(id)}/data-model/files`, { files: [{ path: file, content }] }, key);
        await ok('POST', `${base(id)}/commit`, { message: `feature: ${file}`, exitDevMode: true }, key);
      };

      it('merges a branch into its parent with git; squash makes one commit; deleteBranch removes it', async () => {
        const id = await deployment('merge');
        await featureWith(id, 'f.yml', 'f\n');
        expect(files(id, 'feature')).toContain('f.yml');
        expect(files(id, 'main')).not.toContain('f.yml');
        expect(await ok('POST', `${base(id)}/merge`, { branchName: 'feature', squashCommits: true })).toEqual({ merged: true, branchDeleted: false });
        expect(show(id, 'main', 'f.yml')).toBe('f\n');
        expect(git(dir(id), 'log', '-1', '--format=%P|%s', 'main').trim()).toMatch(/^[0-9a-f]{40}\|Merge feature into main$/);
        expect(await ok('POST', `${base(id)}/merge`, { branchName: 'feature', deleteBranch: true, switchToParentBranch: true })).toEqual({
          merged: false,
          branchDeleted: true,
        });
        expect(git(dir(id), 'for-each-ref', 'refs/heads/feature').trim()).toBe('');
      });

      it('a conflict is a 409 listing the files and leaves both branches unchanged; merges into a deploy branch that allows none are 403', async () => {
        const id = await deployment('merge conflict');
        await featureWith(id, STARTER, 'cubes: [] # feature\n');
        await ok('POST', `${base(id)}/dev-mode`);
        await ok('PUT', `${base(id)}/data-model/files`, { files: [{ path: STARTER, content: 'cubes: [] # main\n' }] });
        await ok('POST', `${base(id)}/commit`, { exitDevMode: true });
        const heads = [head(id, 'main'), head(id, 'feature')];
        expect(problem(await call('POST', `${base(id)}/merge`, { branchName: 'feature' }), 409, 'MERGE_CONFLICT').conflicts).toEqual([STARTER]);
        expect(problem(await call('POST', `${base(id)}/merge-to-default`, { branchName: 'feature', message: 'm' }), 409, 'MERGE_CONFLICT').conflicts).toEqual([
          STARTER,
        ]);
        expect([head(id, 'main'), head(id, 'feature')]).toEqual(heads);
        expect((await t.request({ method: 'PUT', url: `/api/v1/deployments/${id}`, body: { deployBranchMergeAllowed: false } })).statusCode).toBe(200);
        problem(await call('POST', `${base(id)}/merge-to-default`, { branchName: 'feature', message: 'm' }), 403, 'FORBIDDEN');
        problem(await call('POST', `${base(id)}/merge`, { branchName: 'feature' }), 403, 'FORBIDDEN');
      });

      it('merge-to-default merges with the given message and keeps the branch unless removeBranchAfterMerge is true', async () => {
        const id = await deployment('merge to default');
        await featureWith(id, 'g.yml', 'g\n');
        await ok('POST', `${base(id)}/branches`, { name: 'side' });
        problem(await call('POST', `${base(id)}/merge-to-default`, { branchName: 'feature' }), 400, 'VALIDATION_FAILED');
        expect(await ok('POST', `${base(id)}/merge-to-default`, { branchName: 'feature', message: 'Ship g' })).toEqual({ merged: true, branchDeleted: false });
        expect(show(id, 'main', 'g.yml')).toBe('g\n');
        expect(files(id, 'feature')).toContain('g.yml');
        expect(await ok('POST', `${base(id)}/merge-to-default`, { branchName: 'side', message: 'nothing', removeBranchAfterMerge: true })).toEqual({
          merged: false,
          branchDeleted: true,
        });
        problem(await call('POST', `${base(id)}/merge-to-default`, { branchName: 'main', message: 'self' }), 400, 'INVALID_BRANCH');
      });
    });

    describe('access (DESIGN.md: SchemaRead = VIEW; SchemaUpdate = EDIT and DEVELOPER)', () => {
      it('a viewer reads the tree and branches but cannot enter dev mode or create branches; an explorer with EDIT cannot either; a key scoped elsewhere gets 403', async () => {
        const id = await deployment('access');
        const viewer = await t.user('VIEWER');
        await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id }, 'VIEW');
        expect((await call('GET', `${base(id)}/data-model/files`, undefined, viewer.key)).statusCode).toBe(200);
        expect((await call('GET', `${base(id)}/branches`, undefined, viewer.key)).statusCode).toBe(200);
        problem(await call('POST', `${base(id)}/dev-mode`, undefined, viewer.key), 403, 'FORBIDDEN');
        problem(await call('POST', `${base(id)}/branches`, { name: 'v' }, viewer.key), 403, 'FORBIDDEN');
        const explorer = await t.user('EXPLORER');
        await t.grant({ type: 'USER', id: explorer.userId }, { type: 'DEPLOYMENT', id }, 'EDIT');
        problem(await call('POST', `${base(id)}/dev-mode`, undefined, explorer.key), 403, 'FORBIDDEN');
        const elsewhere = await t.key(dev.userId, { deploymentIds: [await deployment('elsewhere')] });
        problem(await call('GET', `${base(id)}/data-model/files`, undefined, elsewhere), 403, 'KEY_SCOPE_FORBIDDEN');
        problem(await call('POST', `${base(id)}/dev-mode`, undefined, elsewhere), 403, 'KEY_SCOPE_FORBIDDEN');
      });
    });
  });
}
