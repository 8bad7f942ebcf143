import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { completion, isolatedEnv, removeTempDirs, runCli, show, spawnCli, startTestServer, type TestServer } from './helpers.js';

afterAll(removeTempDirs);

/*
 * Reference 5.0: the command-line client gets an OAuth token by the browser device flow (prints a
 * URL and a code, waits while the user approves, stores the credential) and refreshes expired
 * access tokens itself. Here the approval is an admin's, on the extension route.
 */
describe.each(STORE_INDEPENDENT)('mapi login --device (%s)', (dialect) => {
  let server: TestServer;
  let deploymentA: number;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    deploymentA = await server.deployment('Alpha analytics');
    await server.deployment('Beta reporting');
  });
  afterAll(async () => server?.stop());

  it('shows the URL and code, waits for the approval, saves a refreshing sign-in (0600), and later commands refresh it as it expires', async () => {
    const env = isolatedEnv();
    const file = path.join(env.MAPI_CONFIG_DIR as string, 'config.json');
    const child = spawnCli(['login', '--device', '--url', server.url, '--ca-cert', server.caFile, '--scope', `deployments:${deploymentA}`], { env });
    const shown = new Promise<string>((resolve) => {
      let text = '';
      child.stderr?.on('data', (d: Buffer | string) => {
        text += String(d);
        const code = /enter the code ([A-Z]{4}-[A-Z]{4})/.exec(text)?.[1];
        if (code) resolve(code);
      });
    });
    const done = completion(child);
    const userCode = await shown;
    const approved = await server.post('/api/v1/oauth/device-approvals', { userCode });
    expect(approved.status, approved.text).toBe(200);
    const login = await done;
    expect(login.code, show(login)).toBe(0);
    // The verification URL is on the tenant's own origin (PUBLIC_URL here), not the address the CLI used.
    expect(login.stderr).toMatch(new RegExp(`https://localhost:\\d+/oauth/device\\?user_code=${userCode}`));
    expect(login.stdout).toContain(`Logged in to ${server.url} as admin@localhost (ADMIN) by device sign-in`);
    if (process.platform !== 'win32') expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(fs.readFileSync(file, 'utf8')).profiles.default;
    expect(saved).toMatchObject({ url: server.url, caCert: server.caFile, refreshToken: expect.any(String), tokenExpiresAt: expect.any(String) });
    expect(saved.token).not.toMatch(/^mapi_/);

    // The sign-in is limited to deployment A, like a scoped key.
    const list = await runCli(['deployments', 'list'], { env });
    expect(list.code, show(list)).toBe(0);
    expect(list.stdout).toContain('Alpha analytics');
    expect(list.stdout).not.toContain('Beta reporting');

    // The access token's hour is over: the next command refreshes it and saves the rotated pair.
    fs.writeFileSync(file, JSON.stringify({ profiles: { default: { ...saved, tokenExpiresAt: new Date(Date.now() - 1000).toISOString() } } }), { mode: 0o600 });
    const whoami = await runCli(['whoami'], { env });
    expect(whoami.code, show(whoami)).toBe(0);
    expect(whoami.stdout).toContain('admin@localhost');
    const refreshed = JSON.parse(fs.readFileSync(file, 'utf8')).profiles.default;
    expect(refreshed.refreshToken).not.toBe(saved.refreshToken);
    expect(refreshed.token).not.toBe(saved.token);
    expect(Date.parse(refreshed.tokenExpiresAt)).toBeGreaterThan(Date.now());

    // MAPI_TOKEN still overrides the profile, as given.
    const withKey = await runCli(['whoami', '--json'], { env: { ...env, MAPI_TOKEN: server.key } });
    expect(withKey.code, show(withKey)).toBe(0);
    expect(JSON.parse(withKey.stdout).sources.token).toBe('environment');

    // A spent refresh token (the old one) is refused: the command says to sign in again.
    fs.writeFileSync(file, JSON.stringify({ profiles: { default: { ...saved, tokenExpiresAt: new Date(Date.now() - 1000).toISOString() } } }), { mode: 0o600 });
    const stale = await runCli(['whoami'], { env });
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('mapi login --device');
  });
});
