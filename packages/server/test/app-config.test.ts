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

    describe('appTheme (reference 5.3 AppTheme), set by admins on PUT /api/v1/tenant/app-config', () => {
      const scheme = (background: string) => ({
        accentColor: '#3366ff',
        backgroundColor: background,
        foregroundColor: 'rgb(20 20 20 / 90%)',
        logoUrl: null,
        contrast: 50,
      });
      const theme = {
        palette: { base: { color: '#112233', hue: 210, saturation: 40 }, contrastLevel: 70, surfaceMode: 'tinted', themes: { danger: { hue: 0 }, code: {} } },
        logoUrl: 'https://cdn.example.com/acme/logo.svg',
        light: scheme('#ffffff'),
        dark: { ...scheme('hsl(220deg 15% 10%)'), logoUrl: '/assets/logo-dark.svg' },
      };
      /** The same theme in the reference's shape: every nullable member present. */
      const answered = {
        palette: {
          base: { color: '#112233', hue: 210, saturation: 40 },
          accent: null,
          contrastLevel: 70,
          pastel: null,
          surfaceMode: 'tinted',
          themes: { danger: { color: null, hue: 0, saturation: null }, warning: null, success: null, note: null, code: { saturation: null } },
        },
        logoUrl: 'https://cdn.example.com/acme/logo.svg',
        light: scheme('#ffffff'),
        dark: { ...scheme('hsl(220deg 15% 10%)'), logoUrl: '/assets/logo-dark.svg' },
      };
      const put = (body: unknown, key?: string) => t.request({ method: 'PUT', url: '/api/v1/tenant/app-config', body, ...(key ? { key } : {}) });
      const read = async () => (await t.request({ url: '/api/v1/app-config', key: viewer.key })).json().appTheme;

      it('is null until set; once set, every caller reads it in the reference’s shape, with every member present; null clears it', async () => {
        expect(await read()).toBeNull();
        const res = await put({ appTheme: theme });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json().appTheme).toEqual(answered);
        expect(await read()).toEqual(answered);
        // Another tenant keeps its own (none).
        expect((await t.request({ url: '/api/v1/app-config', key: other.admin.key, host: 'other.example.test' })).json().appTheme).toBeNull();
        // A merge: the other switches leave the theme alone, and the theme leaves them alone.
        expect((await put({ sheetsAgentChatEnabled: true })).json()).toMatchObject({ sheetsAgentChatEnabled: true, appTheme: answered });
        expect((await put({ appTheme: null })).json()).toMatchObject({ sheetsAgentChatEnabled: true, appTheme: null });
        expect(await read()).toBeNull();
        await put({ sheetsAgentChatEnabled: null });
      });

      it('is replaced whole, and keeps typography only when one is set', async () => {
        const typography = {
          fonts: [{ id: 'inter', url: 'https://fonts.example.com/inter.woff2', format: 'woff2', family: 'Inter' }],
          body: { fontRef: 'inter', fontWeight: 400 },
          heading: { fontRef: 'inter', fontWeight: 700 },
        };
        expect((await put({ appTheme: { ...theme, typography } })).statusCode).toBe(200);
        expect(await read()).toEqual({ ...answered, typography });
        const plain = { palette: {}, logoUrl: null, light: scheme('#fff'), dark: scheme('#000') };
        expect((await put({ appTheme: plain })).statusCode).toBe(200);
        const stored = await read();
        expect(stored).toEqual({
          palette: { base: null, accent: null, contrastLevel: null, pastel: null, surfaceMode: null, themes: null },
          logoUrl: null,
          light: scheme('#fff'),
          dark: scheme('#000'),
        });
        expect(stored).not.toHaveProperty('typography');
        await put({ appTheme: null });
      });

      it('refuses a bad theme with a 400 naming the member, and changes nothing', async () => {
        expect((await put({ appTheme: theme })).statusCode).toBe(200);
        const bad: Array<[string, unknown]> = [
          ['a colour that is not hex or rgb()/hsl()', { ...theme, light: { ...theme.light, accentColor: 'red; background: url(x)' } }],
          ['a hex colour of 5 digits', { ...theme, light: { ...theme.light, backgroundColor: '#12345' } }],
          ['a colour past 100 characters', { ...theme, light: { ...theme.light, backgroundColor: `rgb(${'1'.repeat(120)})` } }],
          ['a scheme contrast above 100', { ...theme, dark: { ...theme.dark, contrast: 101 } }],
          ['a negative scheme contrast', { ...theme, dark: { ...theme.dark, contrast: -1 } }],
          ['a hue above 360', { ...theme, palette: { base: { hue: 361 } } }],
          ['a saturation above 100', { ...theme, palette: { accent: { saturation: 100.5 } } }],
          ['a contrastLevel above 100', { ...theme, palette: { contrastLevel: 101 } }],
          ['a surfaceMode outside the enum', { ...theme, palette: { surfaceMode: 'dark' } }],
          ['a scheme without logoUrl', { ...theme, light: { ...theme.light, logoUrl: undefined } }],
          ['a theme without dark', { palette: theme.palette, logoUrl: null, light: theme.light }],
          ['an unknown member', { ...theme, palette: { ...theme.palette, glow: true } }],
          ['an http:// logo', { ...theme, logoUrl: 'http://cdn.example.com/logo.png' }],
          ['a protocol-relative logo', { ...theme, logoUrl: '//evil.example.com/logo.png' }],
          ['a javascript: logo', { ...theme, logoUrl: 'javascript:alert(1)' }],
          ['a data: logo', { ...theme, dark: { ...theme.dark, logoUrl: 'data:image/svg+xml,<svg/>' } }],
          ['a logo URL with a quote', { ...theme, logoUrl: "https://cdn.example.com/a'b.png" }],
          ['a logo URL with credentials', { ...theme, logoUrl: 'https://user:pw@cdn.example.com/logo.png' }],
          ['a logo URL past 2048 characters', { ...theme, logoUrl: `https://cdn.example.com/${'a'.repeat(2048)}` }],
          [
            'an http:// font',
            {
              ...theme,
              typography: {
                fonts: [{ id: 'f', url: 'http://x.example.com/f.woff2', format: 'woff2' }],
                body: { fontRef: 'f', fontWeight: 400 },
                heading: { fontRef: 'f', fontWeight: 700 },
              },
            },
          ],
          ['a theme that is not an object', 'blue'],
        ];
        for (const [what, appTheme] of bad) {
          const res = await put({ appTheme, sheetsAgentChatEnabled: true });
          const body = problem(res, 400, 'VALIDATION_FAILED');
          expect(body.errors?.[0]?.pointer, what).toMatch(/^\/body\/appTheme/);
        }
        const config = (await t.request({ url: '/api/v1/app-config', key: viewer.key })).json();
        expect(config.appTheme).toEqual(answered);
        expect(config.sheetsAgentChatEnabled).toBe(false);
        await put({ appTheme: null });
      });

      it('a non-admin is refused with 403 and changes nothing', async () => {
        const explorer = await t.user('EXPLORER');
        for (const key of [viewer.key, explorer.key]) problem(await put({ appTheme: theme }, key), 403, 'FORBIDDEN');
        expect(await read()).toBeNull();
      });
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
