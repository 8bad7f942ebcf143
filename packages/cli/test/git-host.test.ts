import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STARTER_MODEL, STARTER_MODEL_PATH } from '../../server/src/areas/data-model/starter-model.js';
import type { Repository } from '../../server/src/git/repository.js';
import { startGitHost, type GitHostFixture } from '../../server/test/git-host-fixture.js';
import { startGitServer, type GitServer } from '../../server/test/git-server-fixture.js';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { connectInput, parseRepository } from '../src/commands/git-host.js';
import { isolatedEnv, removeTempDirs, runCli, serverVars, show, startTestServer, type TestServer } from './helpers.js';

/*
 * `mapi git-host …` against a real server process whose git host is the stand-in of the server's
 * tests (git-host-fixture.ts), with repositories served by real `git http-backend` over HTTPS.
 */

const APP_ID = '4244';
const CLIENT_SECRET = 'client-secret-of-the-cli-test';
const author = { name: 'Upstream author', email: 'upstream@example.com' };

describe('git-host arguments', () => {
  it('a repository is owner/name; connect takes the name alone, --public only with --new', () => {
    expect(parseRepository('acme/models')).toEqual({ owner: 'acme', repo: 'models' });
    for (const bad of ['models', 'acme/models/x', 'acme/', 'ac me/models']) expect(() => parseRepository(bad)).toThrow(/is not a repository: give owner\/name/);
    expect(connectInput('101', 'models', {})).toEqual({ installationId: 101, name: 'models' });
    expect(connectInput('101', 'models', { branch: 'release', root: 'analytics' })).toEqual({
      installationId: 101,
      name: 'models',
      deployBranchName: 'release',
      deployProjectRoot: 'analytics',
    });
    expect(connectInput('101', 'fresh', { new: true })).toEqual({ installationId: 101, name: 'fresh', isNewRepo: true, private: true });
    expect(connectInput('101', 'fresh', { new: true, public: true })).toEqual({ installationId: 101, name: 'fresh', isNewRepo: true, private: false });
    expect(() => connectInput('101', 'models', { public: true })).toThrow(/--public applies only with --new/);
    expect(() => connectInput('101', 'acme/models', {})).toThrow(/without its owner/);
    expect(() => connectInput('x', 'models', {})).toThrow(/installationId must be a positive integer/);
  });
});

describe.each(STORE_INDEPENDENT)('mapi git-host (%s)', (dialect) => {
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKey = keys.privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
  let git: GitServer;
  let host: GitHostFixture;
  let upstream: Repository;
  let server: TestServer;
  let env: Record<string, string>;
  const mapi = (...args: string[]) => runCli(args, { env });

  beforeAll(async () => {
    git = await startGitServer((token, path) => host.installationReaches(token, path));
    upstream = await git.createRepo('acme/models.git');
    await upstream.commit({
      ref: 'refs/heads/main',
      expectedHead: null,
      changes: new Map([[STARTER_MODEL_PATH, STARTER_MODEL]]),
      author,
      message: 'The model',
    });
    host = await startGitHost(
      [
        {
          login: 'alice',
          code: 'code-alice',
          token: 'host-token-alice-cli',
          installations: [
            { id: 101, account: 'acme', repositories: [{ id: 7, name: 'models', owner: 'acme', defaultBranch: 'main', branches: ['main', 'release'] }] },
          ],
        },
      ],
      {
        clientId: 'Iv1.cli',
        clientSecret: CLIENT_SECRET,
        app: { id: APP_ID, publicKey: keys.publicKey },
        git: { origin: git.origin, create: async (owner, name) => void (await git.createRepo(`${owner}/${name}.git`)) },
      },
    );
    server = await startTestServer(dialect, { OUTBOUND_ALLOW_PRIVATE: '127.0.0.1/32', OUTBOUND_CA_FILE: git.caFile });
    env = isolatedEnv(serverVars(server));
  });
  afterAll(async () => {
    await server?.stop();
    await host?.close();
    await git?.close();
    removeTempDirs();
  });

  it('status without an app says so and how to set one; with one, it prints the link URL to open', async () => {
    const missing = await mapi('git-host', 'status');
    expect(missing.code, show(missing)).toBe(0);
    expect(missing.stdout).toContain('Your git-host account is not linked, and this account has no git-host app to link it to yet.');
    expect(missing.stdout).toContain('An admin sets one with PUT /api/v1/tenant/git-host-app');
    const missingJson = await mapi('git-host', 'status', '--json');
    expect(JSON.parse(missingJson.stdout)).toEqual({ connected: false, linkUrl: '', settingsUrl: '' });
    // The lists still say what is missing.
    const noApp = await mapi('git-host', 'installations');
    expect(noApp.code, show(noApp)).toBe(1);
    expect(noApp.stderr).toContain('error: 404 No git-host app is configured for this account');
    expect(noApp.stderr).toContain('hint: This account has no git-host app yet');

    const app = await server.put('/api/v1/tenant/git-host-app', {
      apiBaseUrl: host.baseUrl,
      webBaseUrl: host.baseUrl,
      appId: APP_ID,
      appSlug: 'mapi-models',
      clientId: host.clientId,
      clientSecret: CLIENT_SECRET,
      privateKey,
    });
    expect(app.status, app.text).toBe(200);
    const status = await mapi('git-host', 'status');
    expect(status.code, show(status)).toBe(0);
    expect(status.stdout).toContain('Your git-host account is not linked.');
    expect(status.stdout).toMatch(new RegExp(`^  ${host.baseUrl}/login/oauth/authorize\\?\\S*state=`, 'm'));
    expect(status.stdout).toContain(`  ${host.baseUrl}/apps/mapi-models/installations/new`);

    const unlinked = await mapi('git-host', 'installations');
    expect(unlinked.code, show(unlinked)).toBe(1);
    expect(unlinked.stderr).toContain('hint: Run `mapi git-host status` and open the link URL it prints');
  });

  it('once linked: status says so, and installations, repositories and branches are listed', async () => {
    const json = await mapi('git-host', 'status', '--json');
    expect(json.code, show(json)).toBe(0);
    const state = new URL((JSON.parse(json.stdout) as { linkUrl: string }).linkUrl).searchParams.get('state') ?? '';
    // The browser's visit to the callback, after the user authorized the app at the host.
    const callback = await server.get(`/api/v1/git-host/callback?state=${encodeURIComponent(state)}&code=code-alice`);
    expect(callback.status, callback.text).toBe(200);

    const status = await mapi('git-host', 'status', '--json');
    expect(JSON.parse(status.stdout)).toMatchObject({ connected: true });
    expect((await mapi('git-host', 'status')).stdout).toContain('Your git-host account is linked.');

    const installations = await mapi('git-host', 'installations');
    expect(installations.code, show(installations)).toBe(0);
    expect(installations.stdout).toBe(' ID  ACCOUNT\n101  acme\n');
    const repositories = await mapi('git-host', 'repositories', '101');
    expect(repositories.stdout).toBe('ID  NAME    URL\n 7  models  https://git.example.test/acme/models\n');
    const branches = await mapi('git-host', 'branches', 'acme/models', '--installation', '101', '--json');
    expect(JSON.parse(branches.stdout)).toEqual([
      { name: 'main', isDefault: true },
      { name: 'release', isDefault: false },
    ]);
    const unreachable = await mapi('git-host', 'repositories', '999');
    expect(unreachable.code, show(unreachable)).toBe(1);
    expect(unreachable.stderr).toContain('hint: Your linked account does not reach it');
  });

  it('connect deploys the repository; pull says whether a build started; bad arguments send nothing', async () => {
    const d = await server.deployment(`git-host ${dialect}`);
    const connected = await mapi('git-host', 'connect', String(d), '101', 'models');
    expect(connected.code, show(connected)).toBe(0);
    expect(connected.stdout).toContain(
      `Deployment ${d} (git-host ${dialect}) is connected to repository models of installation 101; production builds from the repository's default branch.`,
    );
    expect((await server.get(`/api/v1/deployments/${d}/settings`)).body).toMatchObject({ deployBranchName: 'main' });

    const nothing = await mapi('git-host', 'pull', String(d), 'main');
    expect(nothing.code, show(nothing)).toBe(0);
    expect(nothing.stdout).toContain('Pulled main: nothing new');
    await upstream.commit({
      ref: 'refs/heads/main',
      expectedHead: await upstream.head('main'),
      changes: new Map([['NOTES.md', '# notes\n']]),
      author,
      message: 'Notes',
    });
    const moved = await mapi('git-host', 'pull', String(d), 'main', '--json');
    expect(moved.code, show(moved)).toBe(0);
    expect(JSON.parse(moved.stdout)).toEqual({ buildTriggered: true });
    const files = await server.get(`/build/api/v1/deployments/${d}/data-model/files?branchName=main`);
    expect(files.text).toContain('NOTES.md');

    const exists = await mapi('git-host', 'connect', String(d), '101', 'models', '--new');
    expect(exists.code, show(exists)).toBe(1);
    expect(exists.stderr).toContain('hint: Leave out --new to connect the existing repository');
    const publicOnly = await mapi('git-host', 'connect', String(d), '101', 'models', '--public');
    expect(publicOnly.code, show(publicOnly)).toBe(1);
    expect(publicOnly.stderr).toContain('error: --public applies only with --new');
  });

  it('unlink forgets the link; a second unlink says there is none', async () => {
    const unlinked = await mapi('git-host', 'unlink');
    expect(unlinked.code, show(unlinked)).toBe(0);
    expect(unlinked.stdout).toContain('Your git-host account is unlinked.');
    expect(host.revoked).toEqual(['host-token-alice-cli']);
    const again = await mapi('git-host', 'unlink');
    expect(again.code, show(again)).toBe(1);
    expect(again.stderr).toContain('error: 409 The caller has not linked a git-host account');
  });
});
