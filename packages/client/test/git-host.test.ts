import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STARTER_MODEL, STARTER_MODEL_PATH } from '../../server/src/areas/data-model/starter-model.js';
import type { Repository } from '../../server/src/git/repository.js';
import { startGitHost, type GitHostFixture } from '../../server/test/git-host-fixture.js';
import { startGitServer, type GitServer } from '../../server/test/git-server-fixture.js';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { ApiError, unwrap, type MapiClient } from '../src/node.js';
import { createDeployment, startTestServer, type TestServer } from './support.js';

/*
 * client.gitHost against a real server whose git host is the stand-in of the server's tests
 * (git-host-fixture.ts) and whose repositories a real `git http-backend` serves over HTTPS.
 */

const APP_ID = '4243';
const CLIENT_SECRET = 'client-secret-of-the-client-test';
const author = { name: 'Upstream author', email: 'upstream@example.com' };

const failure = async (promise: Promise<unknown>): Promise<ApiError> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected the request to fail');
};

describe.each(STORE_INDEPENDENT)('git-host helpers (%s)', (dialect) => {
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKey = keys.privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
  let git: GitServer;
  let host: GitHostFixture;
  let upstream: Repository;
  let server: TestServer;
  let client: MapiClient;

  beforeAll(async () => {
    git = await startGitServer((token, path) => host.installationReaches(token, path));
    upstream = await git.createRepo('acme/models.git');
    const first = await upstream.commit({
      ref: 'refs/heads/main',
      expectedHead: null,
      changes: new Map([[STARTER_MODEL_PATH, STARTER_MODEL]]),
      author,
      message: 'The model',
    });
    await upstream.commit({
      ref: 'refs/heads/release',
      expectedHead: null,
      parent: first,
      changes: new Map([['RELEASE.md', '# release\n']]),
      author,
      message: 'Release',
    });
    host = await startGitHost(
      [
        {
          login: 'alice',
          code: 'code-alice',
          token: 'host-token-alice-client',
          installations: [
            { id: 101, account: 'acme', repositories: [{ id: 7, name: 'models', owner: 'acme', defaultBranch: 'main', branches: ['release', 'main'] }] },
            { id: 55, account: 'alice', repositories: [] },
          ],
        },
      ],
      {
        clientId: 'Iv1.client',
        clientSecret: CLIENT_SECRET,
        app: { id: APP_ID, publicKey: keys.publicKey },
        git: { origin: git.origin, create: async (owner, name) => void (await git.createRepo(`${owner}/${name}.git`)) },
      },
    );
    server = await startTestServer(dialect, { env: { OUTBOUND_ALLOW_PRIVATE: '127.0.0.1/32', OUTBOUND_CA_FILE: git.caFile } });
    client = server.client();
  });
  afterAll(async () => {
    await server?.close();
    await host?.close();
    await git?.close();
  });

  it('status before the account has an app is not connected with no URLs (reference 5.19), the lists a clear 404; once set, the caller is not linked and gets a link URL', async () => {
    expect(await client.gitHost.status()).toEqual({ connected: false, linkUrl: '', settingsUrl: '' });
    const missing = await failure(client.gitHost.installations()[Symbol.asyncIterator]().next());
    expect(missing).toMatchObject({ status: 404, code: 'GIT_HOST_NOT_CONFIGURED' });

    unwrap(
      await client.PUT('/api/v1/tenant/git-host-app', {
        body: {
          apiBaseUrl: host.baseUrl,
          webBaseUrl: host.baseUrl,
          appId: APP_ID,
          appSlug: 'mapi-models',
          clientId: host.clientId,
          clientSecret: CLIENT_SECRET,
          privateKey,
        },
      }),
    );
    const status = await client.gitHost.status();
    expect(status).toMatchObject({ connected: false, settingsUrl: `${host.baseUrl}/apps/mapi-models/installations/new` });
    expect(new URL(status.linkUrl).searchParams.get('state')).toBeTruthy();
    expect(await failure(client.gitHost.installations()[Symbol.asyncIterator]().next())).toMatchObject({ status: 409, code: 'GIT_HOST_NOT_LINKED' });
  });

  it('after linking: connected, and installations, repositories and branches list what the account reaches', async () => {
    const state = new URL((await client.gitHost.status()).linkUrl).searchParams.get('state') ?? '';
    expect(unwrap(await client.GET('/api/v1/git-host/callback', { params: { query: { state, code: 'code-alice' } } }))).toEqual({
      connected: true,
      login: 'alice',
    });
    expect(await client.gitHost.status()).toMatchObject({ connected: true });

    const installations = [];
    for await (const i of client.gitHost.installations()) installations.push(i);
    expect(installations.map((i) => [i.installationId, i.login])).toEqual([
      ['55', 'alice'],
      ['101', 'acme'],
    ]);
    const repositories = [];
    for await (const r of client.gitHost.repositories(101)) repositories.push(r);
    expect(repositories).toEqual([{ id: 7, name: 'models', htmlUrl: 'https://git.example.test/acme/models' }]);
    const branches = [];
    for await (const b of client.gitHost.branches('acme', 'models', 101)) branches.push(b);
    expect(branches).toEqual([
      { name: 'main', isDefault: true },
      { name: 'release', isDefault: false },
    ]);
    expect(await failure(client.gitHost.repositories(999)[Symbol.asyncIterator]().next())).toMatchObject({ status: 404, code: 'GIT_HOST_NOT_FOUND' });
  });

  it('connect deploys the repository’s branch; pull brings new commits and says whether a build started', async () => {
    const d = await createDeployment(client);
    const deployment = await client.gitHost.connect(d, { installationId: 101, name: 'models', deployBranchName: 'release' });
    expect(deployment).toMatchObject({ id: d });
    expect(unwrap(await client.GET('/api/v1/deployments/{deploymentId}/settings', { params: { path: { deploymentId: d } } }))).toMatchObject({
      deployBranchName: 'release',
    });
    expect((await client.dataModel.files(d, { branchName: 'release' })).map((f) => f.path).sort()).toEqual(['RELEASE.md', STARTER_MODEL_PATH]);

    expect(await client.gitHost.pull(d, 'release')).toEqual({ buildTriggered: false });
    await upstream.commit({
      ref: 'refs/heads/release',
      expectedHead: await upstream.head('release'),
      changes: new Map([['NOTES.md', '# notes\n']]),
      author,
      message: 'Notes',
    });
    expect(await client.gitHost.pull(d, 'release')).toEqual({ buildTriggered: true });
    expect((await client.dataModel.files(d, { branchName: 'release' })).map((f) => f.path)).toContain('NOTES.md');

    expect(await failure(client.gitHost.connect(d, { installationId: 101, name: 'models', isNewRepo: true }))).toMatchObject({
      status: 409,
      code: 'GIT_HOST_REPO_EXISTS',
    });
  });

  it('unlink forgets the link and revokes the token at the host; a second unlink is 409', async () => {
    await client.gitHost.unlink();
    expect(host.revoked).toEqual(['host-token-alice-client']);
    expect(await client.gitHost.status()).toMatchObject({ connected: false });
    expect(await failure(client.gitHost.unlink())).toMatchObject({ status: 409, code: 'GIT_HOST_NOT_LINKED' });
  });
});
