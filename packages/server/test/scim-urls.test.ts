import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { startServer, type RunningServer } from '../src/server.js';
import { STORE_INDEPENDENT, TestApp } from './harness.js';
import { GROUP_SCHEMA, ok, SCIM, scim, USER_SCHEMA } from './scim-harness.js';
import { serverEnv, type ServerEnv } from './server-env.js';

/**
 * Absolute URLs (SCIM meta.location, Location, $ref; RFC 7644 section 3.1) come from configuration
 * and the tenant's domains, never from the Host header a client sends (issue 11: no unchecked header).
 */
describe.each(STORE_INDEPENDENT)('SCIM absolute URLs (%s)', (dialect) => {
  describe('single-tenant mode, a running server with PUBLIC_URL', () => {
    let env: ServerEnv;
    let server: RunningServer;
    const key = generateApiKey();
    const call = (method: 'GET' | 'POST', url: string, host: string, body?: unknown) =>
      server.app.inject({
        method,
        url,
        headers: { host, authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/scim+json' } : {}) },
        ...(body ? { payload: JSON.stringify(body) } : {}),
      });

    beforeAll(async () => {
      env = await serverEnv(dialect);
      server = await startServer(env.config({ ADMIN_API_KEY: key, PUBLIC_URL: 'https://mapi.example.com:9443/' }), () => undefined);
    });
    afterAll(async () => {
      await server?.close();
      await env?.destroy();
    });

    it('RFC 7644 section 3.1: a request with Host: evil.example gets Location, meta.location and $ref under PUBLIC_URL', async () => {
      const created = await call('POST', `${SCIM}/Users`, 'evil.example', { schemas: [USER_SCHEMA], userName: 'hosted@example.com' });
      expect(created.statusCode).toBe(201);
      const user = created.json();
      const expected = `https://mapi.example.com:9443${SCIM}/Users/${user.id}`;
      expect(user.meta.location).toBe(expected);
      expect(created.headers.location).toBe(expected);
      const group = await call('POST', `${SCIM}/Groups`, 'evil.example:8443', {
        schemas: [GROUP_SCHEMA],
        displayName: 'Hosted',
        members: [{ value: user.id }],
      });
      expect(group.json().members[0].$ref).toBe(expected);
      const read = (await call('GET', `${SCIM}/Users/${user.id}`, 'another.example')).json();
      expect(read.groups[0].$ref).toBe(`https://mapi.example.com:9443${SCIM}/Groups/${group.json().id}`);
      const discovery = (await call('GET', `${SCIM}/ResourceTypes/User`, 'evil.example')).json();
      expect(discovery.meta.location).toBe(`https://mapi.example.com:9443${SCIM}/ResourceTypes/User`);
      expect(JSON.stringify(read)).not.toContain('evil.example');
    });
  });

  describe('single-tenant mode without PUBLIC_URL', () => {
    let env: ServerEnv;
    let server: RunningServer;
    const key = generateApiKey();
    beforeAll(async () => {
      env = await serverEnv(dialect);
      server = await startServer(env.config({ ADMIN_API_KEY: key }), () => undefined);
    });
    afterAll(async () => {
      await server?.close();
      await env?.destroy();
    });

    it('RFC 7644 section 3.1: the default is https://localhost:<port> of the bound port, whatever the Host header says', async () => {
      const port = new URL(server.url).port;
      const res = await server.app.inject({
        method: 'POST',
        url: `${SCIM}/Users`,
        headers: { host: 'evil.example', authorization: `Bearer ${key}`, 'content-type': 'application/scim+json' },
        payload: JSON.stringify({ schemas: [USER_SCHEMA], userName: 'default-url@example.com' }),
      });
      expect(res.statusCode).toBe(201);
      expect(res.headers.location).toBe(`https://localhost:${port}${SCIM}/Users/${res.json().id}`);
    });
  });

  describe('tenant hosts (BASE_DOMAIN set)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await TestApp.create(dialect, { baseDomain: 'mapi.test' });
    });
    afterAll(async () => t?.close());

    it("a tenant's primary domain is its first custom domain, else <slug>.<BASE_DOMAIN>, whichever host the request used", async () => {
      const acme = await t.tenant('acme', ['analytics.acme.com', 'bi.acme.com']);
      const viaSlug = await scim(t, {
        method: 'POST',
        path: '/Users',
        key: acme.admin.key,
        host: 'acme.mapi.test',
        body: { schemas: [USER_SCHEMA], userName: 'a@acme.com' },
      });
      expect(viaSlug.statusCode).toBe(201);
      expect(viaSlug.headers.location).toBe(`https://analytics.acme.com${SCIM}/Users/${viaSlug.json().id}`);
      const viaOther = ok(await scim(t, { path: `/Users/${viaSlug.json().id}`, key: acme.admin.key, host: 'bi.acme.com' }));
      expect(viaOther.meta.location).toBe(viaSlug.headers.location);

      const beta = await t.tenant('beta');
      const user = await scim(t, {
        method: 'POST',
        path: '/Users',
        key: beta.admin.key,
        host: 'beta.mapi.test:8443',
        body: { schemas: [USER_SCHEMA], userName: 'b@beta.com' },
      });
      expect(user.headers.location).toBe(`https://beta.mapi.test${SCIM}/Users/${user.json().id}`);
      // The default tenant is reached as default.<BASE_DOMAIN>.
      const mine = ok(
        await scim(t, { method: 'POST', path: '/Users', host: 'default.mapi.test', body: { schemas: [USER_SCHEMA], userName: 'd@default.com' } }),
        201,
      );
      expect(mine.meta.location).toBe(`https://default.mapi.test${SCIM}/Users/${mine.id}`);
      const group = ok(
        await scim(t, { method: 'POST', path: '/Groups', host: 'default.mapi.test', body: { schemas: [GROUP_SCHEMA], displayName: 'Default group' } }),
        201,
      );
      expect(group.meta.location).toBe(`https://default.mapi.test${SCIM}/Groups/${group.id}`);
    });
  });

  describe('PUBLIC_URL validation', () => {
    it('PUBLIC_URL must be an https origin: anything else stops the start with a message naming it', () => {
      for (const bad of [
        'http://mapi.example.com',
        'https://mapi.example.com/base',
        'https://user@mapi.example.com',
        'https://mapi.example.com?x=1',
        'mapi.example.com',
        'https://',
        'https://bad_host.example',
      ]) {
        let error: unknown;
        try {
          loadConfig({ PUBLIC_URL: bad });
        } catch (e) {
          error = e;
        }
        expect(error, bad).toBeInstanceOf(ConfigError);
        expect((error as ConfigError).problems.join('\n')).toContain('PUBLIC_URL');
      }
      expect(loadConfig({ PUBLIC_URL: 'https://Mapi.Example.com:9443/' }).publicUrl).toBe('https://mapi.example.com:9443');
      expect(loadConfig({ PUBLIC_URL: 'https://mapi.example.com:443' }).publicUrl).toBe('https://mapi.example.com');
      expect(loadConfig({}).publicUrl).toBeNull();
    });
  });
});
