import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { ApiError, blobHash, MAX_MODEL_FILE_BYTES, type MapiClient, type ModelFile, type PushProgress } from '../src/node.js';
import { FaultyProxy } from './faulty-proxy.js';
import { createDeployment, startTestServer, type TestServer } from './support.js';

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

const PROJECT: ModelFile[] = [
  { path: 'model/cubes/orders.yml', content: cube('orders') },
  { path: 'model/cubes/customers.yml', content: cube('customers') },
  { path: 'README.md', content: 'Not a model file, but part of the project.\n' },
];

describe('blobHash', () => {
  it('is what `git hash-object` prints, for text, bytes, the empty file and non-ASCII text', async () => {
    const samples: (string | Uint8Array)[] = ['hello\n', '', 'ünïcødé ✓\r\n', new Uint8Array([0, 1, 2, 255, 254, 10, 0]), 'x'.repeat(70_000)];
    for (const sample of samples) {
      const expected = execFileSync('git', ['hash-object', '--stdin'], { input: sample }).toString('utf8').trim();
      expect(await blobHash(sample)).toBe(expected);
    }
    expect(await blobHash('hello\n')).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
  });
});

describe.each(STORE_INDEPENDENT)('data-model uploads (%s)', (dialect) => {
  let server: TestServer;
  let proxy: FaultyProxy;
  /** Straight to the server, to read its state. */
  let direct: MapiClient;
  /** Through the proxy, which fails requests on purpose. */
  let client: MapiClient;
  const uploadPath = (d: number, step: string) => `/build/api/v1/deployments/${d}/data-model/upload/${step}`;

  beforeAll(async () => {
    server = await startTestServer(dialect);
    proxy = await FaultyProxy.start(server);
    direct = server.client();
    client = server.client({ baseUrl: proxy.url });
  });
  beforeEach(() => proxy.reset());
  afterAll(async () => {
    await proxy?.close();
    await server?.close();
  });

  const head = async (d: number) => {
    for await (const commit of direct.commits.list(d, { first: 1 })) return commit;
    throw new Error('no commits');
  };

  it('push sends every file the branch lacks, commits once, deletes what is gone, and the build of that commit succeeds', async () => {
    const d = await createDeployment(direct);
    const progress: PushProgress[] = [];
    const result = await client.dataModel.push(d, PROJECT, { commitMessage: 'First push', onProgress: (p) => progress.push(p) });

    const bytes = PROJECT.reduce((sum, f) => sum + Buffer.byteLength(f.content), 0);
    expect(result).toMatchObject({ files: 3, bytesSent: bytes, unchanged: 0, removed: ['model/cubes/starter.yml'] });
    expect([...result.sent].sort()).toEqual(PROJECT.map((f) => f.path).sort());
    expect(progress[0]).toEqual({ total: 3, done: 0, bytesTotal: bytes, bytesSent: 0 });
    expect(progress.at(-1)).toMatchObject({ total: 3, done: 3, bytesSent: bytes });
    expect(progress).toHaveLength(4);
    expect(proxy.count('POST', uploadPath(d, 'file'))).toBe(3);

    const commit = await head(d);
    expect(commit).toMatchObject({ hash: result.lastHash, message: 'First push' });
    const hashes = await direct.dataModel.hashes(d);
    expect(Object.fromEntries(hashes)).toEqual(Object.fromEntries(await Promise.all(PROJECT.map(async (f) => [f.path, await blobHash(f.content)]))));
    const files = await direct.dataModel.files(d, { withContent: true });
    expect(Object.fromEntries(files.map((f) => [f.path, f.content]))).toEqual(Object.fromEntries(PROJECT.map((f) => [f.path, f.content])));

    const build = await direct.builds.waitFor(d, result.lastHash as string);
    expect(build).toMatchObject({ commit: result.lastHash, status: 'success', cubesCount: 2, cause: 'upload' });
  });

  it('a second push sends only the changed file; autoRemoveFiles false keeps files missing locally', async () => {
    const d = await createDeployment(direct);
    await client.dataModel.push(d, PROJECT);
    proxy.reset();
    const changed = [{ ...PROJECT[0], content: cube('orders', 'Orders, renamed') } as ModelFile, ...PROJECT.slice(1)];
    const progress: PushProgress[] = [];
    const again = await client.dataModel.push(d, changed, { onProgress: (p) => progress.push(p) });
    expect(again).toMatchObject({ sent: ['model/cubes/orders.yml'], unchanged: 2, removed: [], bytesSent: Buffer.byteLength(changed[0]?.content as string) });
    expect(progress.map((p) => [p.done, p.total, p.path])).toEqual([
      [0, 1, undefined],
      [1, 1, 'model/cubes/orders.yml'],
    ]);
    expect(proxy.count('POST', uploadPath(d, 'file'))).toBe(1);
    expect((await head(d)).hash).toBe(again.lastHash);

    const kept = await client.dataModel.push(d, changed.slice(0, 2), { autoRemoveFiles: false });
    expect(kept).toMatchObject({ sent: [], unchanged: 2, removed: [], lastHash: again.lastHash });
    expect((await direct.dataModel.hashes(d)).has('README.md')).toBe(true);

    const pruned = await client.dataModel.push(d, changed.slice(0, 2));
    expect(pruned.removed).toEqual(['README.md']);
    expect((await direct.dataModel.hashes(d)).has('README.md')).toBe(false);
  });

  it('a file whose connection drops is sent again; the push still commits every file once', async () => {
    const d = await createDeployment(direct);
    proxy.rule = ({ method, path }, n) => (method === 'POST' && path === uploadPath(d, 'file') && n === 0 ? 'destroy' : 'forward');
    const result = await client.dataModel.push(d, PROJECT, { concurrency: 1 });
    expect(result.sent).toHaveLength(3);
    expect(proxy.count('POST', uploadPath(d, 'file'))).toBe(4);
    expect([...(await direct.dataModel.hashes(d)).keys()].sort()).toEqual(PROJECT.map((f) => f.path).sort());
  });

  it('finish is sent again after BRANCH_MOVED (nothing happened), never after an answer the server may have acted on', async () => {
    const d = await createDeployment(direct);
    proxy.rule = ({ method, path }, n) =>
      method === 'POST' && path === uploadPath(d, 'finish') && n === 0 ? { status: 409, code: 'BRANCH_MOVED' } : 'forward';
    const moved = await client.dataModel.push(d, PROJECT);
    expect(proxy.count('POST', uploadPath(d, 'finish'))).toBe(2);
    expect((await head(d)).hash).toBe(moved.lastHash);

    proxy.reset();
    const changed = [{ path: 'model/cubes/orders.yml', content: cube('orders', 'Orders, renamed') }, ...PROJECT.slice(1)];
    proxy.rule = ({ method, path }) => (method === 'POST' && path === uploadPath(d, 'finish') ? 'forward-then-502' : 'forward');
    const error = await client.dataModel.push(d, changed).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(502);
    expect(proxy.count('POST', uploadPath(d, 'finish'))).toBe(1);
    // The server did commit: the client said it could not know, and did not commit twice.
    const commit = await head(d);
    expect(commit.hash).not.toBe(moved.lastHash);
    expect(commit.parentHashes).toEqual([moved.lastHash]);
  });

  it('refuses a file over 1 MiB, a path the server would refuse and a repeated path before sending anything', async () => {
    const d = await createDeployment(direct);
    const big = { path: 'model/cubes/big.yml', content: new Uint8Array(MAX_MODEL_FILE_BYTES + 1) };
    await expect(client.dataModel.push(d, [...PROJECT, big])).rejects.toThrow(RangeError);
    await expect(client.dataModel.push(d, [{ path: '../outside.yml', content: 'x' }])).rejects.toThrow(/\.\. segment/);
    await expect(client.dataModel.push(d, [{ path: 'model\\cubes\\a.yml', content: 'x' }])).rejects.toThrow(/backslash/);
    await expect(client.dataModel.push(d, [PROJECT[0] as ModelFile, PROJECT[0] as ModelFile])).rejects.toThrow(/listed twice/);
    expect(proxy.seen).toEqual([]);
  });

  it('an aborted push commits nothing', async () => {
    const d = await createDeployment(direct);
    const before = (await head(d)).hash;
    const controller = new AbortController();
    const error = await client.dataModel
      .push(d, PROJECT, { concurrency: 1, onProgress: (p) => (p.done === 1 ? controller.abort() : undefined), signal: controller.signal })
      .catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    expect(proxy.count('POST', uploadPath(d, 'finish'))).toBe(0);
    expect((await head(d)).hash).toBe(before);
  });

  it('waitFor returns a failed build of a broken model; its log names the file and line', async () => {
    const d = await createDeployment(direct);
    const broken = {
      path: 'model/cubes/broken.yml',
      content: 'cubes:\n  - name: broken\n    sql_table: t\n    measures:\n      - name: total\n        type: summ\n',
    };
    const result = await client.dataModel.push(d, [broken]);
    const updates: string[] = [];
    const build = await client.builds.waitFor(d, result.lastHash as string, { onUpdate: (b) => updates.push(b.status) });
    expect(build).toMatchObject({ status: 'failed', commit: result.lastHash });
    expect(build.errorText).toMatch(/model\/cubes\/broken\.yml:6/);
    expect(updates.at(-1)).toBe('failed');
    const lines: string[] = [];
    for await (const line of client.builds.logs(d, build.id)) lines.push(line.line);
    expect(lines).toContainEqual(expect.stringMatching(/^model\/cubes\/broken\.yml:6:\d+ .*summ/));
  });
});
