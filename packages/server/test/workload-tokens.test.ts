import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { workloadFiles } from '../src/areas/workload-identity/workload-files.js';
import type { PodFiles } from '../src/runtime/index.js';
import { DEFAULT_RUNTIME_OPTIONS, Supervisor, type DesiredRuntime } from '../src/runtime/supervisor.js';
import { DIALECTS, TestApp, problem } from './harness.js';

type Json = Record<string, any>;

/*
 * Issue 17, "OIDC token configs: workload identity": while the tenant's `oidcEnabled` is on, its
 * host serves the issuer's discovery document and the RS256 keys of workload tokens only; every
 * running environment receives each enabled config's token as a file, with the variables cloud
 * SDKs read, replaced before it expires and at once when the config changes. Tokens are verified
 * here as a cloud would: with `jose`, against the served discovery document and key set.
 */
describe.each(DIALECTS)('workload tokens (%s)', (dialect) => {
  let t: TestApp;
  let deploymentId: number;
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-workload-'));
    dirs.push(dir);
    return dir;
  };
  const discovery = async () => {
    const res = await t.request({ url: '/.well-known/openid-configuration', key: null });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Json;
  };
  const keySet = async (uri: string) => {
    const res = await t.request({ url: new URL(uri).pathname, key: null });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as JSONWebKeySet;
  };
  const filesOf = async (): Promise<PodFiles | undefined> =>
    (await workloadFiles(t.store.db, t.app.services.signing, t.app.services.audit)([{ tenantId: t.tenantId, deploymentId, environmentId: 'production' }])).get(
      `${deploymentId}/production`,
    );
  const config = async (body: Json) => {
    const res = await t.request({ method: 'POST', url: '/api/v1/oidc-token-configs', body });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Json;
  };

  let statements: string[] = [];
  let recording = false;
  /** The statements `fn` runs on the test app's store. */
  async function statementsOf(fn: () => Promise<unknown>): Promise<string[]> {
    statements = [];
    recording = true;
    try {
      await fn();
    } finally {
      recording = false;
    }
    return statements;
  }

  beforeAll(async () => {
    t = await TestApp.create(dialect, {
      log: (event) => {
        if (recording && event.level === 'query') statements.push(event.query.sql);
      },
    });
    deploymentId = await t.deployment('workloads');
  });
  afterAll(async () => {
    await t?.close();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves no issuer while oidcEnabled is off (404 for the discovery document and the key set), and gives runtimes no tokens', async () => {
    await config({ audienceType: 'AWS' });
    problem(await t.request({ url: '/.well-known/openid-configuration', key: null }), 404, 'ROUTE_NOT_FOUND');
    problem(await t.request({ url: '/.well-known/jwks.json', key: null }), 404, 'ROUTE_NOT_FOUND');
    expect(await filesOf()).toBeUndefined();
  });

  it('with oidcEnabled on: each enabled config’s token as a file with the variables cloud SDKs read, verifiable against the served issuer (AWS, Azure, GCP, Custom)', async () => {
    expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/settings', body: { oidcEnabled: true, auditLogEnabled: true } })).statusCode).toBe(200);
    const provider = '//iam.googleapis.com/projects/42/locations/global/workloadIdentityPools/pool/providers/mapi';
    await config({ audienceType: 'Azure' });
    await config({ audienceType: 'GCP', customAudience: provider, subFormat: 'acme:{deployment_id}:{component}:{region}' });
    await config({
      audienceType: 'Custom',
      customAudience: 'https://vault.example.com',
      name: 'vault',
      targetEnvVar: 'VAULT_JWT_FILE',
      customClaims: { team: 'data', roles: ['read', 'write'] },
    });
    await config({ audienceType: 'Custom', customAudience: 'https://off.example.com', name: 'off', isEnabled: false });

    const doc = await discovery();
    expect(doc).toMatchObject({
      id_token_signing_alg_values_supported: ['RS256'],
      subject_types_supported: ['public'],
      response_types_supported: ['id_token'],
    });
    expect(doc.jwks_uri).toBe(`${doc.issuer}/.well-known/jwks.json`);
    const files = (await filesOf())!;
    const dir = tempDir();
    const { env, refreshAt } = await files.write(dir);
    expect(Object.keys(env).sort()).toEqual(['AWS_WEB_IDENTITY_TOKEN_FILE', 'AZURE_FEDERATED_TOKEN_FILE', 'GOOGLE_APPLICATION_CREDENTIALS', 'VAULT_JWT_FILE']);
    expect(fs.readdirSync(dir).sort()).toEqual(['aws.jwt', 'azure.jwt', 'gcp.credentials.json', 'gcp.jwt', 'vault.jwt']);
    // Renewed after half of the token's hour.
    expect(refreshAt - Date.now()).toBeGreaterThan(29 * 60_000);
    expect(refreshAt - Date.now()).toBeLessThanOrEqual(30 * 60_000);

    const keys = createLocalJWKSet(await keySet(doc.jwks_uri));
    const verify = async (file: string, audience: string) => {
      const token = fs.readFileSync(file, 'utf8');
      expect(decodeProtectedHeader(token).alg).toBe('RS256');
      return (await jwtVerify(token, keys, { issuer: doc.issuer, audience, algorithms: ['RS256'] })).payload;
    };
    const aws = await verify(env.AWS_WEB_IDENTITY_TOKEN_FILE!, 'sts.amazonaws.com');
    expect(aws).toMatchObject({
      sub: `mapi:deployment:${deploymentId}`,
      'mapi:deployment_id': String(deploymentId),
      'mapi:environment': 'production',
      'mapi:component': 'api',
      'mapi:config': 'aws',
    });
    expect(aws.exp! - aws.iat!).toBe(3600);
    expect(typeof aws.jti).toBe('string');
    expect(await verify(env.AZURE_FEDERATED_TOKEN_FILE!, 'api://AzureADTokenExchange')).toMatchObject({ sub: `mapi:deployment:${deploymentId}` });
    const credentials = JSON.parse(fs.readFileSync(env.GOOGLE_APPLICATION_CREDENTIALS!, 'utf8')) as Json;
    expect(credentials).toEqual({
      type: 'external_account',
      audience: provider,
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      token_url: 'https://sts.googleapis.com/v1/token',
      credential_source: { file: path.join(dir, 'gcp.jwt'), format: { type: 'text' } },
    });
    const region = (await t.store.db.selectFrom('deployments').select('region').where('id', '=', deploymentId).executeTakeFirstOrThrow()).region;
    expect(await verify(credentials.credential_source.file, provider)).toMatchObject({ sub: `acme:${deploymentId}:api:${region}` });
    const vault = await verify(env.VAULT_JWT_FILE!, 'https://vault.example.com');
    expect(vault).toMatchObject({ team: 'data', roles: ['read', 'write'], iss: doc.issuer });
    // The key set holds workload keys only: no data-API token verifies with it.
    const dataToken = (await t.request({ method: 'POST', url: `/api/v1/deployments/${deploymentId}/token`, body: {} })).json() as Json;
    await expect(jwtVerify(dataToken.platformApiToken, keys)).rejects.toThrow();
    // Every issued token is an audit event.
    const events = (await t.request({ url: '/api/v1/tenant/audit-events?action=workload-token.issued&first=50' })).json() as Json;
    expect(events.items.filter((e: Json) => e.action === 'workload-token.issued')).toHaveLength(4);
    expect(JSON.stringify(events)).not.toContain(fs.readFileSync(env.VAULT_JWT_FILE!, 'utf8'));
  });

  it('a runtime tick reads every environment’s configs, deployment and tenant settings in one statement', async () => {
    expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/settings', body: { oidcEnabled: true } })).statusCode).toBe(200);
    const others = [await t.deployment('workloads-b'), await t.deployment('workloads-c')];
    const targets = [deploymentId, ...others].flatMap((id) =>
      ['production', 'staging'].map((environmentId) => ({ tenantId: t.tenantId, deploymentId: id, environmentId })),
    );
    let files = new Map<string, PodFiles>();
    const ran = await statementsOf(async () => {
      files = await workloadFiles(t.store.db, t.app.services.signing, t.app.services.audit)(targets);
    });
    expect(ran).toHaveLength(1);
    expect([...files.keys()].sort()).toEqual(targets.map((x) => `${x.deploymentId}/${x.environmentId}`).sort());
    // Switched off: no files, still one statement.
    expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/settings', body: { oidcEnabled: false } })).statusCode).toBe(200);
    expect(
      await statementsOf(async () => expect((await workloadFiles(t.store.db, t.app.services.signing, t.app.services.audit)(targets)).size).toBe(0)),
    ).toHaveLength(1);
  });

  it('discovery follows oidcEnabled at once, served from the tenant’s cache while it stays the same', async () => {
    expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/settings', body: { oidcEnabled: true } })).statusCode).toBe(200);
    await discovery();
    const warm = await statementsOf(discovery);
    expect(warm.filter((sql) => /account_settings/i.test(sql))).toEqual([]);
    expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/settings', body: { oidcEnabled: false } })).statusCode).toBe(200);
    problem(await t.request({ url: '/.well-known/openid-configuration', key: null }), 404, 'ROUTE_NOT_FOUND');
    problem(await t.request({ url: '/.well-known/jwks.json', key: null }), 404, 'ROUTE_NOT_FOUND');
    expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/settings', body: { oidcEnabled: true } })).statusCode).toBe(200);
    await discovery();
  });

  it('keys rotated: the previous key stays in the key set, so tokens signed before still verify', async () => {
    const dir = tempDir();
    const { env } = await (await filesOf())!.write(dir);
    const before = fs.readFileSync(env.AWS_WEB_IDENTITY_TOKEN_FILE!, 'utf8');
    const tenant = { id: t.tenantId, slug: 'default' };
    const { kid, retiredKid } = await t.app.services.signing.rotate(tenant, 'workload');
    expect(retiredKid).toBe(decodeProtectedHeader(before).kid);
    const doc = await discovery();
    const served = await keySet(doc.jwks_uri);
    expect(served.keys.map((k) => k.kid).sort()).toEqual([kid, retiredKid].sort());
    expect(served.keys.every((k) => k.kty === 'RSA' && k.alg === 'RS256' && !('d' in k))).toBe(true);
    await jwtVerify(before, createLocalJWKSet(served), { issuer: doc.issuer, audience: 'sts.amazonaws.com' });
    await (await filesOf())!.write(dir);
    expect(decodeProtectedHeader(fs.readFileSync(env.AWS_WEB_IDENTITY_TOKEN_FILE!, 'utf8')).kid).toBe(kid);
  });

  it('a running pod gets the files and variables; a changed config is written again without a restart, a new config replaces the pod, its files go with it', async () => {
    // A driver whose pods answer their health checks and remember their environment.
    const started: Array<Record<string, string>> = [];
    const servers: http.Server[] = [];
    const driver = {
      name: 'test',
      async start(spec: { env: Record<string, string> }) {
        started.push(spec.env);
        const server = http.createServer((_req, res) => res.end('ok'));
        servers.push(server);
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        const { port } = server.address() as { port: number };
        return { address: `http://127.0.0.1:${port}`, pid: null, kill: () => undefined, stop: async () => void server.close() };
      },
    };
    const build = await t.store.db
      .insertInto('builds')
      .values({
        tenant_id: t.tenantId,
        deployment_id: deploymentId,
        branch_name: 'main',
        mode: 'production',
        commit_sha: '0'.repeat(40),
        status: 'success',
        cause: 'test',
        created_at: new Date().toISOString(),
        updated_at: new Date().toISOString(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const forFiles = workloadFiles(t.store.db, t.app.services.signing, t.app.services.audit);
    const planner = async (): Promise<DesiredRuntime[]> => {
      const files = (await forFiles([{ tenantId: t.tenantId, deploymentId, environmentId: 'production' }])).get(`${deploymentId}/production`);
      return [
        {
          tenantId: t.tenantId,
          deploymentId,
          environmentId: 'production',
          type: 'production',
          branch: 'main',
          buildId: build.id,
          commit: '0'.repeat(40),
          version: '1.0.0',
          envRevision: '0',
          load: async () => ({ artifact: '{"cubes":[],"views":[]}', env: { AWS_ROLE_ARN: 'arn:aws:iam::1:role/r', AWS_WEB_IDENTITY_TOKEN_FILE: '/not/this' } }),
          ...(files ? { files } : {}),
        },
      ];
    };
    const podFilesDir = tempDir();
    const supervisor = new Supervisor(
      t.store,
      t.app.services.secrets,
      driver,
      planner,
      { ...DEFAULT_RUNTIME_OPTIONS, owner: 'workload-test', tickMs: 60_000, healthIntervalMs: 60_000, podFilesDir },
      (error) => {
        throw error;
      },
    );
    try {
      await supervisor.tick();
      await vi.waitFor(() => expect(started).toHaveLength(1), { timeout: 10_000 });
      const env = started[0]!;
      // The file the runtime writes wins over a variable of the same name; the deployment's own stay.
      expect(env.AWS_ROLE_ARN).toBe('arn:aws:iam::1:role/r');
      expect(path.dirname(env.AWS_WEB_IDENTITY_TOKEN_FILE!).startsWith(podFilesDir)).toBe(true);
      const first = fs.readFileSync(env.VAULT_JWT_FILE!, 'utf8');
      const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Json;
      expect(claimsOf(first).team).toBe('data');

      // New claims: written again at the next reconcile, same pod.
      const vault = ((await t.request({ url: '/api/v1/oidc-token-configs' })).json() as Json[]).find((c) => c.name === 'vault')!;
      expect((await t.request({ method: 'PUT', url: `/api/v1/oidc-token-configs/${vault.id}`, body: { customClaims: { team: 'finance' } } })).statusCode).toBe(
        200,
      );
      await supervisor.tick();
      await vi.waitFor(() => expect(claimsOf(fs.readFileSync(env.VAULT_JWT_FILE!, 'utf8')).team).toBe('finance'), { timeout: 10_000 });
      expect(started).toHaveLength(1);

      // A new config changes the variables: a new pod, with the new file; the old pod's files are gone.
      await config({ audienceType: 'Custom', customAudience: 'https://db.example.com', name: 'db', targetEnvVar: 'SERVICE_TOKEN_FILE' });
      await supervisor.tick();
      await vi.waitFor(() => expect(started).toHaveLength(2), { timeout: 10_000 });
      expect(fs.existsSync(started[1]!.SERVICE_TOKEN_FILE!)).toBe(true);
      await vi.waitFor(() => expect(fs.existsSync(path.dirname(env.VAULT_JWT_FILE!))).toBe(false), { timeout: 10_000 });
    } finally {
      await supervisor.close();
      for (const server of servers) server.close();
    }
    expect(fs.readdirSync(podFilesDir)).toEqual([]);
  });
});
