import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
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

  beforeAll(async () => {
    server = await startTestServer(dialect);
    env = isolatedEnv(serverVars(server));
    d = await server.deployment(`Notifications ${dialect}`);
    const wb = await server.workbook(d, 'Weekly');
    const published = await server.post(`/api/v1/deployments/${d}/workbooks/${wb}/publish`, { config: { widgets: [] } });
    expect(published.status, published.text).toBe(200);
    dashboardId = published.body.id;
  });
  afterAll(async () => {
    await server?.stop();
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
});
