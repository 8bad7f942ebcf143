import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';

interface AuditEvent {
  id: number;
  occurredAt: string;
  action: string;
  actorUserId: number | null;
  actorEmail: string | null;
  credentialKind: string | null;
  credentialId: string | null;
  method: string | null;
  route: string | null;
  target: Record<string, unknown>;
  status: number | null;
  requestId: string | null;
  details: Record<string, unknown>;
}
interface Page {
  items: AuditEvent[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

const EVENTS = '/api/v1/tenant/audit-events';
let seq = 0;
const unique = (prefix: string) => `${prefix}-${process.pid}-${++seq}`;

describe.each(DIALECTS)('audit log (%s)', (dialect) => {
  let t: TestApp;
  let developer: Caller;
  let other: { tenantId: number; admin: Caller };
  let deploymentId: number;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
    developer = await t.user('DEVELOPER');
    other = await t.tenant('other', ['other.example.test']);
    deploymentId = await t.deployment('audited');
  });
  afterAll(async () => t?.close());

  const setAudit = async (on: boolean) =>
    expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/settings', body: { auditLogEnabled: on } })).statusCode).toBe(200);
  const events = async (query = ''): Promise<Page> => {
    const res = await t.request({ url: `${EVENTS}${query}` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Page;
  };
  const newest = async () => (await events('?first=1')).items[0]!;
  const countAll = async () =>
    Number(
      (
        await t.store.db
          .selectFrom('audit_events')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('tenant_id', '=', t.tenantId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const createGroup = (key?: string) => t.request({ method: 'POST', url: '/api/v1/groups', body: { name: unique('g') }, ...(key ? { key } : {}) });

  it('records nothing while the audit log is off (the default)', async () => {
    const before = await countAll();
    expect((await createGroup()).statusCode).toBe(201);
    await t.request({ method: 'PUT', url: `/api/v1/deployments/${deploymentId}/env-vars`, body: { env_variables: [{ name: 'PLAIN', value: 'x' }] } });
    await t.request({ url: `/api/v1/deployments/${deploymentId}/env-vars` });
    expect(await countAll()).toBe(before);
  });

  it('records switching the log on, then every mutating request with actor, credential, route, target, outcome and request id', async () => {
    await setAudit(true);
    const switched = (await events('?action=audit-log.enabled')).items[0]!;
    expect(switched).toMatchObject({ action: 'audit-log.enabled', actorUserId: t.admin.userId });

    const res = await t.request({
      method: 'PUT',
      url: `/api/v1/deployments/${deploymentId}/env-vars`,
      body: { env_variables: [{ name: 'REGION', value: 'eu' }] },
      headers: { 'x-request-id': 'audit-request-1' },
    });
    expect(res.statusCode).toBe(200);
    const keyRow = await t.store.db.selectFrom('api_keys').select('id').where('user_id', '=', t.admin.userId).executeTakeFirstOrThrow();
    const event = await newest();
    expect(event).toEqual({
      id: expect.any(Number),
      occurredAt: expect.any(String),
      action: 'request',
      actorUserId: t.admin.userId,
      actorEmail: t.admin.email,
      credentialKind: 'api-key',
      credentialId: String(keyRow.id),
      method: 'PUT',
      route: '/api/v1/deployments/:deploymentId/env-vars',
      target: { deploymentId },
      status: 200,
      requestId: 'audit-request-1',
      details: {},
    });
    expect(new Date(event.occurredAt).toISOString()).toBe(event.occurredAt);
  });

  it('records refused and invalid requests with their status, and no reads', async () => {
    await setAudit(true);
    problem(await createGroup(developer.key), 403, 'FORBIDDEN');
    expect(await newest()).toMatchObject({ method: 'POST', route: '/api/v1/groups', status: 403, actorUserId: developer.userId });
    problem(await t.request({ method: 'POST', url: '/api/v1/groups', body: { name: 12 } }), 400, 'VALIDATION_FAILED');
    expect(await newest()).toMatchObject({ method: 'POST', route: '/api/v1/groups', status: 400, actorUserId: t.admin.userId });
    const before = await countAll();
    await t.request({ url: '/api/v1/groups' });
    await t.request({ url: `/api/v1/deployments/${deploymentId}` });
    expect(await countAll()).toBe(before);
  });

  it('records env-var reads and data-API token issuance as events of their own, without values or tokens', async () => {
    await setAudit(true);
    const secret = 'hunter2-value-never-logged';
    await t.request({
      method: 'PUT',
      url: `/api/v1/deployments/${deploymentId}/env-vars`,
      body: {
        env_variables: [
          { name: 'DB_PASSWORD', value: secret },
          { name: 'PLAIN_VALUE', value: secret },
        ],
      },
    });
    const read = await t.request({ url: `/api/v1/deployments/${deploymentId}/env-vars` });
    expect(read.body).toContain(secret);
    expect(await newest()).toMatchObject({
      action: 'env-vars.read',
      target: { deploymentId },
      actorUserId: t.admin.userId,
      method: null,
      route: null,
      details: { count: expect.any(Number) },
    });

    const minted = await t.request({ method: 'POST', url: `/api/v1/deployments/${deploymentId}/token` });
    expect(minted.statusCode, minted.body).toBe(200);
    const token = (minted.json() as { platformApiToken: string }).platformApiToken;
    const issued = (await events('?action=token.issued')).items[0]!;
    expect(issued).toMatchObject({
      action: 'token.issued',
      target: { deploymentId, environmentId: 'production' },
      details: { kind: 'deployment+jwt', jti: expect.any(String), expiresAt: expect.any(String) },
    });

    const env = await t.request({
      method: 'POST',
      url: `/api/v1/deployments/${deploymentId}/environments/production/tokens`,
      body: { security_context: {}, scopes: ['meta'] },
    });
    expect(env.statusCode, env.body).toBe(200);
    const envToken = (env.json() as { data: { token: string } }).data.token;
    expect((await events('?action=token.issued')).items[0]).toMatchObject({ details: { kind: 'environment+jwt', scopes: 'meta' } });

    const everything = JSON.stringify(await t.store.db.selectFrom('audit_events').selectAll().execute());
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain(token);
    expect(everything).not.toContain(envToken);
    expect(everything).not.toContain(t.admin.key);
  });

  it('stops recording when switched off, and records the switch', async () => {
    await setAudit(true);
    await setAudit(false);
    expect((await newest()).action).toBe('audit-log.disabled');
    const before = await countAll();
    expect((await createGroup()).statusCode).toBe(201);
    await t.request({ url: `/api/v1/deployments/${deploymentId}/env-vars` });
    expect(await countAll()).toBe(before);
  });

  it('pages newest first with first/after, with no event twice or missed', async () => {
    await setAudit(true);
    for (let i = 0; i < 5; i++) expect((await createGroup()).statusCode).toBe(201);
    const all = (await events('?first=200&route=/api/v1/groups')).items;
    const seen: AuditEvent[] = [];
    let page = await events('?first=2&route=/api/v1/groups');
    expect(page.pageInfo.hasPreviousPage).toBe(false);
    seen.push(...page.items);
    while (page.pageInfo.hasNextPage) {
      page = await events(`?first=2&route=/api/v1/groups&after=${encodeURIComponent(page.pageInfo.endCursor!)}`);
      expect(page.pageInfo.hasPreviousPage).toBe(true);
      seen.push(...page.items);
    }
    expect(seen.map((e) => e.id)).toEqual(all.map((e) => e.id));
    expect(all.length).toBeGreaterThanOrEqual(5);
    expect([...all.map((e) => e.id)].sort((a, b) => b - a)).toEqual(all.map((e) => e.id));
    problem(await t.request({ url: `${EVENTS}?after=not-a-cursor` }), 400, 'INVALID_CURSOR');
  });

  it('filters by actor, action, method and time', async () => {
    await setAudit(true);
    expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/settings', body: { hasSupportAccess: true }, key: developer.key })).statusCode).toBe(403);
    const mine = (await events(`?actorUserId=${developer.userId}&first=200`)).items;
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((e) => e.actorUserId === developer.userId)).toBe(true);
    expect((await events('?action=request&method=PUT&first=200')).items.every((e) => e.method === 'PUT' && e.action === 'request')).toBe(true);
    const latest = await newest();
    expect((await events(`?since=${encodeURIComponent(latest.occurredAt)}`)).items.map((e) => e.id)).toContain(latest.id);
    expect((await events(`?until=${encodeURIComponent(new Date(Date.parse(latest.occurredAt) - 60_000).toISOString())}`)).items.map((e) => e.id)).not.toContain(
      latest.id,
    );
    problem(await t.request({ url: `${EVENTS}?since=yesterday` }), 400, 'VALIDATION_FAILED');
    problem(await t.request({ url: `${EVENTS}?method=GET` }), 400, 'VALIDATION_FAILED');
  });

  it('is readable by admins only, and each tenant reads its own', async () => {
    problem(await t.request({ url: EVENTS, key: developer.key }), 403, 'FORBIDDEN');
    const theirs = await t.request({ url: EVENTS, key: other.admin.key, host: 'other.example.test' });
    expect(theirs.statusCode).toBe(200);
    expect((theirs.json() as Page).items).toEqual([]);
  });

  it('keeps explicit events without a caller (sign-ins) only while on, never storing a secret-named fact', async () => {
    const audit = t.app.services.audit;
    const actor = { userId: developer.userId, email: developer.email, credentialKind: 'oidc', credentialId: null };
    await setAudit(false);
    const before = await countAll();
    await audit.recordFor(t.tenantId, actor, { action: 'sign-in', details: { method: 'oidc' } });
    expect(await countAll()).toBe(before);
    await setAudit(true);
    await audit.recordFor(
      t.tenantId,
      actor,
      { action: 'sign-in', target: { sessionId: 'abc-secret-session' }, details: { method: 'oidc', idToken: 'eyJ-secret', password: 'pw-secret' } },
      { requestId: 'sign-in-1' },
    );
    const event = await newest();
    expect(event).toMatchObject({ action: 'sign-in', actorUserId: developer.userId, credentialKind: 'oidc', requestId: 'sign-in-1' });
    expect(event.target).toEqual({ sessionId: '[REDACTED]' });
    expect(event.details).toEqual({ method: 'oidc', idToken: '[REDACTED]', password: '[REDACTED]' });
  });

  it('is append-only: the store refuses to change an event', async () => {
    await setAudit(true);
    const event = await newest();
    await expect(sql`update audit_events set action = 'forged' where id = ${event.id}`.execute(t.store.db)).rejects.toThrow(/append-only/);
    expect((await newest()).action).toBe(event.action);
  });
});
