import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '@mapi/client';
import { startModelProvider, type ModelProvider } from '../../server/test/fixtures/model-provider.js';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { chartLine, queryLine, rowsTable } from '../src/commands/chat.js';
import { describeError } from '../src/errors.js';
import { completion, isolatedEnv, removeTempDirs, runCli, serverVars, show, spawnCli, startTestServer, type TestServer } from './helpers.js';

/** `mapi chat` against a real server whose model provider is the stand-in, with scripted answers. */

describe('how steps print', () => {
  it('rows as a table of at most 10 rows, cells cut at 40 characters, and how many there were', () => {
    const rows = Array.from({ length: 12 }, (_, i) => ({ 'orders.status': i === 0 ? 'x'.repeat(50) : `s${i}`, 'orders.count': i }));
    const text = rowsTable({ kind: 'rows', columns: ['orders.status', 'orders.count'], rows, total: 120, truncated: true });
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^orders\.status\s+orders\.count$/);
    expect(lines[1]).toContain(`${'x'.repeat(39)}…`);
    expect(lines).toHaveLength(12);
    expect(lines.at(-1)).toBe('… 10 of 120 rows shown');
    expect(rowsTable({ kind: 'rows', columns: ['a'], rows: [], total: 0, truncated: false })).toBe('(no rows)\n');
  });

  it('a query and a chart in one line each', () => {
    expect(
      queryLine({
        measures: ['orders.count'],
        dimensions: ['orders.status'],
        timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', dateRange: ['2026-01-01', '2026-06-30'] }],
        filters: [{ member: 'orders.status', operator: 'equals', values: ['open'] }],
        limit: 100,
      }),
    ).toBe('measures orders.count; by orders.status; orders.created_at by month in 2026-01-01..2026-06-30; 1 filter; limit 100');
    expect(queryLine({ sql: 'select 1' })).toBe('{"sql":"select 1"}');
    expect(chartLine({ mark: 'bar', encoding: { x: { field: 'orders.status' }, y: { field: 'orders.count' } } })).toBe(
      'bar of orders.count by orders.status (the spec is in --json)',
    );
  });

  it('a 503 of an answer says to configure a provider', () => {
    const error = new ApiError({
      status: 503,
      method: 'POST',
      url: 'https://mapi.test/api/v1/deployments/3/agents/7/threads',
      problem: {
        type: 'about:blank',
        status: 503,
        title: 'No model provider is configured for this account',
        detail: 'No model provider is configured.',
        code: 'AI_NOT_CONFIGURED',
      } as never,
    });
    expect(describeError(error).at(-1)).toContain('mapi ai settings set --provider-url <url> --model <name>');
  });
});

describe.each(STORE_INDEPENDENT)('mapi chat (%s)', (dialect) => {
  let server: TestServer;
  let provider: ModelProvider;
  let env: Record<string, string>;
  let d: number;
  let agentId: number;
  const cli = (args: string[], input?: string) => runCli(args, { env, ...(input !== undefined ? { input } : {}) });

  beforeAll(async () => {
    provider = await startModelProvider();
    server = await startTestServer(dialect, { AI_PROVIDER_URL: provider.baseUrl, AI_PROVIDER_MODEL: 'stand-in', AI_PROVIDER_API_KEY: 'sk-test' });
    env = isolatedEnv(serverVars(server));
    d = await server.deployment(`Chat ${dialect}`);
  });
  afterAll(async () => {
    await server?.stop();
    await provider?.close();
    removeTempDirs();
  });

  it('picks the only agent, or lists them; 403 while AI is off says how to turn it on', async () => {
    const none = await cli(['chat', String(d), 'Hello']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`Deployment ${d} has no agents.`);
    const made = await server.post(`/api/v1/deployments/${d}/agents`, { name: 'Orders', members: ['orders'] });
    expect(made.status, made.text).toBe(200);
    agentId = made.body.id;

    const off = await cli(['chat', String(d), 'Hello']);
    expect(off.code, show(off)).toBe(1);
    expect(off.stderr).toContain('403');
    expect(off.stderr).toContain('hint: This key cannot use AI here');
    expect(off.stderr).toContain('mapi ai settings set --enabled');

    const other = await server.post(`/api/v1/deployments/${d}/agents`, { name: 'Customers' });
    const several = await cli(['chat', String(d), 'Hello']);
    expect(several.code).toBe(1);
    expect(several.stderr).toContain(`Deployment ${d} has 2 agents; pick one with --agent <id>:`);
    expect(several.stderr).toMatch(new RegExp(`^ {2}${other.body.id} {2}Customers$`, 'm'));
    expect(several.stderr).toMatch(new RegExp(`^ {2}${agentId} {2}Orders$`, 'm'));
    const on = await server.put('/api/v1/ai/settings', { enabled: true });
    expect(on.status, on.text).toBe(200);
  });

  it('streams the answer to stdout and the steps to stderr; continues the thread; --json prints the events as lines', async () => {
    provider.answer({ toolCalls: [{ name: 'run_query', arguments: { query: { measures: ['customers.count'] } } }] }, { text: 'I may only count orders.' });
    const answered = await cli(['chat', String(d), '--agent', String(agentId), 'How', 'many', 'customers?']);
    expect(answered.code, show(answered)).toBe(0);
    expect(answered.stdout).toBe('I may only count orders.\n');
    expect(answered.stderr).toContain('· refused run_query: This agent may use only orders; the query names customers.');
    const resume = /Continue with: mapi chat (\d+) --agent (\d+) --thread (\S+) "…"/.exec(answered.stderr);
    expect(resume, answered.stderr).not.toBeNull();
    const threadId = resume?.[3] as string;
    expect(provider.requests.at(-2)?.body.messages?.at(-1)).toMatchObject({ role: 'user', content: 'How many customers?' });

    provider.answer({ text: 'Orders only, still.' });
    const json = await cli(['chat', String(d), '--thread', threadId, '--json', 'And by region?']);
    expect(json.code, show(json)).toBe(0);
    const events = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event: string; data: Record<string, unknown> });
    expect(events[0]).toEqual({ event: 'thread', data: { threadId, seq: 3 } });
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { message: { seq: 4, text: 'Orders only, still.' } } });
    expect(
      events
        .filter((e) => e.event === 'text')
        .map((e) => e.data.delta)
        .join(''),
    ).toBe('Orders only, still.');
  });

  it('without a question, answers each line of stdin in one thread', async () => {
    provider.answer({ text: 'First answer.' }, { text: 'Second answer.' });
    const lines = await cli(['chat', String(d), '--agent', String(agentId)], 'first question\n\nsecond question\n');
    expect(lines.code, show(lines)).toBe(0);
    expect(lines.stdout).toBe('First answer.\nSecond answer.\n');
    const second = provider.requests.at(-1)?.body.messages ?? [];
    expect(second.map((m) => m.content)).toEqual(expect.arrayContaining(['first question', 'First answer.', 'second question']));
  });

  it('Ctrl-C during an answer stops it, exits 130 and says how to continue the thread', async () => {
    provider.fail('stall-mid-stream');
    const child = spawnCli(['chat', String(d), '--agent', String(agentId), 'Tell me everything'], { env });
    const done = completion(child);
    // The stand-in streams one chunk of text, then nothing: interrupt once that chunk is out.
    await new Promise<void>((resolve) => child.stdout?.once('data', () => resolve()));
    child.kill('SIGINT');
    const result = await done;
    expect(result.code, show(result)).toBe(130);
    expect(result.stderr).toMatch(new RegExp(`Continue with: mapi chat ${d} --agent ${agentId} --thread \\S+`));
    provider.clear();
  });

  it('502 from the provider and 429 past the budget exit 1 with what to check', async () => {
    provider.fail(400);
    const failed = await cli(['chat', String(d), '--agent', String(agentId), 'Hello']);
    expect(failed.code, show(failed)).toBe(1);
    expect(failed.stderr).toContain('502');
    expect(failed.stderr).toContain('hint: The model provider failed');
    provider.clear();

    await server.put('/api/v1/ai/settings', { limits: { tokensPerUserPerMonth: 1 } });
    const over = await cli(['chat', String(d), '--agent', String(agentId), 'Hello']);
    expect(over.code, show(over)).toBe(1);
    expect(over.stderr).toContain('429');
    expect(over.stderr).toMatch(/has used \d+ tokens in \d{4}-\d{2}/);
    expect(over.stderr).toContain('`mapi ai usage`');
    const usage = await cli(['ai', 'usage']);
    expect(usage.code, show(usage)).toBe(0);
    expect(usage.stdout).toMatch(/^WHO\s+PROMPT\s+COMPLETION\s+TOTAL\s+ANSWERS\nadmin@localhost\s+[\d,]+\s+[\d,]+\s+[\d,]+\s+[45]$/m);
    expect(usage.stderr).toContain('a budget of 1 tokens per user');
    await server.put('/api/v1/ai/settings', { limits: { tokensPerUserPerMonth: null } });
  });
});
