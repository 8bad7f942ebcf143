import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { isolatedEnv, removeTempDirs, runCli, serverVars, show, startTestServer, type TestServer } from './helpers.js';

/** `mapi workspace shared`: a creator-mode embed session's shared workspace (reference 8.F) and copies from it (8.G.1). */

afterAll(removeTempDirs);

describe.each(STORE_INDEPENDENT)('mapi workspace shared (%s)', (dialect) => {
  let server: TestServer;
  let d: number;
  let folder: number;
  let workbook: number;

  async function embedToken(creatorMode: boolean): Promise<string> {
    const generated = await server.post('/api/v1/embed/generate-session', { deploymentId: d, externalId: 'cli-user', embedTenantName: 'cli-co', creatorMode });
    expect(generated.status, generated.text).toBe(200);
    const exchanged = await server.post('/api/v1/embed/session/token', generated.body, '');
    expect(exchanged.status, exchanged.text).toBe(200);
    return (exchanged.body as { token: string }).token;
  }

  beforeAll(async () => {
    server = await startTestServer(dialect);
    d = await server.deployment(`Shared ${dialect}`);
    expect((await server.put('/api/v1/tenant/embed-settings', { useCreatorMode: true })).status).toBe(200);
    await embedToken(false);
    folder = await server.folder(d, 'Shared with cli-co');
    workbook = await server.workbook(d, 'Board', folder);
    await server.folder(d, 'Private');
    expect((await server.put(`/api/v1/deployments/${d}/folders/${folder}/embed-access`, { embedTenantName: 'cli-co', action: 'read' })).status).toBe(200);
    expect((await server.post(`/api/v1/deployments/${d}/workbooks/${workbook}/publish`, { config: { widgets: [] } })).status).toBe(200);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('lists the shared workspace with a creator-mode embed token, and copies a shared workbook to the root', async () => {
    const env = isolatedEnv(serverVars(server, await embedToken(true)));
    const root = await runCli(['workspace', 'shared', String(d)], { env });
    expect(root.code, show(root)).toBe(0);
    expect(root.stdout).toContain(`folder:${folder}`);
    expect(root.stdout).not.toContain('Private');
    const inside = await runCli(['workspace', 'shared', String(d), String(folder), '--types', 'workbook', '--json'], { env });
    expect(inside.code, show(inside)).toBe(0);
    expect(JSON.parse(inside.stdout)).toEqual([expect.objectContaining({ type: 'WORKBOOK', id: workbook, createdBy: null })]);
    const copy = await runCli(['workspace', 'shared', String(d), '--copy', String(workbook)], { env });
    expect(copy.code, show(copy)).toBe(0);
    expect(copy.stdout).toMatch(/Copied workbook \d+ to "Copy of Board" \(workbook:\d+\) at the workspace root/);
    const bad = await runCli(['workspace', 'shared', String(d), '--types', 'charts'], { env });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('not a list of item types');
  });

  it('an API key is refused with 403', async () => {
    const result = await runCli(['workspace', 'shared', String(d)], { env: isolatedEnv(serverVars(server)) });
    expect(result.code, show(result)).toBe(1);
    expect(result.stderr).toContain('403');
  });
});
