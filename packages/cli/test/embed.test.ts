import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { parseMember, parseUsers } from '../src/commands/embed.js';
import { isolatedEnv, runCli, serverVars, show, startTestServer, type TestServer } from './helpers.js';

/** `mapi embed tenants|users|groups` against a real server. */

describe('embed argument parsing', () => {
  it('reads users as a JSON array, JSON lines or one external id a line', () => {
    expect(parseUsers('[{"externalId":"a","email":"a@x.test"},"b"]')).toEqual([{ externalId: 'a', email: 'a@x.test' }, { externalId: 'b' }]);
    expect(parseUsers('{"externalId":"a","groups":["G"]}\n# comment\n\nb\n')).toEqual([{ externalId: 'a', groups: ['G'] }, { externalId: 'b' }]);
    expect(parseUsers('  \n')).toEqual([]);
  });

  it('reads members as external ids, or id:<n> for embed user ids', () => {
    expect(parseMember('user-1')).toEqual({ externalId: 'user-1' });
    expect(parseMember('id:17')).toEqual({ embedUserId: 17 });
    expect(() => parseMember('id:x')).toThrow();
  });
});

describe.each(STORE_INDEPENDENT)('mapi embed (%s)', (dialect) => {
  let server: TestServer;
  let env: Record<string, string>;

  beforeAll(async () => {
    // A low cap, so an import can run into it (exit code 2).
    server = await startTestServer(dialect, { EMBED_USER_LIMIT: '5' });
    env = isolatedEnv(serverVars(server));
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('provisions one user, and imports many with failures listed per user (exit 2)', async () => {
    const one = await runCli(['embed', 'users', 'provision', 'Acme', 'User-1', '--email', 'Ana@Acme.test', '--display-name', 'Ana', '--json'], { env });
    expect(one.code, show(one)).toBe(0);
    expect(JSON.parse(one.stdout)).toMatchObject({ externalId: 'user-1', email: 'ana@acme.test', firstName: 'Ana' });

    const imported = await runCli(['embed', 'users', 'import', 'acme', '-'], {
      env,
      input: 'user-2\n{"externalId":"user-3","groups":["no-such-group"]}\nuser-4\n',
    });
    expect(imported.code, show(imported)).toBe(2);
    expect(imported.stdout).toContain('Provisioned 2 of 3 users');
    expect(imported.stdout).toMatch(/user-3\s+400\s+Groups with names "no-such-group" not found/);

    const capped = await runCli(['embed', 'users', 'import', 'other', '-', '--json'], { env, input: 'x1\nx2\nx3\n' });
    expect(capped.code, show(capped)).toBe(2);
    const cappedBody = JSON.parse(capped.stdout) as { succeeded: unknown[]; failed: Array<{ externalId: string; error: { status: number } }> };
    expect(cappedBody.succeeded).toHaveLength(2);
    expect(cappedBody.failed).toEqual([{ externalId: 'x3', error: { status: 429, message: expect.stringContaining('EMBED_USER_LIMIT') } }]);
  });

  it('lists tenants as a table and users with --search', async () => {
    const tenants = await runCli(['embed', 'tenants', 'list'], { env });
    expect(tenants.code, show(tenants)).toBe(0);
    expect(tenants.stdout).toMatch(/^ID\s+NAME\s+DISPLAY NAME\s+USERS\s+CREATED\n/);
    expect(tenants.stdout).toMatch(/acme\s+-\s+3/);

    const users = await runCli(['embed', 'users', 'list', 'acme', '--search', 'user-', '--json'], { env });
    expect((JSON.parse(users.stdout) as Array<{ externalId: string }>).map((u) => u.externalId).sort()).toEqual(['user-1', 'user-2', 'user-4']);
  });

  let groupId = '';
  it('creates a group and adds members', async () => {
    const created = await runCli(['embed', 'groups', 'create', 'acme', 'editors', '--description', 'can edit', '--json'], { env });
    expect(created.code, show(created)).toBe(0);
    groupId = String((JSON.parse(created.stdout) as { id: number }).id);
    const added = await runCli(['embed', 'groups', 'add', 'acme', groupId, 'user-1', 'user-2', '--json'], { env });
    expect(added.code, show(added)).toBe(0);
    expect((JSON.parse(added.stdout) as { addedMembers: unknown[] }).addedMembers).toHaveLength(2);
    const members = await runCli(['embed', 'groups', 'members', 'acme', groupId, '--json'], { env });
    expect((JSON.parse(members.stdout) as Array<{ externalId: string }>).map((u) => u.externalId)).toEqual(['user-2', 'user-1']);
  });

  it('refuses to delete a group while it has members (exit 1); removes them, then deletes it', async () => {
    const busy = await runCli(['embed', 'groups', 'delete', 'acme', groupId], { env });
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain('400');
    const removed = await runCli(['embed', 'groups', 'remove', 'acme', groupId, 'user-1', 'user-2'], { env });
    expect(removed.code, show(removed)).toBe(0);
    expect((await runCli(['embed', 'groups', 'delete', 'acme', groupId], { env })).code).toBe(0);
  });

  it('deletes a tenant only by its canonical name', async () => {
    const refused = await runCli(['embed', 'tenants', 'delete', 'ACME'], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('canonical lowercase');
    const deleted = await runCli(['embed', 'tenants', 'delete', 'acme'], { env });
    expect(deleted.code, show(deleted)).toBe(0);
    expect(JSON.parse((await runCli(['embed', 'tenants', 'list', '--json'], { env })).stdout).map((t: { name: string }) => t.name)).toEqual(['other']);
  });
});
