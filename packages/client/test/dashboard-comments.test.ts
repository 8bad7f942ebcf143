import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { ApiError, type DashboardThread, type MapiClient, type MentionableUser } from '../src/node.js';
import { startTestServer, Workspace, type TestServer } from './support.js';

/** dashboardComments: threads, create, update, delete, resolve and mentionableUsers with an embed token (reference 8.C). */
describe.each(STORE_INDEPENDENT)('dashboard comment helpers (%s)', (dialect) => {
  let server: TestServer;
  let admin: MapiClient;
  let publicId: string;
  let ann: MapiClient;
  let bob: MapiClient;
  let ws: Workspace;

  async function embedClient(externalId: string, email: string): Promise<MapiClient> {
    const sessionId = await admin.embed.generateSession({ deploymentId: ws.deploymentId, externalId, embedTenantName: 'client-acme', email });
    return server.client({ token: await admin.embed.exchange(sessionId) });
  }

  beforeAll(async () => {
    server = await startTestServer(dialect);
    admin = server.client();
    ws = await Workspace.create(admin);
    const wb = await ws.workbook();
    publicId = (await admin.workbooks.publish(ws.deploymentId, wb, { config: { widgets: [] }, allowEmbed: true })).publicId;
    ann = await embedClient('ann', 'ann@client.example');
    bob = await embedClient('bob', 'bob@client.example');
    await admin.embedAccess.updateWorkbook(ws.deploymentId, wb, { embedTenantName: 'client-acme', action: 'read' });
    const on = await admin.PUT('/api/v1/tenant/embed-settings', { body: { enableDashboardComments: true } });
    expect(on.response.status).toBe(200);
  });
  afterAll(async () => server?.close());

  it('opens a thread, replies, edits, resolves, lists and removes through the helpers', async () => {
    const root = await ann.dashboardComments.create(publicId, 'Looks off, @bob?');
    const reply = await bob.dashboardComments.create(publicId, 'Checking', { parentId: root.id });
    expect(await bob.dashboardComments.update(publicId, reply.id, 'Fixed')).toMatchObject({ body: 'Fixed', editedAt: expect.any(String) });
    const resolved = await ann.dashboardComments.resolve(publicId, root.id, true);
    expect(resolved).toMatchObject({ root: { id: root.id }, replies: [{ id: reply.id, body: 'Fixed' }], resolvedAt: expect.any(String) });
    const open: DashboardThread[] = [];
    for await (const thread of bob.dashboardComments.threads(publicId)) open.push(thread);
    expect(open).toEqual([]);
    const all: DashboardThread[] = [];
    for await (const thread of bob.dashboardComments.threads(publicId, { includeResolved: true })) all.push(thread);
    expect(all.map((th) => th.root.id)).toEqual([root.id]);
    await bob.dashboardComments.delete(publicId, reply.id);
    const refused = await bob.dashboardComments.delete(publicId, root.id).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 403, code: 'FORBIDDEN' });
    const users: MentionableUser[] = [];
    for await (const user of ann.dashboardComments.mentionableUsers(publicId, { search: 'o' })) users.push(user);
    expect(users.map((u) => u.username)).toEqual(['bob']);
    // An API key names no embed tenant.
    await expect(admin.dashboardComments.create(publicId, 'from a key')).rejects.toMatchObject({ status: 403, code: 'FORBIDDEN' });
  });
});
