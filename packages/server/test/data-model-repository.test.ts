import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Repository } from '../src/git/repository.js';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';

/*
 * Issue 13, "Repository": each deployment has its own git repository, created with it, holding
 * the starter model on the deploy branch; its history is readable through the API (extension);
 * the deploy settings are stored and written through PUT /api/v1/deployments/{id}.
 * Repositories are read here with git itself.
 */

const git = (gitDir: string, ...args: string[]) =>
  execFileSync('git', [`--git-dir=${gitDir}`, ...args], { encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: '/nonexistent' } });

for (const dialect of DIALECTS) {
  describe(`deployment repositories (${dialect})`, () => {
    let t: TestApp;
    const dirOf = (id: number) => t.app.services.repositories.repositories.pathOf(id);
    const create = async (name: string, key?: string) => {
      const res = await t.request({ method: 'POST', url: '/build/api/v1/deployments/', body: { name }, ...(key ? { key } : {}) });
      expect(res.statusCode).toBe(200);
      return (res.json() as { id: number }).id;
    };
    const commits = (id: number, query = '', key?: string | null) =>
      t.request({ url: `/build/api/v1/deployments/${id}/commits${query}`, ...(key !== undefined ? { key } : {}) });
    const put = (id: number, body: unknown, key?: string) => t.request({ method: 'PUT', url: `/api/v1/deployments/${id}`, body, ...(key ? { key } : {}) });
    const settings = async (id: number) => (await t.request({ url: `/api/v1/deployments/${id}/settings` })).json() as Record<string, unknown>;

    beforeAll(async () => {
      t = await TestApp.create(dialect);
    });
    afterAll(() => t.close());

    it('creating a deployment creates its repository: the deploy branch main holds only the starter model, committed by the creating user', async () => {
      await t.store.db.updateTable('users').set({ first_name: 'Grace' }).where('id', '=', t.admin.userId).execute();
      const id = await create('with repo');
      const dir = dirOf(id);
      expect(git(dir, 'rev-parse', '--is-bare-repository').trim()).toBe('true');
      expect(git(dir, 'log', '--format=%an|%ae|%s', 'main').trim()).toBe(`Grace|${t.admin.email}|Create deployment with repo with the starter model`);
      expect(git(dir, 'ls-tree', '-r', '--name-only', 'main').trim()).toBe('model/cubes/starter.yml');
      const model = parse(git(dir, 'show', 'main:model/cubes/starter.yml')) as { cubes: Array<{ name: string }>; views?: Array<{ name: string }> };
      const names = [...model.cubes, ...(model.views ?? [])].map((c) => c.name);
      expect(names.length).toBeGreaterThan(0);
      for (const name of names) expect(name.startsWith('starter_')).toBe(true);
      expect(git(dir, 'for-each-ref', '--format=%(refname)').trim()).toBe('refs/heads/main');
      git(dir, 'fsck', '--strict');
    });

    it('a deployment made before repositories existed gets its repository, with the starter model, on first use', async () => {
      const id = await t.deployment('older');
      expect(fs.existsSync(dirOf(id))).toBe(false);
      const res = await commits(id);
      expect(res.statusCode).toBe(200);
      const page = res.json() as { items: Array<{ message: string; authorName: string }> };
      expect(page.items).toHaveLength(1);
      expect(git(dirOf(id), 'ls-tree', '-r', '--name-only', 'main').trim()).toBe('model/cubes/starter.yml');
    });

    it('lists a branch’s commits newest first with author, message and times; the cursor continues the same history while others commit (extension)', async () => {
      const id = await create('history');
      const repo = new Repository(dirOf(id));
      for (let i = 1; i <= 4; i++) {
        await repo.commit({
          ref: 'refs/heads/main',
          expectedHead: await repo.head('main'),
          changes: new Map([[`model/f${i}.yml`, `n: ${i}\n`]]),
          author: { name: `Dev ${i}`, email: `dev${i}@example.com` },
          message: `Change ${i}`,
        });
      }
      const first = await commits(id, '?first=2');
      expect(first.statusCode).toBe(200);
      const page1 = first.json() as { items: Array<Record<string, unknown>>; pageInfo: { endCursor: string; hasNextPage: boolean; hasPreviousPage: boolean } };
      expect(page1.items.map((c) => c.message)).toEqual(['Change 4', 'Change 3']);
      expect(page1.items[0]).toMatchObject({ authorName: 'Dev 4', authorEmail: 'dev4@example.com', hash: git(dirOf(id), 'rev-parse', 'main').trim() });
      expect(page1.items[0]?.parentHashes).toEqual([page1.items[1]?.hash]);
      expect(Date.parse(String(page1.items[0]?.authoredAt))).not.toBeNaN();
      expect(page1.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
      // A commit made between pages does not shift the pages after the first.
      await repo.commit({
        ref: 'refs/heads/main',
        expectedHead: await repo.head('main'),
        changes: new Map([['model/late.yml', 'x\n']]),
        author: { name: 'Late', email: 'late@example.com' },
        message: 'Late',
      });
      const page2 = (await commits(id, `?first=2&after=${page1.pageInfo.endCursor}`)).json() as typeof page1;
      expect(page2.items.map((c) => c.message)).toEqual(['Change 2', 'Change 1']);
      expect(page2.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
      const page3 = (await commits(id, `?first=2&after=${page2.pageInfo.endCursor}`)).json() as typeof page1;
      expect(page3.items.map((c) => c.message)).toEqual(['Create deployment history with the starter model']);
      expect(page3.pageInfo.hasNextPage).toBe(false);
      expect(((await commits(id)).json() as typeof page1).items[0]?.message).toBe('Late');
    });

    it('answers an unknown branch with 404 and a cursor it did not issue with 400', async () => {
      const id = await create('bad input');
      problem(await commits(id, '?branchName=nope'), 404, 'BRANCH_NOT_FOUND');
      problem(await commits(id, '?after=garbage'), 400, 'INVALID_CURSOR');
      const forged = Buffer.from(JSON.stringify(['a'.repeat(40), 1])).toString('base64url');
      problem(await commits(id, `?after=${forged}`), 400, 'INVALID_CURSOR');
      problem(await commits(id, '?first=0'), 400, 'VALIDATION_FAILED');
    });

    describe('access', () => {
      let id: number;
      let viewer: Caller;
      let stranger: Caller;
      beforeAll(async () => {
        id = await create('guarded');
        viewer = await t.user('VIEWER');
        stranger = await t.user('DEVELOPER');
        await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id }, 'VIEW');
      });

      it('SchemaRead (VIEW on the deployment) reads the history; no access is 403; another deployment’s key 403', async () => {
        expect((await commits(id, '', viewer.key)).statusCode).toBe(200);
        problem(await commits(id, '', stranger.key), 403, 'FORBIDDEN');
        const other = await create('other');
        const scoped = await t.key(t.admin.userId, { deploymentIds: [other] });
        problem(await commits(id, '', scoped), 403, 'KEY_SCOPE_FORBIDDEN');
        problem(await commits(id, '', null), 401, 'UNAUTHENTICATED');
      });

      it('only MANAGE and a developer role change deploy settings', async () => {
        problem(await put(id, { deployBranchReadOnly: true }, viewer.key), 403, 'FORBIDDEN');
        expect((await settings(id)).deployBranchReadOnly).toBe(false);
      });
    });

    describe('deploy settings (reference 1.0, 1.4, 1.6)', () => {
      it('have the reference’s defaults', async () => {
        const id = await create('defaults');
        expect(await settings(id)).toMatchObject({
          deployBranchName: 'main',
          deployBranchReadOnly: false,
          deployBranchMergeAllowed: true,
          deployProjectRoot: '',
          deployMode: 'git',
        });
      });

      it('are merged by PUT: keys left out or null are kept, the rest are stored', async () => {
        const id = await create('merged');
        expect((await put(id, { deployBranchReadOnly: true, deployMode: 'cli' })).statusCode).toBe(200);
        expect((await put(id, { deployBranchMergeAllowed: false, deployProjectRoot: '/analytics/', deployMode: null })).statusCode).toBe(200);
        expect(await settings(id)).toMatchObject({
          deployBranchName: 'main',
          deployBranchReadOnly: true,
          deployBranchMergeAllowed: false,
          deployProjectRoot: 'analytics',
          deployMode: 'cli',
        });
      });

      it('take a deploy branch that exists in the repository, and refuse one that does not, changing nothing', async () => {
        const id = await create('branches');
        const repo = new Repository(dirOf(id));
        await repo.commit({
          ref: 'refs/heads/release',
          expectedHead: null,
          parent: await repo.head('main'),
          changes: new Map(),
          author: { name: 'R', email: 'r@example.com' },
          message: 'Release branch',
        });
        const refused = problem(await put(id, { deployBranchName: 'nope', deployBranchReadOnly: true }), 400, 'VALIDATION_FAILED');
        expect(refused.errors?.[0]?.pointer).toBe('/body/deployBranchName');
        problem(await put(id, { deployBranchName: 'a..b' }), 400, 'VALIDATION_FAILED');
        expect(await settings(id)).toMatchObject({ deployBranchName: 'main', deployBranchReadOnly: false });
        expect((await put(id, { deployBranchName: 'release' })).statusCode).toBe(200);
        expect((await settings(id)).deployBranchName).toBe('release');
        expect(((await commits(id)).json() as { items: Array<{ message: string }> }).items[0]?.message).toBe('Release branch');
      });

      it('refuse a project root outside the repository', async () => {
        const id = await create('roots');
        for (const root of ['../up', 'a/../../b', 'x\\y', '.git/hooks']) {
          expect(problem(await put(id, { deployProjectRoot: root }), 400, 'VALIDATION_FAILED').errors?.[0]?.pointer).toBe('/body/deployProjectRoot');
        }
        expect((await settings(id)).deployProjectRoot).toBe('');
      });
    });

    it('deleting a deployment deletes its repository', async () => {
      const id = await create('doomed');
      expect(fs.existsSync(dirOf(id))).toBe(true);
      expect((await t.request({ method: 'DELETE', url: `/api/v1/deployments/${id}` })).statusCode).toBe(200);
      expect(fs.existsSync(dirOf(id))).toBe(false);
    });
  });
}
