import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { type MapiClient, type Notification, type NotificationRecipient } from '../src/node.js';
import { startSmtp, type TestSmtp } from '../../server/test/smtp-fixture.js';
import { startTestServer, Workspace, type TestServer } from './support.js';

/** client.notifications: the resource, its recipients (chunked past 1,000) and the deliveries history (reference 6). */
describe.each(STORE_INDEPENDENT)('notification helpers (%s)', (dialect) => {
  let server: TestServer;
  let client: MapiClient;
  let ws: Workspace;
  let smtp: TestSmtp;

  beforeAll(async () => {
    smtp = await startSmtp();
    server = await startTestServer(dialect, { env: { SMTP_HOST: '127.0.0.1', SMTP_PORT: String(smtp.port), SMTP_FROM: 'reports@example.com' } });
    client = server.client();
    ws = await Workspace.create(client);
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  it('creates, reads, lists, updates and deletes; adds more than 1,000 recipients in chunks and removes them', { timeout: 90_000 }, async () => {
    const d = ws.deploymentId;
    const published = await client.workbooks.publish(d, await ws.workbook(), { config: { widgets: [] } });
    const made = await client.notifications.create(d, {
      scheduleType: 'WEEKLY',
      minute: 0,
      hour: 9,
      dayOfWeek: 1,
      timezone: 'Europe/Berlin',
      dashboardPublicId: published.publicId,
    });
    expect(made).toMatchObject({
      dashboardId: published.id,
      cronExpression: '0 9 * * 1',
      humanReadableSchedule: 'Every Monday at 09:00 (Europe/Berlin)',
      notificationFormat: 'png',
      isEnabled: true,
    });
    expect(await client.notifications.get(d, made.id)).toEqual(made);
    const updated = await client.notifications.update(d, made.id, {
      isEnabled: false,
      filters: [{ member: 'orders.status', operator: 'equals', value: 'open' }],
    });
    expect(updated).toMatchObject({ isEnabled: false, nextRunAt: null, filters: [{ member: 'orders.status', operator: 'equals', value: 'open' }] });
    const listed: Notification[] = [];
    for await (const n of client.notifications.list(d, { dashboardId: published.id })) listed.push(n);
    expect(listed.map((n) => n.id)).toEqual([made.id]);

    const recipients = Array.from({ length: 1001 }, (_, i) => ({
      type: 'EMBED_USER' as const,
      embedTenantName: 'clients',
      externalId: `person-${i}@clients.example`,
    }));
    const added = await client.notifications.addRecipients(d, made.id, recipients);
    expect(added.createdRecipients).toHaveLength(1001);
    const again = await client.notifications.addRecipients(d, made.id, recipients.slice(0, 3));
    expect(again.unchangedRecipients.map((r) => r.externalId)).toEqual(['person-0@clients.example', 'person-1@clients.example', 'person-2@clients.example']);
    const read: NotificationRecipient[] = [];
    for await (const r of client.notifications.recipients(d, made.id)) read.push(r);
    expect(read).toHaveLength(1001);
    await client.notifications.removeRecipients(
      d,
      made.id,
      read.map((r) => ({ type: 'EMBED_USER' as const, id: r.embedUserId as number, embedTenantName: 'clients' })),
    );
    const left: NotificationRecipient[] = [];
    for await (const r of client.notifications.recipients(d, made.id)) left.push(r);
    expect(left).toEqual([]);
    const history: unknown[] = [];
    for await (const delivery of client.notifications.deliveries(d, made.id)) history.push(delivery);
    expect(history).toEqual([]);

    await client.notifications.delete(d, made.id);
    await expect(client.notifications.get(d, made.id)).rejects.toMatchObject({ status: 404, code: 'NOTIFICATION_NOT_FOUND' });
    await expect(client.notifications.addRecipients(d, published.id, [{ type: 'SLACK', channelId: 'C1' }])).rejects.toMatchObject({ status: 404 });
  });

  it(
    'sends a notification now: the queued delivery, followed in the history until the mail is out; nobody to mail is a typed 409',
    { timeout: 90_000 },
    async () => {
      const d = ws.deploymentId;
      const published = await client.workbooks.publish(d, await ws.workbook(), { config: { widgets: [] } });
      const made = await client.notifications.create(d, { scheduleType: 'DAILY', minute: 0, hour: 9, dashboardId: published.id });
      await expect(client.notifications.sendNow(d, made.id)).rejects.toMatchObject({ status: 409, code: 'NOTIFICATION_NO_RECIPIENTS' });

      await client.notifications.addRecipients(d, made.id, [{ type: 'EMBED_USER', embedTenantName: 'clients', externalId: 'now@clients.example' }]);
      const queued = await client.notifications.sendNow(d, made.id);
      expect(queued).toMatchObject({ notificationId: made.id, trigger: 'SEND_NOW', finishedAt: null });
      const seen: string[] = [];
      const done = await client.notifications.waitForDelivery(d, made.id, queued.id, { intervalMs: 50, onUpdate: (delivery) => seen.push(delivery.status) });
      expect(done).toMatchObject({ id: queued.id, trigger: 'SEND_NOW', status: 'succeeded' });
      expect(done.recipients).toMatchObject([{ email: 'now@clients.example', status: 'sent' }]);
      expect(seen.at(-1)).toBe('succeeded');
      expect(smtp.received.filter((m) => m.to.includes('now@clients.example'))).toHaveLength(1);
      expect((await client.notifications.get(d, made.id)).nextRunAt).toBe(made.nextRunAt);
    },
  );
});
