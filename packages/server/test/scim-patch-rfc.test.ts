import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp } from './harness.js';
import { ENTERPRISE, ok, PATCH_OP, provisionGroup, provisionUser, scim, scimError, USER_SCHEMA } from './scim-harness.js';

const EXT = 'urn:mapi:params:scim:schemas:extension:attributes:2.0:User';

/**
 * PATCH as RFC 7644 section 3.5.2 reads, in the forms generic SCIM test tools send: paths naming a
 * whole extension schema or an attribute inside it, and removals. After every PATCH, the response
 * and the next GET show the same resource (RFC 7644 section 3.5.2: the result of applying the
 * operations in order), with removed and emptied attributes absent (RFC 7643 section 2.5).
 */
describe.each(DIALECTS)('SCIM PATCH as RFC 7644 section 3.5.2 reads (%s)', (dialect) => {
  let t: TestApp;
  let manager: any;

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    expect((await t.request({ method: 'POST', url: '/api/v1/user-attributes', body: { name: 'region', type: 'string', defaultValue: 'EU' } })).statusCode).toBe(
      201,
    );
    expect((await t.request({ method: 'POST', url: '/api/v1/user-attributes', body: { name: 'level', type: 'number' } })).statusCode).toBe(201);
    manager = await provisionUser(t, { displayName: 'The Manager' });
  });
  afterAll(async () => t?.close());

  /** PATCHes, then checks the response equals the next GET (RFC 7644 section 3.5.2), and returns it. */
  async function patched(kind: 'Users' | 'Groups', id: string, Operations: unknown[]): Promise<any> {
    const answer = ok(await scim(t, { method: 'PATCH', path: `/${kind}/${id}`, body: { schemas: [PATCH_OP], Operations } }));
    expect(ok(await scim(t, { path: `/${kind}/${id}` }))).toEqual(answer);
    return answer;
  }

  describe('paths naming an extension schema or an attribute inside it', () => {
    it('RFC 7644 section 3.5.2.1: add with the enterprise schema URN as path and an object value sets its attributes; the dot in "2.0" does not split the path', async () => {
      const user = await provisionUser(t);
      const after = await patched('Users', user.id, [
        { op: 'add', path: ENTERPRISE, value: { employeeNumber: '701', department: 'Research', manager: { value: manager.id } } },
      ]);
      expect(after[ENTERPRISE]).toEqual({ employeeNumber: '701', department: 'Research', manager: { value: manager.id } });
      expect(after.schemas).toEqual([USER_SCHEMA, ENTERPRISE, EXT]);
      // No attribute named after a piece of the URN appears anywhere.
      expect(Object.keys(after).filter((k) => k.startsWith('urn:'))).toEqual([ENTERPRISE, EXT]);
    });

    it('RFC 7644 section 3.5.2.3: replace with the schema URN as path replaces the attributes given and keeps the others', async () => {
      const user = await provisionUser(t, { [ENTERPRISE]: { employeeNumber: '702', department: 'Research' } });
      const after = await patched('Users', user.id, [{ op: 'replace', path: ENTERPRISE, value: { department: 'Sales', costCenter: 'CC-2' } }]);
      expect(after[ENTERPRISE]).toEqual({ employeeNumber: '702', department: 'Sales', costCenter: 'CC-2' });
    });

    it('RFC 7644 section 3.5.2: add, replace and remove of urn:…:enterprise:2.0:User:manager.value and :employeeNumber', async () => {
      const user = await provisionUser(t);
      let after = await patched('Users', user.id, [
        { op: 'add', path: `${ENTERPRISE}:manager.value`, value: manager.id },
        { op: 'add', path: `${ENTERPRISE}:employeeNumber`, value: '703' },
      ]);
      expect(after[ENTERPRISE]).toEqual({ employeeNumber: '703', manager: { value: manager.id } });
      after = await patched('Users', user.id, [
        { op: 'replace', path: `${ENTERPRISE}:manager.value`, value: user.id },
        { op: 'replace', path: `${ENTERPRISE}:employeeNumber`, value: '704' },
      ]);
      expect(after[ENTERPRISE]).toEqual({ employeeNumber: '704', manager: { value: user.id } });
      after = await patched('Users', user.id, [{ op: 'remove', path: `${ENTERPRISE}:manager.value` }]);
      // A complex attribute left with no sub-attribute is unassigned (RFC 7643 section 2.5).
      expect(after[ENTERPRISE]).toEqual({ employeeNumber: '704' });
      after = await patched('Users', user.id, [{ op: 'remove', path: `${ENTERPRISE}:employeeNumber` }]);
      expect(after).not.toHaveProperty(ENTERPRISE);
      expect(after.schemas).toEqual([USER_SCHEMA, EXT]);
    });

    it('RFC 7644 section 3.5.2.2: remove with the schema URN as path removes the whole extension', async () => {
      const user = await provisionUser(t, { [ENTERPRISE]: { employeeNumber: '705', manager: { value: manager.id } } });
      const after = await patched('Users', user.id, [{ op: 'remove', path: ENTERPRISE }]);
      expect(after).not.toHaveProperty(ENTERPRISE);
      expect(after.schemas).toEqual([USER_SCHEMA, EXT]);
    });

    it("RFC 7644 section 3.5.2: the tenant's user-attribute extension works the same way, by URN and by attribute, and the REST API sees it", async () => {
      const user = await provisionUser(t);
      const values = async () =>
        Object.fromEntries(
          (
            (await t.request({ url: `/api/v1/user-attribute-values/${user.id}` })).json().values as Array<{ name: string; value: unknown; isDefault: boolean }>
          ).map((v) => [v.name, [v.value, v.isDefault]]),
        );
      let after = await patched('Users', user.id, [{ op: 'add', path: EXT, value: { region: 'US', level: 3 } }]);
      expect(after[EXT]).toEqual({ region: 'US', level: 3 });
      expect(await values()).toEqual({ region: ['US', false], level: [3, false] });
      after = await patched('Users', user.id, [{ op: 'replace', path: `${EXT}:level`, value: 4 }]);
      expect(after[EXT]).toEqual({ region: 'US', level: 4 });
      after = await patched('Users', user.id, [{ op: 'remove', path: `${EXT}:region` }]);
      // Removing the user's own value brings the attribute's default back.
      expect(after[EXT]).toEqual({ region: 'EU', level: 4 });
      expect(await values()).toEqual({ region: ['EU', true], level: [4, false] });
      after = await patched('Users', user.id, [{ op: 'remove', path: EXT }]);
      expect(await values()).toEqual({ region: ['EU', true], level: [null, true] });
      expect(after[EXT]).toEqual({ region: 'EU' });
    });

    it('RFC 7644 section 3.5.2: an extension URN path with a value that is not an object is 400 invalidValue, and nothing changes', async () => {
      const user = await provisionUser(t, { [ENTERPRISE]: { department: 'Kept' } });
      scimError(
        await scim(t, {
          method: 'PATCH',
          path: `/Users/${user.id}`,
          body: { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: ENTERPRISE, value: 'Research' }] },
        }),
        400,
        'invalidValue',
      );
      expect(ok(await scim(t, { path: `/Users/${user.id}` }))[ENTERPRISE]).toEqual({ department: 'Kept' });
    });
  });

  describe('remove', () => {
    it('RFC 7644 section 3.5.2.2: removing single-valued attributes (title, name.givenName, externalId) leaves them absent', async () => {
      const user = await provisionUser(t, { title: 'Director', externalId: 'ext-1' });
      const after = await patched('Users', user.id, [
        { op: 'remove', path: 'title' },
        { op: 'remove', path: 'name.givenName' },
        { op: 'remove', path: 'externalId' },
      ]);
      expect(after).not.toHaveProperty('title');
      expect(after).not.toHaveProperty('externalId');
      expect(after.name).toEqual({ familyName: 'Family' });
      // The given name is the REST API's firstName: it is gone there too.
      expect((await t.request({ url: `/api/v1/users/${user.id}` })).json().firstName).toBeNull();
    });

    it('RFC 7644 section 3.5.2.2: removing the last value of a multi-valued attribute leaves it unassigned (absent, not an empty list)', async () => {
      const user = await provisionUser(t, { phoneNumbers: [{ value: '+1 555 0100', type: 'work' }] });
      let after = await patched('Users', user.id, [{ op: 'remove', path: 'emails[type eq "work"]' }]);
      expect(after).not.toHaveProperty('emails');
      after = await patched('Users', user.id, [{ op: 'remove', path: 'phoneNumbers' }]);
      expect(after).not.toHaveProperty('phoneNumbers');
      after = await patched('Users', user.id, [
        { op: 'remove', path: 'name.familyName' },
        { op: 'remove', path: 'name.givenName' },
      ]);
      expect(after).not.toHaveProperty('name');
    });

    it("RFC 7644 section 3.5.2.2: removing active deactivates the user: active is false and the user's API keys stop working at once", async () => {
      const user = await provisionUser(t);
      const key = await t.key(Number(user.id));
      expect((await t.request({ url: '/api/v1/users/me', key })).statusCode).toBe(200);
      const after = await patched('Users', user.id, [{ op: 'remove', path: 'active' }]);
      expect(after.active).toBe(false);
      expect((await t.request({ url: '/api/v1/users/me', key })).statusCode).toBe(401);
      // Setting it again brings the keys back.
      expect((await patched('Users', user.id, [{ op: 'replace', path: 'active', value: true }])).active).toBe(true);
      expect((await t.request({ url: '/api/v1/users/me', key })).statusCode).toBe(200);
    });

    it('RFC 7644 section 3.5.2.2: removing members without a filter leaves the group with no members attribute, in SCIM and in the REST API', async () => {
      const [a, b] = [await provisionUser(t), await provisionUser(t)];
      const group = await provisionGroup(t, 'Remove all members', [a.id, b.id]);
      const after = await patched('Groups', group.id, [{ op: 'remove', path: 'members' }]);
      expect(after).not.toHaveProperty('members');
      expect((await t.request({ url: `/api/v1/groups/${group.id}` })).json().members).toEqual([]);
      // A new group without members has none either, and adding one brings the attribute back.
      const empty = await provisionGroup(t, 'Never had members');
      expect(empty).not.toHaveProperty('members');
      expect((await patched('Groups', empty.id, [{ op: 'add', path: 'members', value: [{ value: a.id }] }])).members.map((m: any) => m.value)).toEqual([a.id]);
    });
  });

  describe('referential integrity of group members (docs/api/scim.md)', () => {
    it('RFC 7643 section 4.2: a member naming no User of this service is 400 invalidValue on POST, PUT and PATCH, and nothing changes', async () => {
      const a = await provisionUser(t);
      const group = await provisionGroup(t, 'Integrity', [a.id]);
      const body = (members: unknown[]) => ({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Integrity 2', members });
      scimError(await scim(t, { method: 'POST', path: '/Groups', body: body([{ value: '999999' }]) }), 400, 'invalidValue');
      scimError(await scim(t, { method: 'PUT', path: `/Groups/${group.id}`, body: body([{ value: a.id }, { value: 'string id 1' }]) }), 400, 'invalidValue');
      scimError(
        await scim(t, {
          method: 'PATCH',
          path: `/Groups/${group.id}`,
          body: { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value: '999999' }] }] },
        }),
        400,
        'invalidValue',
      );
      expect(ok(await scim(t, { path: `/Groups/${group.id}` }))).toMatchObject({ displayName: 'Integrity', members: [{ value: a.id }] });
      expect(ok(await scim(t, { path: `/Groups?filter=${encodeURIComponent('displayName eq "Integrity 2"')}` })).totalResults).toBe(0);
    });
  });
});
