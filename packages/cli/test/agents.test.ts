import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { isolatedEnv, removeTempDirs, runCli, serverVars, show, startTestServer, tempDir, type TestServer } from './helpers.js';

/** `mapi agents …`, `mapi tasks …` and `mapi ai …` against a real server. */
describe.each(STORE_INDEPENDENT)('mapi agents, tasks and ai (%s)', (dialect) => {
  let server: TestServer;
  let env: Record<string, string>;
  let d: number;
  const cli = (args: string[], input?: string) => runCli(args, { env, ...(input !== undefined ? { input } : {}) });

  beforeAll(async () => {
    server = await startTestServer(dialect);
    env = isolatedEnv(serverVars(server));
    d = await server.deployment(`Agents ${dialect}`);
  });
  afterAll(async () => {
    await server?.stop();
    removeTempDirs();
  });

  it('creates agents from flags and from a YAML file, lists, shows, updates, lists starter prompts and deletes', async () => {
    const created = await cli([
      'agents',
      'create',
      String(d),
      'Sales',
      '--member',
      'orders',
      '--member',
      'customers',
      '--starter-prompt',
      'Revenue by month?',
      '--json',
    ]);
    expect(created.code, show(created)).toBe(0);
    const sales = JSON.parse(created.stdout);
    expect(sales).toMatchObject({ name: 'Sales', members: ['orders', 'customers'], starterPrompts: ['Revenue by month?'], instructions: '' });

    const dir = tempDir();
    const file = path.join(dir, 'ops.yaml');
    fs.writeFileSync(
      file,
      'name: Ops\ndescription: Late orders and stock\ninstructions: |\n  Answer in one sentence.\n  Name the query.\nstarterPrompts:\n  - Late orders?\n',
    );
    const fromFile = await cli(['agents', 'create', String(d), '--file', file, '--description', 'Operations']);
    expect(fromFile.code, show(fromFile)).toBe(0);
    expect(fromFile.stderr).toMatch(/^Created agent \d+ "Ops"\.$/m);
    expect(fromFile.stdout).toContain('DESCRIPTION   Operations');
    expect(fromFile.stdout).toContain('MEMBERS       all the asker can see');
    expect(fromFile.stdout).toMatch(/INSTRUCTIONS\n {2}Answer in one sentence\.\n {2}Name the query\./);
    const fromStdin = await cli(['agents', 'create', String(d), '--file', '-', '--json'], '{"name": "Finance", "starterPrompts": ["Cash?"]}');
    expect(fromStdin.code, show(fromStdin)).toBe(0);
    const finance = JSON.parse(fromStdin.stdout);

    const table = await cli(['agents', 'list', String(d)]);
    expect(table.code, show(table)).toBe(0);
    expect(table.stdout).toMatch(/^ID\s+NAME\s+MEMBERS\s+PROMPTS\s+UPDATED \(UTC\)\s+DESCRIPTION\n/);
    expect(table.stdout.split('\n')[1]).toMatch(/Finance\s+all\s+1/);
    expect(table.stdout).toMatch(/Sales\s+2\s+1/);

    const suggestions = await cli(['agents', 'suggestions', String(d)]);
    expect(suggestions.stdout).toMatch(/AGENT\s+NAME\s+PROMPT\n\s*\d+\s+Sales\s+Revenue by month\?\n\s*\d+\s+Ops\s+Late orders\?\n\s*\d+\s+Finance\s+Cash\?/);

    const renamed = await cli(['agents', 'update', String(d), String(sales.id), '--name', 'Sales EMEA', '--all-members', '--json']);
    expect(renamed.code, show(renamed)).toBe(0);
    expect(JSON.parse(renamed.stdout)).toMatchObject({ name: 'Sales EMEA', members: null, starterPrompts: ['Revenue by month?'] });
    const taken = await cli(['agents', 'update', String(d), String(sales.id), '--name', 'Ops']);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain('409');
    expect(taken.stderr).toContain(`hint: Choose another name; \`mapi agents list ${d}\``);
    const nothing = await cli(['agents', 'update', String(d), String(sales.id)]);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain('Nothing to change');
    const badFile = await cli(['agents', 'create', String(d), '--file', '-'], 'name: [unclosed');
    expect(badFile.code).toBe(1);
    expect(badFile.stderr).toContain('stdin is not valid JSON or YAML');

    const deleted = await cli(['agents', 'delete', String(d), String(finance.id)]);
    expect(deleted.code, show(deleted)).toBe(0);
    const gone = await cli(['agents', 'get', String(d), String(finance.id)]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('404');
    expect(gone.stderr).toContain(`hint: \`mapi agents list ${d}\` shows the deployment's agents`);
  });

  it('schedules tasks (the only agent by default), updates, runs, lists runs and deletes them; a bad cron shows its pointer', async () => {
    const d2 = await server.deployment(`Tasks ${dialect}`);
    const noAgent = await cli(['tasks', 'create', String(d2), '--prompt', 'Summarise', '--cron', '0 7 * * *']);
    expect(noAgent.code).toBe(1);
    expect(noAgent.stderr).toContain(`Deployment ${d2} has no agents.`);
    expect(noAgent.stderr).toContain(`mapi agents create ${d2} <name>`);
    const agent = JSON.parse((await cli(['agents', 'create', String(d2), 'Daily', '--json'])).stdout);

    const created = await cli([
      'tasks',
      'create',
      String(d2),
      '--prompt',
      'Summarise yesterday',
      '--cron',
      '30 7 * * 1-5',
      '--timezone',
      'Europe/Berlin',
      '--json',
    ]);
    expect(created.code, show(created)).toBe(0);
    const task = JSON.parse(created.stdout);
    expect(task).toMatchObject({ agentId: agent.id, cron: '30 7 * * 1-5', timezone: 'Europe/Berlin', active: true });

    const bad = await cli(['tasks', 'create', String(d2), '--agent', String(agent.id), '--prompt', 'x', '--cron', '*/5 * * * *']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('/body/cron');

    const table = await cli(['tasks', 'list', String(d2)]);
    expect(table.code, show(table)).toBe(0);
    expect(table.stdout).toMatch(/^\s*ID\s+AGENT\s+ACTIVE\s+CRON\s+TIMEZONE\s+NEXT RUN \(UTC\)\s+OWNER\s+PROMPT\n/);
    expect(table.stdout).toContain('30 7 * * 1-5');
    expect(table.stdout).toContain('admin@localhost');

    const dir = tempDir();
    const file = path.join(dir, 'task.json');
    fs.writeFileSync(file, JSON.stringify({ prompt: 'Summarise last week', cron: '0 8 * * 1' }));
    const updated = await cli(['tasks', 'update', String(d2), String(task.id), '--file', file, '--inactive', '--json']);
    expect(updated.code, show(updated)).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ prompt: 'Summarise last week', cron: '0 8 * * 1', active: false, nextRunAt: null });

    const ran = await cli(['tasks', 'run', String(d2), String(task.id)]);
    expect(ran.code, show(ran)).toBe(0);
    expect(ran.stderr).toMatch(new RegExp(`^Queued run \\d+ of task ${task.id} \\(job \\d+\\); \`mapi tasks runs ${d2} ${task.id}\``, 'm'));
    const runs = await cli(['tasks', 'runs', String(d2), String(task.id)]);
    expect(runs.code, show(runs)).toBe(0);
    expect(runs.stdout).toMatch(
      /ID\s+TRIGGER\s+STATUS\s+CREATED \(UTC\)\s+FINISHED \(UTC\)\s+JOB\s+THREAD\s+RESULT\n\s*\d+\s+manual\s+(queued|running|failed)\s/,
    );

    const got = await cli(['tasks', 'get', String(d2), String(task.id), '--json']);
    expect(JSON.parse(got.stdout).id).toBe(task.id);
    const deleted = await cli(['tasks', 'delete', String(d2), String(task.id)]);
    expect(deleted.code, show(deleted)).toBe(0);
    const gone = await cli(['tasks', 'get', String(d2), String(task.id)]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain(`mapi tasks list ${d2}`);
  });

  it('shows and changes the AI settings; shows a month of usage', async () => {
    const shown = await cli(['ai', 'settings']);
    expect(shown.code, show(shown)).toBe(0);
    expect(shown.stdout).toContain('AI features   off');
    expect(shown.stdout).toContain('Per answer    at most 1,024 tokens and 8 tool calls');
    expect(shown.stdout).toContain('Per user      no monthly budget');

    const noProvider = await cli(['ai', 'settings', 'set', '--model', 'llama3.1']);
    expect(noProvider.code).toBe(1);
    expect(noProvider.stderr).toContain('give both --provider-url and --model');

    const set = await cli(
      [
        'ai',
        'settings',
        'set',
        '--enabled',
        '--provider-url',
        'http://127.0.0.1:9/v1',
        '--model',
        'local',
        '--api-key-stdin',
        '--tokens-per-user-per-month',
        '200000',
      ],
      'sk-test\n',
    );
    expect(set.code, show(set)).toBe(0);
    expect(set.stdout).toContain('AI features   on');
    expect(set.stdout).toContain("Provider      http://127.0.0.1:9/v1, model local, key set (the account's own)");
    expect(set.stdout).toContain('Per user      200,000 tokens a month (UTC)');
    const model = await cli(['ai', 'settings', 'set', '--model', 'other', '--json']);
    expect(model.code, show(model)).toBe(0);
    expect(JSON.parse(model.stdout)).toMatchObject({ provider: { baseUrl: 'http://127.0.0.1:9/v1', model: 'other', apiKeySet: true } });
    const off = await cli(['ai', 'settings', 'set', '--disabled', '--remove-provider', '--tokens-per-user-per-month', 'none', '--json']);
    expect(off.code, show(off)).toBe(0);
    expect(JSON.parse(off.stdout)).toMatchObject({ enabled: false, limits: { tokensPerUserPerMonth: null } });
    const nothing = await cli(['ai', 'settings', 'set']);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain('Nothing to change');

    const usage = await cli(['ai', 'usage', '--month', '2026-01']);
    expect(usage.code, show(usage)).toBe(0);
    expect(usage.stderr).toContain('2026-01: no monthly budget per user.');
    expect(usage.stdout).toContain('No AI answers in 2026-01.');
    const badMonth = await cli(['ai', 'usage', '--month', '2026-13']);
    expect(badMonth.code).toBe(1);
    expect(badMonth.stderr).toContain('--month must be YYYY-MM');
  });
});
