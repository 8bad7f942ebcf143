import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { parseAssignments } from '../src/commands/env-vars.js';
import { isolatedEnv, runCli, serverVars, show, startTestServer, type TestServer } from './helpers.js';

/** `mapi env-vars list|set|delete` against a real server. */

describe('parseAssignments', () => {
  it('splits at the first =, takes lines from stdin, and refuses anything that is not NAME=VALUE', () => {
    expect(parseAssignments(['A=1', 'URL=postgres://u@h/db?x=1'], '# comment\n\nB=two words\n')).toEqual([
      { name: 'A', value: '1' },
      { name: 'URL', value: 'postgres://u@h/db?x=1' },
      { name: 'B', value: 'two words' },
    ]);
    expect(() => parseAssignments(['=x'], null)).toThrow(/not NAME=VALUE/);
    expect(() => parseAssignments(['NOVALUE'], null)).toThrow(/not NAME=VALUE/);
    expect(() => parseAssignments([], null)).toThrow(/at least one/);
  });
});

describe.each(STORE_INDEPENDENT)('mapi env-vars (%s)', (dialect) => {
  let server: TestServer;
  let env: Record<string, string>;
  let d: number;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    env = isolatedEnv(serverVars(server));
    d = await server.deployment(`Env vars ${dialect}`);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('sets from arguments and stdin, lists with secret values masked, and deletes', async () => {
    const set = await runCli(['env-vars', 'set', String(d), 'WAREHOUSE_HOST=db.internal', '--stdin'], { env, input: 'WAREHOUSE_PASSWORD=hunter2\n' });
    expect(set.code, show(set)).toBe(0);
    expect(set.stderr).toContain('Set 2 variables');
    expect(set.stdout + set.stderr).not.toContain('hunter2');
    const list = await runCli(['env-vars', 'list', String(d), '--json'], { env });
    expect(list.code, show(list)).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([
      { name: 'WAREHOUSE_HOST', value: 'db.internal' },
      { name: 'WAREHOUSE_PASSWORD', value: '[ENCRYPTED]' },
    ]);
    const table = await runCli(['env-vars', 'list', String(d)], { env });
    expect(table.stdout).toMatch(/^NAME\s+VALUE\n/);
    const removed = await runCli(['env-vars', 'delete', String(d), 'WAREHOUSE_HOST'], { env });
    expect(removed.code, show(removed)).toBe(0);
    expect(JSON.parse((await runCli(['env-vars', 'list', String(d), '--json'], { env })).stdout)).toEqual([
      { name: 'WAREHOUSE_PASSWORD', value: '[ENCRYPTED]' },
    ]);
    const unknown = await runCli(['env-vars', 'delete', String(d), 'NOPE'], { env });
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('404');
    const refused = await runCli(['env-vars', 'set', String(d), 'X=[ENCRYPTED]'], { env });
    expect(refused.code).not.toBe(0);
  });
});
