import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_JOB } from '../src/areas/data-model/builds.service.js';
import { insertBuild } from '../src/areas/data-model/builds.store.js';
import { DEAD_WORKER } from '../src/jobs/index.js';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';

/*
 * Issue 13, "Uploads and builds" and "Validation" (reference 1.8, 2.19): a build compiles the
 * model of one commit on the jobs service, with status, timing, commit and log lines; the deploy
 * branch builds whenever it moves (not in deployMode cli); validate gives the same verdict.
 */

const git = (gitDir: string, ...args: string[]) =>
  execFileSync('git', [`--git-dir=${gitDir}`, ...args], { encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: '/nonexistent' } });
type Json = Record<string, any>;
const FINAL = new Set(['success', 'failed']);

for (const dialect of DIALECTS) {
  describe(`data model: builds and validation (${dialect})`, () => {
    let t: TestApp;
    let dev: Caller;
    const base = (id: number) => `/build/api/v1/deployments/${id}`;
    const dir = (id: number) => t.app.services.repositories.repositories.pathOf(id);
    const ok = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown, key: string = dev.key): Promise<Json> => {
      const res = await t.request({ method, url, key, ...(body === undefined ? {} : { body }) });
      if (res.statusCode !== 200) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
      return res.json() as Json;
    };
    const deployment = async (name: string) => {
      const id = ((await t.request({ method: 'POST', url: '/build/api/v1/deployments/', body: { name } })).json() as { id: number }).id;
      await t.grant({ type: 'USER', id: dev.userId }, { type: 'DEPLOYMENT', id }, 'EDIT');
      return id;
    };
    /** The branch's latest build once it has finished building commit `commit` (a condition awaited, not a sleep). */
    const built = async (id: number, commit: string, branch = 'main'): Promise<Json> => {
      for (let i = 0; i < 1000; i++) {
        const status = await ok('GET', `/api/v1/deployments/${id}/build-status?branchName=${branch}`);
        if (status.lastHash === commit && FINAL.has(status.status)) return status;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`no finished build of ${commit}`);
    };
    const head = (id: number, branch = 'main') => git(dir(id), 'rev-parse', `refs/heads/${branch}`).trim();
    /** A build queued while this process's worker is stopped (builds.enqueue would start it). */
    const queuedBuild = async (id: number, cause: string) => {
      const build = await insertBuild(
        t.store.db,
        { tenantId: t.tenantId, deploymentId: id, branch: 'main', mode: 'production', commit: head(id), cause },
        new Date().toISOString(),
      );
      const job = await t.app.services.jobs.enqueue(t.tenantId, BUILD_JOB, { buildId: build.id });
      await t.store.db.updateTable('builds').set({ job_id: job.id }).where('id', '=', build.id).execute();
      return { ...build, job_id: job.id };
    };
    const change = async (id: number, files: Array<{ path: string; content: string }>, remove: string[] = []) => {
      await ok('POST', `${base(id)}/dev-mode`);
      if (files.length) await ok('PUT', `${base(id)}/data-model/files`, { files });
      if (remove.length) await ok('DELETE', `${base(id)}/data-model/files`, { files: remove.map((path) => ({ path })) });
      await ok('POST', `${base(id)}/commit`, { exitDevMode: true });
    };

    beforeAll(async () => {
      t = await TestApp.create(dialect);
      dev = await t.user('DEVELOPER');
    });
    afterAll(() => t.close());

    it('a new deployment’s first build compiles the starter model, with commit, tree, timing and log lines', async () => {
      const id = await deployment('first build');
      const status = await built(id, head(id));
      expect(status).toMatchObject({
        deploymentId: id,
        branchName: 'main',
        mode: 'production',
        status: 'success',
        errorText: null,
        filesHash: git(dir(id), 'rev-parse', 'main^{tree}').trim(),
      });
      expect(Number.isInteger(status.buildJobId)).toBe(true);
      const build = await ok('GET', `/api/v1/deployments/${id}/builds/${status.buildJobId}`);
      expect(build).toMatchObject({ id: status.buildJobId, status: 'success', commit: head(id), cubesCount: 1, cause: 'creation of the deployment' });
      expect(Date.parse(build.finishedAt)).toBeGreaterThanOrEqual(Date.parse(build.startedAt));
      const logs = await ok('GET', `/api/v1/deployments/${id}/builds/${status.buildJobId}/logs`);
      expect(logs.items.map((l: Json) => l.line)).toEqual([
        `Building main at ${head(id)}`,
        'Read 1 model file',
        expect.stringMatching(/^Compiled 1 cube and 1 view in \d+ ms$/),
      ]);
      const firstLine = await ok('GET', `/api/v1/deployments/${id}/builds/${status.buildJobId}/logs?first=1`);
      expect((await ok('GET', `/api/v1/deployments/${id}/builds/${status.buildJobId}/logs?first=5&after=${firstLine.pageInfo.endCursor}`)).items).toHaveLength(
        2,
      );
    });

    it('reports a branch nothing has built as building with “Branch is not active”, and an unknown branch with “Bad branch”', async () => {
      const id = await deployment('statuses');
      await ok('POST', `${base(id)}/branches`, { name: 'feature' });
      expect(await ok('GET', `/api/v1/deployments/${id}/build-status?branchName=feature`)).toMatchObject({
        branchName: 'feature',
        mode: 'dev_mode',
        status: 'building',
        errorText: 'Branch is not active',
        buildJobId: null,
        lastHash: head(id, 'feature'),
      });
      expect(await ok('GET', `/api/v1/deployments/${id}/build-status?branchName=nope`)).toMatchObject({
        status: 'failed',
        errorText: 'Bad branch',
        lastHash: null,
      });
    });

    it('builds production whenever the deploy branch moves; a broken model fails with the file and line, in the status and the log', async () => {
      const id = await deployment('rebuilds');
      await built(id, head(id));
      await change(id, [
        {
          path: 'model/cubes/broken.yml',
          content: 'cubes:\n  - name: broken\n    sql_table: t\n    measures:\n      - name: total\n        type: summ\n        sql: amount\n',
        },
      ]);
      const failed = await built(id, head(id));
      expect(failed.status).toBe('failed');
      expect(failed.errorText).toMatch(/^1 error in the data model; the first: model\/cubes\/broken\.yml:6 .*summ/);
      const logs = await ok('GET', `/api/v1/deployments/${id}/builds/${failed.buildJobId}/logs`);
      expect(logs.items.map((l: Json) => l.line)).toContainEqual(expect.stringMatching(/^model\/cubes\/broken\.yml:6:\d+ .*unknown type "summ"/));
      await change(id, [], ['model/cubes/broken.yml']);
      expect((await built(id, head(id))).status).toBe('success');
      const history = await ok('GET', `/api/v1/deployments/${id}/builds?first=2`);
      expect(history.items.map((b: Json) => b.status)).toEqual(['success', 'failed']);
      expect(history.pageInfo.hasNextPage).toBe(true);
      const older = await ok('GET', `/api/v1/deployments/${id}/builds?first=2&after=${history.pageInfo.endCursor}`);
      expect(older.items.map((b: Json) => b.cause)).toEqual(['creation of the deployment']);
    });

    it('an alias bomb or a too-deep YAML file fails its build quickly with the file named; the last good build stays', async () => {
      const id = await deployment('hostile yaml');
      const good = await built(id, head(id));
      let bomb = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
      for (let i = 0, prev = 'a'; i < 9; prev = `b${i}`, i++) bomb += `b${i}: &b${i} [${Array(9).fill(`*${prev}`).join(',')}]\n`;
      for (const [path, content, error] of [
        ['model/bomb.yml', bomb, /^1 error in the data model; the first: model\/bomb\.yml .*YAML aliases expand too far/],
        ['model/deep.yml', '- '.repeat(400_000), /^1 error in the data model; the first: model\/deep\.yml:1 .*nests deeper than 64 levels/],
      ] as const) {
        const started = Date.now();
        await change(id, [{ path, content }]);
        const failed = await built(id, head(id));
        expect(Date.now() - started).toBeLessThan(10_000);
        expect(failed).toMatchObject({ status: 'failed', errorText: expect.stringMatching(error) });
        expect((await ok('GET', `${base(id)}/data-model/validate`)).valid).toBe(false);
        await change(id, [], [path]);
        expect((await built(id, head(id))).status).toBe('success');
      }
      const history = await ok('GET', `/api/v1/deployments/${id}/builds?first=5`);
      expect(history.items.map((b: Json) => b.status)).toEqual(['success', 'failed', 'success', 'failed', 'success']);
      expect(history.items.at(-1).id).toBe(good.buildJobId);
    });

    it('a pushed model file over the limit is an error named by its size and never read (a compressed blob may be huge)', async () => {
      const id = await deployment('huge blob');
      await built(id, head(id));
      const gitDir = dir(id);
      // What a push leaves: a commit on main whose tree holds a 3 MiB blob (a few KiB in a pack).
      const blob = execFileSync('git', [`--git-dir=${gitDir}`, 'hash-object', '-w', '--stdin'], {
        input: `# ${'a'.repeat(3 * 1024 * 1024)}\n`,
        encoding: 'utf8',
      }).trim();
      const listing = git(gitDir, 'ls-tree', 'main^{tree}');
      const tree = execFileSync('git', [`--git-dir=${gitDir}`, 'mktree'], { input: `${listing}100644 blob ${blob}\thuge.yml\n`, encoding: 'utf8' }).trim();
      const who = { GIT_AUTHOR_NAME: 'Pat', GIT_AUTHOR_EMAIL: 'pat@example.com', GIT_COMMITTER_NAME: 'Pat', GIT_COMMITTER_EMAIL: 'pat@example.com' };
      const commit = execFileSync('git', [`--git-dir=${gitDir}`, 'commit-tree', tree, '-p', head(id), '-m', 'huge'], {
        encoding: 'utf8',
        env: { ...process.env, HOME: '/nonexistent', ...who },
      }).trim();
      git(gitDir, 'update-ref', 'refs/heads/main', commit);
      const verdict = await ok('GET', `${base(id)}/data-model/validate`);
      expect(verdict).toMatchObject({
        valid: false,
        errors: [{ fileName: 'huge.yml', message: `The file is ${3 * 1024 * 1024 + 3} bytes; a model file may hold at most 1048576.` }],
      });
    });

    it('merge-to-default builds production; in deployMode cli neither commits nor merges do', async () => {
      const id = await deployment('cli');
      await built(id, head(id));
      await ok('POST', `${base(id)}/branches`, { name: 'feature' });
      await ok('POST', `${base(id)}/dev-mode`, { branchName: 'feature' });
      await ok('PUT', `${base(id)}/data-model/files`, { files: [{ path: 'model/extra.yml', content: 'cubes: []\n' }] });
      await ok('POST', `${base(id)}/commit`, { exitDevMode: true });
      await ok('POST', `${base(id)}/merge-to-default`, { branchName: 'feature', message: 'Ship' });
      expect((await built(id, head(id))).status).toBe('success');
      const before = (await ok('GET', `/api/v1/deployments/${id}/builds`)).items.length;
      expect((await t.request({ method: 'PUT', url: `/api/v1/deployments/${id}`, body: { deployMode: 'cli' } })).statusCode).toBe(200);
      await change(id, [{ path: 'model/more.yml', content: 'cubes: []\n' }]);
      expect((await ok('GET', `/api/v1/deployments/${id}/builds`)).items.length).toBe(before);
    });

    it('builds only the files below deployProjectRoot', async () => {
      const id = await deployment('root');
      await change(id, [
        {
          path: 'analytics/cubes/orders.yml',
          content: 'cubes:\n  - name: orders\n    sql_table: orders\n    measures:\n      - name: count\n        type: count\n',
        },
      ]);
      expect((await built(id, head(id))).status).toBe('success');
      expect((await t.request({ method: 'PUT', url: `/api/v1/deployments/${id}`, body: { deployProjectRoot: 'analytics' } })).statusCode).toBe(200);
      // Outside the root: never read.
      await change(id, [{ path: 'model/cubes/broken.yml', content: 'cubes: [' }]);
      const status = await built(id, head(id));
      expect(status.status).toBe('success');
      expect((await ok('GET', `/api/v1/deployments/${id}/builds/${status.buildJobId}`)).cubesCount).toBe(1);
      expect(await ok('GET', `${base(id)}/data-model/validate`)).toMatchObject({ valid: true, cubesCount: 1 });
    });

    it('a build whose job ended without it (its process died on the last attempt) reads as failed, never building forever', async () => {
      const id = await deployment('orphan');
      await built(id, head(id));
      await t.app.services.jobs.stop();
      try {
        const build = await queuedBuild(id, 'test');
        // What the jobs service's sweep leaves when the process running the last attempt died.
        await t.store.db
          .updateTable('jobs')
          .set({ state: 'failed', error: DEAD_WORKER, finished_at: new Date().toISOString() })
          .where('id', '=', build.job_id ?? 0)
          .execute();
        await t.store.db.updateTable('builds').set({ status: 'building' }).where('id', '=', build.id).execute();
        expect(await ok('GET', `/api/v1/deployments/${id}/build-status`)).toMatchObject({ buildJobId: build.id, status: 'failed', errorText: DEAD_WORKER });
      } finally {
        await t.app.services.jobs.start();
      }
    });

    it('a build whose first attempt died is run again by the next worker and finishes', async () => {
      const id = await deployment('rerun');
      await built(id, head(id));
      await t.app.services.jobs.stop();
      let build;
      try {
        build = await queuedBuild(id, 'rerun');
        // What the sweep leaves when the process running the first attempt died: queued again, one attempt spent, the build half done.
        await t.store.db
          .updateTable('jobs')
          .set({ attempts: 1 })
          .where('id', '=', build.job_id ?? 0)
          .execute();
        await t.store.db.updateTable('builds').set({ status: 'building', started_at: new Date().toISOString() }).where('id', '=', build.id).execute();
      } finally {
        await t.app.services.jobs.start();
      }
      const done = await t.app.services.builds.waitFor(build, 30_000);
      expect(done.status).toBe('success');
      expect((await t.app.services.jobs.get(t.tenantId, build.job_id ?? 0))?.attempts).toBe(2);
    });

    describe('validate (2.19)', () => {
      it('validates the deploy branch by default, and the dev-mode branch with its pending changes; an invalid model is a 200 with its errors', async () => {
        const id = await deployment('validate');
        expect(await ok('GET', `${base(id)}/data-model/validate`)).toEqual({
          deploymentId: id,
          branchName: 'main',
          mode: 'production',
          valid: true,
          errors: [],
          cubesCount: 1,
        });
        const { branchName } = await ok('POST', `${base(id)}/dev-mode`);
        await ok('PUT', `${base(id)}/data-model/files`, {
          files: [
            {
              path: 'model/cubes/bad.yml',
              content:
                'cubes:\n  - name: bad\n    sql_table: t\n    joins:\n      - name: missing\n        sql: "{CUBE}.id = {missing.id}"\n        relationship: many_to_one\n',
            },
          ],
        });
        const verdict = await ok('GET', `${base(id)}/data-model/validate?devMode=true`);
        expect(verdict).toMatchObject({ deploymentId: id, branchName, mode: 'dev_mode', valid: false, cubesCount: 2 });
        expect(verdict.errors[0]).toMatchObject({ fileName: 'model/cubes/bad.yml', line: 5 });
        expect(verdict.errors[0].message).toContain('missing');
        expect(Number.isInteger(verdict.errors[0].column)).toBe(true);
        expect((await ok('GET', `${base(id)}/data-model/validate?branchName=${branchName}`)).valid).toBe(false);
        expect((await ok('GET', `${base(id)}/data-model/validate?branchName=main`)).valid).toBe(true);
      });

      it('refuses branchName with devMode, devMode without a session, and an unknown branch', async () => {
        const id = await deployment('validate input');
        problem(await t.request({ url: `${base(id)}/data-model/validate?branchName=main&devMode=true`, key: dev.key }), 400, 'VALIDATION_FAILED');
        problem(await t.request({ url: `${base(id)}/data-model/validate?devMode=true`, key: dev.key }), 400, 'NO_DEV_MODE');
        problem(await t.request({ url: `${base(id)}/data-model/validate?branchName=nope`, key: dev.key }), 404, 'BRANCH_NOT_FOUND');
      });
    });

    it('build status and logs need DeploymentRead: a viewer reads them, a stranger gets 403, another deployment’s key 403; an unknown build 404', async () => {
      const id = await deployment('read access');
      const status = await built(id, head(id));
      const viewer = await t.user('VIEWER');
      await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id }, 'VIEW');
      expect((await t.request({ url: `/api/v1/deployments/${id}/build-status`, key: viewer.key })).statusCode).toBe(200);
      expect((await t.request({ url: `/api/v1/deployments/${id}/builds/${status.buildJobId}/logs`, key: viewer.key })).statusCode).toBe(200);
      expect((await t.request({ url: `${base(id)}/data-model/validate`, key: viewer.key })).statusCode).toBe(200);
      const stranger = await t.user('DEVELOPER');
      problem(await t.request({ url: `/api/v1/deployments/${id}/build-status`, key: stranger.key }), 403, 'FORBIDDEN');
      const scoped = await t.key(t.admin.userId, { deploymentIds: [await deployment('other')] });
      problem(await t.request({ url: `/api/v1/deployments/${id}/builds`, key: scoped }), 403, 'KEY_SCOPE_FORBIDDEN');
      problem(await t.request({ url: `/api/v1/deployments/${id}/builds/999999` }), 404, 'BUILD_NOT_FOUND');
      problem(await t.request({ url: `/api/v1/deployments/${id}/builds/999999/logs` }), 404, 'BUILD_NOT_FOUND');
    });
  });
}
