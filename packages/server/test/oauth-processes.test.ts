import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { runAdmin } from '../src/admin.js';
import { DIALECTS } from './harness.js';
import { CLI_CLIENT, DEVICE_GRANT } from './oauth-harness.js';
import { serverEnv, type ServerEnv } from './server-env.js';
import { startServerProcess, type ServerProcess } from './server-process.js';

/** A form-encoded POST to a server process, as an OAuth client sends it. */
function postForm(server: ServerProcess, dataDir: string, pathname: string, form: Record<string, string>): Promise<{ status: number; body: any }> {
  const ca = fs.readFileSync(path.join(dataDir, 'tls', 'localhost.crt'), 'utf8');
  const target = new URL(server.url);
  const payload = new URLSearchParams(form).toString();
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        hostname: target.hostname,
        port: target.port,
        path: pathname,
        method: 'POST',
        ca,
        servername: 'localhost',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(payload)) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.once('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text || 'null') }));
      },
    );
    req.once('error', reject);
    req.end(payload);
  });
}

/*
 * Issue 17: revocation is "effective on every process at once through the exact-invalidation
 * cache". Two real server processes over one store: a token signed in through A and used (so
 * cached) on B is refused by B on the very next request after A revokes it.
 */
describe.each(DIALECTS)('OAuth tokens across two server processes (%s)', (dialect) => {
  const adminKey = generateApiKey();
  let env: ServerEnv;
  let a: ServerProcess;
  let b: ServerProcess;

  beforeAll(async () => {
    env = await serverEnv(dialect);
    const extra = { ...env.env, ADMIN_API_KEY: adminKey, RATE_LIMIT_PER_MINUTE: '0', RATE_LIMIT_PER_IP_PER_MINUTE: '0' };
    // One after the other: the first start bootstraps the tenant and writes the certificate.
    a = await startServerProcess(extra, env.dataDir);
    b = await startServerProcess(extra, env.dataDir);
  });
  afterAll(async () => {
    await Promise.allSettled([a?.stop(), b?.stop()]);
    await env?.destroy();
  });

  it('a device signed in on one process is served by the other, and a revocation on one is refused by the other on its next request', async () => {
    const started = await postForm(a, env.dataDir, '/oauth/device/auth', { client_id: CLI_CLIENT });
    expect(started.status).toBe(200);
    expect((await a.post('/api/v1/oauth/device-approvals', { userCode: started.body.user_code }, adminKey)).status).toBe(200);
    // The device polls the other process: the provider's storage is the shared store.
    const tokens = await postForm(b, env.dataDir, '/oauth/token', { grant_type: DEVICE_GRANT, device_code: started.body.device_code, client_id: CLI_CLIENT });
    expect(tokens.status).toBe(200);
    const access = tokens.body.access_token as string;
    for (let i = 0; i < 2; i++) expect((await b.get('/api/v1/users/me', access)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await a.get('/api/v1/users/me', access)).status).toBe(200);

    expect((await postForm(a, env.dataDir, '/oauth/token/revocation', { token: access, client_id: CLI_CLIENT })).status).toBe(200);
    expect((await b.get('/api/v1/users/me', access)).status).toBe(401);
    expect((await a.get('/api/v1/users/me', access)).status).toBe(401);

    // Revoking a token ends its whole sign-in: the refresh token is refused too.
    expect(
      (await postForm(b, env.dataDir, '/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: CLI_CLIENT })).status,
    ).toBe(400);

    // Revoking a refresh token on B ends the sign-in's access tokens on A.
    const second = await postForm(a, env.dataDir, '/oauth/device/auth', { client_id: CLI_CLIENT });
    expect((await a.post('/api/v1/oauth/device-approvals', { userCode: second.body.user_code }, adminKey)).status).toBe(200);
    const refreshed = await postForm(a, env.dataDir, '/oauth/token', { grant_type: DEVICE_GRANT, device_code: second.body.device_code, client_id: CLI_CLIENT });
    expect(refreshed.status).toBe(200);
    expect((await a.get('/api/v1/users/me', refreshed.body.access_token)).status).toBe(200);
    expect((await postForm(b, env.dataDir, '/oauth/token/revocation', { token: refreshed.body.refresh_token, client_id: CLI_CLIENT })).status).toBe(200);
    expect((await a.get('/api/v1/users/me', refreshed.body.access_token)).status).toBe(401);
    expect(a.errors().concat(b.errors())).toEqual([]);
  });

  it('an operator approves a device sign-in with `npm run admin -- approve-device <code> --user <email>`', async () => {
    const started = await postForm(b, env.dataDir, '/oauth/device/auth', { client_id: CLI_CLIENT, scope: 'deployments:7' });
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (line: string) => void out.push(line), err: (line: string) => void err.push(line) };
    expect(await runAdmin(['approve-device', started.body.user_code, '--user', 'nobody@example.com'], env.env, io)).toBe(2);
    expect(err.join('\n')).toContain('No active user "nobody@example.com"');
    expect(await runAdmin(['approve-device', started.body.user_code, '--user', 'admin@localhost'], env.env, io)).toBe(0);
    expect(out.join('\n')).toContain('the device signs in as admin@localhost (deployments 7)');
    const tokens = await postForm(a, env.dataDir, '/oauth/token', { grant_type: DEVICE_GRANT, device_code: started.body.device_code, client_id: CLI_CLIENT });
    expect(tokens.status).toBe(200);
    expect(tokens.body.scope).toBe('deployments:7');
    expect(await runAdmin(['approve-device', started.body.user_code, '--user', 'admin@localhost'], env.env, io)).toBe(2);
  });
});
