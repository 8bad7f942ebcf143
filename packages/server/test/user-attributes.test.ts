import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem } from './harness.js';
import { filterPath, ok, PATCH_OP, provisionUser, scim, scimError, USER_SCHEMA } from './scim-harness.js';

const EXT = 'urn:mapi:params:scim:schemas:extension:attributes:2.0:User';

/** User attributes (spec: Other operations, /api/v1/user-attributes and /user-attribute-values) and their SCIM extension. */
describe.each(DIALECTS)('user attributes (%s)', (dialect) => {
  let t: TestApp;
  let region: number;
  let level: number;
  let beta: number;
  let teams: number;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
    const create = async (body: unknown) => (await t.request({ method: 'POST', url: '/api/v1/user-attributes', body })).json().id as number;
    region = await create({ name: 'region', type: 'string', defaultValue: 'EU' });
    level = await create({ name: 'level', type: 'number' });
    beta = await create({ name: 'beta', type: 'boolean', defaultValue: false });
    teams = await create({ name: 'teams', type: 'string-list' });
  });
  afterAll(async () => t?.close());

  describe('definitions', () => {
    it('POST creates one (201), GET lists and reads them', async () => {
      const res = await t.request({ method: 'POST', url: '/api/v1/user-attributes', body: { name: 'costCentre', type: 'string' } });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toMatchObject({ name: 'costCentre', type: 'string', defaultValue: null });
      const list = (await t.request({ url: '/api/v1/user-attributes' })).json();
      expect(list.items.map((a: { name: string }) => a.name)).toEqual(['region', 'level', 'beta', 'teams', 'costCentre']);
      expect((await t.request({ url: `/api/v1/user-attributes/${region}` })).json()).toMatchObject({
        id: region,
        name: 'region',
        type: 'string',
        defaultValue: 'EU',
      });
    });

    it('names are unique ignoring case (409), well-formed (400); a default must match the type (400)', async () => {
      problem(await t.request({ method: 'POST', url: '/api/v1/user-attributes', body: { name: 'REGION', type: 'string' } }), 409, 'USER_ATTRIBUTE_NAME_TAKEN');
      problem(await t.request({ method: 'POST', url: '/api/v1/user-attributes', body: { name: '1st', type: 'string' } }), 400, 'VALIDATION_FAILED');
      problem(await t.request({ method: 'POST', url: '/api/v1/user-attributes', body: { name: 'x', type: 'date' } }), 400, 'VALIDATION_FAILED');
      const bad = problem(
        await t.request({ method: 'POST', url: '/api/v1/user-attributes', body: { name: 'n', type: 'number', defaultValue: '5' } }),
        400,
        'VALIDATION_FAILED',
      );
      expect(bad.errors).toEqual([{ pointer: '/body/defaultValue', message: 'must be a number' }]);
    });

    it('PUT renames and changes the default, but never the type; unknown ids are 404', async () => {
      const id = (await t.request({ method: 'POST', url: '/api/v1/user-attributes', body: { name: 'tier', type: 'string' } })).json().id;
      const res = await t.request({ method: 'PUT', url: `/api/v1/user-attributes/${id}`, body: { name: 'plan', defaultValue: 'free' } });
      expect(res.json()).toMatchObject({ id, name: 'plan', type: 'string', defaultValue: 'free' });
      problem(await t.request({ method: 'PUT', url: `/api/v1/user-attributes/${id}`, body: { type: 'number' } }), 400, 'VALIDATION_FAILED');
      problem(await t.request({ method: 'PUT', url: `/api/v1/user-attributes/${id}`, body: { defaultValue: 3 } }), 400, 'VALIDATION_FAILED');
      problem(await t.request({ method: 'PUT', url: `/api/v1/user-attributes/${id}`, body: { name: 'Region' } }), 409, 'USER_ATTRIBUTE_NAME_TAKEN');
      problem(await t.request({ url: '/api/v1/user-attributes/999999' }), 404, 'USER_ATTRIBUTE_NOT_FOUND');
    });

    it('only admins manage definitions', async () => {
      const explorer = await t.user('EXPLORER');
      problem(await t.request({ url: '/api/v1/user-attributes', key: explorer.key }), 403, 'FORBIDDEN');
      problem(await t.request({ method: 'POST', url: '/api/v1/user-attributes', key: explorer.key, body: { name: 'mine', type: 'string' } }), 403, 'FORBIDDEN');
    });
  });

  describe('values', () => {
    const url = (userId: number) => `/api/v1/user-attribute-values/${userId}`;
    const set = (userId: number, body: unknown, key?: string) => t.request({ method: 'POST', url: url(userId), body, ...(key ? { key } : {}) });

    it('GET gives every attribute as userAttributes [{name, value}], defaults filled in; values is the same deprecated list', async () => {
      const user = await t.user('EXPLORER');
      const initial = (await t.request({ url: url(user.userId) })).json();
      expect(initial.userAttributes.slice(0, 4)).toEqual([
        { name: 'region', value: 'EU', isDefault: true, attributeId: region, type: 'string' },
        { name: 'level', value: null, isDefault: true, attributeId: level, type: 'number' },
        { name: 'beta', value: false, isDefault: true, attributeId: beta, type: 'boolean' },
        { name: 'teams', value: null, isDefault: true, attributeId: teams, type: 'string-list' },
      ]);
      expect(initial.values).toEqual(initial.userAttributes);
    });

    it('POST userAttributes [{name, value}] sets some (names in any case); null returns one to its default; the names not given keep theirs', async () => {
      const user = await t.user('EXPLORER');
      const res = await set(user.userId, {
        userAttributes: [
          { name: 'region', value: 'US' },
          { name: 'LEVEL', value: 3 },
          { name: 'teams', value: ['a', 'b'] },
        ],
      });
      expect(res.statusCode).toBe(200);
      expect(
        res
          .json()
          .userAttributes.slice(0, 4)
          .map((v: { name: string; value: unknown; isDefault: boolean }) => [v.name, v.value, v.isDefault]),
      ).toEqual([
        ['region', 'US', false],
        ['level', 3, false],
        ['beta', false, true],
        ['teams', ['a', 'b'], false],
      ]);
      const reset = (await set(user.userId, { userAttributes: [{ name: 'region', value: null }] })).json();
      expect(reset.userAttributes[0]).toMatchObject({ name: 'region', value: 'EU', isDefault: true });
      expect(reset.userAttributes[1]).toMatchObject({ name: 'level', value: 3, isDefault: false });
      // What GET answers, cut to {name, value}, is a body POST takes back unchanged.
      const read = (await t.request({ url: url(user.userId) })).json();
      const echoed = await set(user.userId, {
        userAttributes: read.userAttributes.map((v: { name: string; value: unknown }) => ({ name: v.name, value: v.value })),
      });
      expect(echoed.json().userAttributes.map((v: { value: unknown }) => v.value)).toEqual(read.userAttributes.map((v: { value: unknown }) => v.value));
    });

    it('a repeated name (in any case) is 400 naming the second, and nothing is written', async () => {
      const user = await t.user('EXPLORER');
      const bad = problem(
        await set(user.userId, {
          userAttributes: [
            { name: 'level', value: 1 },
            { name: 'Level', value: 2 },
          ],
        }),
        400,
        'VALIDATION_FAILED',
      );
      expect(bad.errors).toEqual([{ pointer: '/body/userAttributes/1/name', message: 'is repeated' }]);
      expect((await t.request({ url: url(user.userId) })).json().userAttributes[1]).toMatchObject({ name: 'level', value: null, isDefault: true });
    });

    it('an unknown name is 400 USER_ATTRIBUTES_NOT_FOUND, as in generate-session, and nothing is written', async () => {
      const user = await t.user('EXPLORER');
      const unknown = problem(
        await set(user.userId, {
          userAttributes: [
            { name: 'region', value: 'US' },
            { name: 'shoeSize', value: 'x' },
          ],
        }),
        400,
        'USER_ATTRIBUTES_NOT_FOUND',
      );
      expect(unknown.detail).toContain('"shoeSize"');
      expect(unknown.errors).toEqual([{ pointer: '/body/userAttributes/1/name', message: 'is not a user attribute' }]);
      expect((await t.request({ url: url(user.userId) })).json().userAttributes[0]).toMatchObject({ value: 'EU', isDefault: true });
    });

    it('a value of the wrong type is 400 naming its pointer, and nothing is written', async () => {
      const user = await t.user('EXPLORER');
      const wrong = problem(
        await set(user.userId, {
          userAttributes: [
            { name: 'region', value: 'US' },
            { name: 'level', value: '3' },
          ],
        }),
        400,
        'VALIDATION_FAILED',
      );
      expect(wrong.errors).toEqual([{ pointer: '/body/userAttributes/1/value', message: 'must be a number' }]);
      const list = problem(await set(user.userId, { userAttributes: [{ name: 'teams', value: 'red' }] }), 400, 'VALIDATION_FAILED');
      expect(list.errors).toEqual([{ pointer: '/body/userAttributes/0/value', message: 'must be a list of strings' }]);
      expect((await t.request({ url: url(user.userId) })).json().userAttributes[0]).toMatchObject({ value: 'EU', isDefault: true });
    });

    it('the deprecated values {name: value} still writes; sending both shapes, or neither, is 400', async () => {
      const user = await t.user('EXPLORER');
      const res = await set(user.userId, { values: { region: 'US', LEVEL: 3 } });
      expect(res.statusCode).toBe(200);
      expect(
        res
          .json()
          .userAttributes.slice(0, 2)
          .map((v: { value: unknown }) => v.value),
      ).toEqual(['US', 3]);
      const wrong = problem(await set(user.userId, { values: { region: 'APAC', level: '3' } }), 400, 'VALIDATION_FAILED');
      expect(wrong.errors).toEqual([{ pointer: '/body/values/level', message: 'must be a number' }]);
      const unknown = problem(await set(user.userId, { values: { shoeSize: 'x' } }), 400, 'VALIDATION_FAILED');
      expect(unknown.errors?.[0]?.pointer).toBe('/body/values/shoeSize');
      const both = problem(await set(user.userId, { values: { region: 'APAC' }, userAttributes: [{ name: 'level', value: 4 }] }), 400, 'VALIDATION_FAILED');
      expect(both.errors).toEqual([{ pointer: '/body/values', message: 'is not allowed with userAttributes' }]);
      problem(await set(user.userId, {}), 400, 'VALIDATION_FAILED');
      expect(
        (await t.request({ url: url(user.userId) }))
          .json()
          .userAttributes.slice(0, 2)
          .map((v: { value: unknown }) => v.value),
      ).toEqual(['US', 3]);
    });

    it('a user reads their own values; others and unknown users are refused', async () => {
      const user = await t.user('VIEWER');
      const other = await t.user('VIEWER');
      expect((await t.request({ url: url(user.userId), key: user.key })).statusCode).toBe(200);
      problem(await t.request({ url: url(other.userId), key: user.key }), 403, 'FORBIDDEN');
      problem(await set(user.userId, { userAttributes: [{ name: 'region', value: 'US' }] }, user.key), 403, 'FORBIDDEN');
      problem(await t.request({ url: '/api/v1/user-attribute-values/999999' }), 404, 'USER_NOT_FOUND');
      problem(await set(999999, { userAttributes: [{ name: 'region', value: 'US' }] }), 404, 'USER_NOT_FOUND');
    });
  });

  describe('SCIM extension', () => {
    it('provisioning sets values through the extension, and the REST API reads them', async () => {
      const user = await provisionUser(t, { [EXT]: { region: 'APAC', level: 7, beta: 'True', teams: ['x'] } });
      expect(user.schemas).toContain(EXT);
      // Reads give effective values: attributes the user has no value of show their defaults.
      expect(user[EXT]).toEqual({ region: 'APAC', level: 7, beta: true, teams: ['x'], plan: 'free' });
      const rest = (await t.request({ url: `/api/v1/user-attribute-values/${user.id}` })).json();
      expect(rest.values.slice(0, 4).map((v: { value: unknown }) => v.value)).toEqual(['APAC', 7, true, ['x']]);
    });

    it('PATCH sets and removes values; PUT replaces them', async () => {
      const user = await provisionUser(t, { [EXT]: { region: 'APAC' } });
      const patched = ok(
        await scim(t, {
          method: 'PATCH',
          path: `/Users/${user.id}`,
          body: { schemas: [PATCH_OP], Operations: [{ op: 'Replace', value: { [`${EXT}:level`]: 2 } }] },
        }),
      );
      expect(patched[EXT]).toEqual({ region: 'APAC', level: 2, beta: false, plan: 'free' });
      const removed = ok(
        await scim(t, { method: 'PATCH', path: `/Users/${user.id}`, body: { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: `${EXT}:region` }] } }),
      );
      // Removing the user's own value leaves the default.
      expect(removed[EXT]).toEqual({ region: 'EU', level: 2, beta: false, plan: 'free' });
      const replaced = ok(
        await scim(t, { method: 'PUT', path: `/Users/${user.id}`, body: { schemas: [USER_SCHEMA, EXT], userName: user.userName, [EXT]: { teams: ['t1'] } } }),
      );
      expect(replaced[EXT]).toEqual({ teams: ['t1'], region: 'EU', beta: false, plan: 'free' });
    });

    it('a value of the wrong type is 400 invalidValue and nothing changes', async () => {
      const user = await provisionUser(t, { [EXT]: { level: 1 } });
      scimError(
        await scim(t, { method: 'PUT', path: `/Users/${user.id}`, body: { schemas: [USER_SCHEMA], userName: user.userName, [EXT]: { level: 'high' } } }),
        400,
        'invalidValue',
      );
      expect(ok(await scim(t, { path: `/Users/${user.id}` }))[EXT]).toEqual({ level: 1, region: 'EU', beta: false, plan: 'free' });
    });

    it('filters on user attributes compile to SQL, by type', async () => {
      const a = await provisionUser(t, { [EXT]: { region: 'Nordics', level: 10, beta: true, teams: ['red', 'blue'] } });
      const b = await provisionUser(t, { [EXT]: { region: 'nordics-east', level: 9, beta: false, teams: ['green'] } });
      const ids = async (filter: string) => ok(await scim(t, { path: filterPath('Users', filter) })).Resources.map((r: { id: string }) => r.id);
      expect(await ids(`${EXT}:region eq "NORDICS"`)).toEqual([a.id]);
      expect(await ids(`${EXT}:region sw "nordics"`)).toEqual([a.id, b.id]);
      expect(await ids(`${EXT}:level gt 9`)).toEqual([a.id]);
      expect(await ids(`${EXT}:level ge 9 and ${EXT}:level le 10`)).toEqual([a.id, b.id]);
      expect(await ids(`${EXT}:beta eq false and ${EXT}:region sw "nordics"`)).toEqual([b.id]);
      expect(await ids(`${EXT}:teams eq "blue"`)).toEqual([a.id]);
      expect(await ids(`${EXT}:teams pr and ${EXT}:region co "east"`)).toEqual([b.id]);
      scimError(await scim(t, { path: filterPath('Users', `${EXT}:level gt "9"`) }), 400, 'invalidFilter');
      scimError(await scim(t, { path: filterPath('Users', `${EXT}:nothing eq "x"`) }), 400, 'invalidFilter');
    });

    it("/Schemas lists the tenant's attributes in the extension", async () => {
      const schema = ok(await scim(t, { path: `/Schemas/${EXT}` }));
      expect(schema.attributes.slice(0, 4).map((a: { name: string; type: string; multiValued: boolean }) => [a.name, a.type, a.multiValued])).toEqual([
        ['region', 'string', false],
        ['level', 'decimal', false],
        ['beta', 'boolean', false],
        ['teams', 'string', true],
      ]);
    });
  });

  describe('names that Object.prototype also has work like any other name', () => {
    const NAMES = ['toString', 'valueOf', 'constructor', 'hasOwnProperty', 'isPrototypeOf'];
    let own: TestApp;
    beforeAll(async () => {
      // An app of its own: these definitions would change what the other tests list.
      own = await TestApp.create(dialect);
      for (const name of NAMES) {
        expect(
          (
            await own.request({
              method: 'POST',
              url: '/api/v1/user-attributes',
              body: { name, type: 'string', ...(name === 'valueOf' ? { defaultValue: 'd' } : {}) },
            })
          ).statusCode,
        ).toBe(201);
      }
    });
    afterAll(async () => own?.close());

    it('toString, valueOf, constructor and hasOwnProperty work like any name in GET and POST /user-attribute-values (200, never 500)', async () => {
      const user = await own.user('EXPLORER');
      const url = `/api/v1/user-attribute-values/${user.userId}`;
      const initial = await own.request({ url });
      expect(initial.statusCode).toBe(200);
      expect(initial.json().values.map((v: { name: string; value: unknown; isDefault: boolean }) => [v.name, v.value, v.isDefault])).toEqual(
        NAMES.map((name) => [name, name === 'valueOf' ? 'd' : null, true]),
      );
      const set = await own.request({
        method: 'POST',
        url,
        body: {
          userAttributes: [
            { name: 'toString', value: 'a' },
            { name: 'constructor', value: 'b' },
            { name: 'HASOWNPROPERTY', value: 'c' },
          ],
        },
      });
      expect(set.statusCode).toBe(200);
      expect(set.json().values.map((v: { value: unknown; isDefault: boolean }) => [v.value, v.isDefault])).toEqual([
        ['a', false],
        ['d', true],
        ['b', false],
        ['c', false],
        [null, true],
      ]);
      const reset = await own.request({ method: 'POST', url, body: { userAttributes: [{ name: 'constructor', value: null }] } });
      expect(reset.json().values[2]).toMatchObject({ name: 'constructor', value: null, isDefault: true });
      expect((await own.request({ url })).json().values[0]).toMatchObject({ name: 'toString', value: 'a', isDefault: false });
    });

    it('the definition routes take them too, and __proto__ is not a name (it must start with a letter)', async () => {
      const list = await own.request({ url: '/api/v1/user-attributes' });
      expect(list.json().items.map((a: { name: string }) => a.name)).toEqual(NAMES);
      const id = list.json().items[0].id as number;
      const renamed = await own.request({ method: 'PUT', url: `/api/v1/user-attributes/${id}`, body: { name: 'propertyIsEnumerable' } });
      expect(renamed.statusCode).toBe(200);
      problem(
        await own.request({ method: 'POST', url: '/api/v1/user-attributes', body: { name: 'VALUEOF', type: 'string' } }),
        409,
        'USER_ATTRIBUTE_NAME_TAKEN',
      );
      problem(await own.request({ method: 'POST', url: '/api/v1/user-attributes', body: { name: '__proto__', type: 'string' } }), 400, 'VALIDATION_FAILED');
    });
  });
});
