import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { isolatedEnv, removeTempDirs, runCli, serverVars, show, startTestServer, type TestServer } from './helpers.js';

/** mapi workbooks promote / promotions / promotion-links, against a real server. */

afterAll(removeTempDirs);

describe.each(STORE_INDEPENDENT)('mapi workbooks promote (%s)', (dialect) => {
  let server: TestServer;
  let env: Record<string, string>;
  let source: number;
  let target: number;
  const position = { x: 0, y: 0, w: 4, h: 4 };

  beforeAll(async () => {
    server = await startTestServer(dialect);
    env = isolatedEnv(serverVars(server));
    source = await server.deployment(`Promote from ${dialect}`);
    target = await server.deployment(`Promote to ${dialect}`);
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** A workbook whose draft shows one report, with `spec` as that report's spec. */
  async function workbookShowing(name: string, spec?: unknown): Promise<{ workbook: number; report: number }> {
    const workbook = await server.workbook(source, name);
    const report = await server.report(source, `${name} report`);
    if (spec !== undefined) {
      const current = await server.get(`/api/v1/deployments/${source}/reports/${report}`);
      const answer = await server.put(`/api/v1/deployments/${source}/reports/by-public-id/${current.body.publicId}`, { name: current.body.name, spec });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    }
    const saved = await server.put(`/api/v1/deployments/${source}/workbooks/${workbook}/dashboard`, {
      dashboardDraft: { widgets: [{ id: 'c', type: 'CHART', position, config: { reportId: report } }] },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    return { workbook, report };
  }

  it('--dry-run previews and writes nothing; promote copies, then updates the copy; promotions and promotion-links list them', async () => {
    const { workbook, report } = await workbookShowing('Pipeline');
    const dry = await runCli(['workbooks', 'promote', String(source), String(workbook), '--to', String(target), '--dry-run'], { env });
    expect(dry.code, show(dry)).toBe(0);
    expect(dry.stdout).toBe(
      `Promoting would create a copy of workbook:${workbook} in deployment ${target}, with 1 report.\nEvery member the reports use is in the target model.\n`,
    );
    const none = await runCli(['workbooks', 'promotions', String(source), String(workbook)], { env });
    expect(none.stdout).toBe(`workbook:${workbook} has not been promoted.\n`);

    const first = await runCli(['workbooks', 'promote', String(source), String(workbook), '--to', String(target), '--key', 'cli-1', '--json'], { env });
    expect(first.code, show(first)).toBe(0);
    const promotion = JSON.parse(first.stdout);
    expect(promotion).toMatchObject({ outcome: 'CREATED', targetDeploymentId: target, idempotencyKey: 'cli-1' });
    // The same key again: the same promotion.
    const replay = await runCli(['workbooks', 'promote', String(source), String(workbook), '--to', String(target), '--key', 'cli-1', '--json'], { env });
    expect(JSON.parse(replay.stdout)).toEqual(promotion);

    const again = await runCli(['workbooks', 'promote', String(source), String(workbook), '--to', String(target)], { env });
    expect(again.code, show(again)).toBe(0);
    expect(again.stdout).toMatch(
      new RegExp(
        `^Promoted workbook:${workbook} again, updating workbook:${promotion.targetWorkbookId} in deployment ${target} \\(promotion \\d+\\): 0 reports copied, 1 updated\\.\n$`,
      ),
    );

    const history = await runCli(['workbooks', 'promotions', String(source), String(workbook)], { env });
    expect(history.code, show(history)).toBe(0);
    const lines = history.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^\s*ID\s+WHEN\s+FROM\s+TO\s+OUTCOME\s+REPORTS\s+BY$/);
    expect(lines.slice(1).map((l) => /\b(CREATED|UPDATED)\b/.exec(l)?.[1])).toEqual(['UPDATED', 'CREATED']);

    const links = await runCli(['workbooks', 'promotion-links', String(source), String(workbook), '--json'], { env });
    expect(JSON.parse(links.stdout).map((l: { kind: string; sourceReportId: number | null }) => [l.kind, l.sourceReportId])).toEqual([
      ['WORKBOOK', null],
      ['REPORT', report],
    ]);
  });

  it('missing members: --dry-run lists them and exits 1; promote is refused with exit 1 naming them', async () => {
    const { workbook, report } = await workbookShowing('Semantic', { query: { measures: ['orders.count'], dimensions: ['orders.status'] } });
    const dry = await runCli(['workbooks', 'promote', String(source), String(workbook), '--to', String(target), '--dry-run'], { env });
    expect(dry.code, show(dry)).toBe(1);
    expect(dry.stdout).toContain('The target model lacks 2 members; promoting now would be refused:');
    expect(dry.stdout).toMatch(new RegExp(`orders\\.count\\s+measure\\s+${report}`));
    const refused = await runCli(['workbooks', 'promote', String(source), String(workbook), '--to', String(target)], { env });
    expect(refused.code, show(refused)).toBe(1);
    expect(refused.stderr).toContain('422');
    expect(refused.stderr).toContain(`orders.status (dimension; reports ${report})`);
  });
});
