import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { parseAttributes } from '../src/commands/embed-share.js';
import { workbookTarget } from '../src/commands/dashboard-publish.js';
import { isolatedEnv, removeTempDirs, runCli, serverVars, show, startTestServer, tempDir, type TestServer } from './helpers.js';

/** `mapi dashboards publish`, `mapi embed share` and `mapi embed session` against a real server process. */

afterAll(removeTempDirs);

describe('publish and session arguments', () => {
  it('a workbook is an id, or a slug named by --name or the dashboard title', () => {
    expect(workbookTarget('12', {}, {})).toBe(12);
    expect(workbookTarget('sales', { title: 'Sales' }, {})).toEqual({ slug: 'sales', name: 'Sales' });
    expect(workbookTarget('sales', { title: 'Sales' }, { name: 'Revenue', folder: 'root' })).toEqual({ slug: 'sales', name: 'Revenue', folderId: null });
    expect(() => workbookTarget('sales', {}, {})).toThrow(/needs a name/);
    expect(() => workbookTarget('12', {}, { name: 'x' })).toThrow(/apply to a workbook given by slug/);
    expect(() => workbookTarget('Sales!', { title: 'x' }, {})).toThrow(/slug must be/);
  });

  it('attributes are typed by the catalog; unknown names go as text', () => {
    const types = new Map([
      ['seats', 'number'],
      ['beta', 'boolean'],
      ['regions', 'string-list'],
    ] as const);
    expect(parseAttributes(['Seats=3', 'beta=true', 'regions=EU,US', 'region=EU=1', 'empty='], types)).toEqual([
      { name: 'Seats', value: 3 },
      { name: 'beta', value: true },
      { name: 'regions', value: ['EU', 'US'] },
      { name: 'region', value: 'EU=1' },
      { name: 'empty', value: '' },
    ]);
    expect(() => parseAttributes(['seats=many'], types)).toThrow(/number attribute/);
    expect(() => parseAttributes(['beta=yes'], types)).toThrow(/true or false/);
    expect(() => parseAttributes(['region'], types)).toThrow(/not name=value/);
  });
});

describe.each(STORE_INDEPENDENT)('mapi dashboards publish, embed share and embed session (%s)', (dialect) => {
  let server: TestServer;
  let env: Record<string, string>;
  let d: number;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    env = isolatedEnv(serverVars(server));
    d = await server.deployment('embedding');
    expect((await server.post('/api/v1/user-attributes', { name: 'seats', type: 'number' })).status).toBe(201);
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** The page at the URL, then what it reads with the session's token: the embedded dashboard. */
  async function openAsPage(url: string): Promise<{ status: number; body: unknown; claims: Record<string, unknown> }> {
    const parsed = new URL(url);
    const page = await server.get(`${parsed.pathname}${parsed.search}`, '');
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<html/i);
    const exchange = await server.post('/api/v1/embed/session/token', { sessionId: parsed.searchParams.get('session') }, '');
    expect(exchange.status, exchange.text).toBe(200);
    const token = (exchange.body as { token: string }).token;
    const answer = await server.get(`/api/v1/embed${parsed.pathname.slice('/embed'.length)}`, token);
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
    return { status: answer.status, body: answer.body, claims };
  }

  it('publishes a YAML file by slug, shares it with a tenant, and prints a session URL that opens it for that tenant', async () => {
    const yaml = 'title: Revenue\nwidgets:\n  - type: TEXT\n    position: { x: 0, y: 0, w: 6, h: 3 }\n    config: { text: "# Revenue" }\n';
    const published = await runCli(['dashboards', 'publish', String(d), 'revenue', '--file', '-'], { env, input: yaml });
    expect(published.code, show(published)).toBe(0);
    const line =
      /^Published version 1 of the dashboard of workbook:(\d+) \(created with slug revenue\): public id (\S{22}), 1 widget, signed embedding off\.$/m.exec(
        published.stdout,
      );
    expect(line, published.stdout).not.toBeNull();
    const workbookId = Number(line?.[1]);
    const publicId = line?.[2] ?? '';

    // Again from a JSON file, by id: the next version of the same dashboard.
    const file = path.join(tempDir(), 'revenue.json');
    fs.writeFileSync(file, JSON.stringify({ title: 'Revenue v2', widgets: [{ type: 'TEXT', position: { x: 0, y: 0, w: 4, h: 2 } }] }));
    const again = await runCli(['dashboards', 'publish', String(d), String(workbookId), '--file', file, '--json'], { env });
    expect(again.code, show(again)).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ workbookId, created: false, dashboard: { publicId, versionNumber: 2, title: 'Revenue v2' } });

    // A tenant that does not exist yet cannot be shared with, and the hint says how one comes to be.
    const unknown = await runCli(['embed', 'share', String(d), String(workbookId), '--tenant', 'acme'], { env });
    expect(unknown.code, show(unknown)).toBe(1);
    expect(unknown.stderr).toContain('mapi embed users provision');

    // A session names the tenant into being; before the share its URL shows nothing to that viewer.
    const early = await runCli(['embed', 'session', String(d), publicId, '--tenant', 'acme', '--user', 'viewer-1'], { env });
    expect(early.code, show(early)).toBe(0);
    expect(early.stdout.trim()).toMatch(new RegExp(`^${server.url}/embed/dashboard/${publicId}\\?session=[0-9a-f]{32}$`));
    expect((await openAsPage(early.stdout.trim())).status).toBe(404);

    const shared = await runCli(['embed', 'share', String(d), String(workbookId), '--tenant', 'acme'], { env });
    expect(shared.code, show(shared)).toBe(0);
    expect(shared.stdout.trim()).toBe(`Shared workbook:${workbookId} with embed tenant "acme"; signed embedding turned on. Shared with: acme.`);
    const twice = await runCli(['embed', 'share', String(d), String(workbookId), '--all-embed-users', '--json'], { env });
    expect(twice.code, show(twice)).toBe(0);
    expect(JSON.parse(twice.stdout)).toMatchObject({
      changed: true,
      allowEmbedChanged: false,
      access: { allowEmbed: true, allEmbedUsers: { enabled: true, action: 'read' }, tenants: [{ embedTenantName: 'acme', action: 'read' }] },
    });

    const session = await runCli(
      ['embed', 'session', String(d), publicId, '--tenant', 'acme', '--user', 'viewer-1', '--attr', 'seats=12', '--locale', 'de-DE', '--json'],
      { env },
    );
    expect(session.code, show(session)).toBe(0);
    const body = JSON.parse(session.stdout) as { url: string; sessionId: string; publicId: string; deploymentId: number };
    expect(body).toMatchObject({ publicId, deploymentId: d, sessionId: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(new URL(body.url).searchParams.get('locale')).toBe('de-DE');
    const opened = await openAsPage(body.url);
    expect(opened.status).toBe(200);
    expect(opened.body).toMatchObject({ publicId, versionNumber: 2 });
    expect(opened.claims).toMatchObject({ embed_tenant: 'acme', embed_user: { external_id: 'viewer-1' }, user_attributes: { seats: 12 } });

    // Removing both shares closes the dashboard again; the switch stays on.
    for (const target of [['--tenant', 'acme'], ['--all-embed-users']]) {
      const removed = await runCli(['embed', 'share', String(d), String(workbookId), ...target, '--level', 'none'], { env });
      expect(removed.code, show(removed)).toBe(0);
      expect(removed.stdout).toMatch(/^Removed the share of workbook:\d+ with .*; signed embedding on\./);
    }
    const late = await runCli(['embed', 'session', String(d), publicId, '--tenant', 'acme', '--user', 'viewer-1'], { env });
    expect((await openAsPage(late.stdout.trim())).status).toBe(404);
  });

  it('refuses a file that is not a dashboard, and a slug without a name, before sending anything', async () => {
    const before = await server.listing(d, 'root');
    const notObject = await runCli(['dashboards', 'publish', String(d), 'nothing', '--file', '-'], { env, input: '- a\n- b\n' });
    expect(notObject.code, show(notObject)).toBe(1);
    expect(notObject.stderr).toContain('stdin must hold one object');
    const noName = await runCli(['dashboards', 'publish', String(d), 'nameless', '--file', '-'], { env, input: 'widgets: []\n' });
    expect(noName.code, show(noName)).toBe(1);
    expect(noName.stderr).toContain('needs a name');
    const noFile = await runCli(['dashboards', 'publish', String(d), 'nameless'], { env });
    expect(noFile.stderr).toContain('--file is required');
    const both = await runCli(['embed', 'share', String(d), '1', '--tenant', 'acme', '--all-embed-users'], { env });
    expect(both.stderr).toContain('exactly one of --tenant');
    expect(await server.listing(d, 'root')).toEqual(before);
  });
});
