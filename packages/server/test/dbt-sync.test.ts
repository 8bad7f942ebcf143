import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findDeployment } from '../src/areas/deployments/deployments.store.js';
import type { Repository } from '../src/git/repository.js';
import { DIALECTS, TestApp, problem } from './harness.js';
import { largeManifest, manifestOf, shopManifest, shopModels } from './dbt-fixtures.js';

const BRANCH = /^dbt-sync\/manifest-\d{14}-[0-9a-f]{8}$/;
const OUT = 'model/cubes/dbt';

describe.each(DIALECTS)('dbt-sync runs (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
  });
  afterAll(async () => t?.close());

  const base = (id: number) => `/api/v1/deployments/${id}/dbt-sync`;
  const start = (id: number, body: unknown, key?: string) => t.request({ method: 'POST', url: base(id), body, key });
  const get = (url: string, key?: string) => t.request({ url, key });
  const row = async (id: number) => (await findDeployment(t.store.db, t.tenantId, id))!;
  const repo = async (id: number): Promise<Repository> => t.app.services.repositories.open(await row(id));

  /** Starts a sync and waits for its job to end; answers the start response. */
  async function sync(id: number, body: unknown, key?: string): Promise<{ syncJobId: string; workflowId: string; branchName: string }> {
    const res = await start(id, body, key);
    expect(res.statusCode, res.body).toBe(200);
    const started = res.json() as { syncJobId: string; workflowId: string; branchName: string };
    await t.app.services.jobs.waitFor(t.tenantId, Number(started.workflowId));
    return started;
  }
  const poll = async (id: number, syncJobId: string) => (await get(`${base(id)}/${syncJobId}`)).json();
  const history = async (id: number, query = '') =>
    (await get(`${base(id)}${query}`)).json() as { items: Array<Record<string, any>>; pageInfo: Record<string, unknown> };
  const logs = async (id: number, syncJobId: string) => (await get(`${base(id)}/${syncJobId}/logs`)).json().items as Array<Record<string, any>>;
  const files = async (r: Repository, ref: string) => {
    const head = await r.head(ref);
    if (head === null) return null;
    const tree = await r.tree(head);
    const blobs = await r.blobs(tree.map((e) => e.sha));
    return new Map(tree.map((e) => [e.path, blobs.get(e.sha)?.toString('utf8') ?? '']));
  };
  async function commitOnMain(id: number, changes: Map<string, string | null>) {
    await t.app.services.repositories.write(await row(id), async (r) => {
      const head = await r.head('main');
      await r.commit({ ref: 'refs/heads/main', expectedHead: head, changes, author: { name: 'Dev', email: 'dev@example.com' }, message: 'by the test' });
    });
  }

  it('reference 7.1-7.6: a manifest sync commits one cube file per model to a new branch made from the deploy branch, and reports it', async () => {
    const id = await t.deployment('manifest-branch');
    const r = await repo(id);
    const mainBefore = await r.head('main');
    const started = await sync(id, { source: 'manifest', manifest: shopManifest() });
    expect(started.branchName).toMatch(BRANCH);
    expect(started.workflowId).toMatch(/^\d+$/);

    expect(await poll(id, started.syncJobId)).toMatchObject({
      syncJobId: started.syncJobId,
      status: 'COMPLETED',
      progress: { stage: 'COMPLETED', percentComplete: 100 },
    });
    const [run] = (await history(id)).items;
    expect(run).toMatchObject({
      syncJobId: started.syncJobId,
      deploymentId: id,
      status: 'COMPLETED',
      trigger: 'api',
      source: 'manifest',
      branchName: started.branchName,
      gitRef: null,
      errorMessage: null,
      failedPhase: null,
      lastStage: 'FINALIZING',
      userId: t.admin.userId,
      stats: { cubeCount: 4, generatedFileCount: 4, models: 4, sources: 1, macros: 3, dbtVersion: '1.9.4', manifestGeneratedAt: '2026-08-17T12:00:00.000000Z' },
    });
    expect(Number.isInteger(run?.durationMs)).toBe(true);
    expect(typeof run?.completedAt).toBe('string');
    expect(run?.phases.map((p: { phase: string; outcome: string }) => `${p.phase}:${p.outcome}`)).toEqual([
      'read-manifest:ok',
      'parse-manifest:ok',
      'generate-cubes:ok',
      'validate:ok',
      'write-files:ok',
    ]);

    // The branch: the deploy branch's files plus the generated ones, in one commit on top of main.
    const onBranch = (await files(r, started.branchName))!;
    expect([...onBranch.keys()].filter((p) => p.startsWith(OUT)).sort()).toEqual([
      `${OUT}/customers.yml`,
      `${OUT}/orders.yml`,
      `${OUT}/payments.yml`,
      `${OUT}/stg_orders.yml`,
    ]);
    expect(onBranch.get('model/cubes/starter.yml')).toBeDefined();
    const [commit] = await r.log(started.branchName, 0, 1);
    expect(commit?.parents).toEqual([mainBefore]);
    expect(await r.head('main')).toBe(mainBefore);
    const branches = (await get(`/build/api/v1/deployments/${id}/branches`)).json().items as Array<{ name: string; parentBranch: string | null }>;
    expect(branches).toContainEqual(expect.objectContaining({ name: started.branchName, parentBranch: 'main' }));
    // The model on the branch validates as a build would.
    expect((await get(`/build/api/v1/deployments/${id}/data-model/validate?branchName=${encodeURIComponent(started.branchName)}`)).json()).toMatchObject({
      valid: true,
      cubesCount: 5,
    });

    const result = (await get(`${base(id)}/${started.syncJobId}/result`)).json();
    expect(result).toMatchObject({ syncJobId: started.syncJobId, cubeCount: 4, manifestStats: { models: 4, sources: 1, macros: 3 } });
    expect(result.generatedFiles).toEqual([
      { path: `${OUT}/customers.yml` },
      { path: `${OUT}/orders.yml` },
      { path: `${OUT}/payments.yml` },
      { path: `${OUT}/stg_orders.yml` },
    ]);
    expect(result.durationMs).toBe(run?.durationMs);

    const lines = await logs(id, started.syncJobId);
    for (const line of lines) {
      expect(line.stream).toBe('system');
      expect(['info', 'error']).toContain(line.level);
      expect(typeof line.timestamp).toBe('string');
    }
    const closing = lines.filter((l) => l.phase !== null);
    expect(closing.map((l) => l.phase)).toEqual(['read-manifest', 'parse-manifest', 'generate-cubes', 'validate', 'write-files']);
    for (const line of closing) expect(Number.isInteger(line.durationMs)).toBe(true);
  });

  it('the git source reads the compiled manifest committed at ref, and names the branch after the ref', async () => {
    const id = await t.deployment('git-source');
    await commitOnMain(id, new Map([['target/manifest.json', JSON.stringify(shopManifest())]]));
    const started = await sync(id, {});
    expect(started.branchName).toMatch(/^dbt-sync\/main-\d{14}-[0-9a-f]{8}$/);
    const [run] = (await history(id)).items;
    expect(run).toMatchObject({ status: 'COMPLETED', source: 'git', gitRef: 'main', stats: { cubeCount: 4 } });

    // A ref and a manifest path from the settings.
    const r = await repo(id);
    await t.app.services.repositories.write(await row(id), async (w) => {
      await w.commit({
        ref: 'refs/heads/release',
        expectedHead: null,
        parent: await w.head('main'),
        changes: new Map([['dbt/target/manifest.json', JSON.stringify(manifestOf(shopModels().slice(0, 1)))]]),
        author: { name: 'Dev', email: 'dev@example.com' },
        message: 'release',
      });
    });
    expect(
      (await t.request({ method: 'PUT', url: `/api/v1/deployments/${id}/dbt-sync-settings`, body: { manifestPath: 'dbt/target/manifest.json' } })).statusCode,
    ).toBe(200);
    const release = await sync(id, { ref: 'release' });
    expect(release.branchName).toMatch(/^dbt-sync\/release-\d{14}-[0-9a-f]{8}$/);
    expect([...(await files(r, release.branchName))!.keys()].filter((p) => p.startsWith(OUT))).toEqual([`${OUT}/customers.yml`]);
  });

  it('the git source never runs dbt: without a committed compiled manifest the run fails saying one is required', async () => {
    const id = await t.deployment('git-no-manifest');
    const started = await sync(id, {});
    const status = await poll(id, started.syncJobId);
    expect(status).toMatchObject({ status: 'FAILED', progress: { stage: 'FAILED' } });
    expect(status.error).toMatch(/A compiled manifest is required: there is no target\/manifest\.json on main/);
    expect(status.error).toMatch(/never runs dbt/);
    expect((await history(id)).items[0]).toMatchObject({
      status: 'FAILED',
      failedPhase: 'read-manifest',
      lastStage: 'INITIALIZING',
      errorMessage: status.error,
    });
    expect(await (await repo(id)).head(started.branchName)).toBeNull();
    expect((await logs(id, started.syncJobId)).at(-1)).toMatchObject({ level: 'error', phase: 'read-manifest', message: status.error });
    problem(await get(`${base(id)}/${started.syncJobId}/result`), 409, 'DBT_SYNC_NOT_COMPLETED');
    problem(await start(id, { ref: 'a'.repeat(40) }), 400, 'VALIDATION_FAILED');
  });

  it('a re-sync replaces only generated files: models gone are deleted, hand-written files stay; an unchanged model makes no commit', async () => {
    const id = await t.deployment('resync');
    const first = await sync(id, { source: 'manifest', manifest: shopManifest() });
    const r = await repo(id);
    // Ship the first sync, and add a hand-written cube in the output folder.
    const shipped = (await files(r, first.branchName))!;
    const hand =
      'cubes:\n  - name: hand_written\n    sql_table: t\n    dimensions:\n      - name: id\n        sql: id\n        type: number\n        primary_key: true\n';
    await commitOnMain(id, new Map([...[...shipped].filter(([p]) => p.startsWith(OUT)), [`${OUT}/hand.yml`, hand]]));
    const mainHead = await r.head('main');

    const unchanged = await sync(id, { source: 'manifest', manifest: shopManifest() });
    expect(await r.head(unchanged.branchName)).toBe(mainHead);
    expect((await get(`${base(id)}/${unchanged.syncJobId}/result`)).json().generatedFiles).toHaveLength(4);
    expect((await logs(id, unchanged.syncJobId)).some((l) => /unchanged/.test(l.message))).toBe(true);

    const fewer = await sync(id, { source: 'manifest', manifest: manifestOf(shopModels().filter((m) => m.name !== 'stg_orders')) });
    const after = (await files(r, fewer.branchName))!;
    expect(after.has(`${OUT}/stg_orders.yml`)).toBe(false);
    expect(after.get(`${OUT}/hand.yml`)).toBe(hand);
    expect(after.get(`${OUT}/orders.yml`)).toBe(shipped.get(`${OUT}/orders.yml`));
    const [commit] = await r.log(fewer.branchName, 0, 1);
    expect(commit?.parents).toEqual([mainHead]);
  });

  it('branch names: the given one is used; the deploy branch, an existing branch or a bad name is a 400 that starts nothing', async () => {
    const id = await t.deployment('branch-names');
    const manifest = shopManifest();
    const named = await sync(id, { source: 'manifest', manifest, branchName: 'review/dbt' });
    expect(named.branchName).toBe('review/dbt');
    expect(await (await repo(id)).head('review/dbt')).not.toBeNull();
    problem(await start(id, { source: 'manifest', manifest, branchName: 'main' }), 400, 'INVALID_BRANCH');
    problem(await start(id, { source: 'manifest', manifest, branchName: 'review/dbt' }), 400, 'INVALID_BRANCH');
    problem(await start(id, { source: 'manifest', manifest, branchName: 'bad..name' }), 400, 'VALIDATION_FAILED');
    problem(await start(id, { source: 'manifest', manifest, branchName: 'dev-1-main' }), 400, 'INVALID_BRANCH');
    expect((await history(id)).items).toHaveLength(1);
  });

  it('a manifest source is checked first: missing or not a manifest is a 400 naming what is wrong', async () => {
    const id = await t.deployment('bad-manifest');
    const missing = problem(await start(id, { source: 'manifest' }), 400, 'VALIDATION_FAILED');
    expect(missing.errors).toEqual([{ pointer: '/body/manifest', message: 'is required when source is manifest' }]);
    const bad = shopManifest() as unknown as { metadata: Record<string, unknown>; nodes: Record<string, Record<string, unknown>> };
    delete bad.metadata.dbt_schema_version;
    bad.nodes['model.shop.orders']!.columns = 'none';
    const body = problem(await start(id, { source: 'manifest', manifest: bad }), 400, 'VALIDATION_FAILED');
    expect(body.errors?.map((e) => e.pointer)).toEqual(['/body/manifest/metadata/dbt_schema_version', '/body/manifest/nodes/model.shop.orders/columns']);
    problem(await start(id, { output: 'elsewhere' }), 400, 'VALIDATION_FAILED');
    expect((await history(id)).items).toHaveLength(0);
  });

  it('reference 7.1: a selector that matches nothing fails the run instead of deleting everything', async () => {
    const id = await t.deployment('selector');
    await t.request({ method: 'PUT', url: `/api/v1/deployments/${id}/dbt-sync-settings`, body: { selector: { tags: ['nope'] } } });
    const started = await sync(id, { source: 'manifest', manifest: shopManifest() });
    const status = await poll(id, started.syncJobId);
    expect(status.status).toBe('FAILED');
    expect(status.error).toMatch(/selector \(tag nope\) matches none of the manifest's 4 models/);
    expect((await history(id)).items[0]).toMatchObject({ failedPhase: 'generate-cubes', lastStage: 'PROCESSING_MANIFEST' });
    expect(await (await repo(id)).head(started.branchName)).toBeNull();

    await t.request({ method: 'PUT', url: `/api/v1/deployments/${id}/dbt-sync-settings`, body: { selector: { tags: ['staging'] } } });
    const selected = await sync(id, { source: 'manifest', manifest: shopManifest() });
    expect((await get(`${base(id)}/${selected.syncJobId}/result`)).json().generatedFiles).toEqual([{ path: `${OUT}/stg_orders.yml` }]);
  });

  it('reference 7.7: output files commits nothing and serves the files for an hour, then 404', async () => {
    const id = await t.deployment('files');
    const r = await repo(id);
    const branchesBefore = await r.branches();
    const started = await sync(id, { source: 'manifest', manifest: shopManifest(), output: 'files' });
    expect(started.branchName).toMatch(BRANCH);
    expect(await r.branches()).toEqual(branchesBefore);
    const page = (await get(`${base(id)}/${started.syncJobId}/generated-files?first=3`)).json();
    expect(page.items.map((f: { path: string }) => f.path)).toEqual([`${OUT}/customers.yml`, `${OUT}/orders.yml`, `${OUT}/payments.yml`]);
    expect(page.items[0].content).toMatch(/^# Generated by dbt-sync from model\.shop\.customers/);
    expect(page.pageInfo.hasNextPage).toBe(true);
    const rest = (await get(`${base(id)}/${started.syncJobId}/generated-files?after=${page.pageInfo.endCursor}`)).json();
    expect(rest.items.map((f: { path: string }) => f.path)).toEqual([`${OUT}/stg_orders.yml`]);
    expect(rest.pageInfo.hasNextPage).toBe(false);

    // A sync that committed to a branch has none.
    const branched = await sync(id, { source: 'manifest', manifest: shopManifest() });
    problem(await get(`${base(id)}/${branched.syncJobId}/generated-files`), 404, 'DBT_SYNC_FILES_NOT_FOUND');
    // An hour after the run, they are gone.
    await t.store.db
      .updateTable('dbt_sync_runs')
      .set({ files_expire_at: new Date(Date.now() - 1000).toISOString() })
      .where('public_id', '=', started.syncJobId)
      .execute();
    problem(await get(`${base(id)}/${started.syncJobId}/generated-files`), 404, 'DBT_SYNC_FILES_NOT_FOUND');
    expect((await t.store.db.selectFrom('dbt_sync_runs').select('files').where('public_id', '=', started.syncJobId).executeTakeFirst())?.files).toBeNull();
    problem(await get(`${base(id)}/not-a-sync/generated-files`), 404, 'DBT_SYNC_NOT_FOUND');
  });

  it('one running sync per deployment (409 naming it); a cancel stops it before its next stage, the branch unchanged: CANCELLED in the history, FAILED "cancelled" in the poll', async () => {
    const id = await t.deployment('cancel');
    const other = await t.deployment('cancel-other');
    let release: () => void = () => undefined;
    let reached: (stage: string) => void = () => undefined;
    const paused = new Promise<string>((resolve) => (reached = resolve));
    t.app.services.dbtSync.hooks.beforeStage = async (_runId, stage) => {
      if (stage !== 'WRITING_CUBE_FILES') return;
      reached(stage);
      await new Promise<void>((resolve) => (release = resolve));
    };
    try {
      const res = await start(id, { source: 'manifest', manifest: shopManifest() });
      const started = res.json() as { syncJobId: string; workflowId: string; branchName: string };
      expect(await paused).toBe('WRITING_CUBE_FILES');
      expect(await poll(id, started.syncJobId)).toMatchObject({ status: 'PROCESSING_MANIFEST', progress: { stage: 'PROCESSING_MANIFEST' } });
      expect((await history(id, '?status=RUNNING')).items.map((r) => r.syncJobId)).toEqual([started.syncJobId]);
      expect((await history(id, '?status=RUNNING')).items[0]?.phases).toBeUndefined();

      const second = problem(await start(id, { source: 'manifest', manifest: shopManifest() }), 409, 'DBT_SYNC_RUNNING');
      expect(second.detail).toContain(started.syncJobId);
      // Other deployments are not held up.
      t.app.services.dbtSync.hooks.beforeStage = async () => undefined;
      await sync(other, { source: 'manifest', manifest: shopManifest() });

      const cancelled = await t.request({ method: 'DELETE', url: `${base(id)}/${started.syncJobId}` });
      expect(cancelled.statusCode, cancelled.body).toBe(200);
      expect(cancelled.json().message).toMatch(/cancelled/);
      release();
      await t.app.services.jobs.waitFor(t.tenantId, Number(started.workflowId));

      expect(await poll(id, started.syncJobId)).toMatchObject({ status: 'FAILED', error: 'cancelled' });
      expect((await history(id)).items[0]).toMatchObject({ status: 'CANCELLED', errorMessage: null, lastStage: 'PROCESSING_MANIFEST' });
      expect((await history(id, '?status=CANCELLED')).items).toHaveLength(1);
      expect((await history(id, '?status=COMPLETED')).items).toHaveLength(0);
      expect(await (await repo(id)).head(started.branchName)).toBeNull();
      expect((await logs(id, started.syncJobId)).at(-1)).toMatchObject({ level: 'error', message: expect.stringMatching(/^Cancelled/) });
      problem(await t.request({ method: 'DELETE', url: `${base(id)}/${started.syncJobId}` }), 409, 'DBT_SYNC_NOT_RUNNING');
      // The deployment may sync again.
      await sync(id, { source: 'manifest', manifest: shopManifest() });
    } finally {
      release();
      t.app.services.dbtSync.hooks.beforeStage = async () => undefined;
    }
  });

  it('a 500-model generation runs on a worker thread: requests are answered while it runs', async () => {
    const id = await t.deployment('worker-thread');
    const seen: Array<{ phase: string; answered: number; stillRunning: boolean }> = [];
    t.app.services.dbtSync.hooks.working = async (_runId, phase, work) => {
      let finished = false;
      void work.then(
        () => (finished = true),
        () => (finished = true),
      );
      // Whole requests, through routing, access checks and the store, while the worker computes.
      const status = await get(`${base(id)}`);
      const settings = await get(`/api/v1/deployments/${id}/dbt-sync-settings`);
      seen.push({ phase, answered: [status.statusCode, settings.statusCode].filter((c) => c === 200).length, stillRunning: !finished });
    };
    try {
      const started = await sync(id, { source: 'manifest', manifest: largeManifest(500), output: 'files' });
      expect(await poll(id, started.syncJobId)).toMatchObject({ status: 'COMPLETED' });
      expect((await history(id)).items[0]?.stats).toMatchObject({ cubeCount: 500 });
      expect(seen.map((s) => s.phase)).toEqual(['parse-manifest', 'generate-cubes', 'validate']);
      const generation = seen.find((s) => s.phase === 'generate-cubes');
      expect(generation).toEqual({ phase: 'generate-cubes', answered: 2, stillRunning: true });
    } finally {
      t.app.services.dbtSync.hooks.working = async () => undefined;
    }
  });

  it('history: newest first, cursor pages, status and trigger filters', async () => {
    const id = await t.deployment('history');
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push((await sync(id, { source: 'manifest', manifest: shopManifest(), output: 'files' })).syncJobId);
    const page1 = await history(id, '?first=2');
    expect(page1.items.map((r) => r.syncJobId)).toEqual([ids[2], ids[1]]);
    expect(page1.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const page2 = await history(id, `?first=2&after=${String(page1.pageInfo.endCursor)}`);
    expect(page2.items.map((r) => r.syncJobId)).toEqual([ids[0]]);
    expect(page2.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    expect((await history(id, '?trigger=api')).items).toHaveLength(3);
    expect((await history(id, '?trigger=webhook')).items).toHaveLength(0);
    expect((await history(id, '?status=FAILED')).items).toHaveLength(0);
    problem(await get(`${base(id)}?status=DONE`), 400, 'VALIDATION_FAILED');
    problem(await get(`${base(id)}?after=nope`), 400, 'INVALID_CURSOR');
  });

  it('a run whose job died ends FAILED with a log line saying why, never RUNNING', async () => {
    const id = await t.deployment('died');
    let release: () => void = () => undefined;
    let reached: () => void = () => undefined;
    const paused = new Promise<void>((resolve) => (reached = resolve));
    t.app.services.dbtSync.hooks.beforeStage = async (_runId, stage) => {
      if (stage !== 'PROCESSING_MANIFEST') return;
      reached();
      await new Promise<void>((resolve) => (release = resolve));
    };
    try {
      const started = (await start(id, { source: 'manifest', manifest: shopManifest() })).json() as { syncJobId: string; workflowId: string };
      await paused;
      // What a sweeper writes for a job whose process stopped beating (jobs service, kill -9 rule).
      await t.store.db
        .updateTable('jobs')
        .set({ state: 'failed', error: 'The process running this job stopped', finished_at: new Date().toISOString(), heartbeat_at: null })
        .where('id', '=', Number(started.workflowId))
        .execute();
      const status = await poll(id, started.syncJobId);
      expect(status).toMatchObject({ status: 'FAILED' });
      expect(status.error).toMatch(/The server running this sync stopped before it ended/);
      expect((await history(id)).items[0]).toMatchObject({ status: 'FAILED', errorMessage: status.error });
      expect((await logs(id, started.syncJobId)).at(-1)).toMatchObject({ level: 'error', message: status.error });
    } finally {
      release();
      t.app.services.dbtSync.hooks.beforeStage = async () => undefined;
    }
  });

  it('access: SchemaUpdate starts and cancels, SchemaRead reads runs, deployment read access reads files; scoped keys 403; other tenants 404', async () => {
    const id = await t.deployment('access');
    const viewer = await t.user('VIEWER');
    await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id }, 'VIEW');
    const editor = await t.user('DEVELOPER');
    await t.grant({ type: 'USER', id: editor.userId }, { type: 'DEPLOYMENT', id }, 'EDIT');
    const explorer = await t.user('EXPLORER');
    await t.grant({ type: 'USER', id: explorer.userId }, { type: 'DEPLOYMENT', id }, 'EDIT');
    const stranger = await t.user('DEVELOPER');

    const body = { source: 'manifest', manifest: shopManifest(), output: 'files' };
    problem(await start(id, body, viewer.key), 403, 'FORBIDDEN');
    problem(await start(id, body, explorer.key), 403, 'FORBIDDEN');
    problem(await start(id, body, stranger.key), 403, 'FORBIDDEN');
    const started = await sync(id, body, editor.key);
    for (const path of ['', `/${started.syncJobId}`, `/${started.syncJobId}/result`, `/${started.syncJobId}/logs`, `/${started.syncJobId}/generated-files`]) {
      expect((await get(`${base(id)}${path}`, viewer.key)).statusCode).toBe(200);
      problem(await get(`${base(id)}${path}`, stranger.key), 403, 'FORBIDDEN');
    }
    problem(await t.request({ method: 'DELETE', url: `${base(id)}/${started.syncJobId}`, key: viewer.key }), 403, 'FORBIDDEN');
    expect((await history(id)).items[0]?.userId).toBe(editor.userId);

    const elsewhere = await t.deployment('access-elsewhere');
    const scoped = await t.key(t.admin.userId, { deploymentIds: [elsewhere] });
    problem(await start(id, body, scoped), 403, 'KEY_SCOPE_FORBIDDEN');
    problem(await get(`${base(id)}/${started.syncJobId}`, scoped), 403, 'KEY_SCOPE_FORBIDDEN');

    const other = await t.tenant(`dbt-sync-${dialect}`);
    const foreign = await t.deployment('foreign', { tenantId: other.tenantId });
    problem(await get(`${base(foreign)}/${started.syncJobId}`), 404, 'DEPLOYMENT_NOT_FOUND');
    problem(await start(foreign, body), 404, 'DEPLOYMENT_NOT_FOUND');
    problem(await get(base(foreign)), 404, 'DEPLOYMENT_NOT_FOUND');
    // A run id of one deployment is unknown on another.
    problem(await get(`${base(elsewhere)}/${started.syncJobId}`), 404, 'DBT_SYNC_NOT_FOUND');
  });

  it('reference 7.1: the start route takes bodies up to 50 MB, and no more', async () => {
    const id = await t.deployment('limits');
    const big = shopManifest() as unknown as { metadata: Record<string, unknown> };
    big.metadata.padding = 'x'.repeat(20 * 1024 * 1024);
    const res = await start(id, { source: 'manifest', manifest: big, output: 'files' });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const started = res.json() as { syncJobId: string; workflowId: string };
    // If the run does not end, the failure says how far it got.
    await t.app.services.jobs.waitFor(t.tenantId, Number(started.workflowId), { timeoutMs: 100_000 }).catch(async (error: Error) => {
      throw new Error(`${error.message}; poll ${JSON.stringify(await poll(id, started.syncJobId))}; logs ${JSON.stringify(await logs(id, started.syncJobId))}`);
    });
    expect(await poll(id, started.syncJobId)).toMatchObject({ status: 'COMPLETED' });
    big.metadata.padding = 'x'.repeat(51 * 1024 * 1024);
    problem(await start(id, { source: 'manifest', manifest: big, output: 'files' }), 413, 'PAYLOAD_TOO_LARGE');
    // About 70 MB of JSON through the server, beside the heaviest files of the suite: seconds, not 30.
  }, 150_000);
});
