import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findDeployment } from '../src/areas/deployments/deployments.store.js';
import { DIALECTS, TestApp, problem } from './harness.js';
import { manifestOf, shopManifest, shopModels } from './dbt-fixtures.js';
import { startGitServer, type GitServer } from './git-server-fixture.js';

/*
 * Issue 19: the transformation project in another repository, named by an https URL with an
 * access token sealed by secrets/ and never answered, read with git through the outbound guard.
 * The repository is served by real `git http-backend` behind an HTTPS server the test starts.
 */

const TOKEN = 'glpat-Remote-Token-Of-The-Test-7f3a9c';
const OUT = 'model/cubes/dbt';

describe.each(DIALECTS)('dbt-sync from a repository by URL (%s)', (dialect) => {
  let git: GitServer;
  let t: TestApp;
  /** An app whose outbound calls may not reach loopback (OUTBOUND_ALLOW_PRIVATE unset). */
  let guarded: TestApp;
  const logged: string[] = [];
  const answered: string[] = [];

  beforeAll(async () => {
    git = await startGitServer(TOKEN);
    const author = { name: 'Data team', email: 'data@example.com' };
    const main = await git.repo.commit({
      ref: 'refs/heads/main',
      expectedHead: null,
      changes: new Map([['target/manifest.json', JSON.stringify(shopManifest())]]),
      author,
      message: 'compiled',
    });
    await git.repo.commit({
      ref: 'refs/heads/uncompiled',
      expectedHead: null,
      parent: main,
      changes: new Map([
        ['target/manifest.json', null],
        ['models/orders.sql', 'select 1'],
      ]),
      author,
      message: 'no manifest',
    });
    await git.repo.commit({
      ref: 'refs/heads/release',
      expectedHead: null,
      parent: main,
      changes: new Map([['target/manifest.json', JSON.stringify(manifestOf(shopModels().slice(0, 1)))]]),
      author,
      message: 'one model',
    });
    const logger = { level: 'trace', stream: { write: (line: string) => void logged.push(line) } };
    t = await TestApp.create(dialect, { logger, outbound: { allowPrivate: ['127.0.0.1'], caFile: git.caFile } });
    guarded = await TestApp.create(dialect, { logger, outbound: { caFile: git.caFile } });
  });
  afterAll(async () => {
    await t?.close();
    await guarded?.close();
    await git?.close();
  });

  const settingsUrl = (id: number) => `/api/v1/deployments/${id}/dbt-sync-settings`;
  /** Every answer's text is kept, to look for the token in it at the end. */
  const send = async (app: TestApp, init: { method?: 'GET' | 'PUT' | 'POST'; url: string; body?: unknown }) => {
    const res = await app.request(init);
    answered.push(res.body);
    return res;
  };
  const putSettings = (app: TestApp, id: number, body: unknown) => send(app, { method: 'PUT', url: settingsUrl(id), body });
  async function sync(app: TestApp, id: number, body: unknown = {}) {
    const res = await send(app, { method: 'POST', url: `/api/v1/deployments/${id}/dbt-sync`, body });
    expect(res.statusCode, res.body).toBe(200);
    const started = res.json() as { syncJobId: string; workflowId: string; branchName: string };
    await app.app.services.jobs.waitFor(app.tenantId, Number(started.workflowId));
    const base = `/api/v1/deployments/${id}/dbt-sync/${started.syncJobId}`;
    const status = (await send(app, { url: base })).json();
    const logs = (await send(app, { url: `${base}/logs?first=200` })).json().items as Array<{ level: string; message: string }>;
    return { started, status, logs };
  }

  it('settings: an https URL and a token that is sealed and never answered (hasToken says it is there)', async () => {
    const id = await t.deployment('remote-settings');
    const res = await putSettings(t, id, { repository: { type: 'url', url: git.url, token: TOKEN } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().repository).toEqual({ type: 'url', url: git.url, hasToken: true });
    expect((await send(t, { url: settingsUrl(id) })).json().repository).toEqual({ type: 'url', url: git.url, hasToken: true });
    const row = await t.store.db.selectFrom('dbt_sync_settings').selectAll().where('deployment_id', '=', id).executeTakeFirstOrThrow();
    expect(row.repository_token).toMatch(/^v1:/);
    expect(row.repository_token).not.toContain(TOKEN);

    // Another path on the same origin keeps the token; another origin drops it; null removes it.
    expect((await putSettings(t, id, { repository: { type: 'url', url: git.url.replace('shop.git', 'other.git') } })).json().repository).toEqual({
      type: 'url',
      url: git.url.replace('shop.git', 'other.git'),
      hasToken: true,
    });
    expect((await putSettings(t, id, { repository: { type: 'url', url: 'https://git.example.com/shop.git' } })).json().repository).toEqual({
      type: 'url',
      url: 'https://git.example.com/shop.git',
      hasToken: false,
    });
    await putSettings(t, id, { repository: { type: 'url', url: git.url, token: TOKEN } });
    expect((await putSettings(t, id, { repository: { type: 'url', url: git.url, token: null } })).json().repository.hasToken).toBe(false);

    const before = (await send(t, { url: settingsUrl(id) })).json();
    for (const [repository, pointer] of [
      [{ type: 'url', url: git.url.replace('https:', 'http:'), token: TOKEN }, '/body/repository/url'],
      [{ type: 'url', url: 'https://reader:secret@git.example.com/shop.git' }, '/body/repository/url'],
      [{ type: 'url', url: 'file:///etc/passwd' }, '/body/repository/url'],
      [{ type: 'url', url: 'ssh://git@git.example.com/shop.git' }, '/body/repository/url'],
      [{ type: 'url' }, '/body/repository/url'],
      [{ type: 'deployment', token: TOKEN }, '/body/repository'],
    ] as const) {
      const body = problem(await putSettings(t, id, { repository }), 400, 'VALIDATION_FAILED');
      expect(body.errors?.map((e) => e.pointer)).toEqual([pointer]);
    }
    expect((await send(t, { url: settingsUrl(id) })).json()).toEqual(before);
    expect((await putSettings(t, id, { repository: { type: 'deployment' } })).json().repository).toEqual({ type: 'deployment' });
  });

  it('a git sync reads the compiled manifest at ref from that repository, with the token, and commits the cubes to a branch of the deployment', async () => {
    const id = await t.deployment('remote-sync');
    await putSettings(t, id, { repository: { type: 'url', url: git.url, token: TOKEN } });
    const seen = git.requests.length;
    const { started, status, logs } = await sync(t, id);
    expect(status, JSON.stringify(logs)).toMatchObject({ status: 'COMPLETED' });
    expect(started.branchName).toMatch(/^dbt-sync\/main-\d{14}-[0-9a-f]{8}$/);
    expect(logs[1]?.message).toContain(`target/manifest.json at main of ${git.url}`);
    // Every request the sync made carried the token, and the server answered them all.
    const made = git.requests.slice(seen);
    expect(made.length).toBeGreaterThan(0);
    expect(made.every((r) => r.authorized)).toBe(true);

    const row = (await findDeployment(t.store.db, t.tenantId, id))!;
    const repo = await t.app.services.repositories.open(row);
    const head = (await repo.head(started.branchName))!;
    const paths = (await repo.tree(head)).map((e) => e.path).filter((p) => p.startsWith(OUT));
    expect(paths.sort()).toEqual([`${OUT}/customers.yml`, `${OUT}/orders.yml`, `${OUT}/payments.yml`, `${OUT}/stg_orders.yml`]);
    // The deployment's own repository holds no manifest: the file came from the other one.
    expect((await repo.tree(head)).some((e) => e.path === 'target/manifest.json')).toBe(false);

    const release = await sync(t, id, { ref: 'release', output: 'files' });
    expect(release.status).toMatchObject({ status: 'COMPLETED' });
    const files = (await send(t, { url: `/api/v1/deployments/${id}/dbt-sync/${release.started.syncJobId}/generated-files` })).json();
    expect(files.items.map((f: { path: string }) => f.path)).toEqual([`${OUT}/customers.yml`]);

    const uncompiled = await sync(t, id, { ref: 'uncompiled' });
    expect(uncompiled.status.status).toBe('FAILED');
    expect(uncompiled.status.error).toMatch(/^A compiled manifest is required: there is no target\/manifest\.json on uncompiled/);
    const missing = await sync(t, id, { ref: 'no-such-branch' });
    expect(missing.status.error).toBe(`${git.url} has no branch or tag no-such-branch.`);
  });

  it('a wrong token: the run fails saying the repository refused it, in the poll and the run log', async () => {
    const id = await t.deployment('remote-wrong-token');
    await putSettings(t, id, { repository: { type: 'url', url: git.url, token: 'not-the-token' } });
    const seen = git.requests.length;
    const { status, logs } = await sync(t, id);
    expect(status).toMatchObject({ status: 'FAILED', progress: { stage: 'FAILED' } });
    expect(status.error).toBe(`${git.url} refused the access token (HTTP 401/403): save a token that may read the repository in the dbt-sync settings.`);
    expect(logs.at(-1)).toMatchObject({ level: 'error', message: status.error });
    expect(git.requests.slice(seen).some((r) => !r.authorized)).toBe(true);
    const [run] = (await send(t, { url: `/api/v1/deployments/${id}/dbt-sync` })).json().items;
    expect(run).toMatchObject({ status: 'FAILED', failedPhase: 'read-manifest', lastStage: 'INITIALIZING' });
  });

  it('a private address is refused without OUTBOUND_ALLOW_PRIVATE: the run fails before any request reaches it', async () => {
    const id = await guarded.deployment('remote-private');
    await putSettings(guarded, id, { repository: { type: 'url', url: git.url, token: TOKEN } });
    const seen = git.requests.length;
    const { status, logs } = await sync(guarded, id);
    expect(status.status).toBe('FAILED');
    expect(status.error).toMatch(
      /^The transformation repository was not called: https:\/\/127\.0\.0\.1:\d+\/shop\.git is a private address this server does not call \(OUTBOUND_ALLOW_PRIVATE allows one\)/,
    );
    expect(logs.at(-1)).toMatchObject({ level: 'error', message: status.error });
    expect(git.requests.length).toBe(seen);
  });

  it('the token is in no answer, run log or server log line', async () => {
    const runLogs = await t.store.db.selectFrom('dbt_sync_logs').select('message').execute();
    const guardedLogs = await guarded.store.db.selectFrom('dbt_sync_logs').select('message').execute();
    expect(runLogs.length + guardedLogs.length).toBeGreaterThan(10);
    expect(answered.length).toBeGreaterThan(20);
    const base64 = Buffer.from(`x-access-token:${TOKEN}`).toString('base64');
    for (const text of [...answered, ...logged, ...runLogs.map((r) => r.message), ...guardedLogs.map((r) => r.message)]) {
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(base64);
    }
  });
});
