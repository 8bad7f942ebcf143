import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { REPO_ROOT } from '../../server/test/server-env.js';
import { isolatedEnv, removeTempDirs, runCli, serverVars, show, startTestServer, tempDir, type TestServer } from './helpers.js';

/** Issue 11: a key written to a file is private (0600), never overwritten by accident, and ignored by git. */

const mode = (file: string) => fs.statSync(file).mode & 0o777;
const posix = process.platform !== 'win32';

afterAll(removeTempDirs);

describe.each(STORE_INDEPENDENT)('mapi api-keys create --output keeps the key in a private file and never overwrites one by accident (%s)', (dialect) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(dialect);
  });

  afterAll(async () => {
    await server?.stop();
  });

  /** Names of the keys the server holds, revoked ones included: shows whether a run created one. */
  async function keyNames(): Promise<string[]> {
    const answer = await server.get('/api/v1/api-keys?includeRevoked=true&first=200');
    return (answer.body as { items: { name: string }[] }).items.map((k) => k.name);
  }

  it('--output writes the key alone to a 0600 file in a new 0700 directory, and prints no secret', async () => {
    const env = isolatedEnv(serverVars(server));
    const file = path.join(tempDir(), '.mapi', 'script.key');
    const [text, json] = await Promise.all([
      runCli(['api-keys', 'create', '--name', 'to a file', '--output', file], { env }),
      runCli(['api-keys', 'create', '--name', 'to a file, json', '--output', `${file}.json-run`, '--json'], { env }),
    ]);
    expect(text.code, show(text)).toBe(0);
    expect(text.stdout).toBe('');
    expect(text.stderr).toContain(`Saved the key to ${file} (mode 0600)`);
    const key = fs.readFileSync(file, 'utf8');
    expect(key).toMatch(/^mapi_[A-Za-z0-9]{40}\n$/);
    expect(text.stderr).not.toContain(key.trim());
    if (posix) {
      expect(mode(file)).toBe(0o600);
      expect(mode(path.dirname(file))).toBe(0o700);
    }
    // No temporary file left beside it.
    expect(fs.readdirSync(path.dirname(file)).sort()).toEqual(['script.key', 'script.key.json-run']);

    expect(json.code, show(json)).toBe(0);
    const printed = JSON.parse(json.stdout);
    expect(printed).toMatchObject({ name: 'to a file, json', keyFile: `${file}.json-run` });
    expect(printed.key).toBeUndefined();
    expect(json.stdout).not.toContain(fs.readFileSync(`${file}.json-run`, 'utf8').trim());

    // The file holds a working key: MAPI_TOKEN=$(cat FILE) is how the README uses it.
    const whoami = await runCli(['whoami'], { env: { ...env, MAPI_TOKEN: key.trim() } });
    expect(whoami.code, show(whoami)).toBe(0);
  });

  it('an existing file is refused before any key is made; --force replaces it and makes it 0600', async () => {
    const env = isolatedEnv(serverVars(server));
    const file = path.join(tempDir(), 'existing.key');
    fs.writeFileSync(file, 'keep me\n', { mode: 0o644 });
    if (posix) fs.chmodSync(file, 0o644);

    const refused = await runCli(['api-keys', 'create', '--name', 'refused by existing file', '--output', file], { env });
    expect(refused.code, show(refused)).toBe(1);
    expect(refused.stderr).toContain(`error: ${file} already exists; the key was not created.`);
    expect(refused.stderr).toContain('--force');
    expect(fs.readFileSync(file, 'utf8')).toBe('keep me\n');
    expect(await keyNames()).not.toContain('refused by existing file');

    const forced = await runCli(['api-keys', 'create', '--name', 'forced', '--output', file, '--force'], { env });
    expect(forced.code, show(forced)).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toMatch(/^mapi_[A-Za-z0-9]{40}\n$/);
    if (posix) expect(mode(file)).toBe(0o600);
  });

  it('a file that cannot be written, --force without --output and a refused request leave no key and no file', async () => {
    const env = isolatedEnv(serverVars(server));
    const blocker = path.join(tempDir(), 'a-file');
    fs.writeFileSync(blocker, '');
    const dir = tempDir();
    const [unwritable, forceAlone, refused] = await Promise.all([
      // A path under a regular file: no directory can be made there, whoever runs the test.
      runCli(['api-keys', 'create', '--name', 'unwritable', '--output', path.join(blocker, 'x.key')], { env }),
      runCli(['api-keys', 'create', '--name', 'force alone', '--force'], { env }),
      runCli(['api-keys', 'create', '--name', 'for nobody', '--user', '999999', '--output', path.join(dir, 'nobody.key')], { env }),
    ]);
    expect(unwritable.code, show(unwritable)).toBe(1);
    expect(unwritable.stderr).toContain(`Cannot write the key to ${path.join(blocker, 'x.key')}`);
    expect(unwritable.stderr).toContain('the key was not created');
    expect(forceAlone.code, show(forceAlone)).toBe(1);
    expect(forceAlone.stderr).toContain('--force only applies with --output.');
    expect(refused.code, show(refused)).toBe(1);
    expect(refused.stderr).toMatch(/^error: 404 /);
    expect(fs.readdirSync(dir)).toEqual([]);
    const names = await keyNames();
    for (const name of ['unwritable', 'force alone', 'for nobody']) expect(names).not.toContain(name);
  });
});

describe('the five-minute path keeps its key file out of git', () => {
  it('the key file the README writes is covered by .gitignore', () => {
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const written = /mapi api-keys create .*--output (\S+)/.exec(readme)?.[1];
    expect(written, 'the README writes the script key with --output').toBeDefined();
    // The README reads it back from the same place.
    expect(readme).toContain(`$(cat ${written})`);
    const ignored = execFileSync('git', ['check-ignore', '--no-index', '-v', written as string], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(ignored).toMatch(/^\.gitignore:\d+:/);
  });
});
