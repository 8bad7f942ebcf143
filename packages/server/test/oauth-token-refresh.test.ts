import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { sealedAs } from '../src/areas/oauth-integrations/oauth-integrations.store.js';
import { REFRESH_JOB } from '../src/areas/oauth-integrations/token-refresh.js';
import type { JobRecord } from '../src/jobs/index.js';
import { DIALECTS, TestApp, type Caller } from './harness.js';
import { startOAuthProvider, type OAuthProviderFixture } from './oauth-provider-fixture.js';

/*
 * Issue 17, "tokens are refreshed before expiry": user OAuth tokens are refreshed in the
 * background on the jobs service ahead of their expiry, not only when used; however many server
 * processes scan, one refresh runs per token (a claim taken by a conditional update); a failure
 * sets `status` and `lastError` (reference 5.10-5.13). The third party is a real oidc-provider,
 * whose refresh tokens rotate; the server's clock is moved, the provider's is not.
 */

interface UserToken {
  status: string;
  accessTokenExpiresAt: string | null;
  lastError: Record<string, unknown> | null;
}

const REDIRECT_URI = 'https://mapi.example.test/api/v1/oauth-integrations/callback';
const MINUTE = 60_000;

describe.each(DIALECTS)('background refresh of user OAuth tokens (%s)', (dialect) => {
  let t: TestApp;
  let idp: OAuthProviderFixture;
  const clock = { offsetMs: 0 };
  const now = () => new Date(Date.now() + clock.offsetMs);
  const outbound = { allowPrivate: ['127.0.0.1/32'], retryBaseMs: 1 };

  beforeAll(async () => {
    idp = await startOAuthProvider({ redirectUri: REDIRECT_URI });
    t = await TestApp.create(dialect, { outbound, now });
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  const integrationBody = (tokenUrl = idp.tokenUrl) => ({
    name: 'Warehouse',
    type: 'generic',
    authUrl: idp.authUrl,
    tokenUrl,
    clientId: idp.clientId,
    clientSecret: idp.clientSecret,
    redirectUri: REDIRECT_URI,
    scopes: ['openid', 'offline_access'],
  });

  /** A fresh user holding a token for a fresh integration, authorized at the provider. */
  async function authorized(): Promise<{ user: Caller; integrationId: number }> {
    clock.offsetMs = 0;
    const user = await t.user('EXPLORER');
    const made = await t.request({ method: 'POST', url: '/api/v1/oauth-integrations', body: integrationBody() });
    expect(made.statusCode, made.body).toBe(200);
    const integrationId = (made.json() as { id: number }).id;
    const initiated = await t.request({ method: 'POST', url: `/api/v1/user-oauth-tokens/${integrationId}/initiate`, key: user.key });
    const returned = await idp.authorize((initiated.json() as { authorizationUrl: string }).authorizationUrl, REDIRECT_URI);
    expect((await t.request({ url: `${returned.pathname}${returned.search}`, key: null })).statusCode).toBe(200);
    return { user, integrationId };
  }
  const tokenOf = async (integrationId: number, user: Caller) =>
    (await t.request({ url: `/api/v1/user-oauth-tokens/${integrationId}`, key: user.key })).json() as UserToken;
  const stored = async (integrationId: number, userId: number) => {
    const row = await t.store.db
      .selectFrom('user_oauth_tokens')
      .selectAll()
      .where('integration_id', '=', integrationId)
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    const secrets = t.app.services.secrets;
    return {
      row,
      accessToken: secrets.open(row.access_token, sealedAs.accessToken(integrationId, userId)),
      refreshToken: secrets.open(row.refresh_token!, sealedAs.refreshToken(integrationId, userId)),
    };
  };
  const refreshGrants = () => idp.grants.filter((g) => g === 'refresh_token').length;
  /** Scans once and waits for every refresh it queued. */
  const scanned = async (app = t.app): Promise<JobRecord[]> => {
    const jobs = await app.services.tokenRefresh.scan();
    return Promise.all(jobs.map((job) => t.app.services.jobs.waitFor(job.tenantId, job.id)));
  };

  it('a token is refreshed by the background scan before it expires (the scan on its timer, the refresh as a job); nothing is due until then', async () => {
    const { user, integrationId } = await authorized();
    const first = await stored(integrationId, user.userId);
    const before = await tokenOf(integrationId, user);
    // Fresh for an hour: nothing is due.
    expect(await t.app.services.tokenRefresh.scan()).toEqual([]);
    const grants = refreshGrants();

    // 56 minutes on, within the 5 minutes before expiry: the scan on its timer refreshes it.
    clock.offsetMs = 56 * MINUTE;
    t.app.services.tokenRefresh.start(20);
    try {
      await expect
        .poll(async () => (await tokenOf(integrationId, user)).accessTokenExpiresAt, { timeout: 20_000, interval: 50 })
        .not.toBe(before.accessTokenExpiresAt);
    } finally {
      await t.app.services.tokenRefresh.stop();
    }
    const after = await tokenOf(integrationId, user);
    expect(after).toMatchObject({ status: 'ACTIVE', lastError: null });
    expect(Date.parse(after.accessTokenExpiresAt!)).toBeGreaterThan(Date.parse(before.accessTokenExpiresAt!));
    const second = await stored(integrationId, user.userId);
    expect(second.accessToken).not.toBe(first.accessToken);
    // The provider rotated the refresh token: the new one is kept, and it honours the new access token.
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect(await idp.isActive(second.accessToken)).toBe(true);
    expect(second.row).toMatchObject({ refresh_claim: null, refresh_claimed_until: null, refresh_retry_at: null });
    expect(refreshGrants()).toBe(grants + 1);
    // Used now, the token in hand is the refreshed one: no second refresh.
    expect(await t.app.services.userOAuthTokens.currentAccessToken(t.tenantId, user.userId, integrationId)).toEqual({
      accessToken: second.accessToken,
      accessTokenExpiresAt: after.accessTokenExpiresAt,
    });
    expect(await t.app.services.tokenRefresh.scan()).toEqual([]);
    expect(refreshGrants()).toBe(grants + 1);
    // Finished refresh jobs are pruned after a day (the timer does it after each scan).
    const refreshJobs = () => t.store.db.selectFrom('jobs').select('id').where('kind', '=', REFRESH_JOB).execute();
    expect((await refreshJobs()).length).toBeGreaterThan(0);
    expect(await t.app.services.jobs.prune(REFRESH_JOB, new Date(Date.now() - 60_000))).toBe(0);
    expect(await t.app.services.jobs.prune(REFRESH_JOB, new Date(Date.now() + 60_000))).toBeGreaterThan(0);
    expect(await refreshJobs()).toEqual([]);
  });

  it('two server processes scanning at once refresh a token once: one claim wins, one job runs, the provider sees one refresh', async () => {
    const { user, integrationId } = await authorized();
    const secondStore = t.store.reopen();
    const second = await buildApp({
      store: secondStore,
      secrets: t.app.services.secrets,
      baseDomain: null,
      tenantCacheMs: 0,
      startJobs: 'on-first-job',
      now,
      outbound,
    });
    try {
      const first = await stored(integrationId, user.userId);
      const grants = refreshGrants();
      clock.offsetMs = 57 * MINUTE;
      const [a, b] = await Promise.all([t.app.services.tokenRefresh.scan(), second.services.tokenRefresh.scan()]);
      const queued = [...a, ...b].filter((job) => (job.payload as { tokenId: number }).tokenId === first.row.id);
      expect(queued).toHaveLength(1);
      // While the claim holds, further scans by either process queue nothing for it.
      const again = [...(await t.app.services.tokenRefresh.scan()), ...(await second.services.tokenRefresh.scan())];
      expect(again.filter((job) => (job.payload as { tokenId: number }).tokenId === first.row.id)).toEqual([]);
      const done = await t.app.services.jobs.waitFor(queued[0]!.tenantId, queued[0]!.id);
      expect(done).toMatchObject({ state: 'succeeded', result: { outcome: 'refreshed' } });
      expect(refreshGrants()).toBe(grants + 1);
      expect((await stored(integrationId, user.userId)).refreshToken).not.toBe(first.refreshToken);
      // A job whose claim is no longer the token's does nothing.
      expect(await second.services.userOAuthTokens.refreshClaimed(first.row.id, 'a claim nobody holds', first.row.access_token_expires_at)).toBe('claim-lost');
      expect(refreshGrants()).toBe(grants + 1);
    } finally {
      await second.close();
      await secondStore.close();
    }
  });

  it('a refusal by the provider sets REFRESH_FAILED and lastError; the token in hand stays usable until it expires, and is not retried', async () => {
    const { user, integrationId } = await authorized();
    const { accessToken, refreshToken, row } = await stored(integrationId, user.userId);
    // The grant is revoked at the provider: the refresh token is refused.
    await fetch(idp.revocationUrl, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${idp.clientId}:${idp.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token: refreshToken, token_type_hint: 'refresh_token' }),
    });
    clock.offsetMs = 56 * MINUTE;
    const jobs = (await scanned()).filter((job) => (job.payload as { tokenId: number }).tokenId === row.id);
    expect(jobs.map((job) => job.result)).toEqual([{ outcome: 'failed' }]);
    const token = await tokenOf(integrationId, user);
    expect(token.status).toBe('REFRESH_FAILED');
    expect(token.lastError).toEqual({ error: 'invalid_grant', errorDescription: expect.any(String), during: 'refresh', at: expect.any(String), retryAt: null });
    expect(token.accessTokenExpiresAt).toBe(row.access_token_expires_at);
    // The status flags it, yet the token in hand is still handed out until its expiry (reference 5.10-5.13); no scan takes it again.
    clock.offsetMs = 58 * MINUTE;
    expect((await t.app.services.tokenRefresh.scan()).filter((job) => (job.payload as { tokenId: number }).tokenId === row.id)).toEqual([]);
    expect((await t.app.services.userOAuthTokens.currentAccessToken(t.tenantId, user.userId, integrationId))?.accessToken).toBe(accessToken);
  });

  it('a passing failure (the provider unreachable) is retried after the delay; the next success clears status and lastError', async () => {
    const { user, integrationId } = await authorized();
    const { row } = await stored(integrationId, user.userId);
    // A port nothing listens on: the token endpoint cannot be reached.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/token`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(
      (await t.request({ method: 'PUT', url: `/api/v1/oauth-integrations/${integrationId}`, body: { ...integrationBody(deadUrl), clientSecret: undefined } }))
        .statusCode,
    ).toBe(200);

    clock.offsetMs = 56 * MINUTE;
    const failed = (await scanned()).filter((job) => (job.payload as { tokenId: number }).tokenId === row.id);
    expect(failed.map((job) => job.result)).toEqual([{ outcome: 'failed' }]);
    const flagged = await tokenOf(integrationId, user);
    expect(flagged.status).toBe('REFRESH_FAILED');
    expect(flagged.lastError).toMatchObject({
      error: 'provider_network',
      during: 'refresh',
      retryAt: new Date(Date.parse(flagged.lastError!.at as string) + 5 * MINUTE).toISOString(),
    });
    // Not before the retry is due.
    expect((await t.app.services.tokenRefresh.scan()).filter((job) => (job.payload as { tokenId: number }).tokenId === row.id)).toEqual([]);

    // The provider is back; past the retry delay, the next scan refreshes it.
    expect(
      (await t.request({ method: 'PUT', url: `/api/v1/oauth-integrations/${integrationId}`, body: { ...integrationBody(), clientSecret: undefined } }))
        .statusCode,
    ).toBe(200);
    clock.offsetMs = 61 * MINUTE + 1_000;
    const retried = (await scanned()).filter((job) => (job.payload as { tokenId: number }).tokenId === row.id);
    expect(retried.map((job) => job.result)).toEqual([{ outcome: 'refreshed' }]);
    const recovered = await tokenOf(integrationId, user);
    expect(recovered).toMatchObject({ status: 'ACTIVE', lastError: null });
    expect(Date.parse(recovered.accessTokenExpiresAt!)).toBeGreaterThan(Date.parse(row.access_token_expires_at!));
  });
});
