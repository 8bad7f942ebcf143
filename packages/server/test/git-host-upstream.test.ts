import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STARTER_MODEL, STARTER_MODEL_PATH } from '../src/areas/data-model/starter-model.js';
import { findDeployment } from '../src/areas/deployments/deployments.store.js';
import type { Repository } from '../src/git/repository.js';
import { gitText } from '../src/git/run.js';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';
import { startGitHost, type GitHostFixture, type HostUser } from './git-host-fixture.js';
import { startGitServer, type GitServer } from './git-server-fixture.js';

/*
 * Issue 17, reference 2.13, 2.16 and 2.20: a deployment connected to a repository of the git
 * host. The host's REST API is the stand-in of git-host-fixture.ts (installation tokens only for
 * a JWT signed with the app's key); the repositories are served by real `git http-backend` over
 * HTTPS, which takes an installation token only for that installation's repositories.
 */

const CLIENT_SECRET = 'client-secret-of-the-upstream-test';
const APP_ID = '4242';
const author = { name: 'Upstream author', email: 'upstream@example.com' };

function hostUsers(): HostUser[] {
  return [
    {
      login: 'alice',
      code: 'code-alice',
      token: 'host-token-alice-upstream',
      installations: [
        { id: 101, account: 'acme', repositories: [{ id: 7, name: 'models', owner: 'acme', defaultBranch: 'main', branches: ['main'] }] },
        { id: 55, account: 'alice', repositories: [] },
      ],
    },
    { login: 'bob', code: 'code-bob', token: 'host-token-bob-upstream', installations: [{ id: 202, account: 'globex', repositories: [] }] },
  ];
}

describe.each(DIALECTS)('git host: connected repositories (%s)', (dialect) => {
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKey = keys.privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
  let users: HostUser[];
  let git: GitServer;
  let host: GitHostFixture;
  let upstream: Repository;
  let t: TestApp;
  let developer: Caller;
  let viewer: Caller;
  let unlinked: Caller;
  let other: { tenantId: number; admin: Caller };
  const logs: string[] = [];
  const bodies: string[] = [];

  beforeAll(async () => {
    users = hostUsers();
    git = await startGitServer((token, path) => host.installationReaches(token, path));
    upstream = await git.createRepo('acme/models.git');
    const first = await upstream.commit({
      ref: 'refs/heads/main',
      expectedHead: null,
      changes: new Map([
        [STARTER_MODEL_PATH, STARTER_MODEL],
        ['README.md', '# models\n'],
      ]),
      author,
      message: 'The model',
    });
    await upstream.commit({
      ref: 'refs/heads/release',
      expectedHead: null,
      parent: first,
      changes: new Map([[`analytics/${STARTER_MODEL_PATH}`, STARTER_MODEL]]),
      author,
      message: 'Released under analytics/',
    });
    host = await startGitHost(users, {
      clientId: 'Iv1.upstream',
      clientSecret: CLIENT_SECRET,
      app: { id: APP_ID, publicKey: keys.publicKey },
      git: { origin: git.origin, create: async (owner, name) => void (await git.createRepo(`${owner}/${name}.git`)) },
    });
    t = await TestApp.create(dialect, {
      outbound: { allowPrivate: ['127.0.0.1/32'], caFile: git.caFile, retryBaseMs: 1 },
      logger: { level: 'trace', stream: { write: (line: string) => void logs.push(line) } },
    });
    developer = await t.user('DEVELOPER');
    viewer = await t.user('VIEWER');
    unlinked = await t.user('ADMIN');
    other = await t.tenant('upstream-other', ['upstream-other.example.test']);
    const app = await call({
      method: 'PUT',
      url: '/api/v1/tenant/git-host-app',
      body: {
        apiBaseUrl: host.baseUrl,
        webBaseUrl: host.baseUrl,
        appId: APP_ID,
        appSlug: 'mapi-models',
        clientId: host.clientId,
        clientSecret: CLIENT_SECRET,
        privateKey,
      },
    });
    expect(app.statusCode, app.body).toBe(200);
    await link(undefined, 'code-alice');
    await link(developer, 'code-bob');
  });
  afterAll(async () => {
    await t?.close();
    await host?.close();
    await git?.close();
  });

  /** Every response body is kept, to prove no secret ever leaves in one. */
  const call = async (request: Parameters<TestApp['request']>[0]) => {
    const res = await t.request(request);
    bodies.push(res.body);
    return res;
  };
  async function link(caller: Caller | undefined, code: string) {
    const status = (await call({ url: '/api/v1/git-host/status', ...(caller ? { key: caller.key } : {}) })).json<{ linkUrl: string }>();
    const state = new URL(status.linkUrl).searchParams.get('state');
    const res = await call({ url: `/api/v1/git-host/callback?state=${state}&code=${code}`, key: null });
    expect(res.statusCode, res.body).toBe(200);
  }
  const build = (id: number) => `/build/api/v1/deployments/${id}`;
  const connect = (id: number, body: unknown, key?: string) => call({ method: 'POST', url: `${build(id)}/git-host/connect`, body, ...(key ? { key } : {}) });
  const repoOf = async (id: number) => t.app.services.repositories.open((await findDeployment(t.store.db, t.tenantId, id))!);
  const localHead = async (id: number, branch = 'main') => (await repoOf(id)).head(branch);
  const paths = async (repo: Repository, branch: string) => (await repo.tree((await repo.head(branch))!)).map((e) => e.path).sort();
  async function ok(method: 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) {
    const res = await call({ method, url, ...(body === undefined ? {} : { body }) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Record<string, unknown>>();
  }
  /** A commit through dev mode: enter, write one file, commit; the commit's answer. */
  async function commitFile(id: number, file: string, parent = 'main') {
    await ok('POST', `${build(id)}/dev-mode`, { branchName: parent });
    await ok('PUT', `${build(id)}/data-model/files`, { files: [{ path: file, content: `# ${file}\n` }] });
    return call({ method: 'POST', url: `${build(id)}/commit`, body: { message: `Add ${file}` } });
  }
  const upstreamCommit = async (branch: string, changes: Record<string, string>) =>
    upstream.commit({
      ref: `refs/heads/${branch}`,
      expectedHead: await upstream.head(branch),
      changes: new Map(Object.entries(changes)),
      author,
      message: `Upstream: ${Object.keys(changes).join(', ')}`,
    });
  const builtCommits = async (id: number) =>
    (await t.store.db.selectFrom('builds').select(['commit_sha', 'branch_name']).where('deployment_id', '=', id).execute()).map(
      (b) => `${b.branch_name}@${b.commit_sha}`,
    );

  let connected: number;

  it('connect (2.20): the repository’s default branch becomes the deploy branch, production builds it, and git ran with an installation token', async () => {
    connected = await t.deployment('connected');
    const before = (await localHead(connected))!;
    const seenGit = git.requests.length;
    const res = await connect(connected, { installationId: 101, name: 'models' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: connected, name: 'connected', deploymentUrl: expect.stringContaining(`/deployments/${connected}`) });

    const head = (await upstream.head('main'))!;
    expect(await localHead(connected)).toBe(head);
    expect(await paths(await repoOf(connected), 'main')).toEqual(['README.md', STARTER_MODEL_PATH]);
    // What the deploy branch held before is kept, not lost.
    const kept = await gitText({ gitDir: (await repoOf(connected)).gitDir, args: ['for-each-ref', '--format=%(objectname)', 'refs/mapi/before-connect/'] });
    expect(kept).toBe(before);
    expect(await builtCommits(connected)).toContain(`main@${head}`);
    // The host minted an installation token for the app's JWT; every git request carried a good one.
    expect(host.seen).toContain('POST /app/installations/101/access_tokens');
    expect(git.requests.slice(seenGit).length).toBeGreaterThan(0);
    expect(git.requests.slice(seenGit).every((r) => r.authorized && r.path.startsWith('/acme/models.git/'))).toBe(true);
    expect((await call({ url: `/api/v1/deployments/${connected}/settings` })).json()).toMatchObject({ deployBranchName: 'main' });
  });

  it('connect with deployBranchName and deployProjectRoot: that branch is deployed, the model read below the root', async () => {
    const id = await t.deployment('released');
    expect((await connect(id, { installationId: 101, name: 'models', deployBranchName: 'release', deployProjectRoot: 'analytics/' })).statusCode).toBe(200);
    expect((await call({ url: `/api/v1/deployments/${id}/settings` })).json()).toMatchObject({ deployBranchName: 'release', deployProjectRoot: 'analytics' });
    const head = (await upstream.head('release'))!;
    expect(await localHead(id, 'release')).toBe(head);
    expect(await builtCommits(id)).toContain(`release@${head}`);
    const validation = (await call({ url: `${build(id)}/data-model/validate` })).json();
    expect(validation).toMatchObject({ branchName: 'release', valid: true, cubesCount: 1 });
  });

  it('refusals change nothing: access, installations and repositories the caller cannot reach, bad bodies, another tenant', async () => {
    // Bob's developer may update this deployment (he made it), but his account reaches installation 202 only.
    const id = await t.deployment('refused', { createdBy: developer.userId });
    const before = await localHead(id);
    problem(await connect(id, { installationId: 101, name: 'models' }, viewer.key), 403, 'FORBIDDEN');
    problem(await connect(id, { installationId: 101, name: 'models' }, unlinked.key), 409, 'GIT_HOST_NOT_LINKED');
    problem(await connect(id, { installationId: 101, name: 'models' }, developer.key), 404, 'GIT_HOST_NOT_FOUND');
    problem(await connect(id, { installationId: 202, name: 'secret-models' }, developer.key), 404, 'GIT_HOST_NOT_FOUND');
    problem(await connect(id, { installationId: 101, name: 'no-such-repo' }), 404, 'GIT_HOST_NOT_FOUND');
    problem(await connect(id, { installationId: 101, name: 'models', isNewRepo: true }), 409, 'GIT_HOST_REPO_EXISTS');
    for (const [body, pointer] of [
      [{ installationId: 101, name: '' }, '/body/name'],
      [{ installationId: 'x', name: 'models' }, '/body/installationId'],
      [{ name: 'models' }, '/body/installationId'],
      [{ installationId: 101, name: 'models', deployBranchName: 'dev-1-main' }, '/body/deployBranchName'],
      [{ installationId: 101, name: 'models', deployBranchName: 'a..b' }, '/body/deployBranchName'],
      [{ installationId: 101, name: 'models', deployProjectRoot: '../up' }, '/body/deployProjectRoot'],
    ] as const) {
      const answer = problem(await connect(id, body), 400, 'VALIDATION_FAILED');
      expect(answer.errors?.map((e) => e.pointer)).toContain(pointer);
    }
    problem(await connect(id, { installationId: 101, name: 'models', extra: true }), 400, 'VALIDATION_FAILED');
    problem(
      await call({
        method: 'POST',
        url: `${build(id)}/git-host/connect`,
        key: other.admin.key,
        host: 'upstream-other.example.test',
        body: { installationId: 101, name: 'models' },
      }),
      404,
      'DEPLOYMENT_NOT_FOUND',
    );

    expect(await localHead(id)).toBe(before);
    expect(await t.store.db.selectFrom('deployment_upstreams').selectAll().where('deployment_id', '=', id).execute()).toEqual([]);
    expect(await builtCommits(id)).toEqual([]);
  });

  it('isNewRepo: the repository is made under the organisation and receives the deployment’s model', async () => {
    const id = await t.deployment('fresh');
    const head = (await localHead(id))!;
    const res = await connect(id, { installationId: 101, name: 'fresh-models', isNewRepo: true, private: true });
    expect(res.statusCode, res.body).toBe(200);
    expect(host.seen).toContain('POST /orgs/acme/repos');
    expect(await git.repoAt('acme/fresh-models.git')!.head('main')).toBe(head);
    expect(await builtCommits(id)).toContain(`main@${head}`);
    // The user's own account: /user/repos.
    const mine = await t.deployment('mine');
    expect((await connect(mine, { installationId: 55, name: 'personal', isNewRepo: true })).statusCode).toBe(200);
    expect(host.seen).toContain('POST /user/repos');
    expect(await git.repoAt('alice/personal.git')!.head('main')).toBe(await localHead(mine));
  });

  it('commits and new branches reach the repository before they land here; a repository with commits this one lacks refuses them (409) and nothing moves', async () => {
    const id = connected;
    const committed = await commitFile(id, 'model/cubes/first.yml');
    expect(committed.statusCode, committed.body).toBe(200);
    expect(await upstream.head('main')).toBe(await localHead(id));
    expect(await paths(upstream, 'main')).toContain('model/cubes/first.yml');

    // Someone commits on the host: the next commit here is refused, on both sides nothing moves.
    await upstreamCommit('main', { 'model/cubes/upstream.yml': '# upstream\n' });
    const upstreamHead = await upstream.head('main');
    const localBefore = await localHead(id);
    problem(await commitFile(id, 'model/cubes/second.yml'), 409, 'UPSTREAM_DIVERGED');
    expect(await localHead(id)).toBe(localBefore);
    expect(await upstream.head('main')).toBe(upstreamHead);

    // Pull brings the host's commit (a fast-forward), builds, and the commit then goes through.
    expect(await ok('POST', `${build(id)}/pull`, { branchName: 'main' })).toEqual({ buildTriggered: true });
    expect(await localHead(id)).toBe(upstreamHead);
    expect(await builtCommits(id)).toContain(`main@${upstreamHead}`);
    expect(await ok('POST', `${build(id)}/pull`, { branchName: 'main' })).toEqual({ buildTriggered: false });
    expect((await call({ method: 'POST', url: `${build(id)}/commit`, body: { message: 'again' } })).statusCode).toBe(200);
    expect(await upstream.head('main')).toBe(await localHead(id));
    expect(await paths(upstream, 'main')).toEqual(expect.arrayContaining(['model/cubes/second.yml', 'model/cubes/upstream.yml']));

    // A new shared branch is made there too; a merge into the deploy branch goes there first.
    await ok('POST', `${build(id)}/branches`, { name: 'feature/x' });
    expect(await upstream.head('feature/x')).toBe(await localHead(id));
    expect((await commitFile(id, 'model/cubes/feature.yml', 'feature/x')).statusCode).toBe(200);
    expect(await upstream.head('feature/x')).toBe(await localHead(id, 'feature/x'));
    expect(await ok('POST', `${build(id)}/merge-to-default`, { branchName: 'feature/x', message: 'Ship feature/x' })).toMatchObject({ merged: true });
    expect(await upstream.head('main')).toBe(await localHead(id));
    expect(await paths(upstream, 'main')).toContain('model/cubes/feature.yml');
  });

  it('pull (2.16): both sides changed → merged, the merge pushed first; a conflict is 409 and moves nothing; a branch only there arrives here', async () => {
    const id = connected;
    const row = (await findDeployment(t.store.db, t.tenantId, id))!;
    const localOnly = async (changes: Record<string, string>) =>
      t.app.services.repositories.write(row, async (repo) =>
        repo.commit({ ref: 'refs/heads/main', expectedHead: await repo.head('main'), changes: new Map(Object.entries(changes)), author, message: 'local' }),
      );
    await localOnly({ 'model/cubes/local.yml': '# local\n' });
    await upstreamCommit('main', { 'model/cubes/remote.yml': '# remote\n' });
    expect(await ok('POST', `${build(id)}/pull`, { branchName: 'main' })).toEqual({ buildTriggered: true });
    const merged = (await localHead(id))!;
    expect((await (await repoOf(id)).log(merged, 0, 1))[0]!.parents).toHaveLength(2);
    expect(await paths(await repoOf(id), 'main')).toEqual(expect.arrayContaining(['model/cubes/local.yml', 'model/cubes/remote.yml']));
    expect(await upstream.head('main')).toBe(merged);

    await localOnly({ 'README.md': '# here\n' });
    await upstreamCommit('main', { 'README.md': '# there\n' });
    const [here, there] = [await localHead(id), await upstream.head('main')];
    const conflict = problem(await call({ method: 'POST', url: `${build(id)}/pull`, body: { branchName: 'main' } }), 409, 'MERGE_CONFLICT');
    expect(conflict.conflicts).toEqual(['README.md']);
    expect([await localHead(id), await upstream.head('main')]).toEqual([here, there]);

    await upstream.commit({
      ref: 'refs/heads/hotfix',
      expectedHead: null,
      parent: there,
      changes: new Map([['model/cubes/hotfix.yml', '# hotfix\n']]),
      author,
      message: 'hotfix',
    });
    expect(await ok('POST', `${build(id)}/pull`, { branchName: 'hotfix' })).toEqual({ buildTriggered: true });
    expect(await localHead(id, 'hotfix')).toBe(await upstream.head('hotfix'));
    const listed = (await call({ url: `${build(id)}/branches?first=100` })).json<{ items: Array<{ name: string }> }>();
    expect(listed.items.map((b) => b.name)).toContain('hotfix');

    problem(await call({ method: 'POST', url: `${build(id)}/pull`, body: { branchName: 'no-such-branch' } }), 404, 'UPSTREAM_BRANCH_NOT_FOUND');
    problem(await call({ method: 'POST', url: `${build(id)}/pull`, body: { branchName: 'dev-1-main' } }), 400, 'INVALID_BRANCH');
    // Not connected: nothing to fetch, nothing built.
    const plain = await t.deployment('plain');
    expect(await ok('POST', `${build(plain)}/pull`, { branchName: 'main' })).toEqual({ buildTriggered: false });
  });

  it('branch delete (2.13): removeOnUpstream deletes the branch there too; by default the repository keeps it', async () => {
    const id = connected;
    await ok('POST', `${build(id)}/branches`, { name: 'tmp-a', from: 'hotfix' });
    await ok('POST', `${build(id)}/branches`, { name: 'tmp-b', from: 'hotfix' });
    expect(await upstream.head('tmp-a')).not.toBeNull();
    await ok('DELETE', `${build(id)}/branches?branchName=tmp-a`);
    expect(await upstream.head('tmp-a')).not.toBeNull();
    await ok('DELETE', `${build(id)}/branches?branchName=tmp-b&removeOnUpstream=true`);
    expect(await upstream.head('tmp-b')).toBeNull();
    expect(await localHead(id, 'tmp-b')).toBeNull();
    // Unknown here: 404, and the repository is not touched.
    problem(await call({ method: 'DELETE', url: `${build(id)}/branches?branchName=tmp-a&removeOnUpstream=true` }), 404, 'BRANCH_NOT_FOUND');
    expect(await upstream.head('tmp-a')).not.toBeNull();
  });

  it('a repository the installation no longer reaches: 502, and nothing moves here', async () => {
    const id = await t.deployment('lost');
    expect((await connect(id, { installationId: 101, name: 'models' })).statusCode).toBe(200);
    const before = await localHead(id);
    const installation = users[0]!.installations[0]!;
    const kept = installation.repositories;
    installation.repositories = kept.filter((r) => r.name !== 'models');
    try {
      problem(await commitFile(id, 'model/cubes/lost.yml'), 502, 'UPSTREAM_UNAVAILABLE');
      problem(await call({ method: 'POST', url: `${build(id)}/pull`, body: { branchName: 'main' } }), 502, 'UPSTREAM_UNAVAILABLE');
      expect(await localHead(id)).toBe(before);
    } finally {
      installation.repositories = kept;
    }
  });

  it('no secret appears in any answer or log line: the app key, installation and user tokens, the client secret', () => {
    const keyBody = privateKey.split('\n')[5]!;
    const secrets = [keyBody, CLIENT_SECRET, ...users.map((u) => u.token), ...host.installationTokens.keys()];
    expect(host.installationTokens.size).toBeGreaterThan(0);
    for (const secret of secrets) {
      expect(bodies.filter((b) => b.includes(secret))).toEqual([]);
      expect(logs.filter((l) => l.includes(secret))).toEqual([]);
    }
  });
});
