import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOT_SENT_NO_SMTP } from '../src/areas/notifications/deliver.js';
import { DIALECTS, TestApp, problem } from './harness.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

describe.each(DIALECTS)('notifications (%s)', (dialect) => {
  let t: TestApp;
  let deploymentId: number;
  let dashboard: { id: number; publicId: string };
  let seq = 0;
  // The clock of the schedules: each test sets it.
  let clock = new Date('2026-06-01T08:00:00Z');

  beforeAll(async () => {
    t = await TestApp.create(dialect, { now: () => clock });
    deploymentId = await t.deployment('notifications');
    dashboard = await publish(deploymentId);
  });
  afterAll(async () => t?.close());

  async function publish(d: number, tenant?: { tenantId: number; key: string }): Promise<{ id: number; publicId: string }> {
    const workbookId = await new WorkspaceFixtures(tenant ? { store: t.store, tenantId: tenant.tenantId } : t, d).workbook(`wb-${++seq}`);
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/deployments/${d}/workbooks/${workbookId}/publish`,
      body: { config: { widgets: [] } },
      ...(tenant ? { key: tenant.key } : {}),
    });
    expect(res.statusCode, res.body).toBe(200);
    return { id: res.json().id, publicId: res.json().publicId };
  }

  const base = (d = deploymentId) => `/api/v1/deployments/${d}/notifications`;
  const create = (body: unknown, key?: string, d = deploymentId) => t.request({ method: 'POST', url: base(d), body, key });
  const daily = (extra: Record<string, unknown> = {}) => ({ scheduleType: 'DAILY', minute: 0, hour: 9, dashboardId: dashboard.id, ...extra });
  const made = async (body: unknown) => {
    const res = await create(body);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const recipients = (id: number, method: 'GET' | 'POST' | 'DELETE', body?: unknown, query = '') =>
    t.request({ method, url: `${base()}/${id}/recipients${query}`, body });

  describe('the resource', () => {
    it('creates with the documented defaults: on, png, mails on, no AI summary, UTC; the schedule compiled, described, and its next run', async () => {
      clock = new Date('2026-06-01T08:00:00Z');
      const n = await made(daily());
      expect(n).toEqual({
        id: expect.any(Number),
        dashboardId: dashboard.id,
        deploymentId,
        cronExpression: '0 9 * * *',
        timezone: 'UTC',
        isEnabled: true,
        humanReadableSchedule: 'Every day at 09:00 (UTC)',
        notificationEnabled: true,
        notificationFormat: 'png',
        notificationAiSummary: false,
        filters: null,
        timeGrains: null,
        memberSwitchers: null,
        nextRunAt: '2026-06-01T09:00:00.000Z',
      });
      expect((await t.request({ url: `${base()}/${n.id}` })).json()).toEqual(n);
      // By public id, in a zone, with everything set.
      const full = await made({
        scheduleType: 'WEEKLY',
        minute: 30,
        hour: 7,
        dayOfWeek: 1,
        timezone: 'europe/berlin',
        dashboardPublicId: dashboard.publicId,
        notificationFormat: 'pdf',
        notificationEnabled: false,
        notificationAiSummary: true,
        filters: [
          { member: 'orders.status', operator: 'equals', value: 'shipped' },
          { member: 'orders.amount', operator: 'between', value: [1, 10] },
        ],
        timeGrains: [{ member: 'orders.created_at', grain: 'week' }],
        memberSwitchers: [{ member: 'orders.count', selected: 'total_amount' }],
      });
      expect(full).toMatchObject({
        dashboardId: dashboard.id,
        cronExpression: '30 7 * * 1',
        timezone: 'Europe/Berlin',
        humanReadableSchedule: 'Every Monday at 07:30 (Europe/Berlin)',
        notificationFormat: 'pdf',
        notificationEnabled: false,
        notificationAiSummary: true,
        filters: [
          { member: 'orders.status', operator: 'equals', value: 'shipped' },
          { member: 'orders.amount', operator: 'between', value: [1, 10] },
        ],
        timeGrains: [{ member: 'orders.created_at', grain: 'week' }],
        memberSwitchers: [{ member: 'orders.count', selected: 'total_amount' }],
        // 1 June 2026 is a Monday, and 07:30 in Berlin (05:30 UTC) was before the clock's 08:00 UTC.
        nextRunAt: '2026-06-08T05:30:00.000Z',
      });
      // A new notification has no recipients.
      expect((await recipients(full.id, 'GET')).json().items).toEqual([]);
    });

    it('a field its scheduleType needs is a 400 naming it; a bad cron, zone, filter or dashboard choice is a 400 too', async () => {
      const missing = async (body: Record<string, unknown>, field: string) => {
        const p = problem(await create({ dashboardId: dashboard.id, ...body }), 400, 'VALIDATION_FAILED');
        expect(p.errors).toEqual([{ pointer: `/body/${field}`, message: expect.stringContaining('is required') }]);
        expect(p.detail).toContain(field);
      };
      await missing({ scheduleType: 'HOURLY' }, 'minute');
      await missing({ scheduleType: 'DAILY', minute: 0 }, 'hour');
      await missing({ scheduleType: 'WEEKLY', minute: 0, hour: 9 }, 'dayOfWeek');
      await missing({ scheduleType: 'MONTHLY', minute: 0, hour: 9 }, 'dayOfMonth');
      await missing({ scheduleType: 'CUSTOM', minute: 0 }, 'customCron');
      expect(problem(await create(daily({ scheduleType: 'CUSTOM', customCron: '61 * * * *' })), 400).errors).toEqual([
        { pointer: '/body/customCron', message: 'is not a cron expression' },
      ]);
      expect(problem(await create(daily({ timezone: 'Mars/Olympus' })), 400).errors).toEqual([
        { pointer: '/body/timezone', message: 'is not an IANA time zone' },
      ]);
      problem(await create(daily({ timezone: '+02:00' })), 400, 'VALIDATION_FAILED');
      problem(await create(daily({ hour: 24 })), 400, 'VALIDATION_FAILED');
      problem(await create(daily({ dayOfWeek: 7 })), 400, 'VALIDATION_FAILED');
      problem(await create(daily({ dashboardPublicId: dashboard.publicId })), 400, 'VALIDATION_FAILED');
      problem(await create(daily({ dashboardId: null })), 400, 'VALIDATION_FAILED');
      problem(await create(daily({ notificationFormat: 'gif' })), 400, 'VALIDATION_FAILED');
      problem(await create(daily({ filters: [{ member: 'nodot', operator: 'equals', value: 1 }] })), 400, 'VALIDATION_FAILED');
      expect(problem(await create(daily({ filters: [{ member: 'a.b', operator: 'between', value: 3 }] })), 400).errors).toEqual([
        { pointer: '/body/filters/0/value', message: 'must be [start, end] for between' },
      ]);
      problem(await create(daily({ timeGrains: [{ member: 'a.b', grain: 'fortnight' }] })), 400, 'VALIDATION_FAILED');
      problem(await create(daily({ unknown: 1 })), 400, 'VALIDATION_FAILED');
      problem(await create(daily({ dashboardId: 999_999 })), 404, 'DASHBOARD_NOT_FOUND');
      problem(await create(daily({ dashboardId: null, dashboardPublicId: 'nope' })), 404, 'DASHBOARD_NOT_FOUND');
      // A dashboard of another deployment is not this deployment's.
      const other = await t.deployment('other-dashboards');
      const elsewhere = await publish(other);
      problem(await create(daily({ dashboardId: elsewhere.id })), 404, 'DASHBOARD_NOT_FOUND');
    });

    it('an update keeps what it leaves out, replaces the filter sets it sends (null clears), recompiles the schedule, and switches it', async () => {
      clock = new Date('2026-06-01T08:00:00Z');
      const n = await made(daily({ filters: [{ member: 'a.b', operator: 'equals', value: 1 }], timeGrains: [{ member: 'a.t', grain: 'day' }] }));
      const put = (body: unknown) => t.request({ method: 'PUT', url: `${base()}/${n.id}`, body });
      let res = await put({ filters: [{ member: 'c.d', operator: 'is_null' }], notificationFormat: 'pdf' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({
        cronExpression: '0 9 * * *',
        notificationFormat: 'pdf',
        filters: [{ member: 'c.d', operator: 'is_null' }],
        timeGrains: [{ member: 'a.t', grain: 'day' }],
      });
      res = await put({ timeGrains: null, memberSwitchers: [], minute: 15 });
      expect(res.json()).toMatchObject({
        cronExpression: '15 9 * * *',
        timeGrains: null,
        memberSwitchers: [],
        filters: [{ member: 'c.d', operator: 'is_null' }],
        nextRunAt: '2026-06-01T09:15:00.000Z',
      });
      // Another type needs its own fields; what it had stays usable.
      expect(problem(await put({ scheduleType: 'WEEKLY' }), 400).errors).toEqual([
        { pointer: '/body/dayOfWeek', message: expect.stringContaining('is required') },
      ]);
      res = await put({ scheduleType: 'WEEKLY', dayOfWeek: 3, timezone: 'America/New_York' });
      expect(res.json()).toMatchObject({
        cronExpression: '15 9 * * 3',
        timezone: 'America/New_York',
        humanReadableSchedule: 'Every Wednesday at 09:15 (America/New_York)',
        nextRunAt: '2026-06-03T13:15:00.000Z',
      });
      res = await put({ scheduleType: 'CUSTOM', customCron: '0 6 1 1 *' });
      expect(res.json()).toMatchObject({ cronExpression: '0 6 1 1 *', humanReadableSchedule: expect.stringContaining('(America/New_York)') });
      res = await put({ isEnabled: false });
      expect(res.json()).toMatchObject({ isEnabled: false, nextRunAt: null });
      clock = new Date('2027-02-01T00:00:00Z');
      res = await put({ isEnabled: true, scheduleType: null, notificationEnabled: false });
      expect(res.json()).toMatchObject({ isEnabled: true, notificationEnabled: false, cronExpression: '0 6 1 1 *', nextRunAt: '2028-01-01T11:00:00.000Z' });
      expect((await t.request({ url: `${base()}/${n.id}` })).json()).toEqual(res.json());
      problem(await put({ dashboardId: 5 }), 400, 'VALIDATION_FAILED');
      problem(await t.request({ method: 'PUT', url: `${base()}/999999`, body: {} }), 404, 'NOTIFICATION_NOT_FOUND');
    });

    it('deletes with its recipients; afterwards it is a 404', async () => {
      const n = await made(daily());
      expect((await recipients(n.id, 'POST', { recipients: [{ type: 'USER', userId: t.admin.userId }] })).statusCode).toBe(200);
      const res = await t.request({ method: 'DELETE', url: `${base()}/${n.id}` });
      expect(res.statusCode).toBe(204);
      problem(await t.request({ url: `${base()}/${n.id}` }), 404, 'NOTIFICATION_NOT_FOUND');
      problem(await t.request({ method: 'DELETE', url: `${base()}/${n.id}` }), 404, 'NOTIFICATION_NOT_FOUND');
      expect(await t.store.db.selectFrom('notification_recipients').select('id').where('notification_id', '=', n.id).execute()).toEqual([]);
    });
  });

  describe('recipients', () => {
    it('adds console users by id or email and embed users (provisioned); a second add is unchanged; changed embed properties are updated', async () => {
      const n = await made(daily());
      const ann = await t.user('VIEWER', { email: `ann-${dialect}@example.com` });
      const group = `Sales-${dialect}`;
      await t.group(group);
      let res = await recipients(n.id, 'POST', {
        recipients: [
          { type: 'USER', userId: t.admin.userId },
          { type: 'USER', email: ann.email.toUpperCase() },
          { type: 'EMBED_USER', embedTenantName: 'Acme', externalId: 'Bob@Acme.example' },
          { type: 'EMBED_USER', embedTenantName: 'acme', externalId: 'u-7', email: 'carol@acme.example', groups: [group], securityContext: { region: 'EU' } },
        ],
      });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.updatedRecipients).toEqual([]);
      expect(body.unchangedRecipients).toEqual([]);
      expect(body.createdRecipients).toEqual([
        { type: 'USER', userId: t.admin.userId, email: t.admin.email },
        { type: 'USER', userId: ann.userId, email: ann.email },
        {
          type: 'EMBED_USER',
          embedUserId: expect.any(Number),
          embedTenantName: 'acme',
          externalId: 'bob@acme.example',
          username: 'bob@acme.example',
          email: 'bob@acme.example',
        },
        { type: 'EMBED_USER', embedUserId: expect.any(Number), embedTenantName: 'acme', externalId: 'u-7', username: 'u-7', email: 'carol@acme.example' },
      ]);
      // Idempotent.
      res = await recipients(n.id, 'POST', {
        recipients: [
          { type: 'USER', email: ann.email },
          { type: 'EMBED_USER', embedTenantName: 'acme', externalId: 'u-7', email: 'carol@acme.example', groups: [group], securityContext: { region: 'EU' } },
        ],
      });
      expect(res.json()).toMatchObject({ createdRecipients: [], updatedRecipients: [], unchangedRecipients: [{ userId: ann.userId }, { externalId: 'u-7' }] });
      // The embed user's groups, or the recipient's security context, changed: updated.
      res = await recipients(n.id, 'POST', {
        recipients: [{ type: 'EMBED_USER', embedTenantName: 'acme', externalId: 'u-7', email: 'carol@acme.example', groups: [] }],
      });
      expect(res.json()).toMatchObject({ updatedRecipients: [{ externalId: 'u-7' }], createdRecipients: [], unchangedRecipients: [] });
      res = await recipients(n.id, 'POST', {
        recipients: [{ type: 'EMBED_USER', embedTenantName: 'acme', externalId: 'u-7', securityContext: { region: 'US' } }],
      });
      expect(res.json()).toMatchObject({ updatedRecipients: [{ externalId: 'u-7', email: 'carol@acme.example' }] });

      // Newest first, paginated.
      const page1 = (await recipients(n.id, 'GET', undefined, '?first=3')).json();
      expect(page1.items.map((r: { type: string; externalId?: string; userId?: number }) => r.externalId ?? r.userId)).toEqual([
        'u-7',
        'bob@acme.example',
        ann.userId,
      ]);
      expect(page1.pageInfo.hasNextPage).toBe(true);
      const page2 = (await recipients(n.id, 'GET', undefined, `?first=3&after=${page1.pageInfo.endCursor}`)).json();
      expect(page2.items).toEqual([{ type: 'USER', userId: t.admin.userId, email: t.admin.email }]);
      expect(page2.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
      problem(await recipients(n.id, 'GET', undefined, '?after=garbage'), 400, 'INVALID_CURSOR');

      // Remove: by userId, by embedUserId with its embed tenant; one not subscribed does nothing.
      const bob = page1.items[1].embedUserId as number;
      res = await recipients(n.id, 'DELETE', {
        recipients: [
          { type: 'USER', id: ann.userId },
          { type: 'EMBED_USER', id: bob, embedTenantName: 'ACME' },
          { type: 'USER', id: 424242 },
          { type: 'SLACK', id: 'C1' },
        ],
      });
      expect(res.statusCode, res.body).toBe(204);
      expect((await recipients(n.id, 'GET')).json().items.map((r: { externalId?: string; userId?: number }) => r.externalId ?? r.userId)).toEqual([
        'u-7',
        t.admin.userId,
      ]);
      expect(problem(await recipients(n.id, 'DELETE', { recipients: [{ type: 'EMBED_USER', id: bob }] }), 400).errors).toEqual([
        { pointer: '/body/recipients/0/embedTenantName', message: 'is required for EMBED_USER' },
      ]);
      problem(await recipients(n.id, 'DELETE', { recipients: [] }), 400, 'VALIDATION_FAILED');
    });

    it('SLACK, or any recipient without an email, refuses the whole request before anything is written', async () => {
      const n = await made(daily());
      let p = problem(
        await recipients(n.id, 'POST', {
          recipients: [
            { type: 'USER', userId: t.admin.userId },
            { type: 'SLACK', channelId: 'C1', channelName: '#sales' },
          ],
        }),
        400,
        'VALIDATION_FAILED',
      );
      expect(p.errors).toEqual([{ pointer: '/body/recipients/1/type', message: 'SLACK recipients are not supported yet' }]);
      p = problem(
        await recipients(n.id, 'POST', {
          recipients: [
            { type: 'USER', userId: t.admin.userId },
            { type: 'EMBED_USER', embedTenantName: 'globex', externalId: 'no-email-here' },
            { type: 'USER', email: 'nobody@example.com' },
            { type: 'USER' },
            { type: 'EMBED_USER', externalId: 'x@y.example' },
          ],
        }),
        400,
        'VALIDATION_FAILED',
      );
      expect(p.errors?.map((e) => e.pointer)).toEqual([
        '/body/recipients/1/email',
        '/body/recipients/2/email',
        '/body/recipients/3',
        '/body/recipients/4/embedTenantName',
      ]);
      expect((await recipients(n.id, 'GET')).json().items).toEqual([]);
      // The embed user was not provisioned either.
      expect(await t.store.db.selectFrom('embed_tenants').select('id').where('tenant_id', '=', t.tenantId).where('name', '=', 'globex').execute()).toEqual([]);
      // An unknown group is a 400 from provisioning, and rolls the whole request back.
      problem(
        await recipients(n.id, 'POST', {
          recipients: [
            { type: 'USER', userId: t.admin.userId },
            { type: 'EMBED_USER', embedTenantName: 'globex', externalId: 'a@globex.example', groups: ['No such group'] },
          ],
        }),
        400,
        'GROUPS_NOT_FOUND',
      );
      expect((await recipients(n.id, 'GET')).json().items).toEqual([]);
      problem(await recipients(n.id, 'POST', { recipients: [] }), 400, 'VALIDATION_FAILED');
      problem(
        await recipients(n.id, 'POST', { recipients: Array.from({ length: 1001 }, () => ({ type: 'USER', userId: t.admin.userId })) }),
        400,
        'VALIDATION_FAILED',
      );
      problem(
        await t.request({ method: 'POST', url: `${base()}/999999/recipients`, body: { recipients: [{ type: 'USER', userId: t.admin.userId }] } }),
        404,
        'NOTIFICATION_NOT_FOUND',
      );
    });
  });

  describe('the list', () => {
    it('is newest first with cursor pages, filtered by dashboard or by one recipient form; conflicting filters are a 400', async () => {
      const d = await t.deployment('listing');
      const one = await publish(d);
      const two = await publish(d);
      const mk = async (dash: number) => {
        const res = await create({ scheduleType: 'HOURLY', minute: 5, dashboardId: dash }, undefined, d);
        expect(res.statusCode, res.body).toBe(200);
        return res.json().id as number;
      };
      const a = await mk(one.id);
      const b = await mk(two.id);
      const c = await mk(one.id);
      const list = async (query: string) => {
        const res = await t.request({ url: `${base(d)}${query}` });
        expect(res.statusCode, res.body).toBe(200);
        return res.json();
      };
      const ids = (page: { items: Array<{ id: number }> }) => page.items.map((n) => n.id);
      expect(ids(await list(''))).toEqual([c, b, a]);
      const first = await list('?first=2');
      expect(ids(first)).toEqual([c, b]);
      expect(ids(await list(`?first=2&after=${first.pageInfo.endCursor}`))).toEqual([a]);
      expect(ids(await list(`?dashboardId=${one.id}`))).toEqual([c, a]);
      expect(ids(await list(`?dashboardPublicId=${two.publicId}`))).toEqual([b]);
      expect(ids(await list(`?dashboardPublicId=${dashboard.publicId}`))).toEqual([]);

      const ann = await t.user('VIEWER');
      await t.request({ method: 'POST', url: `${base(d)}/${a}/recipients`, body: { recipients: [{ type: 'USER', userId: ann.userId }] } });
      await t.request({
        method: 'POST',
        url: `${base(d)}/${b}/recipients`,
        body: { recipients: [{ type: 'EMBED_USER', embedTenantName: 'initech', externalId: 'pat@initech.example' }] },
      });
      expect(ids(await list(`?recipientUserId=${ann.userId}`))).toEqual([a]);
      expect(ids(await list(`?recipientEmail=${encodeURIComponent(ann.email.toUpperCase())}`))).toEqual([a]);
      expect(ids(await list('?recipientEmbedTenantName=Initech&recipientExternalId=PAT@initech.example'))).toEqual([b]);
      expect(ids(await list('?recipientEmail=nobody@example.com'))).toEqual([]);

      problem(await t.request({ url: `${base(d)}?dashboardId=${one.id}&dashboardPublicId=${one.publicId}` }), 400, 'VALIDATION_FAILED');
      problem(await t.request({ url: `${base(d)}?recipientUserId=${ann.userId}&recipientEmail=x@example.com` }), 400, 'VALIDATION_FAILED');
      expect(problem(await t.request({ url: `${base(d)}?recipientEmbedTenantName=initech` }), 400).errors).toEqual([
        { pointer: '/query/recipientExternalId', message: expect.any(String) },
      ]);
      problem(await t.request({ url: `${base(d)}?after=bogus` }), 400, 'INVALID_CURSOR');
    });
  });

  describe('access', () => {
    it('admins only; a key scoped elsewhere is refused; another tenant’s deployment, and another deployment’s notification, are not found', async () => {
      const n = await made(daily());
      const developer = await t.user('DEVELOPER');
      await t.grant({ type: 'USER', id: developer.userId }, { type: 'DEPLOYMENT', id: deploymentId }, 'MANAGE');
      const calls = (key?: string, d = deploymentId, id = n.id) => [
        t.request({ url: base(d), key }),
        t.request({ method: 'POST', url: base(d), body: daily(), key }),
        t.request({ url: `${base(d)}/${id}`, key }),
        t.request({ method: 'PUT', url: `${base(d)}/${id}`, body: { minute: 1 }, key }),
        t.request({ url: `${base(d)}/${id}/recipients`, key }),
        t.request({ method: 'POST', url: `${base(d)}/${id}/recipients`, body: { recipients: [{ type: 'USER', userId: 1 }] }, key }),
        t.request({ method: 'DELETE', url: `${base(d)}/${id}/recipients`, body: { recipients: [{ type: 'USER', id: 1 }] }, key }),
        t.request({ url: `${base(d)}/${id}/deliveries`, key }),
        t.request({ method: 'DELETE', url: `${base(d)}/${id}`, key }),
      ];
      for (const res of await Promise.all(calls(developer.key))) problem(res, 403, 'FORBIDDEN');
      const elsewhere = await t.deployment('scoped-elsewhere');
      const scoped = await t.key(t.admin.userId, { deploymentIds: [elsewhere] });
      for (const res of await Promise.all(calls(scoped))) problem(res, 403, 'KEY_SCOPE_FORBIDDEN');
      // A key scoped to this deployment works.
      const mine = await t.key(t.admin.userId, { deploymentIds: [deploymentId] });
      expect((await t.request({ url: `${base()}/${n.id}`, key: mine })).statusCode).toBe(200);

      const other = await t.tenant(`notifications-${dialect}`);
      const foreign = await t.deployment('foreign', { tenantId: other.tenantId });
      for (const res of await Promise.all(calls(undefined, foreign))) problem(res, 404, 'DEPLOYMENT_NOT_FOUND');
      // A notification is found only under its own deployment.
      const second = await t.deployment('second');
      problem(await t.request({ url: `${base(second)}/${n.id}` }), 404, 'NOTIFICATION_NOT_FOUND');
      problem(await t.request({ method: 'DELETE', url: `${base(second)}/${n.id}` }), 404, 'NOTIFICATION_NOT_FOUND');
      expect((await t.request({ url: `${base()}/${n.id}` })).statusCode).toBe(200);
    });
  });

  describe('the schedule', () => {
    const scheduler = () => t.app.services.notificationScheduler;
    const deliveries = async (id: number) => {
      const res = await t.request({ url: `${base()}/${id}/deliveries` });
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    };

    it('claims each due occurrence once, records a pending row per recipient, and its job renders for each and, with no SMTP server configured, records why nothing was sent', async () => {
      clock = new Date('2026-07-01T08:00:00Z');
      const n = await made(daily());
      const ann = await t.user('VIEWER');
      await recipients(n.id, 'POST', {
        recipients: [
          { type: 'USER', userId: ann.userId },
          { type: 'EMBED_USER', embedTenantName: 'acme', externalId: 'dan@acme.example', securityContext: { region: 'EU' } },
        ],
      });
      clock = new Date('2026-07-01T08:59:59Z');
      await scheduler().tick();
      expect((await deliveries(n.id)).items).toEqual([]);

      clock = new Date('2026-07-01T09:00:02Z');
      await scheduler().tick();
      await scheduler().tick();
      const history = await deliveries(n.id);
      expect(history.items).toHaveLength(1);
      const [delivery] = history.items;
      expect(delivery).toMatchObject({
        notificationId: n.id,
        scheduledFor: '2026-07-01T09:00:00.000Z',
        claimedAt: '2026-07-01T09:00:02.000Z',
        send: true,
        format: 'png',
        jobId: expect.any(Number),
      });
      expect((await t.request({ url: `${base()}/${n.id}` })).json().nextRunAt).toBe('2026-07-02T09:00:00.000Z');

      const job = await t.app.services.jobs.waitFor(t.tenantId, delivery.jobId);
      expect(job.state).toBe('succeeded');
      const done = (await deliveries(n.id)).items[0];
      expect(done).toMatchObject({ status: 'succeeded', message: `${NOT_SENT_NO_SMTP} (2 of 2 recipient(s) rendered)`, finishedAt: expect.any(String) });
      expect(done.recipients).toEqual([
        {
          type: 'USER',
          userId: ann.userId,
          embedUserId: null,
          email: ann.email,
          status: 'skipped',
          attempts: 0,
          lastError: NOT_SENT_NO_SMTP,
          updatedAt: expect.any(String),
        },
        {
          type: 'EMBED_USER',
          userId: null,
          embedUserId: expect.any(Number),
          email: 'dan@acme.example',
          status: 'skipped',
          attempts: 0,
          lastError: NOT_SENT_NO_SMTP,
          updatedAt: expect.any(String),
        },
      ]);

      // Away for three days: the newest missed occurrence is delivered, once.
      clock = new Date('2026-07-04T10:00:00Z');
      await scheduler().tick();
      expect((await deliveries(n.id)).items.map((d: { scheduledFor: string }) => d.scheduledFor)).toEqual([
        '2026-07-04T09:00:00.000Z',
        '2026-07-01T09:00:00.000Z',
      ]);
    });

    it('a switched-off schedule claims nothing; notificationEnabled false still records a delivery, marked as sending nothing', async () => {
      clock = new Date('2026-08-01T08:00:00Z');
      const off = await made(daily());
      const quiet = await made(daily({ notificationEnabled: false, notificationFormat: 'pdf' }));
      await t.request({ method: 'PUT', url: `${base()}/${off.id}`, body: { isEnabled: false } });
      clock = new Date('2026-08-01T09:00:01Z');
      await scheduler().tick();
      expect((await deliveries(off.id)).items).toEqual([]);
      expect((await deliveries(quiet.id)).items).toMatchObject([{ send: false, format: 'pdf', scheduledFor: '2026-08-01T09:00:00.000Z' }]);
    });

    it('a delivery claimed by a process that stopped before enqueueing it gets a job from the next loop after a minute, and runs once', async () => {
      clock = new Date('2026-09-01T08:00:00Z');
      const n = await made(daily());
      const claimedAt = '2026-09-01T09:00:00.000Z';
      const orphan = await t.store.db
        .insertInto('notification_deliveries')
        .values({
          tenant_id: t.tenantId,
          notification_id: n.id,
          scheduled_for: claimedAt,
          claimed_at: claimedAt,
          claimed_by: 'a process that died',
          job_id: null,
          status: 'pending',
          send: 1,
          format: 'png',
          message: null,
          finished_at: null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      // Not yet a minute: it may still be enqueued by its own process.
      clock = new Date('2026-09-01T09:00:30Z');
      await scheduler().tick();
      expect((await deliveries(n.id)).items.find((d: { id: number }) => d.id === orphan.id)).toMatchObject({ status: 'pending', jobId: null });
      clock = new Date('2026-09-01T09:01:30Z');
      await scheduler().tick();
      const picked = (await deliveries(n.id)).items.find((d: { id: number }) => d.id === orphan.id);
      expect(picked.jobId).toEqual(expect.any(Number));
      await t.app.services.jobs.waitFor(t.tenantId, picked.jobId);
      await scheduler().tick();
      expect((await deliveries(n.id)).items.find((d: { id: number }) => d.id === orphan.id)).toMatchObject({
        status: 'succeeded',
        jobId: picked.jobId,
        message: `${NOT_SENT_NO_SMTP} (0 of 0 recipient(s) rendered)`,
      });
      const jobs = await t.store.db.selectFrom('jobs').select('payload').where('kind', '=', 'notification-delivery').execute();
      expect(jobs.filter((j) => (JSON.parse(j.payload) as { deliveryId: number }).deliveryId === orphan.id)).toHaveLength(1);
    });

    it('through both daylight-saving transitions, a daily 02:30 in Europe/Berlin is delivered once a day', async () => {
      const tickHourly = async (from: string, hours: number) => {
        for (let h = 0; h <= hours; h++) {
          for (const minute of [0, 29, 31, 59]) {
            clock = new Date(new Date(from).getTime() + h * 3_600_000 + minute * 60_000);
            await scheduler().tick();
          }
        }
      };
      clock = new Date('2026-03-28T12:00:00Z');
      const n = await made(daily({ minute: 30, hour: 2, timezone: 'Europe/Berlin' }));
      await tickHourly('2026-03-28T12:00:00Z', 48);
      expect((await deliveries(n.id)).items.map((d: { scheduledFor: string }) => d.scheduledFor)).toEqual([
        '2026-03-30T00:30:00.000Z',
        '2026-03-29T01:00:00.000Z',
      ]);

      clock = new Date('2026-10-24T12:00:00Z');
      const fall = await made(daily({ minute: 30, hour: 2, timezone: 'Europe/Berlin' }));
      await tickHourly('2026-10-24T12:00:00Z', 48);
      expect((await deliveries(fall.id)).items.map((d: { scheduledFor: string }) => d.scheduledFor)).toEqual([
        '2026-10-26T01:30:00.000Z',
        '2026-10-25T00:30:00.000Z',
      ]);
    });
  });
});
