import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp } from './harness.js';
import { ENTERPRISE, GROUP_SCHEMA, ok, provisionGroup, provisionUser, scim, scimError, SCIM, USER_SCHEMA } from './scim-harness.js';

/** SCIM Users and Groups (RFC 7643, RFC 7644) on the same rows as the REST API. */
describe.each(DIALECTS)('SCIM resources (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
  });
  afterAll(async () => t?.close());

  describe('POST /Users (RFC 7644 section 3.3)', () => {
    it('answers 201 with Location, ETag and meta, in application/scim+json', async () => {
      const res = await scim(t, {
        method: 'POST',
        path: '/Users',
        body: {
          schemas: [USER_SCHEMA],
          userName: 'grace@example.com',
          name: { givenName: 'Grace', familyName: 'Hopper' },
          displayName: 'Grace Hopper',
          active: true,
        },
      });
      const user = ok(res, 201);
      expect(user.schemas).toEqual([USER_SCHEMA]);
      expect(typeof user.id).toBe('string');
      expect(user.meta).toMatchObject({ resourceType: 'User', location: `https://localhost${SCIM}/Users/${user.id}` });
      expect(Date.parse(user.meta.created)).not.toBeNaN();
      expect(user.meta.lastModified).toBe(user.meta.created);
      expect(user.meta.version).toMatch(/^W\/".+"$/);
      expect(res.headers.location).toBe(user.meta.location);
      expect(res.headers.etag).toBe(user.meta.version);
      expect(user).toMatchObject({
        userName: 'grace@example.com',
        name: { givenName: 'Grace', familyName: 'Hopper' },
        displayName: 'Grace Hopper',
        active: true,
      });
    });

    it("stores the user in the REST API's users: userName is the email, givenName the first name", async () => {
      const user = await provisionUser(t, { name: { givenName: 'Ada', familyName: 'Lovelace' } });
      const rest = await t.request({ url: `/api/v1/users/${user.id}` });
      expect(rest.json()).toMatchObject({ id: Number(user.id), email: user.userName, firstName: 'Ada', role: 'EXPLORER', active: true });
    });

    it('accepts plain application/json as well as application/scim+json (RFC 7644 section 3.1)', async () => {
      const res = await t.request({
        method: 'POST',
        url: `${SCIM}/Users`,
        headers: { 'content-type': 'application/json' },
        body: { schemas: [USER_SCHEMA], userName: 'plain-json@example.com' },
      });
      expect(ok(res, 201).userName).toBe('plain-json@example.com');
    });

    it('keeps the enterprise extension and lists its schema (RFC 7643 section 4.3)', async () => {
      const user = await provisionUser(t, {
        schemas: [USER_SCHEMA, ENTERPRISE],
        [ENTERPRISE]: { employeeNumber: '42', department: 'Research', manager: { value: 'm-1' } },
      });
      expect(user.schemas).toEqual([USER_SCHEMA, ENTERPRISE]);
      expect(user[ENTERPRISE]).toEqual({ employeeNumber: '42', department: 'Research', manager: { value: 'm-1' } });
    });

    it('reads attribute names ignoring case and "True"/"False" strings as booleans (RFC 7643 section 2.1)', async () => {
      const user = await provisionUser(t, {
        Active: 'False',
        Emails: [{ Value: 'case@example.com', Type: 'work', Primary: 'True' }],
        'URN:IETF:PARAMS:SCIM:SCHEMAS:EXTENSION:ENTERPRISE:2.0:USER': { Department: 'Ops' },
      });
      expect(user.active).toBe(false);
      expect(user.emails).toEqual([{ value: 'case@example.com', type: 'work', primary: true }]);
      expect(user[ENTERPRISE]).toEqual({ department: 'Ops' });
    });

    it('ignores unknown and read-only attributes (RFC 7644 section 3.3; RFC 7643 section 2.2)', async () => {
      const user = await provisionUser(t, {
        id: 'chosen-by-client',
        adreses: [{ country: 'X' }],
        groups: [{ value: '1' }],
        meta: { created: '2000-01-01T00:00:00Z' },
      });
      expect(user.id).not.toBe('chosen-by-client');
      expect(user).not.toHaveProperty('adreses');
      expect(user).not.toHaveProperty('groups');
      expect(user.meta.created).not.toBe('2000-01-01T00:00:00Z');
    });

    it('never stores or returns a password (RFC 7643 section 4.1.1: returned "never"; not offered here)', async () => {
      const user = await provisionUser(t, { password: 'hunter2-secret' });
      expect(JSON.stringify(ok(await scim(t, { path: `/Users/${user.id}` })))).not.toContain('hunter2');
      const stored = await t.store.db.selectFrom('scim_users').select('document').where('user_id', '=', Number(user.id)).executeTakeFirstOrThrow();
      expect(stored.document).not.toContain('hunter2');
    });

    it('keeps multi-valued and complex attributes as given (addresses, phoneNumbers)', async () => {
      const addresses = [{ streetAddress: '1 Main St', locality: 'Springfield', country: 'US', type: 'work', primary: true }];
      const user = await provisionUser(t, { addresses, phoneNumbers: [{ value: '+1 555 0100', type: 'mobile' }], title: 'Engineer' });
      const read = ok(await scim(t, { path: `/Users/${user.id}` }));
      expect(read).toMatchObject({ addresses, phoneNumbers: [{ value: '+1 555 0100', type: 'mobile' }], title: 'Engineer' });
    });

    it('refuses a user without userName: 400 invalidValue, nothing created (RFC 7643 section 4.1.1)', async () => {
      const before = await t.store.db.selectFrom('users').select('id').execute();
      scimError(await scim(t, { method: 'POST', path: '/Users', body: { schemas: [USER_SCHEMA], name: { givenName: 'No' } } }), 400, 'invalidValue');
      scimError(await scim(t, { method: 'POST', path: '/Users', body: { schemas: [USER_SCHEMA], userName: '' } }), 400, 'invalidValue');
      expect(await t.store.db.selectFrom('users').select('id').execute()).toEqual(before);
    });

    it('refuses a value of the wrong type: 400 invalidValue', async () => {
      scimError(
        await scim(t, { method: 'POST', path: '/Users', body: { schemas: [USER_SCHEMA], userName: 'typed@example.com', active: 'maybe' } }),
        400,
        'invalidValue',
      );
      scimError(
        await scim(t, { method: 'POST', path: '/Users', body: { schemas: [USER_SCHEMA], userName: 'typed@example.com', name: 'flat' } }),
        400,
        'invalidValue',
      );
    });

    it('answers 409 uniqueness for a userName already provisioned, ignoring case (RFC 7644 section 3.3)', async () => {
      const user = await provisionUser(t);
      const dup = await scim(t, { method: 'POST', path: '/Users', body: { schemas: [USER_SCHEMA], userName: user.userName.toUpperCase() } });
      scimError(dup, 409, 'uniqueness');
    });

    it('the REST API applies the same uniqueness to a provisioned userName, single and bulk', async () => {
      const user = await provisionUser(t);
      const single = await t.request({ method: 'POST', url: '/api/v1/users', body: { email: user.userName.toUpperCase() } });
      expect(single.statusCode).toBe(409);
      const bulk = await t.request({ method: 'POST', url: '/api/v1/users/bulk', body: { users: [{ email: user.userName }] } });
      expect(bulk.json().failed).toEqual([{ index: 0, email: user.userName, error: { status: 409, message: expect.stringContaining('already exists') } }]);
    });

    it('takes over a user made through the REST API instead of duplicating it', async () => {
      const made = await t.request({ method: 'POST', url: '/api/v1/users', body: { email: 'rest-first@example.com', firstName: 'Rest' } });
      const restId = made.json().id as number;
      const user = ok(
        await scim(t, { method: 'POST', path: '/Users', body: { schemas: [USER_SCHEMA], userName: 'REST-first@example.com', name: { givenName: 'Scim' } } }),
        201,
      );
      expect(user.id).toBe(String(restId));
      expect((await t.request({ url: `/api/v1/users/${restId}` })).json().firstName).toBe('Scim');
    });

    it('two identical POSTs at once: one 201, one 409 uniqueness, one user', async () => {
      const body = { schemas: [USER_SCHEMA], userName: 'race@example.com' };
      const results = await Promise.all([scim(t, { method: 'POST', path: '/Users', body }), scim(t, { method: 'POST', path: '/Users', body })]);
      expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409]);
      scimError(results.find((r) => r.statusCode === 409) as (typeof results)[number], 409, 'uniqueness');
      const rows = await t.store.db.selectFrom('users').select('id').where('email', '=', 'race@example.com').execute();
      expect(rows).toHaveLength(1);
    });

    it('refuses a body in another media type: 415', async () => {
      scimError(await t.request({ method: 'POST', url: `${SCIM}/Users`, headers: { 'content-type': 'text/plain' }, body: 'userName=x' }), 415);
    });

    it('refuses a body that is not JSON: 400 invalidSyntax; and one over 1 MiB: 413', async () => {
      const res = await t.request({ method: 'POST', url: `${SCIM}/Users`, headers: { 'content-type': 'application/scim+json' }, body: '{"userName": ' });
      scimError(res, 400, 'invalidSyntax');
      const big = JSON.stringify({ schemas: [USER_SCHEMA], userName: 'big@example.com', title: 'x'.repeat(1024 * 1024) });
      scimError(await t.request({ method: 'POST', url: `${SCIM}/Users`, headers: { 'content-type': 'application/scim+json' }, body: big }), 413);
    });
  });

  describe('GET /Users/{id} (RFC 7644 section 3.4.1)', () => {
    it('returns the user with an ETag header equal to meta.version (RFC 7644 section 3.14)', async () => {
      const user = await provisionUser(t);
      const res = await scim(t, { path: `/Users/${user.id}` });
      expect(ok(res)).toEqual(user);
      expect(res.headers.etag).toBe(user.meta.version);
    });

    it("answers 404 in SCIM's error schema for unknown, malformed and never-provisioned ids", async () => {
      const restOnly = await t.user('EXPLORER');
      for (const id of ['999999', '010101001010101011001010101011', 'not-a-number', String(restOnly.userId)]) {
        scimError(await scim(t, { path: `/Users/${id}` }), 404);
      }
    });

    it("answers 404 for another tenant's user", async () => {
      const other = await t.tenant('scim-other', ['scim-other.example.com']);
      const theirs = ok(
        await scim(t, {
          method: 'POST',
          path: '/Users',
          key: other.admin.key,
          host: 'scim-other.example.com',
          body: { schemas: [USER_SCHEMA], userName: 'theirs@example.com' },
        }),
        201,
      );
      scimError(await scim(t, { path: `/Users/${theirs.id}` }), 404);
    });
  });

  describe('PUT /Users/{id} (RFC 7644 section 3.5.1)', () => {
    it('replaces the user: attributes left out are cleared, userName may change', async () => {
      const user = await provisionUser(t, { title: 'Engineer', displayName: 'Old' });
      const replaced = ok(
        await scim(t, { method: 'PUT', path: `/Users/${user.id}`, body: { schemas: [USER_SCHEMA], userName: `renamed-${user.userName}`, displayName: 'New' } }),
      );
      expect(replaced).toMatchObject({ id: user.id, userName: `renamed-${user.userName}`, displayName: 'New', active: true });
      expect(replaced).not.toHaveProperty('title');
      expect(replaced).not.toHaveProperty('name');
      expect(replaced.meta.version).not.toBe(user.meta.version);
      expect((await t.request({ url: `/api/v1/users/${user.id}` })).json()).toMatchObject({ email: `renamed-${user.userName}`, firstName: null });
    });

    it('refuses a replacement without userName and changes nothing', async () => {
      const user = await provisionUser(t);
      scimError(await scim(t, { method: 'PUT', path: `/Users/${user.id}`, body: { schemas: [USER_SCHEMA], active: false } }), 400, 'invalidValue');
      expect(ok(await scim(t, { path: `/Users/${user.id}` }))).toEqual(user);
    });

    it("answers 409 uniqueness when renaming onto another user's userName", async () => {
      const a = await provisionUser(t);
      const b = await provisionUser(t);
      scimError(await scim(t, { method: 'PUT', path: `/Users/${b.id}`, body: { schemas: [USER_SCHEMA], userName: a.userName } }), 409, 'uniqueness');
    });
  });

  describe('deprovisioning', () => {
    it("active: false stops the user's API keys at once; the user is still returned, as inactive", async () => {
      const user = await provisionUser(t);
      const key = await t.key(Number(user.id));
      expect((await t.request({ url: '/api/v1/users/me', key })).statusCode).toBe(200);
      ok(await scim(t, { method: 'PUT', path: `/Users/${user.id}`, body: { schemas: [USER_SCHEMA], userName: user.userName, active: false } }));
      expect((await t.request({ url: '/api/v1/users/me', key })).statusCode).toBe(401);
      expect(ok(await scim(t, { path: `/Users/${user.id}` })).active).toBe(false);
      const listed = ok(await scim(t, { path: `/Users?filter=${encodeURIComponent(`id eq "${user.id}"`)}` }));
      expect(listed.Resources.map((r: { active: boolean }) => r.active)).toEqual([false]);
      ok(await scim(t, { method: 'PUT', path: `/Users/${user.id}`, body: { schemas: [USER_SCHEMA], userName: user.userName, active: true } }));
      expect((await t.request({ url: '/api/v1/users/me', key })).statusCode).toBe(200);
    });

    it('DELETE answers 204; afterwards SCIM answers 404 and lists it no more (RFC 7644 section 3.6)', async () => {
      const user = await provisionUser(t);
      const key = await t.key(Number(user.id));
      const group = await provisionGroup(t, `deleted-member-${user.id}`, [user.id]);
      ok(await scim(t, { method: 'DELETE', path: `/Users/${user.id}` }), 204);
      scimError(await scim(t, { path: `/Users/${user.id}` }), 404);
      scimError(await scim(t, { method: 'DELETE', path: `/Users/${user.id}` }), 404);
      expect(ok(await scim(t, { path: `/Users?filter=${encodeURIComponent(`userName eq "${user.userName}"`)}` })).totalResults).toBe(0);
      expect(ok(await scim(t, { path: `/Groups/${group.id}` }))).not.toHaveProperty('members');
      // The REST API keeps the row, deactivated, and the key no longer works.
      expect((await t.request({ url: `/api/v1/users/${user.id}` })).json().active).toBe(false);
      expect((await t.request({ url: '/api/v1/users/me', key })).statusCode).toBe(401);
    });

    it('refuses to deactivate the last active admin: 409, nothing changes', async () => {
      const admin = ok(await scim(t, { method: 'POST', path: '/Users', body: { schemas: [USER_SCHEMA], userName: t.admin.email } }), 201);
      expect(admin.id).toBe(String(t.admin.userId));
      const others = await t.store.db
        .selectFrom('users')
        .select('id')
        .where('tenant_id', '=', t.tenantId)
        .where('role', '=', 'ADMIN')
        .where('id', '!=', t.admin.userId)
        .execute();
      expect(others).toEqual([]);
      scimError(await scim(t, { method: 'DELETE', path: `/Users/${admin.id}` }), 409);
      expect(ok(await scim(t, { path: `/Users/${admin.id}` })).active).toBe(true);
    });
  });

  describe('Groups (RFC 7643 section 4.2)', () => {
    it('POST answers 201 with members; the REST API sees the same group and members', async () => {
      const a = await provisionUser(t);
      const b = await provisionUser(t);
      const res = await scim(t, {
        method: 'POST',
        path: '/Groups',
        body: { schemas: [GROUP_SCHEMA], displayName: 'Analysts', externalId: 'ext-1', members: [{ value: a.id }, { value: b.id, display: 'ignored' }] },
      });
      const group = ok(res, 201);
      expect(res.headers.location).toBe(group.meta.location);
      expect(group).toMatchObject({ schemas: [GROUP_SCHEMA], displayName: 'Analysts', externalId: 'ext-1', meta: { resourceType: 'Group' } });
      expect(group.members).toEqual([
        { value: a.id, $ref: `https://localhost${SCIM}/Users/${a.id}`, display: a.userName, type: 'User' },
        { value: b.id, $ref: `https://localhost${SCIM}/Users/${b.id}`, display: b.userName, type: 'User' },
      ]);
      const rest = (await t.request({ url: `/api/v1/groups/${group.id}` })).json();
      expect(rest.name).toBe('Analysts');
      expect(rest.members.map((m: { id: number }) => String(m.id))).toEqual([a.id, b.id]);
    });

    it('a provisioned group carries access policies at once', async () => {
      const member = await provisionUser(t);
      const key = await t.key(Number(member.id));
      const deployment = await t.deployment('scim-access');
      const group = await provisionGroup(t, 'Viewers of scim-access', [member.id]);
      expect((await t.request({ url: `/api/v1/deployments/${deployment}`, key })).statusCode).toBe(403);
      await t.grant({ type: 'GROUP', id: Number(group.id) }, { type: 'DEPLOYMENT', id: deployment }, 'VIEW');
      expect((await t.request({ url: `/api/v1/deployments/${deployment}`, key })).statusCode).toBe(200);
    });

    it('409 uniqueness for a displayName already provisioned, ignoring case', async () => {
      await provisionGroup(t, 'Unique Name');
      scimError(await scim(t, { method: 'POST', path: '/Groups', body: { schemas: [GROUP_SCHEMA], displayName: 'UNIQUE name' } }), 409, 'uniqueness');
    });

    it('400 invalidValue for a missing displayName or a member that is not a provisioned user; nothing created', async () => {
      const before = await t.store.db.selectFrom('groups').select('id').execute();
      const restOnly = await t.user('EXPLORER');
      scimError(await scim(t, { method: 'POST', path: '/Groups', body: { schemas: [GROUP_SCHEMA] } }), 400, 'invalidValue');
      for (const value of ['string id 1', '999999', String(restOnly.userId)]) {
        scimError(
          await scim(t, { method: 'POST', path: '/Groups', body: { schemas: [GROUP_SCHEMA], displayName: `bad-${value}`, members: [{ value }] } }),
          400,
          'invalidValue',
        );
      }
      expect(await t.store.db.selectFrom('groups').select('id').execute()).toEqual(before);
    });

    it('POST takes over a group made through the REST API, keeping its id and policies', async () => {
      const restGroup = (await t.request({ method: 'POST', url: '/api/v1/groups', body: { name: 'Made in REST' } })).json();
      const deployment = await t.deployment('adopted-group');
      await t.grant({ type: 'GROUP', id: restGroup.id }, { type: 'DEPLOYMENT', id: deployment }, 'VIEW');
      const member = await provisionUser(t);
      const adopted = ok(
        await scim(t, { method: 'POST', path: '/Groups', body: { schemas: [GROUP_SCHEMA], displayName: 'made in rest', members: [{ value: member.id }] } }),
        201,
      );
      expect(adopted.id).toBe(String(restGroup.id));
      const key = await t.key(Number(member.id));
      expect((await t.request({ url: `/api/v1/deployments/${deployment}`, key })).statusCode).toBe(200);
    });

    it('PUT renames and replaces the member list; members SCIM does not manage stay', async () => {
      const a = await provisionUser(t);
      const b = await provisionUser(t);
      const restOnly = await t.user('EXPLORER');
      const group = await provisionGroup(t, 'Before rename', [a.id]);
      await t.request({ method: 'POST', url: `/api/v1/groups/${group.id}/members`, body: { userIds: [restOnly.userId] } });
      const replaced = ok(
        await scim(t, {
          method: 'PUT',
          path: `/Groups/${group.id}`,
          body: { schemas: [GROUP_SCHEMA], displayName: 'After rename', members: [{ value: b.id }] },
        }),
      );
      expect(replaced.displayName).toBe('After rename');
      expect(replaced.members.map((m: { value: string }) => m.value)).toEqual([b.id]);
      const rest = (await t.request({ url: `/api/v1/groups/${group.id}` })).json();
      expect(rest.members.map((m: { id: number }) => m.id).sort()).toEqual([Number(b.id), restOnly.userId].sort());
    });

    it('DELETE answers 204 and removes the group with its policies (RFC 7644 section 3.6)', async () => {
      const group = await provisionGroup(t, 'To delete');
      const deployment = await t.deployment('to-delete');
      await t.grant({ type: 'GROUP', id: Number(group.id) }, { type: 'DEPLOYMENT', id: deployment }, 'VIEW');
      ok(await scim(t, { method: 'DELETE', path: `/Groups/${group.id}` }), 204);
      scimError(await scim(t, { path: `/Groups/${group.id}` }), 404);
      expect((await t.request({ url: `/api/v1/groups/${group.id}` })).statusCode).toBe(404);
      const policies = await t.store.db
        .selectFrom('policies')
        .select('id')
        .where('principal_type', '=', 'GROUP')
        .where('principal_id', '=', Number(group.id))
        .execute();
      expect(policies).toEqual([]);
    });

    it('a user lists the groups it belongs to, read-only (RFC 7643 section 4.1.2)', async () => {
      const user = await provisionUser(t);
      const group = await provisionGroup(t, 'Membership shown', [user.id]);
      const read = ok(await scim(t, { path: `/Users/${user.id}` }));
      expect(read.groups).toEqual([{ value: group.id, $ref: `https://localhost${SCIM}/Groups/${group.id}`, display: 'Membership shown', type: 'direct' }]);
    });
  });

  describe('ETags (RFC 7644 section 3.14)', () => {
    it('GET with If-None-Match naming the current version is 304 without a body; a stale one gets the resource', async () => {
      const user = await provisionUser(t);
      const same = await scim(t, { path: `/Users/${user.id}`, headers: { 'if-none-match': user.meta.version } });
      expect(same.statusCode).toBe(304);
      expect(same.body).toBe('');
      expect(same.headers.etag).toBe(user.meta.version);
      expect(ok(await scim(t, { path: `/Users/${user.id}`, headers: { 'if-none-match': 'W/"older"' } })).id).toBe(user.id);
    });

    it('If-Match with another version: 412 on PUT, PATCH and DELETE, and nothing changes', async () => {
      const user = await provisionUser(t);
      const group = await provisionGroup(t, 'etag group');
      const stale = { 'if-match': 'W/"stale"' };
      scimError(
        await scim(t, { method: 'PUT', path: `/Users/${user.id}`, headers: stale, body: { schemas: [USER_SCHEMA], userName: user.userName, active: false } }),
        412,
      );
      scimError(
        await scim(t, {
          method: 'PATCH',
          path: `/Users/${user.id}`,
          headers: stale,
          body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', value: { active: false } }] },
        }),
        412,
      );
      scimError(await scim(t, { method: 'DELETE', path: `/Users/${user.id}`, headers: stale }), 412);
      scimError(await scim(t, { method: 'PUT', path: `/Groups/${group.id}`, headers: stale, body: { schemas: [GROUP_SCHEMA], displayName: 'changed' } }), 412);
      scimError(await scim(t, { method: 'DELETE', path: `/Groups/${group.id}`, headers: stale }), 412);
      expect(ok(await scim(t, { path: `/Users/${user.id}` }))).toEqual(user);
      expect(ok(await scim(t, { path: `/Groups/${group.id}` }))).toEqual(group);
    });

    it('If-Match with the current version succeeds, and the version changes with the resource', async () => {
      const user = await provisionUser(t);
      const changed = ok(
        await scim(t, {
          method: 'PUT',
          path: `/Users/${user.id}`,
          headers: { 'if-match': user.meta.version },
          body: { schemas: [USER_SCHEMA], userName: user.userName, title: 'New title' },
        }),
      );
      expect(changed.meta.version).not.toBe(user.meta.version);
      const group = await provisionGroup(t, 'etag members');
      const withMember = ok(
        await scim(t, {
          method: 'PUT',
          path: `/Groups/${group.id}`,
          headers: { 'if-match': group.meta.version },
          body: { schemas: [GROUP_SCHEMA], displayName: 'etag members', members: [{ value: user.id }] },
        }),
      );
      expect(withMember.meta.version).not.toBe(group.meta.version);
      ok(await scim(t, { method: 'DELETE', path: `/Groups/${group.id}`, headers: { 'if-match': withMember.meta.version } }), 204);
    });
  });
});
