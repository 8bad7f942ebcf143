import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { ApiError, type BulkProgress, type EmbedTenant, type EmbedUser, type MapiClient } from '../src/node.js';
import { startTestServer, Workspace, type TestServer } from './support.js';

/** embedTenants and embedAccess helpers (reference 3.4, 3.5, 4.1-4.14). */
describe.each(STORE_INDEPENDENT)('embed helpers (%s)', (dialect) => {
  let server: TestServer;
  let client: MapiClient;
  let ws: Workspace;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    client = server.client();
    ws = await Workspace.create(client);
  });
  afterAll(async () => server?.close());

  const collect = async <T>(items: AsyncIterable<T>) => {
    const out: T[] = [];
    for await (const item of items) out.push(item);
    return out;
  };

  it('provisions 250 users in 3 requests with progress, reports failures per user, and lists every page', async () => {
    const users = Array.from({ length: 250 }, (_, i) => ({ externalId: `u-${String(i).padStart(3, '0')}`, ...(i === 7 ? { groups: ['missing'] } : {}) }));
    const progress: BulkProgress[] = [];
    const result = await client.embedTenants.provisionUsers('client-acme', users, { onProgress: (p) => progress.push({ ...p }) });
    expect(result.requests).toBe(3);
    expect(result.succeeded).toHaveLength(249);
    expect(result.failed).toEqual([{ externalId: 'u-007', error: { status: 400, message: expect.stringContaining('Groups with names "missing" not found') } }]);
    expect(progress.map((p) => [p.done, p.total, p.requests])).toEqual([
      [0, 250, 0],
      [100, 250, 1],
      [200, 250, 2],
      [250, 250, 3],
    ]);
    const listed: EmbedUser[] = await collect(client.embedTenants.users('client-acme'));
    expect(listed).toHaveLength(249);
    const tenants: EmbedTenant[] = await collect(client.embedTenants.list({ search: 'client-' }));
    expect(tenants.map((t) => [t.name, t.userCount])).toEqual([['client-acme', 249]]);
  });

  it('manages groups and members; errors are ApiErrors', async () => {
    const group = await client.embedTenants.createGroup('client-acme', { name: 'editors' });
    const added = await client.embedTenants.addMembers('client-acme', group.id, [{ externalId: 'u-001' }, { externalId: 'brand-new' }]);
    expect(added.addedMembers.map((u) => u.externalId)).toEqual(['u-001', 'brand-new']);
    expect((await collect(client.embedTenants.members('client-acme', group.id))).map((u) => u.externalId)).toEqual(['brand-new', 'u-001']);
    expect(await client.embedTenants.updateGroup('client-acme', group.id, 'can edit')).toMatchObject({ description: 'can edit', userCount: 2 });
    const busy = await client.embedTenants.deleteGroup('client-acme', group.id).catch((e: unknown) => e);
    expect(busy).toBeInstanceOf(ApiError);
    expect(busy).toMatchObject({ status: 400, code: 'EMBED_GROUP_HAS_MEMBERS' });
    await client.embedTenants.removeMembers('client-acme', group.id, [{ externalId: 'u-001' }, { externalId: 'brand-new' }]);
    await client.embedTenants.deleteGroup('client-acme', group.id);
    await expect(client.embedTenants.getGroup('client-acme', group.id)).rejects.toMatchObject({ status: 404, code: 'EMBED_GROUP_NOT_FOUND' });
  });

  it('shares a workbook and a folder, and lists what the tenant reaches', async () => {
    const d = ws.deploymentId;
    const folder = await ws.folder();
    const inside = await ws.workbook(folder);
    const direct = await ws.workbook();
    expect(await client.embedAccess.updateWorkbook(d, direct, { embedTenantName: 'client-acme', action: 'read' })).toMatchObject({
      tenants: [{ embedTenantName: 'client-acme', action: 'read' }],
    });
    expect(await client.embedAccess.updateFolder(d, folder, { allEmbedUsers: true, action: 'read' })).toMatchObject({ allEmbedUsers: { enabled: true } });
    expect((await client.embedAccess.getWorkbook(d, direct)).allowEmbed).toBe(false);
    expect((await collect(client.embedAccess.workbooks(d, 'client-acme'))).map((w) => w.id)).toEqual([inside, direct].sort((a, b) => a - b));
    expect((await collect(client.embedAccess.workbooks(d, 'client-acme', { accessSource: 'folder' }))).map((w) => w.id)).toEqual([inside]);
    await client.embedTenants.delete('client-acme');
    expect(await collect(client.embedTenants.list({ search: 'client-' }))).toEqual([]);
  });
});
