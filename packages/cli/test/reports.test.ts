import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { isolatedEnv, removeTempDirs, runCli, serverVars, show, startTestServer, type TestServer } from './helpers.js';

/** mapi reports placements / unplace (reference 3.0-3.2), against a real server. */

afterAll(removeTempDirs);

describe.each(STORE_INDEPENDENT)('mapi reports commands (%s)', (dialect) => {
  let server: TestServer;
  let env: Record<string, string>;
  let d: number;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    env = isolatedEnv(serverVars(server));
    d = await server.deployment(`Reports ${dialect}`);
  });
  afterAll(async () => server?.stop());

  it('placements lists where a report is placed with its sync status; unplace removes one, idempotently', async () => {
    const report = await server.report(d, 'Placed');
    const empty = await runCli(['reports', 'placements', String(d), String(report)], { env });
    expect(empty.code, show(empty)).toBe(0);
    expect(empty.stdout).toContain(`Report ${report} is placed in no spreadsheet.`);

    for (const [placementId, location] of [
      ['sheet-1', 'Sales!B2:F9'],
      ['sheet-2', "'Q1 plan'!A1"],
    ]) {
      const res = await server.put(`/api/v1/deployments/${d}/reports/${report}/connect-workbook`, {
        placementId,
        externalWorkbookId: 'doc-1',
        workbookName: 'Plan',
        resultLocation: location,
        host: 'GOOGLE_SHEETS',
      });
      expect(res.status, res.text).toBe(200);
    }
    const table = await runCli(['reports', 'placements', String(d), String(report)], { env });
    expect(table.code, show(table)).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+DOCUMENT\s+LOCATION\s+HOST\s+SYNC\s+PLACED\s+REFRESHED$/);
    expect(lines[1]).toMatch(/^sheet-1\s+Plan\s+Sales!B2:F9\s+GOOGLE_SHEETS\s+UP_TO_DATE\s+\S+.*\s+-$/);
    expect(lines[2]).toMatch(/^sheet-2\s+Plan\s+'Q1 plan'!A1\s+GOOGLE_SHEETS\s+UP_TO_DATE/);
    const json = await runCli(['--json', 'reports', 'placements', String(d), String(report)], { env });
    expect(JSON.parse(json.stdout).map((p: { id: string }) => p.id)).toEqual(['sheet-1', 'sheet-2']);

    const removed = await runCli(['reports', 'unplace', String(d), String(report), 'sheet-1'], { env });
    expect(removed.code, show(removed)).toBe(0);
    expect(removed.stdout).toContain(`Placement "sheet-1" of report ${report} is gone; 1 placement left.`);
    const again = await runCli(['reports', 'unplace', String(d), String(report), 'sheet-1'], { env });
    expect(again.code, show(again)).toBe(0);

    const missing = await runCli(['reports', 'placements', String(d), '999999'], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('Report 999999 does not exist');
  });
});
