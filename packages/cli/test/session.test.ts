import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../server/src/areas/api-keys/key-format.js';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { isolatedEnv, removeTempDirs, runCli, serverVars, show, startTestServer, tempDir, type TestServer } from './helpers.js';

/** Settings, profiles and errors; deployments, users, API keys and the spec. */

const mode = (file: string) => fs.statSync(file).mode & 0o777;
const posix = process.platform !== 'win32';

afterAll(removeTempDirs);

describe.each(STORE_INDEPENDENT)('mapi session and account commands (%s)', (dialect) => {
  let server: TestServer;
  let deploymentA: number;
  let deploymentB: number;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    deploymentA = await server.deployment('Alpha analytics');
    deploymentB = await server.deployment('Beta reporting');
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('login checks the token, writes the profile with mode 0600 (chmods an existing file, not an existing directory), and later commands use it', async () => {
    const env = isolatedEnv();
    const dir = env.MAPI_CONFIG_DIR as string;
    const file = path.join(dir, 'config.json');
    // A file left world-readable by hand, holding another profile that login must keep.
    fs.mkdirSync(dir, { mode: 0o755 });
    fs.writeFileSync(file, JSON.stringify({ profiles: { old: { url: 'https://old.example.com', token: 'mapi_old' } } }), { mode: 0o644 });
    if (posix) fs.chmodSync(file, 0o644);

    const login = await runCli(['login', '--url', server.url, '--ca-cert', server.caFile, '--token-stdin'], { env, input: `${server.key}\n` });
    expect(login.code, show(login)).toBe(0);
    expect(login.stdout).toContain(`Logged in to ${server.url} as admin@localhost (ADMIN)`);
    if (posix) {
      expect(mode(file)).toBe(0o600);
      // Not login's directory: it may be $HOME or a shared folder, so its mode is left alone.
      expect(mode(dir)).toBe(0o755);
    }
    expect(login.stderr).not.toContain('warning');
    const saved = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(saved.profiles.default).toEqual({ url: server.url, token: server.key, caCert: server.caFile });
    expect(saved.profiles.old.url).toBe('https://old.example.com');

    // No flag and no MAPI_* variable: everything comes from the profile.
    const list = await runCli(['deployments', 'list'], { env });
    expect(list.code, show(list)).toBe(0);
    expect(list.stdout).toContain('Alpha analytics');
    expect(list.stdout).toContain('Beta reporting');
  });

  it('login with a refused token exits 1, says how to fix it, and saves nothing; XDG_CONFIG_HOME places the profile', async () => {
    const refusedEnv = isolatedEnv();
    const xdg = tempDir('mapi-xdg-');
    const xdgEnv = isolatedEnv({ XDG_CONFIG_HOME: xdg });
    delete xdgEnv.MAPI_CONFIG_DIR;
    const [refused, viaXdg] = await Promise.all([
      runCli(['login', '--url', server.url, '--ca-cert', server.caFile, '--token-stdin'], { env: refusedEnv, input: generateApiKey() }),
      runCli(['login', '--url', server.url, '--ca-cert', server.caFile, '--token', server.key], { env: xdgEnv }),
    ]);
    expect(refused.code, show(refused)).toBe(1);
    expect(refused.stderr).toContain('401');
    expect(refused.stderr).toContain('mapi login');
    expect(refused.stderr).toContain('Nothing was saved.');
    expect(fs.existsSync(path.join(refusedEnv.MAPI_CONFIG_DIR as string, 'config.json'))).toBe(false);

    expect(viaXdg.code, show(viaXdg)).toBe(0);
    const file = path.join(xdg, 'mapi', 'config.json');
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).profiles.default.token).toBe(server.key);
    if (posix) {
      expect(mode(file)).toBe(0o600);
      // A directory login made itself is private.
      expect(mode(path.dirname(file))).toBe(0o700);
    }
  });

  it('login leaves a shared directory as it is and warns that others may write there; an unusable one fails before the token is checked', async () => {
    const shared = isolatedEnv();
    const dir = shared.MAPI_CONFIG_DIR as string;
    fs.mkdirSync(dir);
    if (posix) fs.chmodSync(dir, 0o777);
    const blocker = path.join(tempDir(), 'a-file');
    fs.writeFileSync(blocker, '');
    // A refused token: had it been checked first, the error would be a 401.
    const unusable = isolatedEnv({ MAPI_CONFIG_DIR: path.join(blocker, 'mapi') });
    const [inShared, inUnusable] = await Promise.all([
      runCli(['login', '--url', server.url, '--ca-cert', server.caFile, '--token-stdin'], { env: shared, input: server.key }),
      runCli(['login', '--url', server.url, '--ca-cert', server.caFile, '--token-stdin'], { env: unusable, input: generateApiKey() }),
    ]);
    expect(inShared.code, show(inShared)).toBe(0);
    if (posix) {
      expect(mode(dir)).toBe(0o777);
      expect(mode(path.join(dir, 'config.json'))).toBe(0o600);
      expect(inShared.stderr).toContain(`warning: users other than you may write to ${dir}`);
    }
    expect(inUnusable.code, show(inUnusable)).toBe(1);
    expect(inUnusable.stderr).toContain(path.join(blocker, 'mapi', 'config.json'));
    expect(inUnusable.stderr).toContain(`hint: The profile lives in ${path.join(blocker, 'mapi')}`);
    expect(inUnusable.stderr).toContain('MAPI_CONFIG_DIR');
    expect(inUnusable.stderr).not.toContain('401');
  });

  it('flags beat the environment, which beats the profile, setting by setting', async () => {
    const env = isolatedEnv();
    // The profile points nowhere useful: a dead URL and an unknown token.
    const login = await runCli(['login', '--url', server.url, '--ca-cert', server.caFile, '--token', server.key], { env });
    expect(login.code, show(login)).toBe(0);
    const file = path.join(env.MAPI_CONFIG_DIR as string, 'config.json');
    const saved = JSON.parse(fs.readFileSync(file, 'utf8'));
    saved.profiles.default.url = 'https://127.0.0.1:59999';
    fs.writeFileSync(file, JSON.stringify(saved), { mode: 0o600 });

    const unknownKey = generateApiKey();
    const [envUrlProfileToken, envTokenBeatsProfile, flagBeatsEnv] = await Promise.all([
      runCli(['whoami', '--json'], { env: { ...env, MAPI_URL: server.url } }),
      runCli(['whoami'], { env: { ...env, MAPI_URL: server.url, MAPI_TOKEN: unknownKey } }),
      runCli(['whoami', '--json', '--token', server.key], { env: { ...env, MAPI_URL: server.url, MAPI_TOKEN: unknownKey } }),
    ]);
    expect(envUrlProfileToken.code, show(envUrlProfileToken)).toBe(0);
    expect(JSON.parse(envUrlProfileToken.stdout)).toMatchObject({
      user: { email: 'admin@localhost' },
      url: server.url,
      sources: { url: 'environment', token: 'profile', caCert: 'profile' },
    });

    expect(envTokenBeatsProfile.code, show(envTokenBeatsProfile)).toBe(1);
    expect(envTokenBeatsProfile.stderr).toContain('401');
    expect(envTokenBeatsProfile.stderr).toContain('The token in MAPI_TOKEN was refused');
    expect(envTokenBeatsProfile.stderr).toMatch(/request id: \S+/);

    expect(flagBeatsEnv.code, show(flagBeatsEnv)).toBe(0);
    expect(JSON.parse(flagBeatsEnv.stdout).sources).toEqual({ url: 'environment', token: 'flag', caCert: 'profile' });
  });

  it('an untrusted certificate and an unknown profile exit 1 with the setting to use', async () => {
    const { MAPI_CA_CERT: _ca, ...noCa } = serverVars(server);
    const [untrusted, noProfile] = await Promise.all([
      runCli(['deployments', 'list'], { env: isolatedEnv(noCa) }),
      runCli(['--profile', 'staging', 'deployments', 'list']),
    ]);
    expect(untrusted.code, show(untrusted)).toBe(1);
    expect(untrusted.stderr).toContain('is not trusted');
    expect(untrusted.stderr).toContain('--ca-cert');
    expect(untrusted.stderr).toContain('MAPI_CA_CERT');
    expect(noProfile.code, show(noProfile)).toBe(1);
    expect(noProfile.stderr).toContain('No profile "staging"');
    expect(noProfile.stderr).toContain('mapi login --profile staging');
  });

  it('deployments list prints an aligned table, or JSON matching the server', async () => {
    const env = isolatedEnv(serverVars(server));
    const [table, json] = await Promise.all([runCli(['deployments', 'list'], { env }), runCli(['deployments', 'list', '--json'], { env })]);
    expect(table.code, show(table)).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^\s*ID {2}NAME\s+ACCESS {2}STEP\s+CREATED$/);
    const alpha = lines.find((l) => l.includes('Alpha analytics')) as string;
    const beta = lines.find((l) => l.includes('Beta reporting')) as string;
    expect(alpha).toMatch(new RegExp(`^\\s*${deploymentA} {2}Alpha analytics\\s+MANAGE`));
    // Columns line up: each column starts at the same offset on every line.
    for (const header of ['NAME', 'ACCESS', 'STEP', 'CREATED']) {
      const at = (lines[0] as string).indexOf(header);
      expect(alpha.slice(at)).not.toMatch(/^\s/);
      expect(beta.slice(at)).not.toMatch(/^\s/);
    }
    expect(json.code, show(json)).toBe(0);
    const fromServer = (await server.get('/api/v1/deployments')).body.items;
    expect(JSON.parse(json.stdout)).toEqual(fromServer);
  });

  it('users create, list and deactivate; the deactivated user’s key stops working', async () => {
    const env = isolatedEnv(serverVars(server));
    const email = `dana.${dialect}@example.com`;
    const created = await runCli(['users', 'create', email, '--name', 'Dana', '--role', 'developer', '--json'], { env });
    expect(created.code, show(created)).toBe(0);
    const user = JSON.parse(created.stdout);
    expect(user).toMatchObject({ email, firstName: 'Dana', role: 'DEVELOPER', active: true });

    const keyRun = await runCli(['api-keys', 'create', '--name', 'dana-laptop', '--user', String(user.id)], { env });
    expect(keyRun.code, show(keyRun)).toBe(0);
    const danaKey = keyRun.stdout.trim();

    const listed = await runCli(['users', 'list'], { env });
    expect(listed.code, show(listed)).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^\\s*${user.id} {2}${email.replace('.', '\\.')}\\s+Dana\\s+DEVELOPER\\s+active`, 'm'));

    const deactivated = await runCli(['users', 'deactivate', email], { env });
    expect(deactivated.code, show(deactivated)).toBe(0);
    expect(deactivated.stdout).toContain(`Deactivated user ${user.id} (${email})`);

    const [afterList, refused] = await Promise.all([
      runCli(['users', 'list', '--deactivated', '--json'], { env }),
      runCli(['whoami'], { env: { ...env, MAPI_TOKEN: danaKey } }),
    ]);
    expect(JSON.parse(afterList.stdout).map((u: { email: string; active: boolean }) => [u.email, u.active])).toEqual([[email, false]]);
    expect((await server.get(`/api/v1/users/${user.id}`)).body.active).toBe(false);
    expect(refused.code, show(refused)).toBe(1);
    expect(refused.stderr).toContain('401');
    expect(refused.stderr).toContain('MAPI_TOKEN');
  });

  it('api-keys create prints a working key once, list shows it, revoke stops it; a scoped key gets a 403 with the scope hint', async () => {
    const env = isolatedEnv(serverVars(server));
    const created = await runCli(['api-keys', 'create', '--name', 'ci', '--deployments', String(deploymentA), '--expires', '30d'], { env });
    expect(created.code, show(created)).toBe(0);
    // The key alone on stdout (for KEY=$(mapi api-keys create ...)), the details on stderr.
    expect(created.stdout).toMatch(/^mapi_[A-Za-z0-9]{40}\n$/);
    expect(created.stderr).toContain(`"ci"`);
    expect(created.stderr).toContain(`deployments ${deploymentA}`);
    expect(created.stderr).toContain('shown only now');
    const key = created.stdout.trim();

    const [scopedList, outOfScope, listed] = await Promise.all([
      runCli(['deployments', 'list', '--json'], { env: { ...env, MAPI_TOKEN: key } }),
      runCli(['folders', 'tree', String(deploymentB)], { env: { ...env, MAPI_TOKEN: key } }),
      runCli(['api-keys', 'list'], { env }),
    ]);
    expect(scopedList.code, show(scopedList)).toBe(0);
    expect(JSON.parse(scopedList.stdout).map((d: { id: number }) => d.id)).toEqual([deploymentA]);
    expect(outOfScope.code, show(outOfScope)).toBe(1);
    expect(outOfScope.stderr).toContain('403');
    expect(outOfScope.stderr).toContain(`scoped to deployments ${deploymentA}`);
    expect(outOfScope.stderr).toContain('--deployments');
    expect(listed.code, show(listed)).toBe(0);
    const cells = (listed.stdout.split('\n').find((l) => / ci /.test(l)) as string).trim().split(/\s{2,}/);
    // ID, NAME, PREFIX, USER, DEPLOYMENTS, EXPIRES, LAST USED, STATUS
    expect(cells).toHaveLength(8);
    expect(cells.slice(1, 5)).toEqual(['ci', key.slice(0, 9), '1', String(deploymentA)]);
    expect(cells[5]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
    expect(cells[7]).toBe('active');
    const id = Number(cells[0]);

    const revoked = await runCli(['api-keys', 'revoke', String(id)], { env });
    expect(revoked.code, show(revoked)).toBe(0);
    expect(revoked.stdout).toContain(`Revoked API key ${id}.`);
    const [refused, all] = await Promise.all([
      runCli(['deployments', 'list'], { env: { ...env, MAPI_TOKEN: key } }),
      runCli(['api-keys', 'list', '--all', '--json'], { env }),
    ]);
    expect(refused.code, show(refused)).toBe(1);
    expect(refused.stderr).toContain('401');
    const entry = JSON.parse(all.stdout).find((k: { id: number }) => k.id === id);
    expect(entry.revokedAt).not.toBeNull();
  });

  it('spec prints the OpenAPI document, or saves it with --output', async () => {
    const env = isolatedEnv(serverVars(server));
    const file = path.join(tempDir(), 'openapi.json');
    const [printed, saved] = await Promise.all([runCli(['spec'], { env }), runCli(['spec', '--output', file], { env })]);
    expect(printed.code, show(printed)).toBe(0);
    const document = JSON.parse(printed.stdout);
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths)).toContain('/api/v1/deployments/{deploymentId}/workspace/bulk-move');
    expect(saved.code, show(saved)).toBe(0);
    expect(saved.stdout).toBe('');
    expect(saved.stderr).toContain(`to ${file}`);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(document);
  });
});
