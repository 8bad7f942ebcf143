import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runAdmin } from '../src/admin.js';
import { buildApp, type App } from '../src/app.js';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { storeFor, type Store } from '../src/db/database.js';
import { DIALECTS, problem, TestApp } from './harness.js';
import { serverEnv, type ServerEnv } from './server-env.js';
import { startServerProcess, type ServerProcess } from './server-process.js';

/** The default tenant's origin in tests (an app that does not listen): the issuer of its tokens. */
const ISSUER = 'https://localhost';
const AUDIENCE = `${ISSUER}/api/v1/embed`;
const SESSION_MS = 5 * 60_000;
const DAY_MS = 86_400_000;

describe.each(DIALECTS)('signed embedding sessions (reference 4.15-4.17) [%s]', (dialect) => {
  const clock = { at: Date.now() };
  let t: TestApp;
  let deploymentId: number;
  let otherDeploymentId: number;

  beforeAll(async () => {
    t = await TestApp.create(dialect, {
      now: () => new Date(clock.at),
      embedExchangePerIpPerMinute: 0,
    });
    deploymentId = await t.deployment('embedded');
    otherDeploymentId = await t.deployment('elsewhere');
    await t.group('Analysts');
    await t.group('Managers');
    for (const [name, type, defaultValue] of [
      ['region', 'string', null],
      ['level', 'number', 1],
      ['regions', 'string-list', null],
    ] as const) {
      const res = await t.request({ method: 'POST', url: '/api/v1/user-attributes', body: { name, type, ...(defaultValue === null ? {} : { defaultValue }) } });
      expect(res.statusCode, res.body).toBe(201);
    }
  });
  afterAll(async () => t?.close());
  beforeEach(async () => {
    clock.at = Date.now();
    await embedSettings(t, { enabled: null, allowedOrigins: null });
  });

  /** The account's embed settings, as an admin sets them. */
  async function embedSettings(app: TestApp, changes: Record<string, unknown>): Promise<void> {
    const res = await app.request({ method: 'PUT', url: '/api/v1/tenant/embed-settings', body: changes });
    expect(res.statusCode, res.body).toBe(200);
  }

  async function generate(body: Record<string, unknown>, key?: string) {
    return t.request({ method: 'POST', url: '/api/v1/embed/generate-session', body: { deploymentId, ...body }, ...(key === undefined ? {} : { key }) });
  }
  async function sessionId(body: Record<string, unknown> = { externalId: 'viewer-1' }): Promise<string> {
    const res = await generate(body);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { sessionId: string }).sessionId;
  }
  const exchange = (id: string) => t.request({ method: 'POST', url: '/api/v1/embed/session/token', key: null, body: { sessionId: id } });
  const revoke = (id: string, key?: string) =>
    t.request({ method: 'POST', url: '/api/v1/embed/session/revoke', body: { sessionId: id }, ...(key === undefined ? {} : { key }) });
  async function token(body?: Record<string, unknown>): Promise<string> {
    const res = await exchange(await sessionId(body));
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { token: string }).token;
  }
  async function embedKeys(): Promise<JSONWebKeySet> {
    const res = await t.request({ url: '/api/v1/embed/jwks.json', key: null });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    return res.json() as JSONWebKeySet;
  }
  /** What a customer's backend does: verify against the served key set, issuer and audience. */
  async function verified(jwt: string) {
    return jwtVerify(jwt, createLocalJWKSet(await embedKeys()), { issuer: ISSUER, audience: AUDIENCE, currentDate: new Date(clock.at) });
  }
  /** A route that takes the embed token: its data API (no build here, so a good token gets 503, a refused one 401). */
  const useToken = (jwt: string, app: App = t.app) =>
    app.inject({ method: 'GET', url: `/deployments/${deploymentId}/data-api/v1/meta`, headers: { authorization: `Bearer ${jwt}` } });

  describe('generate-session', () => {
    it('answers a session id of 32 lowercase hex characters, different each time', async () => {
      const a = await sessionId();
      const b = await sessionId();
      expect(a).toMatch(/^[0-9a-f]{32}$/);
      expect(a).not.toBe(b);
    });

    it('signs the identity, groups, typed attributes, security context, pinned settings and branch into the token, verifiable with the served key set', async () => {
      const jwt = await token({
        externalId: 'viewer-7',
        email: 'Viewer7@Customer.example',
        embedTenantName: 'acme-corp',
        groups: ['analysts'],
        userAttributes: [
          { name: 'region', value: 'EU' },
          { name: 'regions', value: ['EU', 'US'] },
        ],
        securityContext: { customer_id: 42 },
        settings: { allowAi: false, showDashboardChat: null, locale: 'de-DE' },
        groupDefinitions: [{ name: 'ignored', description: null }],
      });
      const { payload, protectedHeader } = await verified(jwt);
      expect(protectedHeader).toMatchObject({ alg: 'ES256', typ: 'embed+jwt' });
      expect(protectedHeader.kid).toEqual(expect.any(String));
      expect(payload).toMatchObject({
        iss: ISSUER,
        aud: AUDIENCE,
        sub: 'embed-user:acme-corp:viewer-7',
        tenant_id: t.tenantId,
        deployment_id: deploymentId,
        branch: null,
        embed_tenant: 'acme-corp',
        embed_user: { external_id: 'viewer-7', id: expect.any(Number), email: 'viewer7@customer.example', user_id: null },
        // Names as stored, whatever case the request used.
        groups: ['Analysts'],
        // The embed tenant's implicit group (reference 4.0).
        tenant_groups: ['system:tenant:acme-corp'],
        // The catalog's default fills what the session leaves out.
        user_attributes: { region: 'EU', regions: ['EU', 'US'], level: 1 },
        security_context: { customer_id: 42 },
        // Three-state: null means "inherit", so only pinned switches are signed.
        settings: { allowAi: false, locale: 'de-DE' },
      });
      expect(payload.jti).toEqual(expect.any(String));
      expect(payload.exp! - payload.iat!).toBe(86_400);
      // groupDefinitions is deprecated and ignored: no group was made.
      expect(await t.store.db.selectFrom('groups').select('name').where('name', '=', 'ignored').executeTakeFirst()).toBeUndefined();
    });

    it('an internalId session names the account user and carries no groups or attributes of its own', async () => {
      const user = await t.user('EXPLORER');
      const { payload } = await verified(await token({ internalId: user.email.toUpperCase() }));
      expect(payload).toMatchObject({
        sub: `user:${user.userId}`,
        embed_tenant: null,
        embed_user: { external_id: null, user_id: user.userId },
        groups: [],
        tenant_groups: [],
        user_attributes: {},
      });
    });

    it('creates or updates the external user in its embed tenant (created on demand; `default` when none is named), before the first exchange', async () => {
      await sessionId({
        externalId: 'listed-user',
        embedTenantName: 'made-by-session',
        email: 'Listed@Customer.example',
        userProfile: { displayName: 'Listed' },
      });
      const users = await t.request({ url: '/api/v1/embed-tenants/made-by-session/users' });
      expect(users.statusCode, users.body).toBe(200);
      expect((users.json() as { items: unknown[] }).items).toEqual([
        expect.objectContaining({ externalId: 'listed-user', email: 'listed@customer.example', firstName: 'Listed' }),
      ]);
      const { payload } = await verified(await token({ externalId: 'no-tenant-named' }));
      expect(payload).toMatchObject({ embed_tenant: 'default', sub: 'embed-user:default:no-tenant-named', tenant_groups: ['system:tenant:default'] });
    });

    it('groups: left out keeps the user’s memberships, [] clears them, a list replaces them', async () => {
      const groupsOf = async (body: Record<string, unknown>) => (await verified(await token({ externalId: 'grouped', ...body }))).payload.groups;
      expect(await groupsOf({ groups: ['analysts'] })).toEqual(['Analysts']);
      expect(await groupsOf({})).toEqual(['Analysts']);
      expect(await groupsOf({ groups: ['Managers'] })).toEqual(['Managers']);
      expect(await groupsOf({ groups: [] })).toEqual([]);
    });

    it('past the account’s cap of embed users, a session for a new user is 429 and writes nothing', async () => {
      const capped = await TestApp.create(dialect, { embedUserLimit: 1 });
      try {
        const d = await capped.deployment('capped');
        const generateOn = (externalId: string) =>
          capped.request({ method: 'POST', url: '/api/v1/embed/generate-session', body: { deploymentId: d, externalId } });
        expect((await generateOn('first')).statusCode).toBe(200);
        problem(await generateOn('second'), 429, 'EMBED_USER_LIMIT');
        // The user already there keeps getting sessions.
        expect((await generateOn('first')).statusCode).toBe(200);
        expect(await capped.store.db.selectFrom('embed_sessions').select('id').execute()).toHaveLength(2);
      } finally {
        await capped.close();
      }
    });

    it('50 concurrent generations all succeed with distinct sessions: for one user, and for new users of a new embed tenant', async () => {
      const ids = (answers: Array<{ statusCode: number; body: string }>) =>
        answers.map((res) => {
          expect(res.statusCode, res.body).toBe(200);
          return (JSON.parse(res.body) as { sessionId: string }).sessionId;
        });
      await sessionId({ externalId: 'busy-viewer', groups: ['Analysts'] });
      const same = ids(
        await Promise.all(
          Array.from({ length: 50 }, () => generate({ externalId: 'busy-viewer', groups: ['Analysts'], userAttributes: [{ name: 'region', value: 'emea' }] })),
        ),
      );
      expect(new Set(same).size).toBe(50);
      const fresh = ids(
        await Promise.all(Array.from({ length: 50 }, (_, i) => generate({ externalId: `burst-${i}`, embedTenantName: 'burst', groups: ['Analysts'] }))),
      );
      expect(new Set(fresh).size).toBe(50);
      const users = await t.store.db
        .selectFrom('embed_users')
        .innerJoin('embed_tenants', 'embed_tenants.id', 'embed_users.embed_tenant_id')
        .select('embed_users.external_id')
        .where('embed_tenants.name', '=', 'burst')
        .execute();
      expect(users).toHaveLength(50);
      // Each session names its own user.
      const claims = await Promise.all(
        fresh.slice(0, 5).map(async (id) => (await verified(await (async () => (await exchange(id)).json().token as string)())).payload),
      );
      expect(new Set(claims.map((c) => (c.embed_user as { external_id: string }).external_id)).size).toBe(5);
    });

    it('the cap holds exactly under concurrency: of 30 racing sessions for new users, as many as fit get 200, the rest 429, and the account is at its cap', async () => {
      const capped = await TestApp.create(dialect, { embedUserLimit: 12 });
      try {
        const d = await capped.deployment('capped');
        const generateOn = (externalId: string, embedTenantName: string) =>
          capped.request({ method: 'POST', url: '/api/v1/embed/generate-session', body: { deploymentId: d, externalId, embedTenantName } });
        // Provisioned through the REST route (the exclusive path) and through a session.
        const provisioned = await capped.request({ method: 'POST', url: '/api/v1/embed-tenants/early/user', body: { externalId: 'first' } });
        expect(provisioned.statusCode, provisioned.body).toBe(200);
        expect((await generateOn('second', 'early')).statusCode).toBe(200);
        // Ten racing sessions of one new user make one user.
        const twins = await Promise.all(Array.from({ length: 10 }, () => generateOn('twin', 'early')));
        expect(twins.map((res) => res.statusCode)).toEqual(Array.from({ length: 10 }, () => 200));
        const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => generateOn(`racer-${i}`, i % 2 === 0 ? 'even' : 'odd')));
        const ok = answers.filter((res) => res.statusCode === 200);
        const refused = answers.filter((res) => res.statusCode !== 200);
        expect(ok).toHaveLength(9);
        for (const res of refused) problem(res, 429, 'EMBED_USER_LIMIT');
        expect(await capped.store.db.selectFrom('embed_users').select('id').execute()).toHaveLength(12);
        // Refused sessions wrote nothing: no session, no user.
        expect(await capped.store.db.selectFrom('embed_sessions').select('id').execute()).toHaveLength(1 + 10 + 9);
        // At the cap, users already there keep getting sessions, side by side.
        const again = await Promise.all(Array.from({ length: 10 }, (_, i) => generateOn(i % 2 === 0 ? 'second' : 'twin', 'early')));
        expect(again.map((res) => res.statusCode)).toEqual(Array.from({ length: 10 }, () => 200));
        problem(await generateOn('late', 'early'), 429, 'EMBED_USER_LIMIT');
      } finally {
        await capped.close();
      }
    });

    it('refuses a request naming neither id or both, an externalId not lowercase and trimmed, and internalId mixed with identity data', async () => {
      problem(await generate({}), 400, 'VALIDATION_FAILED');
      problem(await generate({ externalId: 'a', internalId: 'admin@example.com' }), 400, 'VALIDATION_FAILED');
      problem(await generate({ externalId: 'Viewer' }), 400, 'VALIDATION_FAILED');
      problem(await generate({ externalId: ' viewer' }), 400, 'VALIDATION_FAILED');
      for (const field of [{ groups: [] }, { userAttributes: [] }, { securityContext: {} }, { userProfile: { displayName: 'x' } }, { roles: ['x'] }]) {
        problem(await generate({ internalId: 'admin@example.com', ...field }), 400, 'VALIDATION_FAILED');
      }
      problem(await generate({ internalId: 'nobody@example.com' }), 404, 'USER_NOT_FOUND');
    });

    it('groups must exist and are never created here', async () => {
      const before = await t.store.db.selectFrom('groups').select('id').execute();
      const body = problem(await generate({ externalId: 'viewer-1', groups: ['Analysts', 'ghosts'] }), 400, 'GROUPS_NOT_FOUND');
      expect(body.detail).toContain('Groups with names "ghosts" not found');
      expect(await t.store.db.selectFrom('groups').select('id').execute()).toHaveLength(before.length);
    });

    it('user attributes: unknown names, duplicates and type clashes are 400 and nothing is written', async () => {
      const sessions = async () =>
        (await t.store.db.selectFrom('embed_sessions').select('id').execute()).length +
        (await t.store.db.selectFrom('embed_users').select('id').execute()).length;
      const before = await sessions();
      expect(
        problem(await generate({ externalId: 'fresh-user', userAttributes: [{ name: 'shoe_size', value: 42 }] }), 400, 'USER_ATTRIBUTES_NOT_FOUND').detail,
      ).toContain('User attributes not found');
      problem(
        await generate({
          externalId: 'fresh-user',
          userAttributes: [
            { name: 'region', value: 'EU' },
            { name: 'Region', value: 'US' },
          ],
        }),
        400,
        'VALIDATION_FAILED',
      );
      expect(
        problem(
          await generate({
            externalId: 'fresh-user',
            userAttributes: [
              { name: 'region', value: 'EU' },
              { name: 'level', value: 'high' },
            ],
          }),
          400,
          'VALIDATION_FAILED',
        ).detail,
      ).toContain('cannot change');
      problem(await generate({ externalId: 'fresh-user', userAttributes: [{ name: 'regions', value: [1, 2] }] }), 400, 'VALIDATION_FAILED');
      expect(await sessions()).toBe(before);
      // Values persist per user: a later session without them keeps them; null clears one (its default applies again).
      const attributesOf = async (body: Record<string, unknown>) =>
        (await verified(await token({ externalId: 'attributed', ...body }))).payload.user_attributes;
      expect(
        await attributesOf({
          userAttributes: [
            { name: 'region', value: 'EU' },
            { name: 'level', value: 3 },
          ],
        }),
      ).toEqual({ region: 'EU', level: 3 });
      expect(await attributesOf({})).toEqual({ region: 'EU', level: 3 });
      expect(
        await attributesOf({
          userAttributes: [
            { name: 'region', value: null },
            { name: 'level', value: null },
          ],
        }),
      ).toEqual({ level: 1 });
    });

    it('reference 4.15: creatorMode needs the account’s useCreatorMode flag (403 while off); tenantGroups and the definitions need creatorMode (400)', async () => {
      expect(problem(await generate({ externalId: 'viewer-1', creatorMode: true }), 403, 'CREATOR_MODE_DISABLED').detail).toContain('useCreatorMode');
      problem(await generate({ externalId: 'viewer-1', embedTenantName: 'acme', tenantGroups: ['x'] }), 400, 'CREATOR_MODE_REQUIRED');
      problem(await generate({ externalId: 'viewer-1', tenantGroupDefinitions: [{ name: 'x' }] }), 400, 'CREATOR_MODE_REQUIRED');
      problem(await generate({ externalId: 'viewer-1', userAttributeDefinitions: [{ name: 'x', type: 'string' }] }), 400, 'CREATOR_MODE_REQUIRED');
      expect((await generate({ externalId: 'viewer-1', creatorMode: false })).statusCode).toBe(200);
    });

    it('refuses an embed tenant name outside the pattern and a security context over 16 KiB', async () => {
      problem(await generate({ externalId: 'viewer-1', embedTenantName: 'Acme' }), 400, 'VALIDATION_FAILED');
      problem(await generate({ externalId: 'viewer-1', embedTenantName: '1acme' }), 400, 'VALIDATION_FAILED');
      problem(await generate({ externalId: 'viewer-1', securityContext: { blob: 'x'.repeat(17_000) } }), 400, 'VALIDATION_FAILED');
    });

    it('resolves branchName now: the deploy branch is production, an unknown branch 404, a branch nothing serves 400, a staging branch its own', async () => {
      const at = new Date().toISOString();
      await t.store.db
        .insertInto('branches')
        .values({ tenant_id: t.tenantId, deployment_id: deploymentId, name: 'feature', parent_name: 'main', owner_key_id: null, created_at: at })
        .execute();
      expect((await verified(await token({ externalId: 'viewer-1', branchName: 'main' }))).payload.branch).toBeNull();
      problem(await generate({ externalId: 'viewer-1', branchName: 'nope' }), 404, 'BRANCH_NOT_FOUND');
      problem(await generate({ externalId: 'viewer-1', branchName: 'feature' }), 400, 'BRANCH_NOT_SERVED');
      await t.store.db.updateTable('branches').set({ staging_enabled: 1 }).where('deployment_id', '=', deploymentId).where('name', '=', 'feature').execute();
      expect((await verified(await token({ externalId: 'viewer-1', branchName: 'feature' }))).payload.branch).toBe('feature');
    });

    it('access: an admin key (Bearer or Api-Key); a non-admin key 403, a key scoped elsewhere 403, another tenant’s deployment 404', async () => {
      expect(
        (
          await t.request({
            method: 'POST',
            url: '/api/v1/embed/generate-session',
            key: null,
            headers: { authorization: `Api-Key ${t.admin.key}` },
            body: { deploymentId, externalId: 'viewer-1' },
          })
        ).statusCode,
      ).toBe(200);
      for (const role of ['VIEWER', 'EXPLORER'] as const) {
        const user = await t.user(role);
        await t.grant({ type: 'USER', id: user.userId }, { type: 'DEPLOYMENT', id: deploymentId }, 'MANAGE');
        problem(await generate({ externalId: 'viewer-1' }, user.key), 403, 'FORBIDDEN');
      }
      problem(await generate({ externalId: 'viewer-1' }, await t.key(t.admin.userId, { deploymentIds: [otherDeploymentId] })), 403, 'KEY_SCOPE_FORBIDDEN');
      expect((await generate({ externalId: 'viewer-1' }, await t.key(t.admin.userId, { deploymentIds: [deploymentId] }))).statusCode).toBe(200);
      const other = await t.tenant('embed-other');
      const theirs = await t.deployment('theirs', { tenantId: other.tenantId });
      problem(await generate({ externalId: 'viewer-1', deploymentId: theirs }), 404, 'DEPLOYMENT_NOT_FOUND');
      problem(
        await t.request({ method: 'POST', url: '/api/v1/embed/generate-session', key: null, body: { deploymentId, externalId: 'viewer-1' } }),
        401,
        'UNAUTHENTICATED',
      );
      // Api-Key is an embed-route scheme only.
      problem(await t.request({ url: '/api/v1/deployments', key: null, headers: { authorization: `Api-Key ${t.admin.key}` } }), 401, 'UNAUTHENTICATED');
    });

    it('403 when embedding is turned off for the account, for generate and revoke alike', async () => {
      const id = await sessionId();
      await embedSettings(t, { enabled: false });
      problem(await generate({ externalId: 'viewer-1' }), 403, 'EMBEDDING_DISABLED');
      problem(await revoke(id), 403, 'EMBEDDING_DISABLED');
    });
  });

  describe('exchange', () => {
    it('is single use: the second exchange is 401', async () => {
      const id = await sessionId();
      expect((await exchange(id)).statusCode).toBe(200);
      problem(await exchange(id), 401, 'UNAUTHENTICATED');
    });

    it('50 pairs of racing exchanges: exactly one of each pair wins', async () => {
      // Generated one after another (the race under test is the exchange's).
      const ids: string[] = [];
      for (let i = 0; i < 50; i++) ids.push(await sessionId());
      const answers = await Promise.all(ids.flatMap((id) => [exchange(id), exchange(id)]));
      for (let i = 0; i < ids.length; i++) {
        expect([answers[2 * i]!.statusCode, answers[2 * i + 1]!.statusCode].sort()).toEqual([200, 401]);
      }
    });

    it('an id is good for 5 minutes: just before, it exchanges; past them, 401', async () => {
      const early = await sessionId();
      const late = await sessionId();
      clock.at += SESSION_MS - 1_000;
      expect((await exchange(early)).statusCode).toBe(200);
      clock.at += 2_000;
      problem(await exchange(late), 401, 'UNAUTHENTICATED');
    });

    it('an unknown, malformed or another tenant’s id is 401', async () => {
      problem(await exchange('0'.repeat(32)), 401, 'UNAUTHENTICATED');
      problem(await exchange('not-a-session'), 401, 'UNAUTHENTICATED');
      const other = await t.tenant('embed-exchange-other', ['embed-other.example.com']);
      const id = await sessionId();
      problem(
        await t.request({ method: 'POST', url: '/api/v1/embed/session/token', key: null, host: 'embed-other.example.com', body: { sessionId: id } }),
        401,
        'UNAUTHENTICATED',
      );
      expect(other.tenantId).not.toBe(t.tenantId);
      expect((await exchange(id)).statusCode).toBe(200);
    });

    it('the token expires after 24 hours', async () => {
      const jwt = await token();
      expect((await useToken(jwt)).statusCode).toBe(503);
      clock.at += DAY_MS + 1_000;
      problem(await useToken(jwt), 401, 'UNAUTHENTICATED');
    });
  });

  describe('revoke', () => {
    it('204 whatever the state; before the exchange the id can no longer be exchanged', async () => {
      const id = await sessionId();
      expect((await revoke(id)).statusCode).toBe(204);
      expect((await revoke(id)).statusCode).toBe(204);
      expect((await revoke('f'.repeat(32))).statusCode).toBe(204);
      problem(await exchange(id), 401, 'UNAUTHENTICATED');
      problem(await revoke('NOT-HEX'), 400, 'VALIDATION_FAILED');
      const viewer = await t.user('VIEWER');
      problem(await revoke(id, viewer.key), 403, 'FORBIDDEN');
    });

    it('after the exchange, the token is refused on its next request, on every server process (another app over the same store)', async () => {
      const second = await buildApp({
        store: t.store.reopen(),
        secrets: t.app.services.secrets,
        baseDomain: null,
        tenantCacheMs: 0,
        startJobs: 'on-first-job',
        now: () => new Date(clock.at),
      });
      try {
        const id = await sessionId();
        const jwt = ((await exchange(id)).json() as { token: string }).token;
        // Twice each: the second answer comes from each process's cache.
        for (let i = 0; i < 2; i++) {
          expect((await useToken(jwt)).statusCode).toBe(503);
          expect((await useToken(jwt, second)).statusCode).toBe(503);
        }
        expect((await revoke(id)).statusCode).toBe(204);
        problem(await useToken(jwt, second), 401, 'UNAUTHENTICATED');
        problem(await useToken(jwt), 401, 'UNAUTHENTICATED');
        // Other tokens are not affected.
        expect((await useToken(await token(), second)).statusCode).toBe(503);
      } finally {
        await second.close();
      }
    });
  });

  describe('keys', () => {
    it('embed tokens are signed by the embed key set only, published at /api/v1/embed/jwks.json', async () => {
      const jwt = await token();
      const { kid } = decodeProtectedHeader(jwt);
      expect((await embedKeys()).keys.map((k) => k.kid)).toContain(kid);
      const tenantKeys = (await t.request({ url: '/api/v1/data-api/jwks.json', key: null })).json() as JSONWebKeySet;
      expect(tenantKeys.keys.map((k) => k.kid)).not.toContain(kid);
      await expect(jwtVerify(jwt, createLocalJWKSet(tenantKeys), { issuer: ISSUER })).rejects.toThrow();
      // What the tenant signs for its data APIs never verifies as an embed token.
      const dataToken = (await t.request({ method: 'POST', url: `/api/v1/deployments/${deploymentId}/token`, body: {} })).json() as {
        platformApiToken: string;
      };
      await expect(jwtVerify(dataToken.platformApiToken, createLocalJWKSet(await embedKeys()))).rejects.toThrow();
    });

    it('after a rotation, tokens of the old key keep working and verifying until their day is over; new tokens use the new key', async () => {
      const before = await token();
      const oldKid = decodeProtectedHeader(before).kid;
      const { kid } = await t.app.services.signing.rotate({ id: t.tenantId, slug: 'default' }, 'embed');
      const after = await token();
      expect(decodeProtectedHeader(after).kid).toBe(kid);
      expect((await embedKeys()).keys.map((k) => k.kid).sort()).toEqual([kid, oldKid].sort());
      await verified(before);
      expect((await useToken(before)).statusCode).toBe(503);
      // Past the overlap (a day and a minute) the old key leaves the set; the new one stays.
      clock.at += DAY_MS + 2 * 60_000;
      expect((await embedKeys()).keys.map((k) => k.kid)).toEqual([kid]);
    });
  });

  describe('CORS on the embed routes follows the tenant’s allowedOrigins alone', () => {
    const preflight = (app: TestApp, origin: string, url = '/api/v1/embed/session/token') =>
      app.request({
        method: 'OPTIONS',
        url,
        key: null,
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
      });

    it('answers a preflight from an allowed origin, and none from a refused one, even one the server-wide setting allows', async () => {
      const wide = await TestApp.create(dialect, { corsOrigins: ['https://everyone.example.com'] });
      try {
        await embedSettings(wide, { allowedOrigins: ['https://customer.example.com'] });
        const allowed = await preflight(wide, 'https://customer.example.com');
        expect(allowed.statusCode).toBe(204);
        expect(allowed.headers['access-control-allow-origin']).toBe('https://customer.example.com');
        const refused = await preflight(wide, 'https://everyone.example.com');
        expect(refused.headers['access-control-allow-origin']).toBeUndefined();
        expect((await preflight(wide, 'https://evil.example.net', '/api/v1/embed/generate-session')).headers['access-control-allow-origin']).toBeUndefined();
        // The other routes keep the server-wide setting, and never answer the embed origins.
        expect((await preflight(wide, 'https://everyone.example.com', '/api/v1/deployments')).headers['access-control-allow-origin']).toBe(
          'https://everyone.example.com',
        );
        expect((await preflight(wide, 'https://customer.example.com', '/api/v1/deployments')).headers['access-control-allow-origin']).toBeUndefined();
      } finally {
        await wide.close();
      }
    });

    it('a tenant that allows no origin answers no browser on the embed routes', async () => {
      expect((await preflight(t, 'https://customer.example.com')).headers['access-control-allow-origin']).toBeUndefined();
    });
  });
});

describe.each(DIALECTS)('the exchange is limited per client address [%s]', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
  });
  afterAll(async () => t?.close());

  it('by default 120 a minute, then 429 with Retry-After', async () => {
    const send = () => t.request({ method: 'POST', url: '/api/v1/embed/session/token', key: null, body: { sessionId: '0'.repeat(32) } });
    for (let i = 0; i < 120; i++) expect((await send()).statusCode).toBe(401);
    const limited = await send();
    problem(limited, 429, 'RATE_LIMITED');
    expect(limited.headers['retry-after']).toBeDefined();
  });
});

describe.each(DIALECTS)('embed sessions on two server processes over one store [%s]', (dialect) => {
  const adminKey = generateApiKey();
  let env: ServerEnv;
  let a: ServerProcess;
  let b: ServerProcess;
  let store: Store;
  let deploymentId: number;

  beforeAll(async () => {
    env = await serverEnv(dialect);
    // One public origin for both: it is the tokens' issuer and audience.
    const extra = { ...env.env, ADMIN_API_KEY: adminKey, RATE_LIMIT_PER_MINUTE: '0', EMBED_EXCHANGE_PER_IP_PER_MINUTE: '0', PUBLIC_URL: 'https://localhost' };
    const started = await Promise.allSettled([startServerProcess(extra, env.dataDir), startServerProcess(extra, env.dataDir)]);
    const failure = started.find((s) => s.status === 'rejected');
    [a, b] = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : [])) as [ServerProcess, ServerProcess];
    if (failure) throw failure.reason;
    store = storeFor({ databaseUrl: env.env.DATABASE_URL ?? null, dataDir: env.dataDir });
    const at = new Date().toISOString();
    const tenant = await store.db.selectFrom('tenants').select('id').orderBy('id').executeTakeFirstOrThrow();
    deploymentId = (
      await store.db
        .insertInto('deployments')
        .values({ tenant_id: tenant.id, name: 'embedded', settings: '{}', created_by: null, created_at: at, updated_at: at })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
  });
  afterAll(async () => {
    await Promise.allSettled([a?.stop(), b?.stop()]);
    await store?.close();
    await env?.destroy();
  });

  async function sessionId(server: ServerProcess): Promise<string> {
    const res = await server.post('/api/v1/embed/generate-session', { deploymentId, externalId: 'racer' }, adminKey);
    expect(res.status, res.text).toBe(200);
    return (res.body as { sessionId: string }).sessionId;
  }

  it('50 pairs of exchanges racing across the two processes: exactly one of each pair wins', async () => {
    // Generated one after another (the race under test is the exchange's).
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) ids.push(await sessionId(i % 2 === 0 ? a : b));
    const answers = await Promise.all(
      ids.flatMap((id) => [a.post('/api/v1/embed/session/token', { sessionId: id }, ''), b.post('/api/v1/embed/session/token', { sessionId: id }, '')]),
    );
    for (let i = 0; i < ids.length; i++) {
      expect([answers[2 * i]!.status, answers[2 * i + 1]!.status].sort(), answers[2 * i]!.text).toEqual([200, 401]);
    }
  });

  it('a token revoked through one process is refused on the next request to the other', async () => {
    const id = await sessionId(a);
    const { token } = (await a.post('/api/v1/embed/session/token', { sessionId: id }, '')).body as { token: string };
    const meta = `/deployments/${deploymentId}/data-api/v1/meta`;
    // No build: a good token reaches the runtime check (503); a refused one stops at 401.
    for (let i = 0; i < 2; i++) expect((await b.get(meta, token)).status).toBe(503);
    expect((await a.post('/api/v1/embed/session/revoke', { sessionId: id }, adminKey)).status).toBe(204);
    expect((await b.get(meta, token)).status).toBe(401);
    expect((await a.get(meta, token)).status).toBe(401);
  });
});

describe('npm run admin -- signing rotate --purpose embed', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-embed-rotate-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('rotates the embed keys alone; another purpose is a usage error', async () => {
    const env = { DATA_DIR: dir };
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) };
    expect(await runAdmin(['tenant', 'create', 'acme'], env, io)).toBe(0);
    expect(await runAdmin(['signing', 'rotate', '--tenant', 'acme', '--purpose', 'embed'], env, io)).toBe(0);
    expect(lines.join('\n')).toContain('now signs embed tokens with key');
    const store = storeFor({ databaseUrl: null, dataDir: dir });
    try {
      expect((await store.db.selectFrom('signing_keys').select('purpose').execute()).map((k) => k.purpose)).toEqual(['embed']);
    } finally {
      await store.close();
    }
    expect(await runAdmin(['signing', 'rotate', '--tenant', 'acme', '--purpose', 'refresh'], env, io)).toBe(2);
  });
});
