import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { REPO_ROOT } from '../../server/test/server-env.js';
import { completion, isolatedEnv, removeTempDirs, serverVars, show, startTestServer, type TestServer } from './helpers.js';

/**
 * Hand-written commands on a terminal: destructive ones ask before sending (like the generated
 * ones and `mapi delete`), and tables fit the terminal's width. util-linux `script` runs the CLI
 * on a pseudo-terminal, so stdin, stdout and stderr are terminals as a person's would be.
 */

const BIN = path.join(REPO_ROOT, 'packages/cli/bin/mapi.js');

function onTerminal(env: Record<string, string>, args: string, answer = '', columns?: number) {
  const command = `${columns ? `stty cols ${columns}; ` : ''}${process.execPath} ${BIN} ${args}`;
  const child = spawn('script', ['-qec', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end(answer);
  return completion(child);
}

afterAll(removeTempDirs);

describe('hand-written destructive commands ask on a terminal', () => {
  // Nothing listens on this port: "cannot reach" proves a request was attempted, its absence that none was.
  const unreachable = isolatedEnv({ MAPI_URL: 'https://127.0.0.1:59999', MAPI_TOKEN: 'mapi_notarealkeynotarealkeynotarealkeynotar' });

  it('"n" sends nothing and exits 1; "y" and --yes send the request', async () => {
    const [no, yes, flag] = await Promise.all([
      onTerminal(unreachable, 'api-keys revoke 5', 'n\n'),
      onTerminal(unreachable, 'agents delete 3 7', 'y\n'),
      onTerminal(unreachable, 'roles delete 4 --yes'),
    ]);
    expect(no.code, show(no)).toBe(1);
    expect(no.stdout).toMatch(/mapi api-keys revoke 5: .+\? \[y\/N\]/);
    expect(no.stdout).toContain('error: Nothing changed.');
    expect(no.stdout).not.toContain('cannot reach');
    expect(yes.stdout).toMatch(/mapi agents delete 3 7: .+\? \[y\/N\]/);
    expect(yes.stdout).toContain('cannot reach the server at https://127.0.0.1:59999');
    expect(flag.stdout).not.toContain('[y/N]');
    expect(flag.stdout).toContain('cannot reach the server at https://127.0.0.1:59999');
  });

  it('every hand-written command that only deletes, revokes or removes documents --yes in its help', async () => {
    const help = await onTerminal(unreachable, 'users deactivate --help');
    expect(help.stdout).toContain('-y, --yes');
    expect(help.stdout).toContain('On a terminal this asks for confirmation unless --yes is given.');
  });
});

describe.each(STORE_INDEPENDENT)('tables on a terminal (%s)', (dialect) => {
  let server: TestServer;
  let env: Record<string, string>;
  let id: number;
  const longName = `Quarterly revenue by region and sales channel, restated ${'x'.repeat(40)}`;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    env = isolatedEnv(serverVars(server));
    id = await server.deployment(longName);
  });
  afterAll(() => server?.stop());

  it('fit the width: ids whole, the long name cut with an ellipsis; piped, every cell is whole', async () => {
    const narrow = await onTerminal(env, 'deployments list', '', 60);
    expect(narrow.code, show(narrow)).toBe(0);
    const lines = narrow.stdout.replace(/\r/g, '').split('\n').filter(Boolean);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(60);
    const row = lines.find((line) => line.trimStart().startsWith(`${id} `));
    expect(row, narrow.stdout).toBeDefined();
    expect(row).toContain('Quarterly revenue');
    expect(row).toContain('…');
    expect(row).not.toContain(longName);

    const piped = await completion(spawn(process.execPath, [BIN, 'deployments', 'list'], { env: { ...env, COLUMNS: '60' } }));
    expect(piped.code, show(piped)).toBe(0);
    expect(piped.stdout).toContain(longName);
  });
});
