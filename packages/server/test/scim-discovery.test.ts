import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp } from './harness.js';
import { ENTERPRISE, GROUP_SCHEMA, ok, scim, scimError, USER_SCHEMA } from './scim-harness.js';

/** Who may call the SCIM service, and what its discovery endpoints say (RFC 7644 sections 2 and 4). */
describe.each(DIALECTS)('SCIM access and discovery (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
  });
  afterAll(async () => t?.close());

  describe('authentication and authorization (spec: Authentication 5; RFC 7644 section 2)', () => {
    it('accepts the token as Bearer or Api-Key', async () => {
      for (const scheme of ['Bearer', 'Api-Key']) {
        ok(await scim(t, { path: '/Users', key: null, headers: { authorization: `${scheme} ${t.admin.key}` } }));
      }
    });

    it("answers 401 in SCIM's error schema for a missing, malformed or unknown token", async () => {
      for (const authorization of [undefined, 'non-token', `Bearer mapi_${'Q'.repeat(40)}`, `Basic ${t.admin.key}`]) {
        const res = await scim(t, { path: '/Users', key: null, headers: authorization ? { authorization } : {} });
        scimError(res, 401);
        expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      }
    });

    it('answers 403 for a non-admin and for an admin key scoped to deployments', async () => {
      const developer = await t.user('DEVELOPER');
      scimError(await scim(t, { path: '/Users', key: developer.key }), 403);
      scimError(await scim(t, { method: 'POST', path: '/Users', key: developer.key, body: { schemas: [USER_SCHEMA], userName: 'nope@example.com' } }), 403);
      const scoped = await t.key(t.admin.userId, { deploymentIds: [await t.deployment('scoped-scim')] });
      scimError(await scim(t, { path: '/Groups', key: scoped }), 403);
    });

    it("answers 404 in SCIM's error schema for an unknown SCIM route, and 405 with Allow for an unknown method", async () => {
      scimError(await scim(t, { path: '/Widgets' }), 404);
      const res = await scim(t, { method: 'PATCH', path: '/Users' });
      scimError(res, 405);
      expect(res.headers.allow).toBe('GET, POST');
    });
  });

  describe('discovery (RFC 7644 section 4)', () => {
    it('ServiceProviderConfig says what the server supports', async () => {
      const config = ok(await scim(t, { path: '/ServiceProviderConfig' }));
      expect(config).toMatchObject({
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
        patch: { supported: true },
        bulk: { supported: false },
        filter: { supported: true, maxResults: 200 },
        changePassword: { supported: false },
        sort: { supported: true },
        etag: { supported: true },
      });
      expect(config.authenticationSchemes[0].type).toBe('oauthbearertoken');
    });

    it('ResourceTypes lists User (with the enterprise extension) and Group, each also by id', async () => {
      const list = ok(await scim(t, { path: '/ResourceTypes' }));
      expect(list.totalResults).toBe(2);
      expect(list.Resources.map((r: { id: string; endpoint: string; schema: string }) => [r.id, r.endpoint, r.schema])).toEqual([
        ['User', '/Users', USER_SCHEMA],
        ['Group', '/Groups', GROUP_SCHEMA],
      ]);
      expect(list.Resources[0].schemaExtensions).toEqual([
        { schema: ENTERPRISE, required: false },
        { schema: 'urn:mapi:params:scim:schemas:extension:attributes:2.0:User', required: false },
      ]);
      expect(ok(await scim(t, { path: '/ResourceTypes/Group' })).endpoint).toBe('/Groups');
      scimError(await scim(t, { path: '/ResourceTypes/Printer' }), 404);
    });

    it('Schemas describes User, EnterpriseUser, UserAttributes and Group with their attributes, each also by id', async () => {
      const list = ok(await scim(t, { path: '/Schemas' }));
      expect(list.Resources.map((s: { id: string }) => s.id)).toEqual([
        USER_SCHEMA,
        ENTERPRISE,
        'urn:mapi:params:scim:schemas:extension:attributes:2.0:User',
        GROUP_SCHEMA,
      ]);
      const user = ok(await scim(t, { path: `/Schemas/${USER_SCHEMA}` }));
      expect(user.description).toBe('User Account');
      const userName = user.attributes.find((a: { name: string }) => a.name === 'userName');
      expect(userName).toMatchObject({ type: 'string', required: true, uniqueness: 'server', caseExact: false });
      expect(user.attributes.find((a: { name: string }) => a.name === 'groups').mutability).toBe('readOnly');
      scimError(await scim(t, { path: '/Schemas/urn:nothing' }), 404);
    });
  });
});
