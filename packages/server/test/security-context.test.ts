import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provisionEmbedUser } from '../src/areas/embed-tenants/provision.js';
import { embedSecurityContext, embedSecurityContexts, userSecurityContext } from '../src/areas/embed-tenants/security-context.js';
import { lockKey, serialized } from '../src/db/transactions.js';
import { DIALECTS, TestApp } from './harness.js';

/*
 * One function builds every caller's row-level context: a notification recipient's is the one
 * their embed session carries, and users and embed users alike get an attribute's default where
 * they have no value of their own.
 */
describe.each(DIALECTS)('Security contexts (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
    await t.group('Sales');
    for (const [name, type, defaultValue] of [
      ['region', 'string', 'EU'],
      ['level', 'number', null],
    ] as const) {
      const res = await t.request({ method: 'POST', url: '/api/v1/user-attributes', body: { name, type, ...(defaultValue === null ? {} : { defaultValue }) } });
      expect(res.statusCode, res.body).toBe(201);
    }
  });
  afterAll(async () => t?.close());

  it("an embed recipient's context is their session's, attribute defaults included", async () => {
    const made = await serialized(t.store, lockKey.embedPeople(t.tenantId), (trx) =>
      provisionEmbedUser(
        trx,
        t.tenantId,
        { embedTenantName: 'acme', externalId: 'ann', groups: ['Sales'], userAttributes: [{ name: 'level', value: 3 }] },
        { userLimit: 100, now: () => new Date() },
      ),
    );
    expect(made.userAttributes).toEqual({ region: 'EU', level: 3 });
    const session = embedSecurityContext(
      { groups: made.groups, tenantGroups: [made.tenantSystemGroup, ...made.tenantGroups], userAttributes: made.userAttributes },
      { org: 7 },
    );
    const recipients = await embedSecurityContexts(t.store.db, t.tenantId, [made.user.id], new Map([[made.user.id, { org: 7 }]]));
    expect(recipients.get(made.user.id)).toEqual(session);
    expect(session).toEqual({ userId: null, groups: ['Sales', 'system:tenant:acme'], userAttributes: { region: 'EU', level: 3 }, securityContext: { org: 7 } });
  });

  it("a user's context: their groups, their values, else the defaults", async () => {
    const user = await t.user('EXPLORER');
    expect(await userSecurityContext(t.store.db, t.tenantId, user.userId, {})).toEqual({
      userId: user.userId,
      groups: [],
      userAttributes: { region: 'EU' },
      securityContext: {},
    });
  });
});
