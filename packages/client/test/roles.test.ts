import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { unwrap } from '../src/errors.js';
import { ApiError, type MapiClient, type Role } from '../src/node.js';
import { startTestServer, uniqueName, type TestServer } from './support.js';

/** roles helpers (reference 8.D). */
describe.each(STORE_INDEPENDENT)('roles helpers (%s)', (dialect) => {
  let server: TestServer;
  let client: MapiClient;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    client = server.client();
  });
  afterAll(async () => server?.close());

  const collect = async <T>(items: AsyncIterable<T>) => {
    const out: T[] = [];
    for await (const item of items) out.push(item);
    return out;
  };

  it('creates, reads, lists newest first, updates and deletes a role', async () => {
    const policies = [{ resourceType: 'Deployment' as const, actions: ['DeploymentRead'], resources: ['All'] }];
    const first = await client.roles.create({ name: uniqueName('readers'), policies });
    const second = await client.roles.create({ name: uniqueName('editors'), description: 'edit', policies: [] });
    expect(first).toEqual({ id: expect.any(Number), name: first.name, description: null, policies });
    expect(await client.roles.get(second.id)).toEqual(second);
    const listed: Role[] = await collect(client.roles.list());
    expect(listed.map((r) => r.id).slice(0, 2)).toEqual([second.id, first.id]);
    const updated = await client.roles.update(second.id, { description: null, policies });
    expect(updated).toEqual({ ...second, description: null, policies });
    await client.roles.delete(second.id);
    await expect(client.roles.get(second.id)).rejects.toMatchObject({ status: 404, code: 'ROLE_NOT_FOUND' });
  });

  it('throws ApiError with the code for a built-in name and a taken name', async () => {
    const error = await client.roles.create({ name: 'Admin', policies: [] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, code: 'ROLE_NAME_RESERVED' });
    const role = await client.roles.create({ name: uniqueName('taken'), policies: [] });
    await expect(client.roles.create({ name: role.name, policies: [] })).rejects.toMatchObject({ status: 409, code: 'ROLE_NAME_TAKEN' });
  });

  it('assigns and unassigns users and groups idempotently', async () => {
    const role = await client.roles.create({ name: uniqueName('held'), policies: [] });
    const user = unwrap(await client.POST('/api/v1/users', { body: { email: `${uniqueName('u')}@example.com` } }));
    const group = unwrap(await client.POST('/api/v1/groups', { body: { name: uniqueName('g') } }));
    await client.roles.assignUser(role.id, user.id);
    await client.roles.assignUser(role.id, user.id);
    await client.roles.unassignUser(role.id, user.id);
    await client.roles.unassignUser(role.id, user.id);
    await client.roles.assignGroup(role.id, group.id);
    await client.roles.assignGroup(role.id, group.id);
    await client.roles.unassignGroup(role.id, group.id);
    await expect(client.roles.assignUser(role.id, 999_999)).rejects.toMatchObject({ status: 404, code: 'USER_NOT_FOUND' });
    await expect(client.roles.assignGroup(999_999, group.id)).rejects.toMatchObject({ status: 404, code: 'ROLE_NOT_FOUND' });
  });
});
