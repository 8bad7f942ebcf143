import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '@mapi/client';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { exportFormat, exportInput, parseFilters, parseRenderAs } from '../src/commands/dashboards.js';
import { describeError } from '../src/errors.js';
import { isolatedEnv, removeTempDirs, runCli, serverVars, show, spawnCli, startTestServer, tempDir, type TestServer } from './helpers.js';

/** `mapi dashboards export|export-status|download` against a real server (reference 8.A.1-8.A.3). */

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

afterAll(removeTempDirs);

/** A problem answered by the server, as the client turns it into an error. */
function problem(status: number, code: string, detail: string, url: string): ApiError {
  return new ApiError({ status, method: 'POST', url, problem: { type: 'about:blank', title: 'Problem', status, detail, code, message: detail } as never });
}

describe('export flags and hints', () => {
  it('the format follows --format, else the extension of --out, else png; a mismatch is a usage error', () => {
    expect(exportFormat(undefined, 'weekly.PDF')).toBe('pdf');
    expect(exportFormat(undefined, '-')).toBe('png');
    expect(exportFormat(undefined, 'weekly.out')).toBe('png');
    expect(exportFormat('PDF', '-')).toBe('pdf');
    expect(() => exportFormat('png', 'weekly.pdf')).toThrow('--format png does not match --out weekly.pdf.');
    expect(() => exportFormat('jpeg', undefined)).toThrow('--format must be png or pdf');
  });

  it('a numeric dashboard is an id, anything else a public id; filters, time grains and render-as pass through', () => {
    expect(exportInput('12', { out: 'a.pdf', filter: [], timeGrain: [] })).toEqual({ format: 'pdf', dashboardId: 12 });
    expect(exportInput('12', { out: 'a.pdf', print: true, filter: [], timeGrain: [] })).toEqual({ format: 'pdf', dashboardId: 12, layout: 'print' });
    expect(() => exportInput('12', { out: 'a.png', print: true, filter: [], timeGrain: [] })).toThrow('--print makes A4 pages of a PDF.');
    expect(
      exportInput('Xk2f9aQ', {
        format: 'png',
        filter: ['orders.status=completed', 'customers.region=EU', 'orders.status=open'],
        timeGrain: ['orders.created_at=week'],
        renderAs: 'user:ann@example.com',
      }),
    ).toEqual({
      format: 'png',
      dashboardPublicId: 'Xk2f9aQ',
      filters: [
        { member: 'orders.status', operator: 'equals', value: ['completed', 'open'] },
        { member: 'customers.region', operator: 'equals', value: ['EU'] },
      ],
      timeGrains: [{ member: 'orders.created_at', grain: 'week' }],
      renderAs: { type: 'USER', email: 'ann@example.com' },
    });
    expect(parseRenderAs('user:7')).toEqual({ type: 'USER', userId: 7 });
    expect(parseRenderAs('embed:acme/u-1')).toEqual({ type: 'EMBED_USER', embedTenantName: 'acme', externalId: 'u-1' });
    expect(() => parseRenderAs('ann')).toThrow(/names nobody/);
    expect(() => parseFilters(['status'])).toThrow(/is not member=value/);
  });

  it('the export limit, a render still running and a failed render each say what to do next', () => {
    const base = 'https://h/api/v1/deployments/3/dashboard-exports';
    const limit = describeError(problem(429, 'DASHBOARD_EXPORT_LIMIT', '3 exports are already rendering for this identity.', base)).join('\n');
    expect(limit).toContain('hint: As many exports as the server allows (DASHBOARD_EXPORTS_PER_IDENTITY, 3 by default) are already rendering');
    expect(limit).not.toContain('rate limiting');
    const rendering = describeError(problem(409, 'DASHBOARD_EXPORT_RENDERING', 'The export is still processing.', `${base}/qY3v/download`)).join('\n');
    expect(rendering).toContain('`mapi dashboards download 3 qY3v --wait --out FILE`');
    const failed = describeError(problem(422, 'DASHBOARD_EXPORT_FAILED', 'The export failed: boom.', `${base}/qY3v/download`)).join('\n');
    expect(failed).toContain('`mapi dashboards export 3 <dashboard> --out FILE`');
  });
});

describe.each(STORE_INDEPENDENT)('mapi dashboards (%s)', (dialect) => {
  let server: TestServer;
  let env: Record<string, string>;
  let d: number;
  let dashboardId: number;
  let publicId: string;
  let dir: string;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    env = isolatedEnv(serverVars(server));
    d = await server.deployment(`exports ${dialect}`);
    const workbook = await server.workbook(d, 'Weekly');
    // Text only: it renders without a running runtime.
    const config = {
      title: 'Weekly numbers',
      widgets: [{ id: 'note', type: 'TEXT', position: { x: 0, y: 0, w: 6, h: 3 }, config: { text: 'Sales are up.' } }],
    };
    const published = await server.post(`/api/v1/deployments/${d}/workbooks/${workbook}/publish`, { config });
    expect(published.status, published.text).toBe(200);
    ({ id: dashboardId, publicId } = published.body as { id: number; publicId: string });
    dir = tempDir();
  });
  afterAll(async () => server?.stop());

  it('export shows the progress on stderr and writes the PDF; an existing file is kept, before anything renders, unless --force', async () => {
    const out = path.join(dir, 'weekly.pdf');
    const first = await runCli(['dashboards', 'export', String(d), String(dashboardId), '--out', out], { env });
    expect(first.code, show(first)).toBe(0);
    expect(first.stderr).toMatch(/^Export \S+ started \(pdf\)\.$/m);
    expect(first.stderr).toMatch(/^completed 100%$/m);
    expect(first.stdout).toMatch(new RegExp(`^Wrote ${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(\\d+(\\.\\d)? (bytes|KiB), application/pdf\\)\\.$`, 'm'));
    expect(fs.readFileSync(out).subarray(0, 5).toString()).toBe('%PDF-');

    fs.writeFileSync(out, 'keep me');
    const refused = await runCli(['dashboards', 'export', String(d), String(dashboardId), '--out', out], { env });
    expect(refused.code, show(refused)).toBe(1);
    expect(refused.stderr).toContain(`error: ${out} already exists.`);
    expect(refused.stderr).toContain('hint: Pass --force to replace it');
    expect(refused.stderr).not.toContain('started');
    expect(fs.readFileSync(out, 'utf8')).toBe('keep me');
    const forced = await runCli(['dashboards', 'export', String(d), String(dashboardId), '--out', out, '--force'], { env });
    expect(forced.code, show(forced)).toBe(0);
    expect(fs.readFileSync(out).subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('--out - writes the PNG to stdout, by public id; the note goes to stderr', async () => {
    const child = spawnCli(['dashboards', 'export', String(d), publicId, '--format', 'png', '--out', '-'], { env });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(code, stderr).toBe(0);
    const bytes = Buffer.concat(chunks);
    expect(bytes.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
    expect(stderr).toMatch(new RegExp(`Wrote ${bytes.length < 1024 ? `${bytes.length} bytes` : '\\d+\\.\\d KiB'} of image/png to stdout\\.`));
  });

  it('--no-wait prints the job; export-status --follow waits for it; download writes it; an unknown job is 404 with a hint', async () => {
    const started = await runCli(['dashboards', 'export', String(d), String(dashboardId), '--format', 'pdf', '--no-wait', '--json'], { env });
    expect(started.code, show(started)).toBe(0);
    const { jobId } = JSON.parse(started.stdout) as { jobId: string; expiresAt: string };
    const status = await runCli(['dashboards', 'export-status', String(d), jobId, '--follow'], { env });
    expect(status.code, show(status)).toBe(0);
    expect(status.stdout.trim()).toBe('completed 100% application/pdf');
    const out = path.join(dir, 'later.pdf');
    const downloaded = await runCli(['dashboards', 'download', String(d), jobId, '--out', out, '--json'], { env });
    expect(downloaded.code, show(downloaded)).toBe(0);
    expect(JSON.parse(downloaded.stdout)).toEqual({ jobId, file: out, bytes: fs.statSync(out).size, contentType: 'application/pdf' });
    expect(fs.readFileSync(out).subarray(0, 5).toString()).toBe('%PDF-');

    const unknown = await runCli(['dashboards', 'export-status', String(d), 'no-such-job'], { env });
    expect(unknown.code, show(unknown)).toBe(1);
    expect(unknown.stderr).toContain('error: 404');
    expect(unknown.stderr).toContain(
      `hint: Exports are kept 5 minutes after they start, and only the user who started one sees it: run \`mapi dashboards export ${d} <dashboard> --out FILE\` again.`,
    );
  });

  it('while the account restricts data downloads, export exits 1 with the restriction and what lifts it', async () => {
    const on = await server.put('/api/v1/tenant/app-config', { restrictDataDownload: true });
    expect(on.status, on.text).toBe(200);
    try {
      const out = path.join(dir, 'restricted.png');
      const refused = await runCli(['dashboards', 'export', String(d), String(dashboardId), '--out', out], { env });
      expect(refused.code, show(refused)).toBe(1);
      expect(refused.stderr).toMatch(/^error: 403 .*restricted/m);
      expect(refused.stderr).toContain('hint: The account restricts data downloads, so no dashboard can be exported, by anyone.');
      expect(fs.existsSync(out)).toBe(false);
    } finally {
      await server.put('/api/v1/tenant/app-config', { restrictDataDownload: null });
    }
  });
});
