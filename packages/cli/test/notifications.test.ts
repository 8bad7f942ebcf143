import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { startSmtp, type TestSmtp } from '../../server/test/smtp-fixture.js';
import { parseRecipient, parseRecipientRef } from '../src/commands/notifications.js';
import { isolatedEnv, runCli, serverVars, show, startTestServer, type TestServer } from './helpers.js';

/** `mapi notifications …` against a real server. */

describe('recipient arguments', () => {
  it('reads user:<id>, user:<email> and embed:<tenant>/<externalId>[=<email>]; removals name ids', () => {
    expect(parseRecipient('user:12')).toEqual({ type: 'USER', userId: 12 });
    expect(parseRecipient('user:ann@example.com')).toEqual({ type: 'USER', email: 'ann@example.com' });
    expect(parseRecipient('embed:acme/u-1=bo@acme.example')).toEqual({
      type: 'EMBED_USER',
      embedTenantName: 'acme',
      externalId: 'u-1',
      email: 'bo@acme.example',
    });
    expect(parseRecipient('embed:acme/cy@acme.example')).toEqual({ type: 'EMBED_USER', embedTenantName: 'acme', externalId: 'cy@acme.example' });
    expect(() => parseRecipient('slack:C1')).toThrow(/not a recipient/);
    expect(() => parseRecipient('embed:acme')).toThrow(/not a recipient/);
    expect(parseRecipientRef('embed:acme/40')).toEqual({ type: 'EMBED_USER', embedTenantName: 'acme', id: 40 });
    expect(() => parseRecipientRef('user:ann@example.com')).toThrow(/does not name/);
  });
});

describe.each(STORE_INDEPENDENT)('mapi notifications (%s)', (dialect) => {
  let server: TestServer;
  let env: Record<string, string>;
  let d: number;
  let dashboardId: number;
  let smtp: TestSmtp;

  beforeAll(async () => {
    smtp = await startSmtp();
    // One try per mail, so a refused one fails its delivery at once.
    server = await startTestServer(dialect, {
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(smtp.port),
      SMTP_FROM: 'reports@example.com',
      NOTIFICATION_SEND_ATTEMPTS: '1',
    });
    env = isolatedEnv(serverVars(server));
    d = await server.deployment(`Notifications ${dialect}`);
    const wb = await server.workbook(d, 'Weekly');
    const published = await server.post(`/api/v1/deployments/${d}/workbooks/${wb}/publish`, { config: { widgets: [] } });
    expect(published.status, published.text).toBe(200);
    dashboardId = published.body.id;
  });
  afterAll(async () => {
    await server?.stop();
    await smtp?.close();
  });

  it('creates, lists, updates, adds and removes recipients, shows deliveries, deletes', async () => {
    const cli = (args: string[]) => runCli(args, { env });
    const created = await cli([
      'notifications',
      'create',
      String(d),
      '--dashboard',
      String(dashboardId),
      '--type',
      'weekly',
      '--minute',
      '0',
      '--hour',
      '9',
      '--day-of-week',
      '1',
      '--timezone',
      'Europe/Berlin',
      '--json',
    ]);
    expect(created.code, show(created)).toBe(0);
    const n = JSON.parse(created.stdout);
    expect(n).toMatchObject({ cronExpression: '0 9 * * 1', humanReadableSchedule: 'Every Monday at 09:00 (Europe/Berlin)', isEnabled: true });

    const missing = await cli(['notifications', 'create', String(d), '--dashboard', String(dashboardId), '--type', 'DAILY', '--minute', '0']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('hour');

    const table = await cli(['notifications', 'list', String(d)]);
    expect(table.code, show(table)).toBe(0);
    expect(table.stdout).toMatch(/^ID\s+DASHBOARD\s+ON\s+SEND\s+FORMAT\s+NEXT RUN \(UTC\)\s+SCHEDULE\n/);
    expect(table.stdout).toContain('Every Monday at 09:00 (Europe/Berlin)');

    const updated = await cli(['notifications', 'update', String(d), String(n.id), '--disable', '--sending', 'off', '--format', 'pdf', '--json']);
    expect(updated.code, show(updated)).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ isEnabled: false, notificationEnabled: false, notificationFormat: 'pdf', nextRunAt: null });

    const added = await cli(['notifications', 'add', String(d), String(n.id), 'user:admin@localhost', 'embed:acme/u-1=bo@acme.example']);
    expect(added.code, show(added)).toBe(0);
    expect(added.stderr).toContain('Added 2 recipients; 0 updated, 0 unchanged.');
    const listed = await cli(['notifications', 'recipients', String(d), String(n.id), '--json']);
    const recipients = JSON.parse(listed.stdout) as Array<{ type: string; embedUserId?: number }>;
    expect(recipients.map((r) => r.type)).toEqual(['EMBED_USER', 'USER']);
    const removed = await cli(['notifications', 'remove', String(d), String(n.id), `embed:acme/${recipients[0]?.embedUserId}`]);
    expect(removed.code, show(removed)).toBe(0);
    expect(JSON.parse((await cli(['notifications', 'recipients', String(d), String(n.id), '--json'])).stdout).map((r: { type: string }) => r.type)).toEqual([
      'USER',
    ]);

    const deliveries = await cli(['notifications', 'deliveries', String(d), String(n.id)]);
    expect(deliveries.stdout).toContain('No deliveries yet.');
    const deleted = await cli(['notifications', 'delete', String(d), String(n.id)]);
    expect(deleted.code, show(deleted)).toBe(0);
    const gone = await cli(['notifications', 'get', String(d), String(n.id)]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('404');
  });

  it('send-now mails the notification at once; --wait follows it until it is delivered, and exits 1 when it failed', { timeout: 90_000 }, async () => {
    const cli = (args: string[]) => runCli(args, { env });
    const created = await cli([
      'notifications',
      'create',
      String(d),
      '--dashboard',
      String(dashboardId),
      '--type',
      'DAILY',
      '--minute',
      '0',
      '--hour',
      '9',
      '--json',
    ]);
    expect(created.code, show(created)).toBe(0);
    const n = JSON.parse(created.stdout) as { id: number; nextRunAt: string };

    const nobody = await cli(['notifications', 'send-now', String(d), String(n.id)]);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toContain('409');
    expect(nobody.stderr).toContain('no recipients');

    const added = await cli(['notifications', 'add', String(d), String(n.id), 'embed:acme/now@acme.example']);
    expect(added.code, show(added)).toBe(0);
    const sent = await cli(['notifications', 'send-now', String(d), String(n.id), '--wait', '--json']);
    expect(sent.code, show(sent)).toBe(0);
    const delivery = JSON.parse(sent.stdout);
    expect(delivery).toMatchObject({
      notificationId: n.id,
      trigger: 'SEND_NOW',
      status: 'succeeded',
      recipients: [{ email: 'now@acme.example', status: 'sent' }],
    });
    expect(smtp.received.filter((m) => m.to.includes('now@acme.example'))).toHaveLength(1);

    const history = await cli(['notifications', 'deliveries', String(d), String(n.id)]);
    expect(history.stdout).toMatch(/^ID\s+SCHEDULED FOR \(UTC\)\s+TRIGGER\s+STATUS\s+SENT\s+MESSAGE\n/);
    expect(history.stdout).toMatch(new RegExp(`${delivery.id}\\s.*SEND_NOW\\s+succeeded\\s+1/1`));
    const after = await cli(['notifications', 'get', String(d), String(n.id), '--json']);
    expect(JSON.parse(after.stdout).nextRunAt).toBe(n.nextRunAt);

    // The SMTP server refuses the recipient: the delivery fails, and so does the command.
    smtp.refuse.set('now@acme.example', Infinity);
    const refused = await cli(['notifications', 'send-now', String(d), String(n.id), '--wait']);
    expect(refused.code, show(refused)).toBe(1);
    expect(refused.stdout).toContain('failed');
    expect(refused.stderr).toMatch(/Delivery \d+ failed: 1 of 1 recipient\(s\) could not be delivered to/);
  });
});
