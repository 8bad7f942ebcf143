import { execFile } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { blobSha } from '../src/git/objects.js';
import { DIALECTS } from './harness.js';
import { serverEnv, type ServerEnv } from './server-env.js';
import { startServerProcess, type HttpAnswer, type ServerProcess } from './server-process.js';

/*
 * A branch is usable on every route the moment the request that made or moved it is answered:
 * a push over git, a dev-mode commit, an upload's finish. Right after each, with no wait and no
 * retry, the branch's data API (dev-mode/<branch>), validate, build status, builds, files,
 * commits, the branch list, pull and merge-to-default all take it. On PostgreSQL the push, commit
 * and upload go to one server process and the reads to another, sharing the store and the
 * repositories (an embedded SQLite store is served by one process).
 */

type Json = Record<string, any>;
const run = promisify(execFile);
const RUNTIME_VARS = {
  RUNTIME_DRIVER: 'process',
  RUNTIME_TICK_MS: '200',
  RUNTIME_LEASE_MS: '1000',
  RUNTIME_HEALTH_INTERVAL_MS: '300',
  RUNTIME_BACKOFF_MS: '200',
  RATE_LIMIT_PER_MINUTE: '0',
};

/** A cube the runtime can serve without any table: its name shows which commit a data API serves. */
const cube = (name: string) =>
  `cubes:\n  - name: ${name}\n    sql: SELECT 1 AS id\n    dimensions:\n      - name: id\n        sql: id\n        type: number\n        primary_key: true\n    measures:\n      - name: count\n        type: count\n`;

/** A multipart/form-data body with text fields and one file, as `mapi model push` sends it. */
function multipart(fields: Record<string, string>, file: { name: string; content: string }) {
  const boundary = `----mapi${Math.random().toString(16).slice(2)}`;
  const parts = Object.entries(fields).map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  parts.push(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: application/octet-stream\r\n\r\n${file.content}\r\n`,
  );
  parts.push(`--${boundary}--\r\n`);
  return { body: Buffer.from(parts.join('')), contentType: `multipart/form-data; boundary=${boundary}` };
}

for (const dialect of DIALECTS) {
  describe(`a branch is usable on every route once its push, commit or upload is answered (${dialect})`, () => {
    let env: ServerEnv;
    let servers: ServerProcess[] = [];
    let work: string;
    let ca: string;
    const adminKey = generateApiKey();
    /** Where pushes, commits and uploads go, and where the branch is read right after. */
    const writer = () => servers[0] as ServerProcess;
    const reader = () => servers[servers.length - 1] as ServerProcess;

    const expectOk = (answer: HttpAnswer, what: string): Json => {
      if (answer.status !== 200) throw new Error(`${what}: ${answer.status} ${answer.text}`);
      return answer.body as Json;
    };
    const git = (cwd: string, ...args: string[]) =>
      run('git', args, {
        cwd,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: work,
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_TERMINAL_PROMPT: '0',
          GIT_SSL_CAINFO: ca,
          GIT_AUTHOR_NAME: 'Pat Pusher',
          GIT_AUTHOR_EMAIL: 'pat@example.com',
          GIT_COMMITTER_NAME: 'Pat Pusher',
          GIT_COMMITTER_EMAIL: 'pat@example.com',
        },
      });
    const remote = (id: number) => `https://git:${adminKey}@localhost:${new URL(writer().url).port}/build/git/${id}.git`;

    /** Clones the deployment from the writer, commits `files` and pushes them as the new `branch`. */
    const pushBranch = async (id: number, branch: string, files: Record<string, string>) => {
      const dir = path.join(work, `${id}-${branch.replaceAll('/', '-')}`);
      await git(work, 'clone', '--quiet', remote(id), dir);
      for (const [file, content] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        fs.writeFileSync(path.join(dir, file), content);
      }
      await git(dir, 'add', '.');
      await git(dir, 'commit', '--quiet', '-m', `Start ${branch}`);
      await git(dir, 'push', '--quiet', 'origin', `HEAD:refs/heads/${branch}`);
      return (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();
    };

    const createDeployment = async (name: string) => expectOk(await writer().post('/build/api/v1/deployments/', { name }, adminKey), 'create').id as number;

    /** Every branch-taking route, on the reader, at once: each must take `branch` at `head` with `file` in it. */
    const expectUsable = async (id: number, branch: string, head: string, file: string, cubeName: string) => {
      const s = reader();
      const b = encodeURIComponent(branch);
      const base = `/build/api/v1/deployments/${id}`;
      // The data API first: it is what answered 404 "has no branch" while the others saw the branch.
      const meta = expectOk(await s.get(`/deployments/${id}/dev-mode/${b}/data-api/v1/meta`, adminKey), 'data API');
      expect((meta.cubes as Json[]).map((c) => c.name)).toContain(cubeName);
      expect(expectOk(await s.get(`${base}/data-model/validate?branchName=${b}`, adminKey), 'validate')).toMatchObject({ valid: true });
      const status = expectOk(await s.get(`/api/v1/deployments/${id}/build-status?branchName=${b}`, adminKey), 'build status');
      expect(status).toMatchObject({ branchName: branch, lastHash: head });
      expect(status.errorText).not.toBe('Bad branch');
      const builds = expectOk(await s.get(`/api/v1/deployments/${id}/builds?branchName=${b}`, adminKey), 'builds').items as Json[];
      expect(builds.map((x) => x.commit)).toContain(head);
      const files = expectOk(await s.get(`${base}/data-model/files?branchName=${b}`, adminKey), 'files');
      expect(JSON.stringify(files)).toContain(file);
      expect((expectOk(await s.get(`${base}/commits?branchName=${b}`, adminKey), 'commits').items as Json[])[0]?.hash).toBe(head);
      const listed = expectOk(await s.get(`${base}/branches`, adminKey), 'branches').items as Json[];
      expect(listed.find((x) => x.name === branch)).toMatchObject({ lastHash: head });
      expect(expectOk(await s.post(`${base}/pull`, { branchName: branch }, adminKey), 'pull')).toEqual({ buildTriggered: false });
    };

    beforeAll(async () => {
      env = await serverEnv(dialect);
      const vars = { ...env.env, ...RUNTIME_VARS, ADMIN_API_KEY: adminKey };
      // The first start writes the certificate every process uses; on PostgreSQL a second shares it all.
      servers.push(await startServerProcess(vars, env.dataDir));
      if (dialect === 'postgres') servers.push(await startServerProcess(vars, env.dataDir));
      work = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-branches-at-once-'));
      ca = path.join(env.dataDir, 'tls', 'localhost.crt');
    });
    afterAll(async () => {
      await Promise.all(servers.map((s) => s.stop()));
      servers = [];
      await env?.destroy();
      if (work) fs.rmSync(work, { recursive: true, force: true });
    });

    it('a branch pushed over git: its data API and every other route take it as soon as git push returns', async () => {
      const id = await createDeployment('pushed');
      const head = await pushBranch(id, 'feature/pushed', { 'model/cubes/pushed.yml': cube('pushed_cube') });
      await expectUsable(id, 'feature/pushed', head, 'model/cubes/pushed.yml', 'pushed_cube');
      // Merged into the deploy branch from the other process, at once too.
      const merged = expectOk(
        await reader().post(`/build/api/v1/deployments/${id}/merge-to-default`, { branchName: 'feature/pushed', message: 'Merge pushed' }, adminKey),
        'merge to default',
      );
      expect(merged).toEqual({ merged: true, branchDeleted: false });
      for (const s of servers) expect(s.errors()).toEqual([]);
    }, 120_000);

    it('a dev-mode commit onto a pushed branch: the branch serves the commit as soon as the commit is answered', async () => {
      const id = await createDeployment('committed');
      await pushBranch(id, 'feature/committed', { 'model/cubes/base.yml': cube('base_cube') });
      const w = writer();
      const base = `/build/api/v1/deployments/${id}`;
      expectOk(await w.post(`${base}/dev-mode`, { branchName: 'feature/committed' }, adminKey), 'dev mode');
      expectOk(await w.put(`${base}/data-model/files`, { files: [{ path: 'model/cubes/committed.yml', content: cube('committed_cube') }] }, adminKey), 'write');
      expectOk(await w.post(`${base}/commit`, { message: 'Add committed', exitDevMode: true }, adminKey), 'commit');
      const head = (expectOk(await w.get(`${base}/commits?branchName=feature%2Fcommitted`, adminKey), 'head').items as Json[])[0]?.hash as string;
      await expectUsable(id, 'feature/committed', head, 'model/cubes/committed.yml', 'committed_cube');
      for (const s of servers) expect(s.errors()).toEqual([]);
    }, 120_000);

    it('an upload (start, file, finish) onto a pushed branch: the branch serves it as soon as the finish is answered', async () => {
      const id = await createDeployment('uploaded');
      await pushBranch(id, 'feature/uploaded', { 'model/cubes/base.yml': cube('base_cube') });
      const w = writer();
      const base = `/build/api/v1/deployments/${id}/data-model/upload`;
      const query = '?branchName=feature%2Fuploaded';
      const { transaction } = expectOk(await w.post(`${base}/start${query}`, undefined, adminKey), 'upload start');
      // What `mapi model push` does: the branch's hashes, then only the file that differs, then the whole manifest.
      const hashes = expectOk(await w.get(`/build/api/v1/deployments/${id}/data-model/file-hashes${query}`, adminKey), 'hashes') as Record<
        string,
        { hash: string }
      >;
      const content = cube('uploaded_cube');
      const manifest = { ...Object.fromEntries(Object.entries(hashes).map(([file, { hash }]) => [file, hash])), 'model/cubes/uploaded.yml': blobSha(content) };
      const form = multipart({ transaction: transaction.id, fileName: 'model/cubes/uploaded.yml' }, { name: 'uploaded.yml', content });
      const sent = await sendForm(w, `${base}/file${query}`, form);
      expect(sent.status, sent.text).toBe(200);
      const { lastHash } = expectOk(await w.post(`${base}/finish${query}`, { transaction, files: manifest }, adminKey), 'upload finish');
      await expectUsable(id, 'feature/uploaded', lastHash as string, 'model/cubes/uploaded.yml', 'uploaded_cube');
      for (const s of servers) expect(s.errors()).toEqual([]);
    }, 120_000);

    /** A multipart POST to the process, trusting its certificate (ServerProcess sends JSON only). */
    const sendForm = (s: ServerProcess, pathname: string, form: { body: Buffer; contentType: string }) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const target = new URL(s.url);
        const req = https.request(
          {
            hostname: target.hostname,
            port: target.port,
            path: pathname,
            method: 'POST',
            ca: fs.readFileSync(ca),
            servername: 'localhost',
            headers: { authorization: `Bearer ${adminKey}`, 'content-type': form.contentType, 'content-length': String(form.body.length) },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => (text += d));
            res.once('end', () => resolve({ status: res.statusCode ?? 0, text }));
          },
        );
        req.once('error', reject);
        req.end(form.body);
      });
  });
}
