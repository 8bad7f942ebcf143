import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp } from './harness.js';
import { filterPath, ok, PATCH_OP, provisionUser, scim, scimError, USER_SCHEMA } from './scim-harness.js';

/** JSON text nesting `levels` arrays around a string, built as text: JSON.stringify would need the object first. */
const deepJson = (levels: number) => `${'['.repeat(levels)}"x"${']'.repeat(levels)}`;

/**
 * Issue 11, "No 500 from client input", on the SCIM routes: bodies nested past the server's bound
 * and strings no store keeps alike are refused before anything is stored, in SCIM's error schema
 * (RFC 7644 section 3.12), on both stores.
 */
describe.each(DIALECTS)('SCIM input bounds (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
  });
  afterAll(async () => t?.close());

  const send = (method: 'POST' | 'PUT' | 'PATCH', path: string, body: string) =>
    t.request({ method, url: `/api/scim/v2${path}`, body, headers: { 'content-type': 'application/scim+json' } });
  const count = async (userName: string) => ok(await scim(t, { path: filterPath('Users', `userName eq "${userName}"`) })).totalResults;

  it("RFC 7644 section 3.12: a POST /Users body nested 5,000 levels deep is a 400 in SCIM's error schema, and no user is made", async () => {
    const res = await send('POST', '/Users', `{"schemas":["${USER_SCHEMA}"],"userName":"deep@example.com","title":${deepJson(5000)}}`);
    scimError(res, 400);
    expect(await count('deep@example.com')).toBe(0);
    // The server still answers.
    ok(await scim(t, { path: '/Users?count=0' }));
  });

  it("RFC 7644 section 3.12: a PATCH body nested 5,000 levels deep is a 400 in SCIM's error schema, and the user does not change", async () => {
    const user = await provisionUser(t, { title: 'Unchanged' });
    const res = await send(
      'PATCH',
      `/Users/${user.id}`,
      `{"schemas":["${PATCH_OP}"],"Operations":[{"op":"replace","path":"title","value":${deepJson(5000)}}]}`,
    );
    scimError(res, 400);
    const put = await send('PUT', `/Users/${user.id}`, `{"schemas":["${USER_SCHEMA}"],"userName":"${user.userName}","addresses":${deepJson(5000)}}`);
    scimError(put, 400);
    expect(ok(await scim(t, { path: `/Users/${user.id}` }))).toEqual(user);
  });

  it("RFC 7644 section 3.12: a NUL character or a lone surrogate in a SCIM string is a 400 in SCIM's error schema on both stores, and nothing is stored", async () => {
    for (const [userName, label] of [
      ['nul\\u0000@example.com', 'NUL'],
      ['lone\\ud800@example.com', 'surrogate'],
    ]) {
      const res = await send('POST', '/Users', `{"schemas":["${USER_SCHEMA}"],"userName":"${userName}"}`);
      expect(res.statusCode, label).toBe(400);
      scimError(res, 400);
    }
    const user = await provisionUser(t, { title: 'Clean' });
    scimError(await send('PATCH', `/Users/${user.id}`, `{"schemas":["${PATCH_OP}"],"Operations":[{"op":"replace","path":"title","value":"a\\u0000b"}]}`), 400);
    expect(ok(await scim(t, { path: `/Users/${user.id}` })).title).toBe('Clean');
  });
});
