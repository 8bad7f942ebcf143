import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { parseDeliveryFormat, parseDeliveryRecipient } from '../src/commands/report-deliveries.js';
import { isolatedEnv, runCli, serverVars, show, startTestServer, type TestServer } from './helpers.js';

/** `mapi report-deliveries …` against a real server. */

describe('report delivery recipient arguments', () => {
  it('reads user:<id>, user:<email> and embed:<tenant>/<externalId>', () => {
    expect(parseDeliveryRecipient('user:12')).toEqual({ type: 'USER', userId: 12 });
    expect(parseDeliveryRecipient('user:ann@example.com')).toEqual({ type: 'USER', email: 'ann@example.com' });
    expect(parseDeliveryRecipient('embed:acme/u-1')).toEqual({ type: 'EMBED_USER', embedTenantName: 'acme', externalId: 'u-1' });
    expect(() => parseDeliveryRecipient('slack:C1')).toThrow(/not a recipient/);
    expect(() => parseDeliveryRecipient('embed:acme')).toThrow(/not a recipient/);
  });

  it('reads --format csv or xlsx, in any case', () => {
    expect(parseDeliveryFormat('csv')).toBe('csv');
    expect(parseDeliveryFormat('XLSX')).toBe('xlsx');
    expect(() => parseDeliveryFormat('pdf')).toThrow(/not a format: give csv or xlsx/);
  });
});

describe.each(STORE_INDEPENDENT)('mapi report-deliveries (%s)', (dialect) => {
  let server: TestServer;
  let env: Record<string, string>;
  let d: number;
  let reportId: number;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    env = isolatedEnv(serverVars(server));
    d = await server.deployment(`Report deliveries ${dialect}`);
    const made = await server.put(`/api/v1/deployments/${d}/reports/by-public-id/weekly-orders`, {
      name: 'Weekly orders',
      kind: 'table',
      spec: { query: { measures: ['orders.count'] } },
    });
    expect(made.status, made.text).toBeLessThan(300);
    reportId = made.body.id;
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('creates, lists, updates, pauses, resumes, runs, shows runs, deletes', async () => {
    const cli = (args: string[]) => runCli(args, { env });
    const created = await cli([
      'report-deliveries',
      'create',
      String(d),
      '--report',
      String(reportId),
      '--cron',
      '0 9 * * 1',
      '--timezone',
      'Europe/Berlin',
      '--format',
      'xlsx',
      '--to',
      'user:admin@localhost',
      '--json',
    ]);
    expect(created.code, show(created)).toBe(0);
    const delivery = JSON.parse(created.stdout);
    expect(delivery).toMatchObject({ reportId, name: 'Weekly orders', format: 'xlsx', cron: '0 9 * * 1', timezone: 'Europe/Berlin', paused: false });

    const badFormat = await cli(['report-deliveries', 'update', String(d), String(delivery.id), '--format', 'ods']);
    expect(badFormat.code).toBe(1);
    expect(badFormat.stderr).toContain('not a format');

    const refused = await cli(['report-deliveries', 'create', String(d), '--report', String(reportId), '--cron', '* * * * *', '--to', 'user:admin@localhost']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('hourly');

    const table = await cli(['report-deliveries', 'list', String(d)]);
    expect(table.code, show(table)).toBe(0);
    expect(table.stdout).toMatch(/^ID\s+REPORT\s+NAME\s+FORMAT\s+CRON\s+PAUSED\s+NEXT RUN \(UTC\)\s+RECIPIENTS\n/);
    expect(table.stdout).toContain('Weekly orders');

    const updated = await cli(['report-deliveries', 'update', String(d), String(delivery.id), '--name', 'Monday orders', '--format', 'csv', '--json']);
    expect(updated.code, show(updated)).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ name: 'Monday orders', format: 'csv' });

    const paused = await cli(['report-deliveries', 'pause', String(d), String(delivery.id), '--json']);
    expect(JSON.parse(paused.stdout)).toMatchObject({ paused: true, nextRunAt: null });
    const resumed = await cli(['report-deliveries', 'resume', String(d), String(delivery.id)]);
    expect(resumed.code, show(resumed)).toBe(0);
    expect(resumed.stderr).toContain(`Resumed report delivery ${delivery.id}`);

    const ran = await cli(['report-deliveries', 'run', String(d), String(delivery.id), '--json']);
    expect(ran.code, show(ran)).toBe(0);
    const run = JSON.parse(ran.stdout);
    expect(run).toMatchObject({ trigger: 'manual', status: 'queued' });
    const runs = await cli(['report-deliveries', 'runs', String(d), String(delivery.id), '--json']);
    expect(JSON.parse(runs.stdout).map((r: { id: number }) => r.id)).toEqual([run.id]);

    const deleted = await cli(['report-deliveries', 'delete', String(d), String(delivery.id)]);
    expect(deleted.code, show(deleted)).toBe(0);
    const gone = await cli(['report-deliveries', 'get', String(d), String(delivery.id)]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('404');
  });
});
