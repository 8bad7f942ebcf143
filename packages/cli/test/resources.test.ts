import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createClient } from '@mapi/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { REPO_ROOT } from '../../server/test/server-env.js';
import { OPERATIONS } from '../src/generated/operations.js';
import { execute } from '../src/resource/execute.js';
import { formatRows } from '../src/resource/render.js';
import { completion, isolatedEnv, removeTempDirs, runCli, serverVars, show, startTestServer, tempDir, type TestServer } from './helpers.js';

/**
 * The generated commands (src/operation-commands.ts) against a real server: the generic executor
 * on representative operations, from arguments and bodies to tables, JSON, deletes and errors.
 */

interface Group {
  id: number;
  name: string;
  description: string | null;
  memberCount: number;
}

describe('generated commands check their input before any request', () => {
  // Nothing listens on this port: any request would fail with "cannot reach", so a usage error proves none was sent.
  const unreachable = isolatedEnv({ MAPI_URL: 'https://127.0.0.1:59999', MAPI_TOKEN: 'mapi_notarealkeynotarealkeynotarealkeynotar' });
  afterAll(removeTempDirs);

  it('a missing required body, a bad id, a bad --set, a bad number and an unknown enum value are usage errors', async () => {
    const [noBody, badId, badSet, badNumber, badEnum, badJson] = await Promise.all([
      runCli(['groups', 'create'], { env: unreachable }),
      runCli(['groups', 'get', 'abc'], { env: unreachable }),
      runCli(['groups', 'create', '--set', 'name'], { env: unreachable }),
      runCli(['groups', 'list', '--first', 'ten'], { env: unreachable }),
      runCli(['policies', 'list', '--principal-type', 'ROBOT'], { env: unreachable }),
      runCli(['groups', 'create', '--data', '{name: 1}'], { env: unreachable }),
    ]);
    for (const result of [noBody, badId, badSet, badNumber, badEnum, badJson]) {
      expect(result.code, show(result)).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).not.toContain('cannot reach');
    }
    expect(noBody.stderr).toContain('error: mapi groups create needs a body: give --data, --file or --set.');
    expect(noBody.stderr).toContain('hint: `mapi groups create --help` lists the fields.');
    expect(badId.stderr).toContain('error: groupId must be a positive integer, got "abc".');
    expect(badSet.stderr).toContain('error: --set name is not key=value.');
    expect(badNumber.stderr).toContain('error: --first must be an integer, got "ten".');
    expect(badEnum.stderr).toMatch(/argument 'ROBOT' is invalid\. Allowed choices are USER, GROUP\./);
    expect(badJson.stderr).toContain('error: --data is not valid JSON');
  });

  it('a column empty in every row is left out of the header as of the rows, so the two stay aligned', () => {
    const table = formatRows(
      [
        { id: 1, name: 'Finance', description: null, memberCount: 0 },
        { id: 22, name: 'Ops', description: null, memberCount: 3 },
      ],
      80,
    );
    expect(table).toBe('ID  NAME     MEMBER_COUNT\n1   Finance  0\n22  Ops      3\n');
  });

  it('a delete asks on a terminal: "n" sends nothing, "y" sends the request', async () => {
    // util-linux `script` runs the command on a pseudo-terminal, so stdin and stderr are terminals as a person's would be.
    const onTerminal = (args: string, answer: string) => {
      const child = spawn('script', ['-qec', `${process.execPath} ${path.join(REPO_ROOT, 'packages/cli/bin/mapi.js')} ${args}`, '/dev/null'], {
        env: unreachable,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      child.stdin.end(answer);
      return completion(child);
    };
    const [no, yes] = await Promise.all([onTerminal('groups delete 3', 'n\n'), onTerminal('groups delete 3', 'y\n')]);
    expect(no.code, show(no)).toBe(1);
    expect(no.stdout).toContain('groups delete 3? [y/N]');
    expect(no.stdout).toContain('error: Nothing changed.');
    expect(no.stdout).not.toContain('cannot reach');
    expect(yes.code, show(yes)).toBe(1);
    expect(yes.stdout).toContain('groups delete 3? [y/N]');
    expect(yes.stdout).toContain('error: cannot reach the server at https://127.0.0.1:59999');
  });

  it('help lists the body fields, the query options with their choices, and examples', async () => {
    const [create, list] = await Promise.all([runCli(['groups', 'create', '--help']), runCli(['policies', 'list', '--help'])]);
    expect(create.code, show(create)).toBe(0);
    expect(create.stdout).toContain('Calls POST /api/v1/groups.');
    expect(create.stdout).toMatch(/^ {2}name {2}string, required$/m);
    expect(create.stdout).toContain('$ mapi groups create --set name=NAME');
    expect(list.stdout).toMatch(/--principal-type <value>\s+principalType \(choices: "USER", "GROUP"\)/);
    expect(list.stdout).toContain('--all');
  });
});

describe.each(STORE_INDEPENDENT)('generated commands (%s)', (dialect) => {
  let server: TestServer;
  let env: Record<string, string>;
  let dir: string;
  let deploymentId: number;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    env = isolatedEnv(serverVars(server));
    dir = tempDir();
    deploymentId = await server.deployment(`resources ${dialect}`);
  });
  afterAll(async () => {
    await server?.stop();
    removeTempDirs();
  });

  async function json<T>(args: string[], input?: string): Promise<T> {
    const result = await runCli([...args, '--json'], { env, ...(input !== undefined ? { input } : {}) });
    expect(result.code, show(result)).toBe(0);
    return JSON.parse(result.stdout) as T;
  }

  it('creates with --set and with a YAML --file, lists as a table and as the exact JSON, follows cursors with --all', async () => {
    const finance = await json<Group>(['groups', 'create', '--set', 'name=Finance', '--set', 'description=Money people']);
    expect(finance).toMatchObject({ name: 'Finance', description: 'Money people', memberCount: 0 });
    const file = path.join(dir, 'ops.yaml');
    fs.writeFileSync(file, 'name: Operations\ndescription: Keeps the lights on\n');
    const ops = await json<Group>(['groups', 'create', '--file', file]);
    expect(ops).toMatchObject({ name: 'Operations', description: 'Keeps the lights on' });

    const table = await runCli(['groups', 'list'], { env });
    expect(table.code, show(table)).toBe(0);
    // id and name first, then the other scalar fields in the server's order; arrays are left to --json.
    expect(table.stdout).toMatch(/^ID\s+NAME\s+DESCRIPTION\s+MEMBER_COUNT\s+CREATED_AT\s+UPDATED_AT\n/);
    // Times to the minute, as the other tables show them.
    expect(table.stdout).toMatch(new RegExp(`^${finance.id}\\s+Finance\\s+Money people\\s+0\\s+\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}\\s`, 'm'));
    expect(table.stdout).not.toContain('members');

    const asJson = await runCli(['groups', 'list', '--json'], { env });
    expect(asJson.code, show(asJson)).toBe(0);
    const direct = await server.get('/api/v1/groups');
    expect(JSON.parse(asJson.stdout)).toEqual(direct.body);

    const firstPage = await runCli(['groups', 'list', '--first', '1'], { env });
    expect(firstPage.code, show(firstPage)).toBe(0);
    expect(firstPage.stdout.trim().split('\n')).toHaveLength(2);
    expect(firstPage.stderr).toMatch(/^More items: pass --all for every page, or --after \S+ for the next\.$/m);
    const every = await json<Group[]>(['groups', 'list', '--first', '1', '--all']);
    expect(every.map((g) => g.name)).toEqual(expect.arrayContaining(['Finance', 'Operations']));
    expect(every).toHaveLength((direct.body as { items: unknown[] }).items.length);
  });

  it('gets as aligned key-value lines, updates from --data with --set over it, and adds members', async () => {
    const group = await json<Group>(['groups', 'create', '--set', 'name=Sales']);
    const shown = await runCli(['groups', 'get', String(group.id)], { env });
    expect(shown.code, show(shown)).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^id {11}${group.id}$`, 'm'));
    expect(shown.stdout).toMatch(/^name {9}Sales$/m);
    expect(shown.stdout).toMatch(/^description {2}-$/m);
    expect(shown.stdout).toMatch(/^members {6}\[\]$/m);

    const updated = await json<Group>([
      'groups',
      'update',
      String(group.id),
      '--data',
      '{"name": "ignored", "description": "Sells"}',
      '--set',
      'name=Sales EU',
    ]);
    expect(updated).toMatchObject({ id: group.id, name: 'Sales EU', description: 'Sells' });

    const user = await server.post('/api/v1/users', { email: `ann.${dialect}@example.com`, firstName: 'Ann' });
    expect(user.status, user.text).toBe(201);
    const userId = (user.body as { id: number }).id;
    const added = await json<Group>(['groups', 'add-members', String(group.id), '--set', `userIds=[${userId}]`]);
    expect(added.memberCount).toBe(1);
    expect((await server.get(`/api/v1/groups/${group.id}`)).body).toMatchObject({ memberCount: 1, members: [{ id: userId }] });
  });

  it('typed and dotted --set values reach the server as JSON: user attributes and their values', async () => {
    const attribute = await json<{ id: number; name: string; type: string; defaultValue: unknown }>([
      'user-attributes',
      'create',
      '--set',
      'name=region',
      '--set',
      'type=string',
      '--set',
      'defaultValue=null',
    ]);
    expect(attribute).toMatchObject({ name: 'region', type: 'string', defaultValue: null });
    const quota = await json<{ type: string }>(['user-attributes', 'create', '--data', '{"name": "quota", "type": "number"}']);
    expect(quota.type).toBe('number');

    const user = await server.post('/api/v1/users', { email: `bo.${dialect}@example.com` });
    const userId = (user.body as { id: number }).id;
    const set = await runCli(['user-attribute-values', 'set', String(userId), '--set', 'values.region=EU', '--set', 'values.quota=12'], { env });
    expect(set.code, show(set)).toBe(0);
    const values = await json<{ userId: number; values: { name: string; value: unknown; isDefault: boolean }[] }>([
      'user-attribute-values',
      'get',
      String(userId),
    ]);
    expect(values.values).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'region', value: 'EU', isDefault: false }),
        expect.objectContaining({ name: 'quota', value: 12 }),
      ]),
    );
  });

  it('a policy from YAML on stdin, listed by a query option, deleted off a terminal without asking', async () => {
    const group = await json<Group>(['groups', 'create', '--set', 'name=Readers']);
    const yaml = `principal:\n  type: GROUP\n  id: ${group.id}\nresource:\n  type: DEPLOYMENT\n  id: ${deploymentId}\naccess: VIEW\n`;
    const policy = await json<{ id: number; access: string }>(['policies', 'create', '--file', '-'], yaml);
    expect(policy.access).toBe('VIEW');

    const listed = await json<{ items: { id: number }[] }>(['policies', 'list', '--principal-type', 'GROUP', '--principal-id', String(group.id)]);
    expect(listed.items.map((p) => p.id)).toEqual([policy.id]);

    // stdin is not a terminal here, so nothing asks: as `mapi delete` does in scripts.
    const deleted = await runCli(['policies', 'delete', String(policy.id)], { env });
    expect(deleted.code, show(deleted)).toBe(0);
    expect(deleted.stdout).toBe('');
    expect(deleted.stderr).toBe(`Done: policies delete ${policy.id} (204).\n`);
    const after = await runCli(['policies', 'list', '--principal-type', 'GROUP', '--principal-id', String(group.id)], { env });
    expect(after.stdout).toBe('No items.\n');

    const groupGone = await runCli(['groups', 'delete', String(group.id), '--yes', '--json'], { env });
    expect(groupGone.code, show(groupGone)).toBe(0);
    expect(groupGone.stdout).toBe('');
    expect((await server.get(`/api/v1/groups/${group.id}`)).status).toBe(404);
  });

  it('an operation that takes no credential runs without a token; the others still need one', async () => {
    const anonymous = isolatedEnv({ MAPI_URL: server.url, MAPI_CA_CERT: server.caFile });
    const [health, jwks, refused] = await Promise.all([
      runCli(['server', 'health', '--json'], { env: anonymous }),
      runCli(['embed', 'jwks', '--json'], { env: anonymous }),
      runCli(['groups', 'list'], { env: anonymous }),
    ]);
    expect(health.code, show(health)).toBe(0);
    expect(JSON.parse(health.stdout)).toEqual((await server.get('/healthz')).body);
    expect(jwks.code, show(jwks)).toBe(0);
    expect(JSON.parse(jwks.stdout)).toHaveProperty('keys');
    expect(refused.code, show(refused)).toBe(1);
    expect(refused.stderr).toContain('error: No API token is set.');
  });

  it("an error answer prints the server's problem detail and exits 1", async () => {
    const missing = await runCli(['groups', 'get', '999999'], { env });
    expect(missing.code, show(missing)).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/^error: 404 .*group/im);
    expect(missing.stderr).toMatch(/^ {2}request id: \S+$/m);

    await json(['groups', 'create', '--set', 'name=Twice']);
    const taken = await runCli(['groups', 'create', '--set', 'name=twice'], { env });
    expect(taken.code, show(taken)).toBe(1);
    expect(taken.stderr).toMatch(/^error: 409 /m);

    // SCIM answers errors in its own form (RFC 7644), not as problem details: its detail is printed all the same.
    const scim = await runCli(['scim', 'users', 'get', 'no-such-user'], { env });
    expect(scim.code, show(scim)).toBe(1);
    expect(scim.stderr).toMatch(/^error: 404 User no-such-user does not exist\.$/m);
    expect(scim.stderr).not.toContain('Request failed');

    const invalid = await runCli(['groups', 'create', '--set', 'name=X', '--set', 'colour=blue'], { env });
    expect(invalid.code, show(invalid)).toBe(1);
    expect(invalid.stderr).toMatch(/^error: 400 /m);
    expect(invalid.stderr).toContain('colour');
  });

  it('reports list and get in a deployment, builds list, and a table fitted to COLUMNS with long cells cut by an ellipsis', async () => {
    const reportId = await server.report(deploymentId, 'Quarterly revenue');
    const reports = await runCli(['reports', 'list', String(deploymentId)], { env });
    expect(reports.code, show(reports)).toBe(0);
    expect(reports.stdout).toMatch(new RegExp(`^${reportId}\\s+Quarterly revenue`, 'm'));
    const report = await json<{ id: number; name: string }>(['reports', 'get', String(deploymentId), String(reportId)]);
    expect(report).toMatchObject({ id: reportId, name: 'Quarterly revenue' });

    const builds = await runCli(['builds', 'list', String(deploymentId)], { env });
    expect(builds.code, show(builds)).toBe(0);
    expect(builds.stdout.length).toBeGreaterThan(0);

    await json(['groups', 'create', '--set', 'name=Wide', '--set', `description=${'a very long description '.repeat(10)}`]);
    const narrow = await runCli(['groups', 'list'], { env: { ...env, COLUMNS: '60' } });
    expect(narrow.code, show(narrow)).toBe(0);
    const lines = narrow.stdout.trimEnd().split('\n');
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(60);
    expect(narrow.stdout).toContain('a very long description a very long des…');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+DESCRIPTION$/);
    expect(narrow.stderr).toBe('(3 more columns: widen the terminal, or use --json)\n');
  });

  it('the executor downloads a binary answer to --out, and keeps an existing file without --force', async () => {
    // The only binary operation has a hand-written command (dashboards download), so the executor is called as a command would call it.
    const workbook = await server.workbook(deploymentId, 'Weekly');
    const config = { title: 'Weekly', widgets: [{ id: 'note', type: 'TEXT', position: { x: 0, y: 0, w: 6, h: 3 }, config: { text: 'Sales are up.' } }] };
    const published = await server.post(`/api/v1/deployments/${deploymentId}/workbooks/${workbook}/publish`, { config });
    expect(published.status, published.text).toBe(200);
    const client = createClient({ baseUrl: server.url, token: server.key, ca: fs.readFileSync(server.caFile) });
    const started = await client.dashboardExports.start(deploymentId, { dashboardId: (published.body as { id: number }).id, format: 'pdf' });
    expect((await client.dashboardExports.waitFor(deploymentId, started.jobId)).status).toBe('completed');

    const out = path.join(dir, 'weekly.pdf');
    const request = { path: { deploymentId, jobId: started.jobId }, query: {} };
    const output = { json: false, all: false, out, force: false };
    await execute(client, OPERATIONS.downloadDashboardExport, request, output, 'Done');
    expect(fs.readFileSync(out).subarray(0, 5).toString()).toBe('%PDF-');
    fs.writeFileSync(out, 'keep me');
    await expect(execute(client, OPERATIONS.downloadDashboardExport, request, output, 'Done')).rejects.toThrow(`${out} already exists.`);
    expect(fs.readFileSync(out, 'utf8')).toBe('keep me');
    await execute(client, OPERATIONS.downloadDashboardExport, request, { ...output, force: true }, 'Done');
    expect(fs.readFileSync(out).subarray(0, 5).toString()).toBe('%PDF-');
  });
});
