import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { ApiError, unwrap, type MapiClient } from '../src/node.js';
import { startTestServer, uniqueName, Workspace, type TestServer } from './support.js';

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/** A client that records the query of every request it sends. */
function recording(server: TestServer): { client: MapiClient; queries: URLSearchParams[] } {
  const client = server.client();
  const queries: URLSearchParams[] = [];
  client.use({
    onRequest({ request }) {
      queries.push(new URL(request.url).searchParams);
    },
  });
  return { client, queries };
}

describe.each(STORE_INDEPENDENT)('list iterators (%s)', (dialect) => {
  let server: TestServer;
  let admin: MapiClient;
  let ws: Workspace;
  beforeAll(async () => {
    server = await startTestServer(dialect);
    admin = server.client();
    ws = await Workspace.create(admin);
  });
  afterAll(async () => server?.close());

  it('deployments: follows the cursor across pages, one request per page', async () => {
    const made = [ws.deploymentId];
    for (let i = 0; i < 4; i++) made.push(unwrap(await admin.POST('/build/api/v1/deployments/', { body: { name: uniqueName('d') } })).id);
    const { client, queries } = recording(server);
    const listed = await collect(client.deployments.list({ first: 2 }));
    expect(listed.map((d) => d.id)).toEqual(made);
    expect(queries.map((q) => q.get('first'))).toEqual(['2', '2', '2']);
    expect(queries[0]?.has('after')).toBe(false);
    expect(queries[1]?.get('after')).toMatch(/\S/);
  });

  it('folders: every folder by id, or one parent’s children', async () => {
    const parent = await ws.folder();
    const children = [await ws.folder(undefined, parent), await ws.folder(undefined, parent), await ws.folder(undefined, parent)];
    const all = await collect(admin.folders.list(ws.deploymentId, { first: 2 }));
    expect(all.map((f) => f.id)).toEqual(expect.arrayContaining([parent, ...children]));
    const inParent = await collect(admin.folders.list(ws.deploymentId, { first: 2, parentId: parent }));
    expect(inParent.map((f) => f.id)).toEqual(children);
    const topLevel = await collect(admin.folders.list(ws.deploymentId, { first: 1, parentId: 'root' }));
    expect(topLevel.map((f) => f.id)).toContain(parent);
    expect(topLevel.map((f) => f.id)).not.toContain(children[0]);
  });

  it('folders.ancestors: a folder’s path as folders, top-level first and the folder itself last', async () => {
    const top = await ws.folder();
    const middle = await ws.folder(undefined, top);
    const leaf = await ws.folder(undefined, middle);
    const path = await admin.folders.ancestors(ws.deploymentId, leaf);
    expect(path.map((f) => f.id)).toEqual([top, middle, leaf]);
    expect(path[2]?.folderPath.map((entry) => entry.id)).toEqual([top, middle]);
    const failure = await admin.folders.ancestors(ws.deploymentId, 987654).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiError);
    expect((failure as ApiError).code).toBe('FOLDER_NOT_FOUND');
  });

  it('workspace: one folder’s entries by name, filtered by type', async () => {
    const folder = await ws.folder();
    const sub = await ws.folder('a-sub', folder);
    const workbooks = [await ws.workbook(folder, 'b-wb-1'), await ws.workbook(folder, 'c-wb-2'), await ws.workbook(folder, 'd-wb-3')];
    const reports = [await ws.report(folder, 'e-rp-1'), await ws.report(folder, 'f-rp-2')];
    const entries = await collect(admin.workspace.list(ws.deploymentId, { folderId: folder, first: 2, sortBy: 'name' }));
    expect(entries.map((e) => [e.type, e.id])).toEqual([['FOLDER', sub], ...workbooks.map((id) => ['WORKBOOK', id]), ...reports.map((id) => ['REPORT', id])]);
    const onlyReports = await collect(admin.workspace.list(ws.deploymentId, { folderId: folder, first: 1, types: ['REPORT'] }));
    expect(onlyReports.map((e) => e.id)).toEqual(reports);
    const asText = await collect(admin.workspace.list(ws.deploymentId, { folderId: folder, first: 2, types: 'WORKBOOK,REPORT', sortOrder: 'desc' }));
    expect(asText.map((e) => e.id)).toEqual([...workbooks, ...reports].reverse());
  });

  it('reports: cursor pages, and offset pages for the lastViewedAt ordering that refuses cursors', async () => {
    const folder = await ws.folder();
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push(await ws.report(folder));
    const byCreation = await collect(admin.reports.list(ws.deploymentId, { folderId: folder, first: 2, sortBy: 'createdAt', sortOrder: 'asc' }));
    expect(byCreation.map((r) => r.id)).toEqual(ids);

    // Viewing reports 3, then 1 puts them first in lastViewedAt order; never-viewed ones come last.
    for (const id of [ids[2], ids[0]])
      unwrap(
        await admin.GET('/api/v1/deployments/{deploymentId}/reports/{reportId}', {
          params: { path: { deploymentId: ws.deploymentId, reportId: id as number } },
        }),
      );
    const { client, queries } = recording(server);
    const byViews = await collect(client.reports.list(ws.deploymentId, { folderId: folder, first: 2, sortBy: 'lastViewedAt' }));
    expect(byViews.slice(0, 2).map((r) => r.id)).toEqual([ids[0], ids[2]]);
    expect(byViews.map((r) => r.id).sort()).toEqual([...ids].sort());
    expect(queries.map((q) => q.get('offset'))).toEqual(['0', '2', '4']);
  });

  it('users, groups, API keys and policies: every item across pages', async () => {
    const users = [];
    for (let i = 0; i < 4; i++)
      users.push(unwrap(await admin.POST('/api/v1/users', { body: { email: `${uniqueName('user')}@example.com`, role: 'VIEWER' } })).id);
    const groups = [];
    for (let i = 0; i < 3; i++) groups.push(unwrap(await admin.POST('/api/v1/groups', { body: { name: uniqueName('group') } })).id);
    const keys = [];
    for (let i = 0; i < 3; i++) keys.push(unwrap(await admin.POST('/api/v1/api-keys', { body: { name: uniqueName('key') } })).id);
    const policies = [];
    for (const id of users) {
      const body = { principal: { type: 'USER' as const, id }, resource: { type: 'DEPLOYMENT' as const, id: ws.deploymentId }, access: 'VIEW' as const };
      policies.push(unwrap(await admin.POST('/api/v1/policies', { body })).id);
    }
    expect((await collect(admin.users.list({ first: 2, role: 'VIEWER' }))).map((u) => u.id)).toEqual(users);
    expect((await collect(admin.groups.list({ first: 2 }))).map((g) => g.id)).toEqual(expect.arrayContaining(groups));
    const listedKeys = (await collect(admin.apiKeys.list({ first: 2 }))).map((k) => k.id);
    expect(listedKeys).toEqual(expect.arrayContaining(keys));
    expect(listedKeys).toHaveLength(keys.length + 1);
    expect((await collect(admin.policies.list({ first: 3, resourceType: 'DEPLOYMENT', resourceId: ws.deploymentId }))).map((p) => p.id)).toEqual(policies);
  });

  it('asks for 200 a page by default and nothing more once the caller stops', async () => {
    const { client, queries } = recording(server);
    for await (const user of client.users.list()) {
      expect(user.id).toBeGreaterThan(0);
      break;
    }
    expect(queries.map((q) => q.get('first'))).toEqual(['200']);
    const paged = recording(server);
    for await (const folder of paged.client.folders.list(ws.deploymentId, { first: 1 })) {
      expect(folder.id).toBeGreaterThan(0);
      break;
    }
    expect(paged.queries).toHaveLength(1);
  });

  it('throws the ApiError of a failed page', async () => {
    const failure = await collect(admin.folders.list(987654)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({ status: 404, code: 'DEPLOYMENT_NOT_FOUND' });
  });

  it('stops when its signal is aborted', async () => {
    const controller = new AbortController();
    const seen: number[] = [];
    const failure = await (async () => {
      for await (const folder of admin.folders.list(ws.deploymentId, { first: 1 }, { signal: controller.signal })) {
        seen.push(folder.id);
        controller.abort();
      }
    })().catch((error: unknown) => error);
    expect(seen).toHaveLength(1);
    expect(failure).toMatchObject({ name: 'AbortError' });
  });
});
