import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { readProject, targetOf, writeProject } from '../src/project-files.js';
import { createUploadProgress } from '../src/upload-progress.js';
import { completion, isolatedEnv, removeTempDirs, runCli, serverVars, show, spawnCli, startTestServer, tempDir, type TestServer } from './helpers.js';

/** `mapi model pull|push|validate|status` against a real server, and the pieces they stand on. */

const cube = (name: string, title = name) => `cubes:
  - name: ${name}
    title: ${title}
    sql_table: public.${name}
    dimensions:
      - name: id
        sql: id
        type: number
        primary_key: true
    measures:
      - name: total
        type: count
`;

const BROKEN = 'cubes:\n  - name: broken\n    sql_table: t\n    measures:\n      - name: total\n        type: summ\n';

/** Writes `files` (path → content) below `dir`. */
function put(dir: string, files: Record<string, string>): void {
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
  }
}

afterAll(removeTempDirs);

describe.each(STORE_INDEPENDENT)('mapi model (%s)', (dialect) => {
  let server: TestServer;
  let env: Record<string, string>;
  let d: number;
  let project: string;
  const PROJECT = { 'model/cubes/orders.yml': cube('orders'), 'model/cubes/customers.yml': cube('customers'), 'README.md': 'The analytics project.\n' };

  beforeAll(async () => {
    server = await startTestServer(dialect);
    env = isolatedEnv(serverVars(server));
    d = await server.deployment(`Model ${dialect}`);
    project = tempDir('mapi-model-');
    // Left out of a push: hidden files and directories, node_modules.
    put(project, { ...PROJECT, '.env': 'SECRET=1\n', '.git/config': '[core]\n', 'node_modules/x/index.js': '', 'model/.draft.yml': 'x' });
  });

  afterAll(async () => {
    await server?.stop();
  });

  const hashes = async (deploymentId: number) =>
    (await server.get(`/build/api/v1/deployments/${deploymentId}/data-model/file-hashes`)).body as Record<string, { hash: string }>;
  const commits = async (deploymentId: number) =>
    (await server.get(`/build/api/v1/deployments/${deploymentId}/commits?first=5`)).body.items as { hash: string; message: string; parentHashes: string[] }[];

  it('push sends the project (hidden files and node_modules left out) as one commit, replacing the starter model, and waits for the build', async () => {
    const before = (await commits(d))[0];
    const pushed = await runCli(['model', 'push', String(d), project, '--message', 'First push'], { env });
    expect(pushed.code, show(pushed)).toBe(0);
    const bytes = Object.values(PROJECT).reduce((sum, c) => sum + Buffer.byteLength(c), 0);
    expect(pushed.stdout).toContain(
      `Sent 3 of 3 files (${bytes} bytes) to deployment ${d} ("Model ${dialect}"), 0 unchanged, removed 1 file missing here (model/cubes/starter.yml).`,
    );
    expect(pushed.stdout).toMatch(/^Build \d+ of [0-9a-f]{12} on branch main: success \(2 cubes\)\.$/m);
    // Not a terminal: progress as lines on stderr, ending with the total.
    expect(pushed.stderr).toMatch(/^sent 3\/3 files, .+ of .+$/m);

    const [head] = await commits(d);
    expect(head).toMatchObject({ message: 'First push', parentHashes: [before?.hash] });
    expect(pushed.stdout).toContain(`Commit ${head?.hash}.`);
    expect(Object.keys(await hashes(d)).sort()).toEqual(Object.keys(PROJECT).sort());
  });

  it('push after changing one file sends exactly that file; --json reports the push and its build', async () => {
    fs.writeFileSync(path.join(project, 'model/cubes/orders.yml'), cube('orders', 'Orders, renamed'));
    const pushed = await runCli(['--json', 'model', 'push', String(d), project], { env });
    expect(pushed.code, show(pushed)).toBe(0);
    // --json: nothing but the result; no progress, no notes.
    expect(pushed.stderr).toBe('');
    const result = JSON.parse(pushed.stdout);
    expect(result).toMatchObject({
      deploymentId: d,
      sent: ['model/cubes/orders.yml'],
      bytesSent: Buffer.byteLength(cube('orders', 'Orders, renamed')),
      unchanged: 2,
      removed: [],
      files: 3,
    });
    expect(result.build).toMatchObject({ status: 'success', commit: result.lastHash, cubesCount: 2 });
    const [head] = await commits(d);
    expect(head?.hash).toBe(result.lastHash);
    expect(head?.message).toBe('Upload: 1 file changed');
  });

  it('pull writes every file of the branch into another directory, creating it; the content is what was pushed', async () => {
    const target = path.join(tempDir('mapi-pull-'), 'copy');
    const pulled = await runCli(['model', 'pull', String(d), target], { env });
    expect(pulled.code, show(pulled)).toBe(0);
    expect(pulled.stdout).toBe(`Wrote 3 files from deployment ${d} to ${target}.\n`);
    const copy = await readProject(target);
    const original = await readProject(project);
    expect(copy.files.map((f) => [f.path, Buffer.from(f.content).toString('utf8')])).toEqual(
      original.files.map((f) => [f.path, Buffer.from(f.content).toString('utf8')]),
    );

    const json = await runCli(['--json', 'model', 'pull', String(d), target, '--branch', 'main'], { env });
    expect(json.code, show(json)).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ deploymentId: d, branchName: 'main', dir: target, notUtf8: [] });
    expect(
      JSON.parse(json.stdout)
        .files.map((f: { path: string }) => f.path)
        .sort(),
    ).toEqual(Object.keys(PROJECT).sort());
  });

  it('status prints the latest build of the branch: success, as a table or JSON', async () => {
    const [text, json] = await Promise.all([runCli(['model', 'status', String(d)], { env }), runCli(['--json', 'model', 'status', String(d)], { env })]);
    expect(text.code, show(text)).toBe(0);
    const [header, row] = text.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^BRANCH\s+MODE\s+STATUS\s+BUILD\s+COMMIT\s+UPDATED\s+ERROR$/);
    expect(row).toMatch(/^main\s+production\s+success\s+\d+\s+[0-9a-f]{12}\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+-$/);
    expect(json.code, show(json)).toBe(0);
    const [head] = await commits(d);
    expect(JSON.parse(json.stdout)).toMatchObject({ deploymentId: d, branchName: 'main', status: 'success', lastHash: head?.hash, errorText: null });
  });

  it('a broken model: push exits 1 with the build error and log; validate prints file:line:col lines and exits 1; a valid model exits 0', async () => {
    const other = await server.deployment(`Broken ${dialect}`);
    const dir = tempDir('mapi-broken-');
    put(dir, { 'model/cubes/orders.yml': cube('orders'), 'model/cubes/broken.yml': BROKEN });
    const pushed = await runCli(['model', 'push', String(other), dir], { env });
    expect(pushed.code, show(pushed)).toBe(1);
    expect(pushed.stdout).toMatch(/^Build \d+ of [0-9a-f]{12} on branch main: failed\.$/m);
    expect(pushed.stdout).toMatch(/^ {2}1 error in the data model; the first: model\/cubes\/broken\.yml:6 /m);
    expect(pushed.stdout).toMatch(/^Build log:\n(?: {2}.*\n)*? {2}model\/cubes\/broken\.yml:6:\d+ .*summ/m);

    const invalid = await runCli(['model', 'validate', String(other)], { env });
    expect(invalid.code, show(invalid)).toBe(1);
    const lines = invalid.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^model\/cubes\/broken\.yml:6:\d+ .*summ/);
    expect(lines.at(-1)).toBe(`Invalid: 1 error in the data model of branch main (deployment ${other}).`);

    const json = await runCli(['--json', 'model', 'validate', String(other), '--branch', 'main'], { env });
    expect(json.code, show(json)).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: false, errors: [{ fileName: 'model/cubes/broken.yml', line: 6 }] });

    const valid = await runCli(['model', 'validate', String(d)], { env });
    expect(valid.code, show(valid)).toBe(0);
    expect(valid.stdout).toBe(`Valid: 2 cubes in the data model of branch main (deployment ${d}).\n`);
  });

  it('--keep-remote-files keeps what is missing locally; --no-wait returns after the commit', async () => {
    const dir = tempDir('mapi-partial-');
    put(dir, { 'model/cubes/orders.yml': cube('orders', 'Orders, renamed') });
    const pushed = await runCli(['model', 'push', String(d), dir, '--keep-remote-files', '--no-wait'], { env });
    expect(pushed.code, show(pushed)).toBe(0);
    expect(pushed.stdout).toMatch(/^Sent 0 of 1 file \(0 bytes\) to deployment \d+ \(".*"\), 1 unchanged\.\nCommit [0-9a-f]{40}\.\n$/);
    expect(pushed.stdout).not.toContain('Build');
    expect(Object.keys(await hashes(d)).sort()).toEqual(Object.keys(PROJECT).sort());
  });

  it("--project-root puts the files below the deployment's deployProjectRoot and prunes only there", async () => {
    const rooted = await server.deployment(`Rooted ${dialect}`);
    const settings = await server.put(`/api/v1/deployments/${rooted}`, { deployProjectRoot: 'analytics' });
    expect(settings.status, settings.text).toBe(200);
    const dir = tempDir('mapi-rooted-');
    put(dir, { 'model/cubes/orders.yml': cube('orders') });
    const pushed = await runCli(['--json', 'model', 'push', String(rooted), dir, '--project-root'], { env });
    expect(pushed.code, show(pushed)).toBe(0);
    expect(JSON.parse(pushed.stdout)).toMatchObject({ sent: ['model/cubes/orders.yml'], removed: [] });
    // The starter model sits outside the project root, so it stays.
    expect(Object.keys(await hashes(rooted)).sort()).toEqual(['analytics/model/cubes/orders.yml', 'model/cubes/starter.yml']);
  });

  it('Ctrl-C while files are being sent stops the push with nothing committed (exit 130)', async () => {
    const dir = tempDir('mapi-many-');
    // Enough files that sending takes several seconds (each file is a request), so the first
    // progress line, a second in, comes long before the last file: 300 were sent in under a second.
    put(dir, Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`model/cubes/c${i}.yml`, cube(`c${i}`)])));
    const before = (await commits(d))[0];
    const child = spawnCli(['model', 'push', String(d), dir], { env });
    const done = completion(child);
    child.stderr?.on('data', (chunk: Buffer) => {
      if (/^sent \d+\/3000 files/m.test(chunk.toString('utf8'))) child.kill('SIGINT');
    });
    const result = await done;
    expect(result.code, show(result)).toBe(130);
    expect(result.stdout).toBe('Interrupted: nothing was committed.\n');
    expect(result.stderr).toContain('Interrupted: stopping (Ctrl-C again to quit at once)...');
    expect((await commits(d))[0]?.hash).toBe(before?.hash);
  });

  it('usage errors are caught before any request: an empty project, an empty --branch, --branch with --dev-mode, a missing directory', async () => {
    const empty = tempDir('mapi-empty-');
    put(empty, { '.hidden': 'x' });
    const results = await Promise.all([
      runCli(['model', 'push', String(d), empty], { env }),
      runCli(['model', 'push', String(d), project, '--branch', ''], { env }),
      runCli(['model', 'validate', String(d), '--branch', 'main', '--dev-mode'], { env }),
      runCli(['model', 'push', String(d), path.join(empty, 'missing')], { env }),
    ]);
    for (const result of results) expect(result.code, show(result)).toBe(1);
    expect(results[0]?.stderr).toContain(`error: No files to push in ${empty}`);
    expect(results[0]?.stderr).toContain('hint: A push sends the whole project');
    expect(results[1]?.stderr).toContain('error: --branch is empty.');
    expect(results[2]?.stderr).toContain('error: Give --branch or --dev-mode, not both.');
    expect(results[3]?.stderr).toContain('does not exist');
  });

  it('an unknown branch is a 404 with a hint about --branch', async () => {
    const result = await runCli(['model', 'pull', String(d), tempDir(), '--branch', 'no-such-branch'], { env });
    expect(result.code, show(result)).toBe(1);
    expect(result.stderr).toContain('404');
    expect(result.stderr).toContain('hint: Check the name given with --branch');
  });
});

describe('project files', () => {
  it('refuses paths that would land outside the directory', () => {
    const root = tempDir();
    for (const bad of ['../outside.yml', 'a/../../outside.yml', '/etc/passwd', 'a\\..\\b', '.git/config', '']) {
      expect(() => targetOf(root, bad), bad).toThrow(/Refusing to write/);
    }
    expect(targetOf(root, 'model/cubes/a.yml')).toBe(path.join(root, 'model', 'cubes', 'a.yml'));
  });

  it('does not write through a symbolic link to a directory outside, nor through a linked file', async () => {
    const root = tempDir();
    const outside = tempDir();
    fs.symlinkSync(outside, path.join(root, 'model'));
    await expect(writeProject(root, [{ path: 'model/a.yml', content: 'x' }])).rejects.toThrow(/link out of the directory/);
    fs.writeFileSync(path.join(outside, 'target.yml'), 'keep');
    fs.symlinkSync(path.join(outside, 'target.yml'), path.join(root, 'linked.yml'));
    await expect(writeProject(root, [{ path: 'linked.yml', content: 'x' }])).rejects.toThrow(/symbolic link/);
    expect(fs.readdirSync(outside)).toEqual(['target.yml']);
    expect(fs.readFileSync(path.join(outside, 'target.yml'), 'utf8')).toBe('keep');
  });

  it('reads regular files only, sorted, without hidden entries, node_modules or symbolic links', async () => {
    const root = tempDir();
    put(root, { 'b.yml': 'b', 'a/c.yml': 'c', '.hidden/x': 'x', 'node_modules/y': 'y' });
    fs.symlinkSync(path.join(root, 'b.yml'), path.join(root, 'link.yml'));
    const project = await readProject(root);
    expect(project.files.map((f) => f.path)).toEqual(['a/c.yml', 'b.yml']);
    expect(project.skipped).toEqual(['link.yml']);
  });
});

describe('upload progress off a terminal', () => {
  it('prints a line at most once a second, and always the last one', () => {
    const stream = new PassThrough();
    let written = '';
    stream.on('data', (chunk: Buffer) => (written += chunk.toString('utf8')));
    let clock = 0;
    const progress = createUploadProgress(stream as unknown as NodeJS.WriteStream, () => clock);
    const at = (done: number, ms: number) => {
      clock = ms;
      progress.update({ total: 4, done, bytesTotal: 4096, bytesSent: done * 1024 });
    };
    at(0, 0);
    at(1, 200);
    at(2, 1200);
    at(3, 1500);
    at(4, 1600);
    expect(written).toBe('sent 2/4 files, 2.0 KiB of 4.0 KiB\nsent 4/4 files, 4.0 KiB of 4.0 KiB\n');
  });
});
