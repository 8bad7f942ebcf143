import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';

const URL = '/api/v1/tenant/settings';
const KEYS = [
  'auditLogEnabled',
  'auditLogEnabledCurrent',
  'auditLogEnabledTimestamp',
  'hasSupportAccess',
  'useAIBIUserInterface',
  'maintenanceWindowEnabled',
  'maintenanceWindowDay',
  'maintenanceWindowTime',
  'oidcEnabled',
];

describe.each(DIALECTS)('tenant settings (%s)', (dialect) => {
  let t: TestApp;
  let developer: Caller;
  let other: { tenantId: number; admin: Caller };
  beforeAll(async () => {
    t = await TestApp.create(dialect);
    developer = await t.user('DEVELOPER');
    other = await t.tenant('other', ['other.example.test']);
  });
  afterAll(async () => t?.close());

  const put = (body: unknown, key?: string) => t.request({ method: 'PUT', url: URL, body, ...(key ? { key } : {}) });
  const get = async () => (await t.request({ url: URL })).json() as Record<string, unknown>;

  it('answers exactly the reference’s fields, all set, with the documented defaults (reference 5.1)', async () => {
    const res = await t.request({ url: URL });
    expect(res.statusCode).toBe(200);
    const settings = res.json();
    expect(Object.keys(settings).sort()).toEqual([...KEYS].sort());
    const created = await t.store.db.selectFrom('tenants').select('created_at').where('id', '=', t.tenantId).executeTakeFirstOrThrow();
    expect(settings).toEqual({
      auditLogEnabled: false,
      auditLogEnabledCurrent: false,
      auditLogEnabledTimestamp: Date.parse(created.created_at),
      hasSupportAccess: false,
      useAIBIUserInterface: false,
      maintenanceWindowEnabled: false,
      maintenanceWindowDay: 'SUNDAY',
      maintenanceWindowTime: '02:00',
      oidcEnabled: false,
    });
  });

  it('merges the keys sent (reference 5.2); null puts a key back to its default', async () => {
    const res = await put({ maintenanceWindowEnabled: true, maintenanceWindowDay: 'WEDNESDAY', maintenanceWindowTime: '23:30', oidcEnabled: true });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      maintenanceWindowEnabled: true,
      maintenanceWindowDay: 'WEDNESDAY',
      maintenanceWindowTime: '23:30',
      oidcEnabled: true,
      hasSupportAccess: false,
    });
    const next = await put({ hasSupportAccess: true, useAIBIUserInterface: true });
    expect(next.json()).toMatchObject({ maintenanceWindowDay: 'WEDNESDAY', oidcEnabled: true, hasSupportAccess: true, useAIBIUserInterface: true });
    expect(await get()).toEqual(next.json());
    const cleared = await put({
      maintenanceWindowDay: null,
      oidcEnabled: null,
      hasSupportAccess: null,
      useAIBIUserInterface: null,
      maintenanceWindowEnabled: null,
      maintenanceWindowTime: null,
    });
    expect(cleared.json()).toMatchObject({
      maintenanceWindowDay: 'SUNDAY',
      maintenanceWindowTime: '02:00',
      oidcEnabled: false,
      hasSupportAccess: false,
      maintenanceWindowEnabled: false,
    });
  });

  it('switches the audit log: current follows at once, the timestamp is the time of the switch', async () => {
    const before = Date.now();
    const on = (await put({ auditLogEnabled: true })).json();
    expect(on.auditLogEnabled).toBe(true);
    expect(on.auditLogEnabledCurrent).toBe(true);
    expect(on.auditLogEnabledTimestamp).toBeGreaterThanOrEqual(before);
    expect(on.auditLogEnabledTimestamp).toBeLessThanOrEqual(Date.now());
    // Sending the same value again is no switch: the timestamp stays.
    expect((await put({ auditLogEnabled: true })).json().auditLogEnabledTimestamp).toBe(on.auditLogEnabledTimestamp);
    const off = (await put({ auditLogEnabled: false })).json();
    expect(off).toMatchObject({ auditLogEnabled: false, auditLogEnabledCurrent: false });
    expect(off.auditLogEnabledTimestamp).toBeGreaterThanOrEqual(on.auditLogEnabledTimestamp);
  });

  it('is for admins only (403 to others, reading and writing) and a scoped admin key cannot write', async () => {
    problem(await t.request({ url: URL, key: developer.key }), 403, 'FORBIDDEN');
    problem(await put({ oidcEnabled: true }, developer.key), 403, 'FORBIDDEN');
    const scoped = await t.key(t.admin.userId, { deploymentIds: [await t.deployment('settings-scoped')] });
    problem(await put({ oidcEnabled: true }, scoped), 403, 'KEY_SCOPE_FORBIDDEN');
    expect((await get()).oidcEnabled).toBe(false);
  });

  it.each([
    ['the read-only auditLogEnabledCurrent', { auditLogEnabledCurrent: true }],
    ['the read-only auditLogEnabledTimestamp', { auditLogEnabledTimestamp: 1 }],
    ['an unknown key', { theme: 'dark' }],
    ['a later-revision key this server does not offer', { aiTokensAutoPurchaseEnabled: true }],
    ['a day in lower case', { maintenanceWindowDay: 'monday' }],
    ['a day abbreviation', { maintenanceWindowDay: 'MON' }],
    ['a time without leading zero', { maintenanceWindowTime: '2:00' }],
    ['a time past 23:59', { maintenanceWindowTime: '24:00' }],
    ['a time with seconds', { maintenanceWindowTime: '02:00:00' }],
    ['a string for a flag', { oidcEnabled: 'true' }],
  ])('refuses %s with 400 and changes nothing', async (_label, body) => {
    const before = await get();
    problem(await put({ hasSupportAccess: true, ...body }), 400, 'VALIDATION_FAILED');
    expect(await get()).toEqual(before);
  });

  it('keeps each tenant’s settings to itself', async () => {
    await put({ oidcEnabled: true });
    const theirs = await t.request({ url: URL, key: other.admin.key, host: 'other.example.test' });
    expect(theirs.json().oidcEnabled).toBe(false);
    await put({ oidcEnabled: null });
  });
});
