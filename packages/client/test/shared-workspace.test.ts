import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { ApiError, type MapiClient, type WorkspaceEntry } from '../src/node.js';
import { startTestServer, Workspace, type TestServer } from './support.js';

/** sharedWorkspace: list and copy with a creator-mode embed token (reference 8.F, 8.G.1 `shared: true`). */
describe.each(STORE_INDEPENDENT)('shared workspace helpers (%s)', (dialect) => {
  let server: TestServer;
  let admin: MapiClient;
  let ws: Workspace;
  let folder: number;
  let workbook: number;

  async function embedClient(externalId: string, creatorMode: boolean): Promise<MapiClient> {
    const sessionId = await admin.embed.generateSession({ deploymentId: ws.deploymentId, externalId, embedTenantName: 'client-creators', creatorMode });
    return server.client({ token: await admin.embed.exchange(sessionId) });
  }

  beforeAll(async () => {
    server = await startTestServer(dialect);
    admin = server.client();
    ws = await Workspace.create(admin);
    const on = await admin.PUT('/api/v1/tenant/embed-settings', { body: { useCreatorMode: true } });
    expect(on.response.status).toBe(200);
    await embedClient('setup', false);
    folder = await ws.folder('Shared');
    workbook = await ws.workbook(folder);
    await ws.workbook(folder);
    await admin.embedAccess.updateFolder(ws.deploymentId, folder, { embedTenantName: 'client-creators', action: 'read' });
    await admin.workbooks.publish(ws.deploymentId, workbook, { config: { widgets: [] } });
  });
  afterAll(async () => server?.close());

  it('lists the shared workspace page after page, and copies a shared workbook to the root', async () => {
    const creator = await embedClient('ann', true);
    const root: WorkspaceEntry[] = [];
    for await (const entry of creator.sharedWorkspace.list(ws.deploymentId)) root.push(entry);
    expect(root.map((e) => [e.type, e.id])).toEqual([['FOLDER', folder]]);
    const inside: WorkspaceEntry[] = [];
    for await (const entry of creator.sharedWorkspace.list(ws.deploymentId, { folderId: String(folder), types: ['WORKBOOK'], orderByDirection: 'DESC' }))
      inside.push(entry);
    expect(inside).toHaveLength(2);
    expect(inside.every((e) => e.createdBy === null && e.user === null)).toBe(true);
    const copy = await creator.sharedWorkspace.copy(ws.deploymentId, workbook, { name: 'Mine' });
    expect(copy).toMatchObject({ name: 'Mine', folderId: null, userId: null });
  });

  it('a view-only session is refused with an ApiError 403', async () => {
    const viewer = await embedClient('bob', false);
    const listing = (async () => {
      for await (const _ of viewer.sharedWorkspace.list(ws.deploymentId)) void _;
    })();
    await expect(listing).rejects.toMatchObject({ status: 403 });
    await expect(viewer.sharedWorkspace.copy(ws.deploymentId, workbook)).rejects.toBeInstanceOf(ApiError);
  });
});
