import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { DEFAULT_LIMIT, describeEvent, parseInstant, parseLimit } from '../src/commands/audit.js';
import { isolatedEnv, runCli, serverVars, show, startTestServer, type TestServer } from './helpers.js';

/** `mapi audit` against a real server. */

describe('audit options', () => {
  it('--limit is 1 to 100000 (default 50); --since/--until take dates; an event reads as its request line or name', () => {
    expect(parseLimit(undefined)).toBe(DEFAULT_LIMIT);
    expect(parseLimit('500')).toBe(500);
    for (const bad of ['0', '1.5', '-3', 'ten', '']) expect(() => parseLimit(bad)).toThrow(/from 1 to 100000/);
    expect(parseInstant('2026-11-26', '--since')).toBe('2026-11-26T00:00:00.000Z');
    expect(() => parseInstant('yesterday', '--since')).toThrow(/--since must be a date/);
    const base = {
      id: 1,
      occurredAt: '2026-11-26T00:00:00.000Z',
      actorUserId: 1,
      actorEmail: 'a@example.com',
      credentialKind: 'api-key',
      credentialId: '1',
      status: 200,
      requestId: 'r',
      details: {},
    };
    expect(describeEvent({ ...base, action: 'request', method: 'PUT', route: '/api/v1/deployments/:deploymentId/env-vars', target: { deploymentId: 3 } })).toBe(
      'PUT /api/v1/deployments/:deploymentId/env-vars deploymentId=3',
    );
    expect(describeEvent({ ...base, action: 'env-vars.read', method: null, route: null, target: { deploymentId: 3 } })).toBe('env-vars.read deploymentId=3');
  });
});

describe.each(STORE_INDEPENDENT)('mapi audit (%s)', (dialect) => {
  let server: TestServer;
  let env: Record<string, string>;
  let d: number;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    env = isolatedEnv(serverVars(server));
    d = await server.deployment(`Audit ${dialect}`);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('lists the audit log newest first as a table or JSON, with filters and a limit', async () => {
    expect((await server.put('/api/v1/tenant/settings', { auditLogEnabled: true })).status).toBe(200);
    expect((await server.put(`/api/v1/deployments/${d}/env-vars`, { env_variables: [{ name: 'API_TOKEN', value: 'do-not-print-me' }] })).status).toBe(200);
    expect((await server.get(`/api/v1/deployments/${d}/env-vars`)).status).toBe(200);

    const json = await runCli(['audit', '--json'], { env });
    expect(json.code, show(json)).toBe(0);
    const events = JSON.parse(json.stdout) as Array<{ action: string; route: string | null; target: Record<string, unknown> }>;
    expect(events.map((e) => e.action).slice(0, 3)).toEqual(['env-vars.read', 'request', 'request']);
    expect(events[1]).toMatchObject({ route: '/api/v1/deployments/:deploymentId/env-vars', target: { deploymentId: d } });
    expect(json.stdout).not.toContain('do-not-print-me');

    const table = await runCli(['audit'], { env });
    expect(table.code, show(table)).toBe(0);
    const [header, first] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^TIME\s+ACTOR\s+CREDENTIAL\s+STATUS\s+EVENT$/);
    expect(first).toContain(`env-vars.read deploymentId=${d}`);

    const filtered = await runCli(['audit', '--action', 'request', '--method', 'put', '--limit', '1', '--json'], { env });
    expect(filtered.code, show(filtered)).toBe(0);
    expect(JSON.parse(filtered.stdout)).toEqual([expect.objectContaining({ action: 'request', method: 'PUT' })]);

    const none = await runCli(['audit', '--until', '2000-01-01'], { env });
    expect(none.code, show(none)).toBe(0);
    expect(none.stdout + none.stderr).toContain('No audit events match');

    const bad = await runCli(['audit', '--method', 'GET'], { env });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--method must be one of');
  });
});
