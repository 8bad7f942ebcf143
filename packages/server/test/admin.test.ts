import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTs, serverEnv, type Finished, type ServerEnv } from './server-env.js';

/**
 * The admin script as an operator runs it: a process, its exit status and its stderr. Every error
 * is one line of reason (a usage error adds the command's synopsis), never a stack trace.
 */

const ADMIN = 'packages/server/src/admin.ts';

/** A port nothing listens on: bound once to learn a free number, then closed. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function expectOneLineReason(run: Finished, reason: RegExp, code: number): void {
  const shown = `exit ${run.code}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;
  expect(run.code, shown).toBe(code);
  expect(run.stdout, shown).toBe('');
  const lines = run.stderr.trimEnd().split('\n');
  expect(lines[0], shown).toMatch(reason);
  // No stack frames, no error class dumps: only what an operator can act on.
  expect(run.stderr, shown).not.toMatch(/^\s+at /m);
  expect(run.stderr, shown).not.toMatch(/\b(Type|Reference|Aggregate)?Error:|node:internal/);
}

describe('admin script errors exit non-zero with a one-line reason', () => {
  let env: ServerEnv;
  beforeAll(async () => {
    env = await serverEnv('sqlite');
  });
  afterAll(async () => env?.destroy());

  it('bad arguments, an unknown command and an unknown tenant exit non-zero with a one-line reason', async () => {
    const [missing, unknownOption, unknownCommand, none, unknownTenant] = await Promise.all([
      runTs(ADMIN, ['tenant', 'create'], env.env),
      runTs(ADMIN, ['tenant', 'create', 'acme', '--colour', 'red'], env.env),
      runTs(ADMIN, ['tenant', 'frobnicate'], env.env),
      runTs(ADMIN, [], env.env),
      runTs(ADMIN, ['tenant', 'add-domain', 'nobody', 'x.example.com'], env.env),
    ]);
    expectOneLineReason(missing, /^Expected <slug>, got none\.$/, 2);
    // The reason, then the command's synopsis: two lines, not the whole help text.
    expect(missing.stderr.trimEnd().split('\n')).toHaveLength(2);
    expect(missing.stderr).toContain('Usage: admin tenant create <slug>');
    expect(missing.stderr).toContain('"npm run admin -- tenant create --help"');
    expectOneLineReason(unknownOption, /^Unknown option '--colour'/, 2);
    expectOneLineReason(unknownCommand, /^Unknown command "tenant frobnicate"\.$/, 2);
    expect(unknownCommand.stderr).toContain('Commands: tenant create, tenant list, tenant add-domain, tenant regions, key generate');
    expectOneLineReason(none, /^No command given\.$/, 2);
    expectOneLineReason(unknownTenant, /^Tenant "nobody" does not exist\.$/, 2);
    expect(unknownTenant.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('tenant regions limits a tenant to some of REGIONS and --all lifts the limit; unknown regions, tenants and a missing choice are refused', async () => {
    const vars = { ...env.env, REGIONS: 'local,eu-west' };
    expect((await runTs(ADMIN, ['tenant', 'create', 'regional'], vars)).code).toBe(0);
    const limited = await runTs(ADMIN, ['tenant', 'regions', 'regional', '--regions', 'eu-west'], vars);
    expect(limited.code, limited.stderr).toBe(0);
    expect(limited.stdout).toContain('Tenant regional may use eu-west.');
    const [unknownRegion, unknownTenant, neither] = await Promise.all([
      runTs(ADMIN, ['tenant', 'regions', 'regional', '--regions', 'mars'], vars),
      runTs(ADMIN, ['tenant', 'regions', 'nobody', '--all'], vars),
      runTs(ADMIN, ['tenant', 'regions', 'regional'], vars),
    ]);
    expectOneLineReason(unknownRegion, /^Regions must be some of local, eu-west \(REGIONS\); got mars\.$/, 2);
    expectOneLineReason(unknownTenant, /^Tenant "nobody" does not exist\.$/, 2);
    expectOneLineReason(neither, /^Give --regions NAMES or --all, one of them\.$/, 2);
    const lifted = await runTs(ADMIN, ['tenant', 'regions', 'regional', '--all'], vars);
    expect(lifted.stdout).toContain('Tenant regional may use every region (local, eu-west).');
  });

  it('an unreachable database, an unusable DATA_DIR and a bad setting exit non-zero with a one-line reason', async () => {
    const port = await closedPort();
    const [unreachable, unusable, badSetting] = await Promise.all([
      runTs(ADMIN, ['tenant', 'list'], { ...env.env, DATABASE_URL: `postgres://mapi:secret-password@127.0.0.1:${port}/mapi` }),
      // A path under a regular file can never be a directory, whoever runs the test (root included).
      runTs(ADMIN, ['tenant', 'list'], { DATA_DIR: `${ADMIN}/data` }),
      runTs(ADMIN, ['tenant', 'list'], { ...env.env, PORT: 'eighty', RATE_LIMIT_PER_MINUTE: 'lots' }),
    ]);
    expectOneLineReason(
      unreachable,
      new RegExp(
        `^Cannot reach the database at postgres://mapi@127\\.0\\.0\\.1:${port}/mapi \\(DATABASE_URL\\): .*ECONNREFUSED.*; check DATABASE_URL and that PostgreSQL is running`,
      ),
      1,
    );
    expect(unreachable.stderr.trimEnd().split('\n')).toHaveLength(1);
    // The password in DATABASE_URL is not repeated on a terminal or in a CI log.
    expect(unreachable.stderr).not.toContain('secret-password');
    expectOneLineReason(unusable, /^Cannot open the SQLite database in .*packages\/server\/src\/admin\.ts\/data \(DATA_DIR\): .*ENOTDIR/, 1);
    expectOneLineReason(badSetting, /^Invalid configuration: .*PORT must be an integer.*; .*RATE_LIMIT_PER_MINUTE/, 2);
    expect(badSetting.stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});
