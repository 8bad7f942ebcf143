import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { isolatedEnv, removeTempDirs, runCli, serverVars, show, startTestServer, tempDir, type TestServer } from './helpers.js';

/** mapi reports file / file-edit / in-document and mapi workbooks draft-file / draft-file-edit (reference 9, extensions), against a real server. */

afterAll(removeTempDirs);

describe.each(STORE_INDEPENDENT)('mapi canonical-text and external-document commands (%s)', (dialect) => {
  let server: TestServer;
  let env: Record<string, string>;
  let d: number;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    env = isolatedEnv(serverVars(server));
    d = await server.deployment(`Text ${dialect}`);
  });
  afterAll(async () => server?.stop());

  it('reports file prints the text; file-edit replaces exact text, or the whole text from a file, and refuses a stale hash', async () => {
    const report = await server.report(d, 'Texted');
    const printed = await runCli(['reports', 'file', String(d), String(report)], { env });
    expect(printed.code, show(printed)).toBe(0);
    expect(JSON.parse(printed.stdout)).toMatchObject({ name: 'Texted', title: null });
    const withHash = JSON.parse((await runCli(['--json', 'reports', 'file', String(d), String(report)], { env })).stdout) as { content: string; hash: string };
    expect(withHash.content).toBe(printed.stdout);

    const edited = await runCli(
      ['reports', 'file-edit', String(d), String(report), '--old', '"title": null', '--new', '"title": "Revenue"', '--hash', withHash.hash],
      { env },
    );
    expect(edited.code, show(edited)).toBe(0);
    expect(edited.stdout).toMatch(/Saved report \d+; its hash is now [0-9a-f]{64}\./);

    const stale = await runCli(['reports', 'file-edit', String(d), String(report), '--old', 'Revenue', '--new', 'Costs', '--hash', withHash.hash], { env });
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('changed since');

    const file = path.join(tempDir(), 'report.json');
    const now = (await runCli(['reports', 'file', String(d), String(report)], { env })).stdout;
    fs.writeFileSync(file, now.replace('"Revenue"', '"From a file"'));
    const whole = await runCli(['reports', 'file-edit', String(d), String(report), '--from', file], { env });
    expect(whole.code, show(whole)).toBe(0);
    expect(JSON.parse((await runCli(['reports', 'file', String(d), String(report)], { env })).stdout)).toMatchObject({ title: 'From a file' });

    const invalid = await runCli(['reports', 'file-edit', String(d), String(report), '--old', '"kind": null', '--new', '"kind": "pie"'], { env });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('/content/kind');

    const usage = await runCli(['reports', 'file-edit', String(d), String(report), '--old', 'x'], { env });
    expect(usage.code).not.toBe(0);
  });

  it('workbooks draft-file prints the draft (null without one) and draft-file-edit saves it', async () => {
    const workbook = await server.workbook(d, 'Drafted');
    const empty = await runCli(['workbooks', 'draft-file', String(d), String(workbook)], { env });
    expect(empty.code, show(empty)).toBe(0);
    expect(empty.stdout).toBe('null\n');
    const saved = await runCli(['workbooks', 'draft-file-edit', String(d), String(workbook), '--old', 'null', '--new', '{"title": "Board", "widgets": []}'], {
      env,
    });
    expect(saved.code, show(saved)).toBe(0);
    expect(saved.stdout).toContain(`the dashboard draft of workbook ${workbook}`);
    expect(JSON.parse((await runCli(['workbooks', 'draft-file', String(d), String(workbook)], { env })).stdout)).toEqual({ title: 'Board', widgets: [] });
  });

  it('reports in-document lists the placements in a document across deployments', async () => {
    const report = await server.report(d, 'Placed in doc');
    const res = await server.put(`/api/v1/deployments/${d}/reports/${report}/connect-workbook`, {
      externalWorkbookId: 'cli-doc',
      resultLocation: 'Sales!B2',
      sheetName: 'Sales',
      anchorCell: 'B2',
    });
    expect(res.status, res.text).toBe(200);
    const table = await runCli(['reports', 'in-document', 'cli-doc'], { env });
    expect(table.code, show(table)).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^DEPLOYMENT\s+REPORT\s+NAME\s+ACCESS\s+LOCATION\s+SYNC$/);
    expect(lines[1]).toMatch(new RegExp(`^${d}\\s+${report}\\s+Placed in doc\\s+GRANTED\\s+Sales!B2\\s+UP_TO_DATE$`));
    const none = await runCli(['reports', 'in-document', 'nothing-here'], { env });
    expect(none.stdout).toContain('No report is placed in document "nothing-here".');
    const json = await runCli(['--json', 'reports', 'in-document', 'cli-doc'], { env });
    expect(JSON.parse(json.stdout)).toHaveLength(1);
  });
});
