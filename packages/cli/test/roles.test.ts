import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { parsePolicy } from '../src/commands/roles.js';
import { isolatedEnv, runCli, serverVars, show, startTestServer, type TestServer } from './helpers.js';

/** `mapi roles …` against a real server. */

describe('parsePolicy', () => {
  it('reads TYPE:ACTIONS:RESOURCES with comma-separated lists, and refuses anything else', () => {
    expect(parsePolicy('Deployment:DeploymentRead,SchemaRead:12,14')).toEqual({
      resourceType: 'Deployment',
      actions: ['DeploymentRead', 'SchemaRead'],
      resources: ['12', '14'],
    });
    expect(parsePolicy('global:AIBIDevelop:All')).toEqual({ resourceType: 'Global', actions: ['AIBIDevelop'], resources: ['All'] });
    expect(() => parsePolicy('Deployment:DeploymentRead')).toThrow(/not a policy/);
    expect(() => parsePolicy('Folder:All:1')).toThrow(/not a policy/);
    expect(() => parsePolicy('Deployment::1')).toThrow(/not a policy/);
  });
});

describe.each(STORE_INDEPENDENT)('mapi roles (%s)', (dialect) => {
  let server: TestServer;
  let env: Record<string, string>;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    env = isolatedEnv(serverVars(server));
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('creates, lists, shows, updates, assigns, unassigns and deletes a role', async () => {
    const created = await runCli(['roles', 'create', 'Readers', '--description', 'read all', '--policy', 'Deployment:DeploymentRead:All', '--json'], { env });
    expect(created.code, show(created)).toBe(0);
    const role = JSON.parse(created.stdout) as { id: number; name: string };
    expect(role).toEqual({
      id: expect.any(Number),
      name: 'Readers',
      description: 'read all',
      policies: [{ resourceType: 'Deployment', actions: ['DeploymentRead'], resources: ['All'] }],
    });

    const table = await runCli(['roles', 'list'], { env });
    expect(table.code, show(table)).toBe(0);
    expect(table.stdout).toMatch(/^ID\s+NAME\s+DESCRIPTION\s+POLICIES\n/);
    expect(table.stdout).toContain('Deployment:DeploymentRead:All');

    const updated = await runCli(
      ['roles', 'update', String(role.id), '--clear-description', '--policy', 'Deployment:All:12', '--policy', 'Global:AIBIDevelop:All', '--json'],
      { env },
    );
    expect(updated.code, show(updated)).toBe(0);
    expect(JSON.parse(updated.stdout)).toEqual({
      id: role.id,
      name: 'Readers',
      description: null,
      policies: [
        { resourceType: 'Deployment', actions: ['All'], resources: ['12'] },
        { resourceType: 'Global', actions: ['AIBIDevelop'], resources: ['All'] },
      ],
    });
    const shown = await runCli(['roles', 'get', String(role.id)], { env });
    expect(shown.stdout).toContain('Global:AIBIDevelop:All');

    const user = await server.post('/api/v1/users', { email: 'role-holder@example.com' });
    const userId = (user.body as { id: number }).id;
    const group = await server.post('/api/v1/groups', { name: 'role-group' });
    const groupId = (group.body as { id: number }).id;
    for (const args of [
      ['assign', String(role.id), '--user', String(userId)],
      ['assign', String(role.id), '--user', String(userId)],
      ['assign', String(role.id), '--group', String(groupId)],
      ['unassign', String(role.id), '--user', String(userId)],
      ['unassign', String(role.id), '--group', String(groupId)],
    ]) {
      const result = await runCli(['roles', ...args], { env });
      expect(result.code, show(result)).toBe(0);
    }
    const both = await runCli(['roles', 'assign', String(role.id), '--user', String(userId), '--group', String(groupId)], { env });
    expect(both.code).not.toBe(0);
    expect(both.stderr).toContain('exactly one of --user');

    const reserved = await runCli(['roles', 'create', 'Admin'], { env });
    expect(reserved.code).not.toBe(0);
    expect(reserved.stderr).toContain('400');

    const deleted = await runCli(['roles', 'delete', String(role.id)], { env });
    expect(deleted.code, show(deleted)).toBe(0);
    const gone = await runCli(['roles', 'get', String(role.id)], { env });
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain('404');
  });
});
