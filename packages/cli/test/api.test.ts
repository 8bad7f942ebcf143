import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../server/test/server-env.js';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { fieldsToObject, fieldsToQuery } from '../src/api-fields.js';
import { isolatedEnv, removeTempDirs, runCli, serverVars, show, startTestServer, tempDir, type TestServer } from './helpers.js';
import fs from 'node:fs';
import path from 'node:path';

/** `mapi api METHOD PATH`: any request, with the profile's credentials, against a real server. */

const execFileAsync = promisify(execFile);

afterAll(removeTempDirs);

describe.each(STORE_INDEPENDENT)('mapi api (%s)', (dialect) => {
  let server: TestServer;
  let env: Record<string, string>;
  let d: number;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    env = isolatedEnv(serverVars(server));
    d = await server.deployment(`Api ${dialect}`);
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('GET prints the body as the server sent it; -F fields become query parameters; a path may carry its own query', async () => {
    const [me, commits, withQuery, page] = await Promise.all([
      runCli(['api', 'get', '/api/v1/users/me'], { env }),
      runCli(['api', 'GET', `/build/api/v1/deployments/${d}/commits`, '-F', 'first=1'], { env }),
      runCli(['api', 'GET', `/build/api/v1/deployments/${d}/commits?first=1`, '-f', 'branchName=main'], { env }),
      runCli(['api', 'GET', '/api/v1/reference'], { env }),
    ]);
    expect(me.code, show(me)).toBe(0);
    expect(JSON.parse(me.stdout)).toMatchObject({ email: 'admin@localhost', role: 'ADMIN' });
    // Off a terminal the JSON is not re-indented: what the server sent...
    expect(me.stdout).not.toContain('\n  ');
    // ...ending its line, so what follows starts on its own.
    expect(me.stdout).toMatch(/}\n$/);
    for (const result of [commits, withQuery]) {
      expect(result.code, show(result)).toBe(0);
      expect(JSON.parse(result.stdout).items).toHaveLength(1);
    }
    expect(page.code, show(page)).toBe(0);
    expect(page.stdout).toMatch(/^<!doctype html>/i);
  });

  it('on a terminal, a JSON answer is indented', async () => {
    // script(1) (util-linux) runs the command on a pseudo-terminal, as a person would.
    const command = [process.execPath, path.join(REPO_ROOT, 'packages/cli/bin/mapi.js'), 'api', 'GET', '/api/v1/users/me'].map((w) => `'${w}'`).join(' ');
    const onTerminal = await execFileAsync('script', ['-qec', command, '/dev/null'], { env });
    const text = onTerminal.stdout.replace(/\r\n/g, '\n');
    expect(text).toMatch(/^\{\n {2}"id": \d+,\n/);
    expect(JSON.parse(text)).toMatchObject({ email: 'admin@localhost' });
  });

  it('POST builds a JSON body from -f and typed -F fields; --input sends a file or stdin; --include prints status and headers', async () => {
    const created = await runCli(['api', 'POST', `/api/v1/deployments/${d}/folders`, '-f', 'name=Finance', '-F', 'parentId=null', '--include'], { env });
    expect(created.code, show(created)).toBe(0);
    const [head, body] = created.stdout.split('\n\n');
    expect(head).toMatch(/^HTTP 201 Created\n/);
    expect(head).toMatch(/^content-type: application\/json/m);
    const folder = JSON.parse(body as string) as { id: number; name: string; parentId: number | null };
    expect(folder).toMatchObject({ name: 'Finance', parentId: null });

    const file = path.join(tempDir(), 'sub.json');
    fs.writeFileSync(file, JSON.stringify({ name: '2025', parentId: folder.id }));
    const [fromFile, fromStdin] = await Promise.all([
      runCli(['api', 'POST', `/api/v1/deployments/${d}/folders`, '--input', file], { env }),
      runCli(['api', 'PUT', `/api/v1/deployments/${d}/workbooks/by-slug/api-made`, '--input', '-'], {
        env,
        input: '{"name": "Made by api", "folderId": null}',
      }),
    ]);
    expect(fromFile.code, show(fromFile)).toBe(0);
    expect(fromStdin.code, show(fromStdin)).toBe(0);
    const names = (await server.listing(d, 'root')).map((e) => e.name);
    expect(names).toEqual(expect.arrayContaining(['Finance', 'Made by api']));
    expect((await server.listing(d, folder.id)).map((e) => e.name)).toEqual(['2025']);
  });

  it('-H sends headers; an answer of 400 or above exits 1 with its problem details on stderr, and a refused body creates nothing', async () => {
    const [tagged, missing, invalid, forged] = await Promise.all([
      runCli(['api', 'GET', '/api/v1/users/me', '-H', 'X-Request-Id: api-cli-test-1', '-i'], { env }),
      runCli(['api', 'GET', '/api/v1/deployments/99999/folders'], { env }),
      runCli(['api', 'POST', `/api/v1/deployments/${d}/folders`, '-F', 'name=7', '-F', 'extra[deep][]=true'], { env }),
      runCli(['api', 'GET', '/api/v1/users/me', '-H', 'Authorization: Bearer mapi_notarealkeynotarealkeynotarealkeynotar'], { env }),
    ]);
    expect(tagged.code, show(tagged)).toBe(0);
    expect(tagged.stdout).toMatch(/^x-request-id: api-cli-test-1$/m);
    expect(missing.code, show(missing)).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/^error: 404 /);
    expect(invalid.code, show(invalid)).toBe(1);
    expect(invalid.stderr).toMatch(/^error: 400 /);
    expect(invalid.stderr).toMatch(/request id: /);
    expect((await server.listing(d, 'root')).map((e) => e.name)).not.toContain('7');
    expect(forged.code, show(forged)).toBe(1);
    expect(forged.stderr).toMatch(/^error: 401 /);
  });

  it('usage errors are caught before anything is sent', async () => {
    const unreachable = isolatedEnv({ MAPI_URL: 'https://127.0.0.1:59999', MAPI_TOKEN: 'mapi_notarealkeynotarealkeynotarealkeynotar' });
    const results = await Promise.all([
      runCli(['api', 'GET', 'api/v1/users/me'], { env: unreachable }),
      runCli(['api', 'FETCH', '/api/v1/users/me'], { env: unreachable }),
      runCli(['api', 'GET', '/api/v1/users/me', '-H', 'no colon'], { env: unreachable }),
      runCli(['api', 'POST', '/api/v1/users', '--input', '-'], { env: unreachable, input: 'name: yaml' }),
      runCli(['api', 'POST', '/api/v1/users', '-f', 'noequals'], { env: unreachable }),
    ]);
    const messages = ['does not start with /', 'Unknown method "FETCH"', 'is not "Name: value"', 'stdin is not JSON', 'is not key=value'];
    results.forEach((result, i) => {
      expect(result.code, show(result)).toBe(1);
      expect(result.stderr).toContain(messages[i]);
      expect(result.stderr).not.toContain('cannot reach');
    });
  });
});

describe('api fields', () => {
  it('nest with key[sub], append with key[], and type only -F values', () => {
    const fields = [
      { spec: 'name=7', typed: false },
      { spec: 'count=7', typed: true },
      { spec: 'on=true', typed: true },
      { spec: 'none=null', typed: true },
      { spec: 'owner[email]=a@b.c', typed: false },
      { spec: 'tags[]=x', typed: false },
      { spec: 'tags[]=2.5', typed: true },
      { spec: 'a[b][]=1', typed: true },
      { spec: 'text=a=b', typed: false },
    ];
    expect(fieldsToObject(fields)).toEqual({
      name: '7',
      count: 7,
      on: true,
      none: null,
      owner: { email: 'a@b.c' },
      tags: ['x', 2.5],
      a: { b: [1] },
      text: 'a=b',
    });
    expect(fieldsToQuery([fields[0]!, fields[5]!, fields[6]!])).toEqual([
      ['name', '7'],
      ['tags', 'x'],
      ['tags', '2.5'],
    ]);
  });
});
