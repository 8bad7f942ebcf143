import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobSha } from '../src/git/objects.js';
import { DIALECTS, TestApp, problem, type Caller } from './harness.js';

/*
 * Issue 13, "Uploads and builds" (reference 2.5-2.8): hashes, start, multipart files, finish with
 * the manifest of the whole project; one atomic commit, pruning unless told not to, one build.
 */

const git = (gitDir: string, ...args: string[]) =>
  execFileSync('git', [`--git-dir=${gitDir}`, ...args], { encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: '/nonexistent' } });
const STARTER = 'model/cubes/starter.yml';
type Json = Record<string, any>;

/** A multipart/form-data body with text fields and one file, as a command-line client sends it. */
function multipart(fields: Record<string, string>, file?: { name: string; content: string | Buffer }) {
  const boundary = `----mapi${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields))
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  if (file) {
    parts.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    );
    parts.push(Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content));
    parts.push(Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

for (const dialect of DIALECTS) {
  describe(`data model: uploads (${dialect})`, () => {
    let t: TestApp;
    let dev: Caller;
    const base = (id: number) => `/build/api/v1/deployments/${id}/data-model`;
    const dir = (id: number) => t.app.services.repositories.repositories.pathOf(id);
    const head = (id: number, branch = 'main') => git(dir(id), 'rev-parse', `refs/heads/${branch}`).trim();
    const files = (id: number, rev = 'main') => git(dir(id), 'ls-tree', '-r', '--name-only', rev).trim().split('\n').filter(Boolean).sort();
    const call = (method: 'GET' | 'POST', url: string, body?: unknown, key = dev.key) =>
      t.request({ method, url, key, ...(body === undefined ? {} : { body }) });
    const ok = async (method: 'GET' | 'POST', url: string, body?: unknown, key = dev.key): Promise<Json> => {
      const res = await call(method, url, body, key);
      if (res.statusCode !== 200) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
      return res.json() as Json;
    };
    const send = (id: number, transaction: string, fileName: string, content: string | Buffer, key = dev.key, query = '') => {
      const form = multipart({ transaction, fileName }, { name: fileName.split('/').pop() ?? 'f', content });
      return t.app.inject({
        method: 'POST',
        url: `${base(id)}/upload/file${query}`,
        headers: { authorization: `Bearer ${key}`, 'content-type': form.contentType },
        payload: form.body,
      });
    };
    const deployment = async (name: string) => {
      const id = ((await t.request({ method: 'POST', url: '/build/api/v1/deployments/', body: { name } })).json() as { id: number }).id;
      await t.grant({ type: 'USER', id: dev.userId }, { type: 'DEPLOYMENT', id }, 'EDIT');
      return id;
    };
    /** What a client's deploy does: hash, send what differs, finish with the whole project. */
    const deploy = async (id: number, project: Record<string, string>, options: { query?: string; finish?: Json; key?: string } = {}) => {
      const key = options.key ?? dev.key;
      const query = options.query ?? '';
      const remote = await ok('GET', `${base(id)}/file-hashes${query}`, undefined, key);
      const { transaction } = await ok('POST', `${base(id)}/upload/start${query}`, undefined, key);
      const sent: string[] = [];
      for (const [path, content] of Object.entries(project)) {
        if (remote[path]?.hash === blobSha(content)) continue;
        const res = await send(id, transaction.id, path, content, key, query);
        expect(res.statusCode, res.body).toBe(200);
        sent.push(path);
      }
      const manifest = Object.fromEntries(Object.entries(project).map(([path, content]) => [path, blobSha(content)]));
      const done = await ok('POST', `${base(id)}/upload/finish${query}`, { transaction, files: manifest, ...options.finish }, key);
      return { sent, lastHash: done.lastHash as string, transaction: transaction.id as string };
    };

    beforeAll(async () => {
      t = await TestApp.create(dialect);
      dev = await t.user('DEVELOPER');
    });
    afterAll(() => t.close());

    it('sends only the files that differ, commits the whole project in one commit by the caller, prunes what is gone, and starts one build', async () => {
      const id = await deployment('upload');
      const project = {
        'model/cubes/orders.yml': 'cubes:\n  - name: orders\n    sql_table: orders\n    measures:\n      - name: count\n        type: count\n',
        'README.md': '# model\n',
      };
      const before = head(id);
      const first = await deploy(id, project, { finish: { commitMessage: 'First deploy' } });
      expect(first.sent.sort()).toEqual(['README.md', 'model/cubes/orders.yml']);
      expect(first.lastHash).toBe(head(id));
      expect(git(dir(id), 'rev-list', '--count', `${before}..main`).trim()).toBe('1');
      expect(git(dir(id), 'log', '-1', '--format=%ae|%s', 'main').trim()).toBe(`${dev.email}|First deploy`);
      expect(files(id)).toEqual(['README.md', 'model/cubes/orders.yml']);
      const builds = (await ok('GET', `/api/v1/deployments/${id}/builds`)).items as Json[];
      expect(builds[0]).toMatchObject({ commit: first.lastHash, cause: 'upload', mode: 'production' });
      // A second deploy with one file changed sends one file.
      const second = await deploy(id, { ...project, 'README.md': '# model v2\n' });
      expect(second.sent).toEqual(['README.md']);
      expect(git(dir(id), 'log', '-1', '--format=%s', 'main').trim()).toBe('Upload: 1 file changed');
      // Nothing changed: no commit, lastHash is the head, still one build.
      const third = await deploy(id, { ...project, 'README.md': '# model v2\n' });
      expect(third.sent).toEqual([]);
      expect(third.lastHash).toBe(second.lastHash);
      expect(((await ok('GET', `/api/v1/deployments/${id}/builds`)).items as Json[]).length).toBe(4);
      // The tree as the last upload left it.
      const tree = await ok('GET', `${base(id)}/files?showLastCLIUpload=true`);
      expect(tree.items.map((n: Json) => n.name)).toEqual(['model', 'README.md']);
    });

    it('keeps files missing from the manifest with autoRemoveFiles false', async () => {
      const id = await deployment('keep');
      await deploy(id, { 'extra.yml': 'cubes: []\n' }, { finish: { autoRemoveFiles: false } });
      expect(files(id)).toEqual(['extra.yml', STARTER]);
    });

    it('an upload that is not finished changes nothing; an expired, finished or foreign transaction is 404', async () => {
      const id = await deployment('interrupted');
      const before = head(id);
      const { transaction } = await ok('POST', `${base(id)}/upload/start`);
      expect((await send(id, transaction.id, 'half.yml', 'cubes: []\n')).statusCode).toBe(200);
      expect(head(id)).toBe(before);
      expect(files(id)).toEqual([STARTER]);
      const other = await t.key(dev.userId);
      problem(await send(id, transaction.id, 'x.yml', 'x', other), 404, 'UPLOAD_NOT_FOUND');
      problem(await call('POST', `${base(id)}/upload/finish`, { transaction, files: {} }, other), 404, 'UPLOAD_NOT_FOUND');
      // A manifest naming content nobody sent is refused, and changes nothing.
      problem(await call('POST', `${base(id)}/upload/finish`, { transaction, files: { 'half.yml': blobSha('different\n') } }), 400, 'VALIDATION_FAILED');
      expect(head(id)).toBe(before);
      await ok('POST', `${base(id)}/upload/finish`, { transaction, files: { 'half.yml': blobSha('cubes: []\n') } });
      problem(await call('POST', `${base(id)}/upload/finish`, { transaction, files: {} }), 404, 'UPLOAD_NOT_FOUND');
      problem(await send(id, transaction.id, 'late.yml', 'x'), 404, 'UPLOAD_NOT_FOUND');
      const stale = await ok('POST', `${base(id)}/upload/start`);
      await t.store.db.updateTable('uploads').set({ expires_at: '2000-01-01T00:00:00.000Z' }).where('id', '=', stale.transaction.id).execute();
      const expired = problem(await send(id, stale.transaction.id, 'x.yml', 'x'), 404, 'UPLOAD_NOT_FOUND');
      expect(expired.detail).toContain('expired');
    });

    it('targets the active dev-mode branch, and refuses the deploy branch while it is read-only', async () => {
      const id = await deployment('targets');
      const { branchName } = await ok('POST', `/build/api/v1/deployments/${id}/dev-mode`);
      const mainBefore = head(id);
      const done = await deploy(id, { [STARTER]: 'cubes: [] # replaced\n' });
      expect(done.lastHash).toBe(head(id, branchName));
      expect(head(id)).toBe(mainBefore);
      expect(((await ok('GET', `/api/v1/deployments/${id}/builds`)).items as Json[])[0]).toMatchObject({ branchName, mode: 'dev_mode' });
      await ok('POST', `/build/api/v1/deployments/${id}/dev-mode`).then(() =>
        t.request({ method: 'DELETE', url: `/build/api/v1/deployments/${id}/dev-mode`, key: dev.key }),
      );
      expect((await t.request({ method: 'PUT', url: `/api/v1/deployments/${id}`, body: { deployBranchReadOnly: true } })).statusCode).toBe(200);
      problem(await call('POST', `${base(id)}/upload/start`), 403, 'FORBIDDEN');
    });

    it('with useDeployProjectRoot, paths are relative to the project root and only files below it are pruned', async () => {
      const id = await deployment('root');
      expect((await t.request({ method: 'PUT', url: `/api/v1/deployments/${id}`, body: { deployProjectRoot: 'analytics' } })).statusCode).toBe(200);
      await deploy(id, { 'cubes/a.yml': 'cubes: []\n' }, { query: '?useDeployProjectRoot=true' });
      expect(files(id)).toEqual(['analytics/cubes/a.yml', STARTER]);
      expect(await ok('GET', `${base(id)}/file-hashes?useDeployProjectRoot=true`)).toEqual({ 'cubes/a.yml': { hash: blobSha('cubes: []\n') } });
      await deploy(id, { 'cubes/b.yml': 'cubes: []\n' }, { query: '?useDeployProjectRoot=true' });
      expect(files(id)).toEqual(['analytics/cubes/b.yml', STARTER]);
    });

    it('refuses bad files: a path outside the repository, a file over 1 MiB, missing fields', async () => {
      const id = await deployment('bad files');
      const { transaction } = await ok('POST', `${base(id)}/upload/start`);
      problem(await send(id, transaction.id, '../escape.yml', 'x'), 400, 'VALIDATION_FAILED');
      problem(await send(id, transaction.id, 'big.yml', Buffer.alloc(1024 * 1024 + 1, 97)), 413, 'PAYLOAD_TOO_LARGE');
      const form = multipart({ transaction: transaction.id });
      problem(
        await t.app.inject({
          method: 'POST',
          url: `${base(id)}/upload/file`,
          headers: { authorization: `Bearer ${dev.key}`, 'content-type': form.contentType },
          payload: form.body,
        }),
        400,
        'VALIDATION_FAILED',
      );
      problem(await call('POST', `${base(id)}/upload/finish`, { transaction, files: { '/abs.yml': blobSha('x') } }), 400, 'VALIDATION_FAILED');
    });

    it('needs SchemaUpdate: a viewer may read hashes but not upload', async () => {
      const id = await deployment('upload access');
      const viewer = await t.user('VIEWER');
      await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id }, 'VIEW');
      expect((await call('GET', `${base(id)}/file-hashes`, undefined, viewer.key)).statusCode).toBe(200);
      problem(await call('POST', `${base(id)}/upload/start`, undefined, viewer.key), 403, 'FORBIDDEN');
    });
  });
}
