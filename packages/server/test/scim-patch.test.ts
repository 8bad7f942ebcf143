import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp } from './harness.js';
import { ENTERPRISE, ok, PATCH_OP, provisionGroup, provisionUser, scim, scimError } from './scim-harness.js';

/** PATCH (RFC 7644 section 3.5.2) in the forms Okta and Microsoft Entra ID send. */
describe.each(DIALECTS)('SCIM PATCH (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
  });
  afterAll(async () => t?.close());

  const patch = (kind: 'Users' | 'Groups', id: string, operations: unknown[], headers: Record<string, string> = {}) =>
    scim(t, { method: 'PATCH', path: `/${kind}/${id}`, headers, body: { schemas: [PATCH_OP], Operations: operations } });

  describe('Okta', () => {
    it("deactivates with a path-less replace of active, and the user's keys stop at once", async () => {
      const user = await provisionUser(t);
      const key = await t.key(Number(user.id));
      const patched = ok(await patch('Users', user.id, [{ op: 'replace', value: { active: false } }]));
      expect(patched.active).toBe(false);
      expect((await t.request({ url: '/api/v1/users/me', key })).statusCode).toBe(401);
    });

    it('replaces profile attributes without a path, keeping the others', async () => {
      const user = await provisionUser(t, { title: 'Keep me' });
      const patched = ok(
        await patch('Users', user.id, [
          { op: 'replace', value: { name: { givenName: 'New', familyName: 'Name' }, emails: [{ value: 'new@example.com', primary: true, type: 'work' }] } },
        ]),
      );
      expect(patched).toMatchObject({
        name: { givenName: 'New', familyName: 'Name' },
        emails: [{ value: 'new@example.com', primary: true, type: 'work' }],
        title: 'Keep me',
      });
    });

    it('renames a group with a path-less replace carrying its id, which is ignored', async () => {
      const group = await provisionGroup(t, 'Okta old name');
      const patched = ok(await patch('Groups', group.id, [{ op: 'replace', value: { id: group.id, displayName: 'Okta new name' } }]));
      expect(patched).toMatchObject({ id: group.id, displayName: 'Okta new name' });
    });

    it('adds members with their display and removes one with a filtered path', async () => {
      const [a, b] = [await provisionUser(t), await provisionUser(t)];
      const group = await provisionGroup(t, 'Okta members');
      const added = ok(
        await patch('Groups', group.id, [
          {
            op: 'add',
            path: 'members',
            value: [
              { value: a.id, display: a.userName },
              { value: b.id, display: b.userName },
            ],
          },
        ]),
      );
      expect(added.members.map((m: { value: string }) => m.value)).toEqual([a.id, b.id]);
      const removed = ok(await patch('Groups', group.id, [{ op: 'remove', path: `members[value eq "${a.id}"]` }]));
      expect(removed.members.map((m: { value: string }) => m.value)).toEqual([b.id]);
      const rest = (await t.request({ url: `/api/v1/groups/${group.id}` })).json();
      expect(rest.members.map((m: { id: number }) => String(m.id))).toEqual([b.id]);
    });
  });

  describe('Microsoft Entra ID', () => {
    it('accepts operation names in any case and "True"/"False" strings for booleans', async () => {
      const user = await provisionUser(t);
      expect(ok(await patch('Users', user.id, [{ op: 'Replace', path: 'active', value: 'False' }])).active).toBe(false);
      expect(ok(await patch('Users', user.id, [{ op: 'REPLACE', path: 'active', value: 'True' }])).active).toBe(true);
    });

    it('replaces without a path using dotted keys and extension URN keys', async () => {
      const user = await provisionUser(t);
      const patched = ok(
        await patch('Users', user.id, [
          {
            op: 'Replace',
            value: {
              'name.givenName': 'Dotted',
              'name.familyName': 'Keys',
              [`${ENTERPRISE}:department`]: 'Finance',
              [ENTERPRISE]: { costCenter: 'CC9' },
              displayName: 'Dotted Keys',
            },
          },
        ]),
      );
      expect(patched).toMatchObject({
        name: { givenName: 'Dotted', familyName: 'Keys' },
        displayName: 'Dotted Keys',
        [ENTERPRISE]: { department: 'Finance', costCenter: 'CC9' },
      });
      expect(patched.schemas).toContain(ENTERPRISE);
      expect((await t.request({ url: `/api/v1/users/${user.id}` })).json().firstName).toBe('Dotted');
    });

    it('adds and replaces values of multi-valued attributes through filtered paths', async () => {
      const user = await provisionUser(t, { emails: [{ value: 'work@example.com', type: 'work', primary: true }] });
      const replaced = ok(await patch('Users', user.id, [{ op: 'Replace', path: 'emails[type eq "work"].value', value: 'changed@example.com' }]));
      expect(replaced.emails).toEqual([{ value: 'changed@example.com', type: 'work', primary: true }]);
      const added = ok(await patch('Users', user.id, [{ op: 'Add', path: 'phoneNumbers[type eq "mobile"].value', value: '+1 555 0199' }]));
      expect(added.phoneNumbers).toEqual([{ type: 'mobile', value: '+1 555 0199' }]);
      const appended = ok(await patch('Users', user.id, [{ op: 'add', path: 'emails', value: [{ value: 'home@example.com', type: 'home' }] }]));
      expect(appended.emails.map((e: { value: string }) => e.value)).toEqual(['changed@example.com', 'home@example.com']);
      const removed = ok(await patch('Users', user.id, [{ op: 'Remove', path: 'emails[type eq "home"]' }]));
      expect(removed.emails.map((e: { value: string }) => e.value)).toEqual(['changed@example.com']);
    });

    it('sets the manager from a bare id and removes single attributes', async () => {
      const user = await provisionUser(t, { title: 'Temporary' });
      const managed = ok(await patch('Users', user.id, [{ op: 'Add', path: `${ENTERPRISE}:manager`, value: 'manager-7' }]));
      expect(managed[ENTERPRISE]).toEqual({ manager: { value: 'manager-7' } });
      const removed = ok(
        await patch('Users', user.id, [
          { op: 'Remove', path: 'title' },
          { op: 'remove', path: `${ENTERPRISE}:manager` },
        ]),
      );
      expect(removed).not.toHaveProperty('title');
      expect(removed[ENTERPRISE] ?? {}).toEqual({});
    });

    it('renames the user with a path in any case', async () => {
      const user = await provisionUser(t);
      const renamed = ok(await patch('Users', user.id, [{ op: 'replace', path: 'USERNAME', value: `renamed-${user.userName}` }]));
      expect(renamed.userName).toBe(`renamed-${user.userName}`);
    });

    it('adds members, removes members by a value list, and replaces the whole list', async () => {
      const [a, b, c] = [await provisionUser(t), await provisionUser(t), await provisionUser(t)];
      const group = await provisionGroup(t, 'Entra members');
      // No members at all is no members attribute (RFC 7643 section 2.5).
      const members = (g: { members?: Array<{ value: string }> }) => (g.members ?? []).map((m) => m.value);
      expect(
        members(ok(await patch('Groups', group.id, [{ op: 'Add', path: 'members', value: [{ value: a.id }, { value: b.id }, { value: c.id }] }]))),
      ).toEqual([a.id, b.id, c.id]);
      expect(members(ok(await patch('Groups', group.id, [{ op: 'Remove', path: 'members', value: [{ value: a.id }, { value: c.id }] }])))).toEqual([b.id]);
      expect(members(ok(await patch('Groups', group.id, [{ op: 'Replace', path: 'members', value: [{ value: c.id }] }])))).toEqual([c.id]);
      expect(members(ok(await patch('Groups', group.id, [{ op: 'remove', path: 'members' }])))).toEqual([]);
    });

    it('applies several operations in order, in one change', async () => {
      const user = await provisionUser(t);
      const group = await provisionGroup(t, 'Several ops');
      const patched = ok(
        await patch('Groups', group.id, [
          { op: 'Replace', path: 'displayName', value: 'Several ops renamed' },
          { op: 'Add', path: 'members', value: [{ value: user.id }] },
          { op: 'Replace', path: 'externalId', value: 'ext-several' },
        ]),
      );
      expect(patched).toMatchObject({ displayName: 'Several ops renamed', externalId: 'ext-several', members: [{ value: user.id }] });
    });
  });

  describe('refusals change nothing (RFC 7644 sections 3.5.2 and 3.12)', () => {
    it('remove without a path is 400 noTarget', async () => {
      const user = await provisionUser(t);
      scimError(await patch('Users', user.id, [{ op: 'remove' }]), 400, 'noTarget');
      expect(ok(await scim(t, { path: `/Users/${user.id}` }))).toEqual(user);
    });

    it('an unknown operation or a body that is not a PatchOp is 400 invalidSyntax', async () => {
      const user = await provisionUser(t);
      scimError(await patch('Users', user.id, [{ op: 'merge', path: 'title', value: 'x' }]), 400, 'invalidSyntax');
      scimError(await scim(t, { method: 'PATCH', path: `/Users/${user.id}`, body: { schemas: [PATCH_OP] } }), 400, 'invalidSyntax');
      scimError(
        await scim(t, { method: 'PATCH', path: `/Users/${user.id}`, body: { schemas: ['urn:wrong'], Operations: [{ op: 'remove', path: 'title' }] } }),
        400,
        'invalidSyntax',
      );
      expect(ok(await scim(t, { path: `/Users/${user.id}` }))).toEqual(user);
    });

    it('a path naming an unknown attribute or a bad filter is 400 invalidPath', async () => {
      const user = await provisionUser(t);
      scimError(await patch('Users', user.id, [{ op: 'replace', path: 'shoeSize', value: 44 }]), 400, 'invalidPath');
      scimError(await patch('Users', user.id, [{ op: 'replace', path: 'emails[type eq].value', value: 'x' }]), 400, 'invalidPath');
      scimError(await patch('Users', user.id, [{ op: 'replace', path: 'title[value eq "x"]', value: 'x' }]), 400, 'invalidPath');
    });

    it('removing userName or setting a wrong type is 400 invalidValue; earlier operations are not kept', async () => {
      const user = await provisionUser(t, { title: 'Unchanged' });
      scimError(
        await patch('Users', user.id, [
          { op: 'replace', path: 'title', value: 'Changed' },
          { op: 'remove', path: 'userName' },
        ]),
        400,
        'invalidValue',
      );
      scimError(await patch('Users', user.id, [{ op: 'replace', path: 'active', value: 'perhaps' }]), 400, 'invalidValue');
      expect(ok(await scim(t, { path: `/Users/${user.id}` }))).toEqual(user);
    });

    it('adding a member that is not a provisioned user is 400 invalidValue', async () => {
      const group = await provisionGroup(t, 'No strangers');
      scimError(await patch('Groups', group.id, [{ op: 'add', path: 'members', value: 'string id 1' }]), 400, 'invalidValue');
      scimError(await patch('Groups', group.id, [{ op: 'add', path: 'members', value: [{ value: '999999' }] }]), 400, 'invalidValue');
      expect(ok(await scim(t, { path: `/Groups/${group.id}` }))).toEqual(group);
    });

    it('renaming onto a userName or group name in use is 409 uniqueness', async () => {
      const [a, b] = [await provisionUser(t), await provisionUser(t)];
      scimError(await patch('Users', b.id, [{ op: 'replace', path: 'userName', value: a.userName }]), 409, 'uniqueness');
      await provisionGroup(t, 'Taken name');
      const group = await provisionGroup(t, 'Free name');
      scimError(await patch('Groups', group.id, [{ op: 'replace', path: 'displayName', value: 'taken NAME' }]), 409, 'uniqueness');
    });

    it('PATCH honours If-Match: 412 with a stale version, 200 with the current one', async () => {
      const user = await provisionUser(t);
      scimError(await patch('Users', user.id, [{ op: 'replace', path: 'title', value: 'x' }], { 'if-match': 'W/"old"' }), 412);
      const patched = ok(await patch('Users', user.id, [{ op: 'replace', path: 'title', value: 'x' }], { 'if-match': user.meta.version }));
      expect(patched.title).toBe('x');
    });

    it('a path naming a read-only attribute is 400 mutability', async () => {
      const user = await provisionUser(t);
      scimError(await patch('Users', user.id, [{ op: 'add', path: 'groups', value: [{ value: '1' }] }]), 400, 'mutability');
      scimError(await patch('Users', user.id, [{ op: 'replace', path: 'id', value: '5' }]), 400, 'mutability');
      scimError(await patch('Users', user.id, [{ op: 'replace', path: 'meta.created', value: '2000-01-01T00:00:00Z' }]), 400, 'mutability');
      expect(ok(await scim(t, { path: `/Users/${user.id}` }))).toEqual(user);
    });

    it('an unknown id is 404', async () => {
      scimError(await patch('Users', '999999', [{ op: 'replace', path: 'title', value: 'x' }]), 404);
      scimError(await patch('Groups', 'abc', [{ op: 'remove', path: 'members' }]), 404);
    });
  });
});
