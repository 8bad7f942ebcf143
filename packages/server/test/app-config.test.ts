import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';

describe.each(DIALECTS)('app configuration and user settings (%s)', (dialect) => {
  let t: TestApp;
  let viewer: Caller;
  let other: { tenantId: number; admin: Caller };
  beforeAll(async () => {
    t = await TestApp.create(dialect);
    viewer = await t.user('VIEWER');
    other = await t.tenant('other', ['other.example.test']);
  });
  afterAll(async () => t?.close());

  describe('GET /api/v1/app-config (reference 5.3)', () => {
    it('answers the reference’s shape with the defaults to any authenticated caller', async () => {
      const res = await t.request({ url: '/api/v1/app-config', key: viewer.key });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        applyThemeGlobally: false,
        restrictDataDownload: false,
        sheetsAgentChatEnabled: false,
        appTheme: null,
        creatorMode: null,
        embedding: {
          allowAi: null,
          enableDashboardComments: null,
          showAiWidgets: null,
          showDashboardChat: null,
          showWorkbookChat: null,
          locale: null,
          timezone: null,
        },
        sheetsUi: null,
        timezoneSettings: null,
      });
    });

    it('needs a credential', async () => {
      problem(await t.request({ url: '/api/v1/app-config', key: null }), 401, 'UNAUTHENTICATED');
    });

    it('gives the embed settings as `embedding`, without the extension keys, and the time zone as timezoneSettings', async () => {
      await t.request({
        method: 'PUT',
        url: '/api/v1/tenant/embed-settings',
        body: { allowAi: true, locale: 'de-DE', timezone: 'Europe/Berlin', allowedOrigins: ['https://x.example.com'], enabled: false },
      });
      const config = (await t.request({ url: '/api/v1/app-config', key: viewer.key })).json();
      expect(config.embedding).toEqual({
        allowAi: true,
        enableDashboardComments: null,
        showAiWidgets: null,
        showDashboardChat: null,
        showWorkbookChat: null,
        locale: 'de-DE',
        timezone: 'Europe/Berlin',
      });
      expect(config.timezoneSettings).toEqual({ enabled: true, allowUserOverride: null, timezone: 'Europe/Berlin' });
      // Another tenant sees its own.
      const theirs = (await t.request({ url: '/api/v1/app-config', key: other.admin.key, host: 'other.example.test' })).json();
      expect(theirs.embedding.allowAi).toBeNull();
    });

    it('sheetsAgentChatEnabled is off until an admin turns it on; null turns it off again; a non-admin is refused and changes nothing', async () => {
      const read = async () => (await t.request({ url: '/api/v1/app-config', key: viewer.key })).json().sheetsAgentChatEnabled;
      expect(await read()).toBe(false);
      problem(await t.request({ method: 'PUT', url: '/api/v1/tenant/app-config', key: viewer.key, body: { sheetsAgentChatEnabled: true } }), 403, 'FORBIDDEN');
      problem(await t.request({ method: 'PUT', url: '/api/v1/tenant/app-config', body: { sheetsAgentChatEnabled: 'yes' } }), 400, 'VALIDATION_FAILED');
      expect(await read()).toBe(false);
      const on = await t.request({ method: 'PUT', url: '/api/v1/tenant/app-config', body: { sheetsAgentChatEnabled: true } });
      expect(on.statusCode, on.body).toBe(200);
      expect(on.json()).toMatchObject({ sheetsAgentChatEnabled: true, restrictDataDownload: false });
      expect(await read()).toBe(true);
      expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/app-config', body: { sheetsAgentChatEnabled: null } })).json().sheetsAgentChatEnabled).toBe(
        false,
      );
    });

    it('shows a change at once on another server process sharing the store', async () => {
      const second = await buildApp({ store: t.store, baseDomain: null, tenantCacheMs: 0 });
      try {
        const read = async () =>
          (await second.inject({ url: '/api/v1/app-config', headers: { authorization: `Bearer ${viewer.key}` } })).json().embedding.showWorkbookChat;
        await t.request({ method: 'PUT', url: '/api/v1/tenant/embed-settings', body: { showWorkbookChat: true } });
        expect(await read()).toBe(true);
        await t.request({ method: 'PUT', url: '/api/v1/tenant/embed-settings', body: { showWorkbookChat: false } });
        expect(await read()).toBe(false);
      } finally {
        await second.close();
      }
    });
  });

  describe('PATCH /api/v1/users/me/settings (spec 0.5.0: the default deployment)', () => {
    it('sets, reads and clears the caller’s default deployment, for the caller alone', async () => {
      const deploymentId = await t.deployment('default-one');
      expect((await t.request({ url: '/api/v1/users/me/settings' })).json()).toEqual({ defaultDeploymentId: null });
      const res = await t.request({ method: 'PATCH', url: '/api/v1/users/me/settings', body: { defaultDeploymentId: deploymentId } });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ defaultDeploymentId: deploymentId });
      expect((await t.request({ url: '/api/v1/users/me/settings' })).json()).toEqual({ defaultDeploymentId: deploymentId });
      expect((await t.request({ url: '/api/v1/users/me/settings', key: viewer.key })).json()).toEqual({ defaultDeploymentId: null });
      expect((await t.request({ method: 'PATCH', url: '/api/v1/users/me/settings', body: {} })).json()).toEqual({ defaultDeploymentId: deploymentId });
      expect((await t.request({ method: 'PATCH', url: '/api/v1/users/me/settings', body: { defaultDeploymentId: null } })).json()).toEqual({
        defaultDeploymentId: null,
      });
    });

    it('refuses an unknown deployment (404), another tenant’s (404), one the caller cannot see (403) and one outside the key’s scope (403)', async () => {
      const mine = await t.deployment('default-two');
      const theirs = await t.deployment('theirs', { tenantId: other.tenantId });
      problem(await t.request({ method: 'PATCH', url: '/api/v1/users/me/settings', body: { defaultDeploymentId: 999999 } }), 404, 'DEPLOYMENT_NOT_FOUND');
      problem(await t.request({ method: 'PATCH', url: '/api/v1/users/me/settings', body: { defaultDeploymentId: theirs } }), 404, 'DEPLOYMENT_NOT_FOUND');
      problem(await t.request({ method: 'PATCH', url: '/api/v1/users/me/settings', body: { defaultDeploymentId: mine }, key: viewer.key }), 403, 'FORBIDDEN');
      const elsewhere = await t.deployment('default-scope');
      const scoped = await t.key(t.admin.userId, { deploymentIds: [elsewhere] });
      problem(
        await t.request({ method: 'PATCH', url: '/api/v1/users/me/settings', body: { defaultDeploymentId: mine }, key: scoped }),
        403,
        'KEY_SCOPE_FORBIDDEN',
      );
      expect((await t.request({ method: 'PATCH', url: '/api/v1/users/me/settings', body: { defaultDeploymentId: elsewhere }, key: scoped })).statusCode).toBe(
        200,
      );
    });

    it('refuses unknown keys and bad ids with 400', async () => {
      problem(await t.request({ method: 'PATCH', url: '/api/v1/users/me/settings', body: { theme: 'dark' } }), 400, 'VALIDATION_FAILED');
      problem(await t.request({ method: 'PATCH', url: '/api/v1/users/me/settings', body: { defaultDeploymentId: 'one' } }), 400, 'VALIDATION_FAILED');
      problem(await t.request({ method: 'PATCH', url: '/api/v1/users/me/settings', body: { defaultDeploymentId: 0 } }), 400, 'VALIDATION_FAILED');
    });

    it('forgets a default whose deployment is deleted', async () => {
      const doomed = await t.deployment('doomed-default');
      await t.request({ method: 'PATCH', url: '/api/v1/users/me/settings', body: { defaultDeploymentId: doomed } });
      expect((await t.request({ method: 'DELETE', url: `/api/v1/deployments/${doomed}` })).statusCode).toBeLessThan(300);
      expect((await t.request({ url: '/api/v1/users/me/settings' })).json()).toEqual({ defaultDeploymentId: null });
    });
  });
});
