import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { REPO_ROOT } from '../../server/test/server-env.js';
import { isolatedEnv, removeTempDirs, runCli, show, startTestServer, tempDir, type TestServer } from './helpers.js';

/**
 * `mapi model clone` and `mapi git-credential`: the real git client clones, commits and pushes to
 * a real server with the key handed over by the helper, and the key is nowhere in the clone.
 */

const execGit = promisify(execFile);

/** Every file below `dir`, read as text. */
function filesBelow(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

afterAll(removeTempDirs);

describe.each(STORE_INDEPENDENT)('git through the credential helper (%s)', (dialect) => {
  let server: TestServer;
  let env: Record<string, string>;
  let host: string;

  /** git as a user runs it: no system or global configuration, no prompt, and no CA but the clone's own setting. */
  const git = (cwd: string, ...args: string[]) =>
    execGit('git', args, {
      cwd,
      env: {
        ...env,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_TERMINAL_PROMPT: '0',
        GIT_AUTHOR_NAME: 'Pat Pusher',
        GIT_AUTHOR_EMAIL: 'pat@example.com',
        GIT_COMMITTER_NAME: 'Pat Pusher',
        GIT_COMMITTER_EMAIL: 'pat@example.com',
      },
    });

  beforeAll(async () => {
    server = await startTestServer(dialect);
    host = new URL(server.url).host;
    // A profile of another name than "default", so the clone must name it for the helper.
    env = isolatedEnv();
    const login = await runCli(['login', '--profile', 'ci', '--url', server.url, '--ca-cert', server.caFile, '--token-stdin'], {
      env,
      input: `${server.key}\n`,
    });
    expect(login.code, show(login)).toBe(0);
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('model clone checks out the model; a commit pushed with plain git builds, and no file of the clone holds the key', async () => {
    const d = await server.deployment(`Clone ${dialect}`);
    const dir = path.join(tempDir('mapi-clone-'), 'analytics');
    const cloned = await runCli(['--profile', 'ci', 'model', 'clone', String(d), dir], { env });
    expect(cloned.code, show(cloned)).toBe(0);
    expect(cloned.stdout).toContain(`Cloned deployment ${d} into ${dir}.`);
    expect(fs.readFileSync(path.join(dir, 'model/cubes/starter.yml'), 'utf8')).toContain('starter_orders');

    const url = `${server.url}/build/git/${d}.git`;
    expect((await git(dir, 'remote', 'get-url', 'origin')).stdout.trim()).toBe(url);
    const config = fs.readFileSync(path.join(dir, '.git/config'), 'utf8');
    expect(config).toContain(`[credential "${url}"]`);
    expect(config).toContain(`helper = !'${process.execPath}' '${path.join(REPO_ROOT, 'packages/cli/bin/mapi.js')}' --profile 'ci' git-credential`);
    expect(config).toContain(`sslcainfo = ${server.caFile}`);
    for (const file of filesBelow(path.join(dir, '.git'))) expect(fs.readFileSync(file, 'latin1'), file).not.toContain(server.key);

    fs.writeFileSync(path.join(dir, 'model/cubes/orders.yml'), 'cubes: []\n');
    await git(dir, 'add', '.');
    await git(dir, 'commit', '--quiet', '-m', 'Add orders');
    const pushed = (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();
    await git(dir, 'push', '--quiet', 'origin', 'main');
    // The server starts the build once the push's answer is sent, so it is awaited, not assumed.
    await vi.waitFor(
      async () => {
        const builds = (await server.get(`/api/v1/deployments/${d}/builds`)).body as { items: { commit: string; cause: string; status: string }[] };
        expect(builds.items[0]).toMatchObject({ commit: pushed, cause: 'push', status: 'success' });
      },
      { timeout: 60_000, interval: 200 },
    );
    // git stored nothing on the way either: the profile is the one place the key is kept.
    const outsideProfile = filesBelow(env.HOME as string).filter((file) => !file.startsWith(env.MAPI_CONFIG_DIR as string));
    for (const file of outsideProfile) expect(fs.readFileSync(file, 'latin1'), file).not.toContain(server.key.slice(5));
  });

  it('--branch checks out that branch; an existing directory or a deployment that does not exist fails with exit 1', async () => {
    const d = await server.deployment(`Branches ${dialect}`);
    expect((await server.post(`/build/api/v1/deployments/${d}/branches`, { name: 'feature/x' })).status).toBeLessThan(300);
    const parent = tempDir('mapi-clone-');
    const branch = await runCli(['--profile', 'ci', 'model', 'clone', String(d), path.join(parent, 'x'), '--branch', 'feature/x'], { env });
    expect(branch.code, show(branch)).toBe(0);
    expect((await git(path.join(parent, 'x'), 'branch', '--show-current')).stdout.trim()).toBe('feature/x');

    // A shell that sets GIT_SSL_CAINFO (it outranks the clone's http.sslCAInfo) still clones, told what later git commands need.
    const systemCa = await runCli(['--profile', 'ci', 'model', 'clone', String(d), path.join(parent, 'y')], {
      env: { ...env, GIT_SSL_CAINFO: '/etc/ssl/certs/ca-certificates.crt' },
    });
    expect(systemCa.code, show(systemCa)).toBe(0);
    expect(systemCa.stderr).toContain('warning: GIT_SSL_CAINFO (/etc/ssl/certs/ca-certificates.crt) overrides');
    expect(systemCa.stderr).toContain('unset GIT_SSL_CAINFO');

    const again = await runCli(['--profile', 'ci', 'model', 'clone', String(d), path.join(parent, 'x')], { env });
    expect(again.code, show(again)).toBe(1);
    expect(again.stderr).toContain('already exists and is not an empty directory');
    const missing = await runCli(['--profile', 'ci', 'model', 'clone', '99999', path.join(parent, 'missing')], { env });
    expect(missing.code, show(missing)).toBe(1);
    expect(missing.stderr).toContain('git clone of deployment 99999 failed');
    expect(missing.stderr).not.toContain(server.key);
  });

  it('a profile signed in through the browser is refused with how to make a key for git, before git runs', async () => {
    const browserEnv = isolatedEnv();
    const dir = browserEnv.MAPI_CONFIG_DIR as string;
    fs.mkdirSync(dir, { recursive: true });
    const profile = {
      url: server.url,
      token: 'an-access-token',
      refreshToken: 'a-refresh-token',
      tokenExpiresAt: '2999-01-01T00:00:00Z',
      caCert: server.caFile,
    };
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ profiles: { default: profile } }), { mode: 0o600 });
    const target = path.join(tempDir('mapi-clone-'), 'browser');
    const [clone, helper] = await Promise.all([
      runCli(['model', 'clone', '1', target], { env: browserEnv }),
      runCli(['git-credential', 'get'], { env: browserEnv, input: `protocol=https\nhost=${host}\n\n` }),
    ]);
    for (const result of [clone, helper]) {
      expect(result.code, show(result)).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('signed in through the browser; git over HTTPS takes an API key');
      expect(result.stderr).toContain(`mapi login --profile git --url ${server.url} --ca-cert ${server.caFile} --token-stdin < git.key`);
    }
    expect(fs.existsSync(target)).toBe(false);
  });

  it("git-credential get answers the profile's key for its server only; store and erase do nothing", async () => {
    const ask = (action: string, lines: string[], profile = 'ci') =>
      runCli(['--profile', profile, 'git-credential', action], { env, input: `${lines.join('\n')}\n\n` });
    const [ours, withPath, otherHost, otherPort, http, store, erase, unknown] = await Promise.all([
      ask('get', ['protocol=https', `host=${host}`]),
      ask('get', ['protocol=https', `host=${host}`, 'path=build/git/1.git', 'wwwauth[]=Basic realm="mapi"']),
      ask('get', ['protocol=https', 'host=github.com']),
      ask('get', ['protocol=https', `host=${new URL(server.url).hostname}:1`]),
      ask('get', ['protocol=http', `host=${host}`]),
      ask('store', ['protocol=https', `host=${host}`, 'username=mapi', 'password=other']),
      ask('erase', ['protocol=https', `host=${host}`]),
      ask('get', ['protocol=https', `host=${host}`], 'nosuch'),
    ]);
    for (const answer of [ours, withPath]) {
      expect(answer.code, show(answer)).toBe(0);
      expect(answer.stdout).toBe(`username=mapi\npassword=${server.key}\n`);
    }
    for (const answer of [otherHost, otherPort, http, store, erase, unknown]) {
      expect(answer.code, show(answer)).toBe(0);
      expect(answer.stdout).toBe('');
    }
    const bad = await runCli(['git-credential', 'fetch'], { env });
    expect(bad.code, show(bad)).toBe(1);
    expect(bad.stderr).toContain('Unknown action "fetch"');
  });
});
