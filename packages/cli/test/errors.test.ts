import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { REPO_ROOT } from '../../server/test/server-env.js';
import {
  completion,
  isolatedEnv,
  removeTempDirs,
  runCli,
  serverVars,
  show,
  spawnCli,
  startTestServer,
  tempDir,
  type CliResult,
  type TestServer,
} from './helpers.js';

/** Issue 11: error messages, the hints they carry, an unreachable server, usage errors and counts. */

afterAll(removeTempDirs);

/** A port nothing listens on: bound once to learn a free number, then closed. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The commands quoted in backticks on the `hint:` lines of an error report. */
function hintCommands(stderr: string): string[] {
  const hints = stderr.split('\n').filter((line) => line.startsWith('hint: '));
  return hints.flatMap((line) => [...line.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string));
}

/** A directory holding a `mapi` command, as `npm i -g` or `npx` would put one on the PATH. */
function mapiOnPath(): string {
  const dir = tempDir('mapi-bin-');
  fs.symlinkSync(path.join(REPO_ROOT, 'packages/cli/bin/mapi.js'), path.join(dir, 'mapi'));
  return dir;
}

/** Runs a hint as a user pasting it into a POSIX shell would. */
function paste(command: string, env: Record<string, string>, cwd = REPO_ROOT): Promise<CliResult> {
  const child = spawn('/bin/sh', ['-c', command], {
    cwd,
    env: { ...env, PATH: `${mapiOnPath()}:${env.PATH ?? process.env.PATH}` },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end();
  return completion(child);
}

describe.each(STORE_INDEPENDENT)('errors from a server are printed once, with hints that work when pasted (%s)', (dialect) => {
  let server: TestServer;
  let deploymentA: number;
  let deploymentB: number;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    deploymentA = await server.deployment('Errors A');
    deploymentB = await server.deployment('Errors B');
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('a validation error prints the server message once, without a doubled prefix', async () => {
    const env = isolatedEnv(serverVars(server));
    const result = await runCli(['folders', 'create', String(deploymentA), 'x'.repeat(300)], { env });
    expect(result.code, show(result)).toBe(1);
    const first = result.stderr.split('\n')[0] as string;
    expect(first).toMatch(/^error: 400 The request is not valid: \S/);
    expect(result.stderr.match(/The request is not valid/g)).toHaveLength(1);
    expect(result.stderr).toMatch(/request id: \S+/);
  });

  it('hints after a 404 and a key-scope 403 name commands that work when pasted', async () => {
    const admin = isolatedEnv(serverVars(server));
    const scoped = (await server.post('/api/v1/api-keys', { name: 'only A', deploymentIds: [deploymentA] })).body.key as string;
    const [missingParent, outOfScope] = await Promise.all([
      runCli(['folders', 'create', String(deploymentA), 'Child', '--parent', '999999'], { env: admin }),
      runCli(['folders', 'tree', String(deploymentB)], { env: { ...admin, MAPI_TOKEN: scoped } }),
    ]);
    expect(missingParent.code, show(missingParent)).toBe(1);
    expect(hintCommands(missingParent.stderr)).toEqual([`mapi folders tree ${deploymentA}`]);
    expect(outOfScope.code, show(outOfScope)).toBe(1);
    const [createKey] = hintCommands(outOfScope.stderr);
    expect(createKey).toBe(`mapi api-keys create --name 'deployment ${deploymentB}' --deployments ${deploymentB}`);

    const [tree, created] = await Promise.all([paste(hintCommands(missingParent.stderr)[0] as string, admin), paste(createKey as string, admin)]);
    expect(tree.code, show(tree)).toBe(0);
    expect(tree.stdout).toMatch(new RegExp(`^[Dd]eployment ${deploymentA} `));
    expect(created.code, show(created)).toBe(0);
    // The key the hint made reaches the deployment the scoped key could not.
    const retried = await runCli(['folders', 'tree', String(deploymentB)], { env: { ...admin, MAPI_TOKEN: created.stdout.trim() } });
    expect(retried.code, show(retried)).toBe(0);
  });

  it('hints for a JSON object on stdin and a URL with an /api/v1 suffix work when pasted', async () => {
    const admin = isolatedEnv(serverVars(server));
    await server.workbook(deploymentA, 'Root workbook');
    const [piped, suffixed] = await Promise.all([
      runCli(['move', String(deploymentA), '--to', 'root', '-'], { env: admin, input: '{"moved": [], "failed": []}' }),
      runCli(['deployments', 'list'], { env: { ...admin, MAPI_URL: `${server.url}/api/v1` } }),
    ]);
    expect(piped.code, show(piped)).toBe(1);
    const [listRefs] = hintCommands(piped.stderr);
    expect(listRefs).toBe(`mapi workspace ls ${deploymentA} root --refs`);
    expect(suffixed.code, show(suffixed)).toBe(1);
    const [exportUrl] = hintCommands(suffixed.stderr);
    expect(exportUrl).toBe(`export MAPI_URL=${server.url}`);

    const [refs, fixed] = await Promise.all([
      paste(listRefs as string, admin),
      paste(`${exportUrl}; mapi deployments list`, { ...admin, MAPI_URL: `${server.url}/api/v1` }),
    ]);
    expect(refs.code, show(refs)).toBe(0);
    expect(refs.stdout).toMatch(/^workbook:\d+$/m);
    expect(fixed.code, show(fixed)).toBe(0);
    expect(fixed.stdout).toContain('Errors A');
  });

  it('login --token-stdin reads the token from standard input, and the hint without a token works when pasted', async () => {
    const env = isolatedEnv();
    const noToken = await runCli(['login', '--url', server.url, '--ca-cert', server.caFile], { env });
    expect(noToken.code, show(noToken)).toBe(1);
    expect(noToken.stderr).toContain('error: No API token.');
    const [fromFile] = hintCommands(noToken.stderr);
    expect(fromFile).toBe(`mapi login --url ${server.url} --ca-cert ${server.caFile} --token-stdin < admin.key`);

    // The key in a file, as the hint assumes: the shell feeds it to stdin, so it is in no argument list.
    const cwd = tempDir();
    fs.writeFileSync(path.join(cwd, 'admin.key'), `${server.key}\n`, { mode: 0o600 });
    const pasted = await paste(fromFile as string, env, cwd);
    expect(pasted.code, show(pasted)).toBe(0);
    expect(pasted.stdout).toContain(`Logged in to ${server.url} as admin@localhost (ADMIN)`);
    const saved = JSON.parse(fs.readFileSync(path.join(env.MAPI_CONFIG_DIR as string, 'config.json'), 'utf8'));
    expect(saved.profiles.default.token).toBe(server.key);
  });

  it('a refused token in a named profile points at `mapi login --profile NAME`, not at the default profile', async () => {
    const env = isolatedEnv();
    const login = await runCli(['--profile', 'staging', 'login', '--url', server.url, '--ca-cert', server.caFile, '--token-stdin'], { env, input: server.key });
    expect(login.code, show(login)).toBe(0);
    // The next steps name the profile, and work when pasted; --json prints none.
    const nextLine = login.stderr.split('\n').find((line) => line.startsWith('Next: ')) ?? '';
    const next = [...nextLine.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
    expect(next).toEqual(['mapi --profile staging deployments list', 'mapi --help']);
    const listed = await paste(next[0] as string, env);
    expect(listed.code, show(listed)).toBe(0);
    const quiet = await runCli(['--profile', 'staging', '--json', 'login', '--url', server.url, '--ca-cert', server.caFile, '--token-stdin'], {
      env,
      input: server.key,
    });
    expect(quiet.code, show(quiet)).toBe(0);
    expect(quiet.stderr).toBe('');
    const revoked = (await server.post('/api/v1/api-keys', { name: 'soon revoked' })).body as { id: number; key: string };
    const file = path.join(env.MAPI_CONFIG_DIR as string, 'config.json');
    const saved = JSON.parse(fs.readFileSync(file, 'utf8'));
    saved.profiles.staging.token = revoked.key;
    fs.writeFileSync(file, JSON.stringify(saved), { mode: 0o600 });
    const revoke = await runCli(['api-keys', 'revoke', String(revoked.id)], { env: isolatedEnv(serverVars(server)) });
    expect(revoke.code, show(revoke)).toBe(0);

    const refused = await runCli(['--profile', 'staging', 'deployments', 'list'], { env });
    expect(refused.code, show(refused)).toBe(1);
    expect(refused.stderr).toContain('The token saved in profile "staging" was refused.');
    expect(hintCommands(refused.stderr)).toEqual(['mapi login --profile staging']);
  });

  it('counts are singular for one: "1 item", "1 request", "1 item failed"', async () => {
    const env = isolatedEnv(serverVars(server));
    const [target, wbOne, wbTwo, wbThree] = [
      await server.folder(deploymentA, 'Plural target'),
      await server.workbook(deploymentA, 'Plural one'),
      await server.workbook(deploymentA, 'Plural two'),
      await server.workbook(deploymentA, 'Plural three'),
    ];
    const [single, partial, dryRun, deleted] = await Promise.all([
      runCli(['move', String(deploymentA), '--to', String(target), `workbook:${wbOne}`], { env }),
      runCli(['move', String(deploymentA), '--to', String(target), `workbook:${wbTwo}`, 'report:999999'], { env }),
      runCli(['delete', String(deploymentA), `workbook:${wbThree}`, '--dry-run'], { env }),
      runCli(['delete', String(deploymentA), `workbook:${wbThree}`, '--yes'], { env }),
    ]);
    expect(single.code, show(single)).toBe(0);
    expect(single.stdout).toBe(`Moved 1 item to folder ${target} in deployment ${deploymentA} (1 request).\n`);
    expect(single.stderr).toBe('moved 1/1, 0 failed\n');
    expect(partial.code, show(partial)).toBe(2);
    expect(partial.stdout).toContain(`Moved 1 of 2 items to folder ${target} in deployment ${deploymentA} (1 request).`);
    expect(partial.stdout).toContain('\n1 item failed:\n');
    expect(dryRun.stdout).toContain(`Would delete 1 item in deployment ${deploymentA}, in 1 request:`);
    expect(dryRun.stdout).toContain('request 1 of 1 (1 item):');
    expect(deleted.code, show(deleted)).toBe(0);
    expect(deleted.stdout).toBe(`Deleted 1 item in deployment ${deploymentA} (1 request).\n`);
  });
});

describe('an unreachable server is reported once while retrying, then named with what to check', () => {
  it('a closed port gets one "cannot be reached" line while retrying, then a final error naming the URL and what to check', async () => {
    const url = `https://127.0.0.1:${await closedPort()}`;
    const result = await runCli(['deployments', 'list'], { env: isolatedEnv({ MAPI_URL: url, MAPI_TOKEN: 'mapi_notarealkeynotarealkeynotarealkeynotar' }) });
    expect(result.code, show(result)).toBe(1);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toEqual([
      `warning: the server at ${url} cannot be reached (ECONNREFUSED); retrying for a few seconds...`,
      expect.stringMatching(new RegExp(`^error: cannot reach the server at ${url} \\(ECONNREFUSED`)),
      'hint: Check that the server is running and listening at that address, and that the URL (from MAPI_URL) is right; a firewall or proxy may also be in the way.',
    ]);
  });

  it('the "cannot be reached" line comes after the first failed attempt, while the next one is still under way', async () => {
    // The first connection is cut at once; the second is held open, so the CLI cannot finish until
    // the test lets it: whatever it printed by then, it printed while retrying.
    const held: net.Socket[] = [];
    let connections = 0;
    const listener = net.createServer((socket) => {
      connections += 1;
      if (connections === 1) socket.destroy();
      else held.push(socket);
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(listener.address() as net.AddressInfo).port}`;
    const child = spawnCli(['deployments', 'list'], { env: isolatedEnv({ MAPI_URL: url, MAPI_TOKEN: 'mapi_notarealkeynotarealkeynotarealkeynotar' }) });
    const done = completion(child);
    let stderr = '';
    child.stderr?.on('data', (d: Buffer | string) => (stderr += d.toString()));
    await new Promise<void>((resolve) => {
      const check = () => (stderr.includes('cannot be reached') ? resolve() : undefined);
      child.stderr?.on('data', check);
      check();
    });
    expect(child.exitCode).toBeNull();
    expect(stderr).toBe(`warning: the server at ${url} cannot be reached (ECONNRESET); retrying for a few seconds...\n`);

    // Nothing listens any more: the remaining attempts fail and the CLI gives up.
    await new Promise<void>((resolve) => {
      listener.close(() => resolve());
      for (const socket of held) socket.destroy();
    });
    const result = await done;
    expect(result.code, show(result)).toBe(1);
    expect(result.stderr.match(/cannot be reached/g)).toHaveLength(1);
    expect(result.stderr).toContain(`error: cannot reach the server at ${url}`);
  });
});

describe('usage errors are caught before any request', () => {
  it('an empty or malformed slug or id is a usage error (exit 1) and nothing is sent', async () => {
    const env = isolatedEnv({ MAPI_URL: `https://127.0.0.1:${await closedPort()}`, MAPI_TOKEN: 'mapi_notarealkeynotarealkeynotarealkeynotar' });
    const cases: Array<[string[], string]> = [
      [['workbooks', 'put', '1', '', '--name', 'x'], 'slug must be 1 to 100 lowercase letters, digits and hyphens, starting with a letter or digit, got "".'],
      [['workbooks', 'put', '1', 'Q3 Revenue', '--name', 'x'], 'got "Q3 Revenue"'],
      [['folders', 'tree', ''], 'deploymentId must be a positive integer, got "".'],
      [['move', '1', '--to', '', 'workbook:1'], '--to ("root" or a folder id) must be a positive integer, got "".'],
      [['move', '1', '--to', '1', 'workbook:'], 'item "workbook:"'],
      [['move', '1', '--to', '1', 'folder:0'], 'item "folder:0"'],
      [['move', '1', '--to', '1', 'workbook:01'], 'item "workbook:01"'],
      [['folders', 'tree', '1.5'], 'got "1.5"'],
      [['folders', 'tree', '01'], 'got "01"'],
      [['folders', 'tree', '-1'], 'got "-1"'],
      [['workspace', 'ls', '1', '+1'], 'got "+1"'],
      [['api-keys', 'revoke', '1e0'], 'got "1e0"'],
      [['api-keys', 'create', '--name', 'ci', '--deployments', ''], '--deployments (comma-separated deployment ids) must be a positive integer, got "".'],
      [['api-keys', 'create', '--name', 'ci', '--user', ''], '--user must be a positive integer, got "".'],
      [['users', 'list', '--role', ''], '--role must be one of'],
      [['workspace', 'ls', '1', '--search', ''], '--search is empty.'],
      [['deployments', 'list', '--url', ''], '--url is empty.'],
    ];
    const results = await Promise.all(cases.map(([argv]) => runCli(argv, { env })));
    results.forEach((result, i) => {
      const [argv, message] = cases[i] as [string[], string];
      const shown = `mapi ${argv.join(' ')}\n${show(result)}`;
      expect(result.code, shown).toBe(1);
      expect(result.stderr.startsWith('error: '), shown).toBe(true);
      expect(result.stderr, shown).toContain(message);
      // A request to the closed port would have said so.
      expect(result.stderr, shown).not.toMatch(/cannot reach|cannot be reached/);
      expect(result.stdout, shown).toBe('');
    });
  });
});
