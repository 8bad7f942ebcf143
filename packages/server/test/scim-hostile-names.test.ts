import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp } from './harness.js';
import { ok, PATCH_OP, provisionUser, scim, scimError, USER_SCHEMA } from './scim-harness.js';

const EXT = 'urn:mapi:params:scim:schemas:extension:attributes:2.0:User';
/** Names of Object.prototype members: a lookup in a plain object finds them on every object. */
const NAMES = ['toString', '__proto__', 'constructor', 'valueOf', 'hasOwnProperty'];
/** The ones a user attribute may be named (letters, digits and underscores, starting with a letter). */
const ATTRIBUTE_NAMES = ['toString', 'constructor', 'valueOf', 'hasOwnProperty'];

/** Issue 11, "No 500 from client input": attribute names like Object.prototype members, on the SCIM side. */
describe.each(DIALECTS)('SCIM with attribute names like Object.prototype members (%s)', (dialect) => {
  let t: TestApp;
  let user: any;
  let plain: any;

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    for (const name of ATTRIBUTE_NAMES) {
      const res = await t.request({ method: 'POST', url: '/api/v1/user-attributes', body: { name, type: 'string' } });
      expect(res.statusCode, res.body).toBe(201);
    }
    user = await provisionUser(t, { [EXT]: { toString: 'ts', constructor: 'ctor' } });
    // A user with none of them set: nothing may be read from Object.prototype for it.
    plain = await provisionUser(t);
  });
  afterAll(async () => t?.close());

  it('RFC 7644 section 3.4.2.5: such names in attributes and excludedAttributes are ignored like any unknown name: 200', async () => {
    const list = NAMES.join(',');
    for (const param of ['attributes', 'excludedAttributes']) {
      for (const path of [`/Users?${param}=${list}`, `/Users/${user.id}?${param}=${list}`, `/Groups?${param}=${list}`]) ok(await scim(t, { path }));
      ok(await scim(t, { method: 'POST', path: '/Users/.search', body: { [param]: NAMES } }));
    }
    // Through the URN they name the tenant's user attributes, which are there to pick or leave out.
    const picked = ok(await scim(t, { path: `/Users/${user.id}?attributes=${NAMES.map((n) => `${EXT}:${n}`).join(',')}` }));
    expect(picked[EXT]).toEqual({ toString: 'ts', constructor: 'ctor' });
    const left = ok(await scim(t, { path: `/Users/${user.id}?excludedAttributes=${EXT}:toString,${EXT}:valueOf` }));
    expect(left[EXT]).toEqual({ constructor: 'ctor' });
    const none = ok(await scim(t, { path: `/Users/${plain.id}?attributes=${NAMES.map((n) => `${EXT}:${n}`).join(',')}` }));
    expect(none).not.toHaveProperty(EXT);
    expect(JSON.stringify(none)).not.toContain('function');
  });

  it('RFC 7644 section 3.4.2.2: such names in filters are 400 invalidFilter as unknown attributes, or compare as user attributes through the URN', async () => {
    for (const name of NAMES) {
      for (const filter of [`${name} eq "x"`, `${name} pr`, `${name}.value eq "1"`, `emails.${name} eq "x"`, `emails[${name} eq "x"]`, `name.${name} pr`]) {
        scimError(await scim(t, { path: `/Users?filter=${encodeURIComponent(filter)}` }), 400, 'invalidFilter');
      }
      scimError(await scim(t, { path: `/Groups?filter=${encodeURIComponent(`${name} eq "x"`)}` }), 400, 'invalidFilter');
      scimError(await scim(t, { path: `/Users?sortBy=${encodeURIComponent(name)}` }), 400, 'invalidValue');
    }
    const ids = async (filter: string) => ok(await scim(t, { path: `/Users?filter=${encodeURIComponent(filter)}` })).Resources.map((r: any) => r.id);
    expect(await ids(`${EXT}:toString eq "ts"`)).toEqual([user.id]);
    expect(await ids(`${EXT}:constructor pr`)).toEqual([user.id]);
    expect(await ids(`${EXT}:valueOf pr`)).toEqual([]);
  });

  it('RFC 7644 section 3.5.2: such names as PATCH paths are 400 invalidPath; as keys of a path-less value they are ignored; as user attributes they patch', async () => {
    for (const name of NAMES) {
      for (const path of [name, `name.${name}`, `emails[${name} eq "x"]`, `emails[type eq "work"].${name}`]) {
        scimError(
          await scim(t, { method: 'PATCH', path: `/Users/${plain.id}`, body: { schemas: [PATCH_OP], Operations: [{ op: 'replace', path, value: 'x' }] } }),
          400,
          'invalidPath',
        );
      }
    }
    const send = (method: 'PATCH' | 'POST' | 'PUT', url: string, body: string) =>
      t.request({ method, url: `/api/scim/v2${url}`, body, headers: { 'content-type': 'application/scim+json' } });
    const pathless = (extra: string) =>
      `{"schemas":["${PATCH_OP}"],"Operations":[{"op":"replace","value":{${extra}"constructor":"x","toString":"y","valueOf":{"a":1},"title":"Clean"}}]}`;
    expect(ok(await send('PATCH', `/Users/${plain.id}`, pathless(''))).title).toBe('Clean');
    const read = ok(await scim(t, { path: `/Users/${plain.id}` }));
    for (const name of NAMES) expect(Object.hasOwn(read, name), name).toBe(false);
    // "__proto__" in a body is refused by the JSON parser as prototype poisoning: a 400, and nothing changes.
    scimError(await send('PATCH', `/Users/${plain.id}`, pathless('"__proto__":{"title":"polluted"},')), 400, 'invalidSyntax');
    expect(ok(await scim(t, { path: `/Users/${plain.id}` }))).toEqual(read);

    const patched = ok(
      await scim(t, {
        method: 'PATCH',
        path: `/Users/${plain.id}`,
        body: {
          schemas: [PATCH_OP],
          Operations: [
            { op: 'add', path: `${EXT}:valueOf`, value: 'v' },
            { op: 'replace', path: EXT, value: { hasOwnProperty: 'h' } },
          ],
        },
      }),
    );
    expect(patched[EXT]).toEqual({ valueOf: 'v', hasOwnProperty: 'h' });
    const removed = ok(
      await scim(t, {
        method: 'PATCH',
        path: `/Users/${plain.id}`,
        body: {
          schemas: [PATCH_OP],
          Operations: [
            { op: 'remove', path: `${EXT}:toString` },
            { op: 'remove', path: `${EXT}:valueOf` },
          ],
        },
      }),
    );
    expect(removed[EXT]).toEqual({ hasOwnProperty: 'h' });
  });

  it('RFC 7644 section 3.3: such names as resource attributes in POST and PUT are ignored, and as user attributes they are stored', async () => {
    const body = (extra: string) =>
      `{"schemas":["${USER_SCHEMA}"],"userName":"proto@example.com",${extra}"constructor":{"value":1},"toString":"x","hasOwnProperty":[1],"${EXT}":{"valueOf":"kept","unknown":"dropped"}}`;
    const send = (method: 'POST' | 'PUT', url: string, text: string) =>
      t.request({ method, url: `/api/scim/v2${url}`, body: text, headers: { 'content-type': 'application/scim+json' } });
    const resource = ok(await send('POST', '/Users', body('')), 201);
    expect(resource.active).toBe(true);
    expect(resource[EXT]).toEqual({ valueOf: 'kept' });
    for (const name of NAMES) expect(Object.hasOwn(resource, name), name).toBe(false);
    expect(ok(await send('PUT', `/Users/${resource.id}`, body('')))).toEqual(ok(await scim(t, { path: `/Users/${resource.id}` })));
    // "__proto__" is refused by the JSON parser as prototype poisoning (RFC 7644 section 3.12: invalidSyntax).
    scimError(await send('POST', '/Users', body('"__proto__":{"active":false},').replace('proto@', 'proto2@')), 400, 'invalidSyntax');
    scimError(
      await send('PUT', `/Users/${resource.id}`, `{"schemas":["${USER_SCHEMA}"],"userName":"proto@example.com","${EXT}":{"__proto__":"p"}}`),
      400,
      'invalidSyntax',
    );
  });
});
