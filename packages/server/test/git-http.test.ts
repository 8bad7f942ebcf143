import { execFile } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { startServer, type RunningServer } from '../src/server.js';
import { DIALECTS } from './harness.js';
import { serverEnv, type ServerEnv } from './server-env.js';

/*
 * Issue 13, "Repository": the repository is cloned, fetched and pushed over HTTPS at
 * /build/git/<deploymentId>.git with the real git client, HTTP Basic auth with an API key as the
 * password. SchemaRead fetches; SchemaUpdate pushes fast-forwards; the deploy branch refuses
 * pushes while read-only; another credential's dev-mode branch is never pushed to.
 */

const run = promisify(execFile);

for (const dialect of DIALECTS) {
  describe(`git over HTTPS (${dialect})`, () => {
    let env: ServerEnv;
    let server: RunningServer;
    let work: string;
    let ca: string;
    const adminKey = generateApiKey();
    const port = () => new URL(server.url).port;
    const remote = (id: number, key: string) => `https://git:${key}@localhost:${port()}/build/git/${id}.git`;
    /** The git client, trusting the server's certificate, with no user configuration. */
    const git = async (cwd: string, ...args: string[]) =>
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
    const refused = async (cwd: string, ...args: string[]) => {
      try {
        await git(cwd, ...args);
      } catch (error) {
        return String((error as { stderr?: string }).stderr);
      }
      throw new Error(`git ${args.join(' ')} succeeded`);
    };
    const api = (method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown, key = adminKey) =>
      server.app.inject({ method, url, headers: { authorization: `Bearer ${key}` }, ...(body === undefined ? {} : { payload: body as never }) });
    const createDeployment = async (name: string) => (await api('POST', '/build/api/v1/deployments/', { name })).json().id as number;
    const clone = async (id: number, key: string, name: string) => {
      const dir = path.join(work, name);
      await git(work, 'clone', '--quiet', remote(id, key), dir);
      return dir;
    };
    const userKey = async (role: string, grant: 'VIEW' | 'EDIT' | null, deploymentId: number) => {
      const email = `${role.toLowerCase()}-${Math.random().toString(36).slice(2)}@example.com`;
      const user = (await api('POST', '/api/v1/users', { email, role })).json() as { id: number };
      if (grant)
        expect(
          (
            await api('POST', '/api/v1/policies', {
              principal: { type: 'USER', id: user.id },
              resource: { type: 'DEPLOYMENT', id: deploymentId },
              access: grant,
            })
          ).statusCode,
        ).toBe(201);
      const made = await api('POST', '/api/v1/api-keys', { name: 'git', userId: user.id });
      return (made.json() as { key: string }).key;
    };
    /** A raw request to the git path, to read statuses and headers as a client sees them. */
    const raw = (id: number, authorization?: string) =>
      new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
        const req = https.request(
          {
            hostname: 'localhost',
            port: port(),
            path: `/build/git/${id}.git/info/refs?service=git-upload-pack`,
            ca: fs.readFileSync(ca),
            headers: authorization ? { authorization } : {},
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
          },
        );
        req.on('error', reject);
        req.end();
      });

    beforeAll(async () => {
      env = await serverEnv(dialect);
      server = await startServer(env.config({ ADMIN_API_KEY: adminKey }), () => undefined);
      work = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-git-client-'));
      ca = path.join(env.dataDir, 'tls', 'localhost.crt');
    });
    afterAll(async () => {
      await server?.close();
      await env?.destroy();
      fs.rmSync(work, { recursive: true, force: true });
    });

    it('clones the deployment’s repository with its starter model, and takes a fast-forward push that the API then lists', async () => {
      const id = await createDeployment('cloned');
      const dir = await clone(id, adminKey, 'cloned');
      expect(fs.readFileSync(path.join(dir, 'model/cubes/starter.yml'), 'utf8')).toContain('starter_');
      fs.writeFileSync(path.join(dir, 'model/cubes/orders.yml'), 'cubes: []\n');
      await git(dir, 'add', '.');
      await git(dir, 'commit', '--quiet', '-m', 'Add orders');
      await git(dir, 'push', '--quiet', 'origin', 'main');
      const listed = (await api('GET', `/build/api/v1/deployments/${id}/commits`)).json() as {
        items: Array<{ message: string; authorName: string; hash: string }>;
      };
      expect(listed.items[0]).toMatchObject({ message: 'Add orders', authorName: 'Pat Pusher' });
      const pushed = (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();
      expect(listed.items[0]?.hash).toBe(pushed);
      // A push to the deploy branch builds production, like a merge.
      const builds = (await api('GET', `/api/v1/deployments/${id}/builds`)).json() as { items: Array<{ commit: string; cause: string }> };
      expect(builds.items[0]).toMatchObject({ commit: pushed, cause: 'push' });
      // A second clone sees it.
      const again = await clone(id, adminKey, 'cloned-again');
      expect(fs.existsSync(path.join(again, 'model/cubes/orders.yml'))).toBe(true);
    });

    it('refuses a pushed tree with a path that leaves it or reaches into .git (receive.fsckObjects), and leaves the branch as it was', async () => {
      const id = await createDeployment('hostile trees');
      const dir = await clone(id, adminKey, 'hostile-trees');
      const before = (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();
      fs.writeFileSync(path.join(dir, 'payload'), '#!/bin/sh\necho pwned\n');
      const blob = (await git(dir, 'hash-object', '-w', 'payload')).stdout.trim();
      // A tree object written byte by byte: git's own porcelain would never make these entries.
      const tree = async (entries: Array<[string, string, string]>) => {
        const body = Buffer.concat(entries.map(([mode, name, sha]) => Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(sha, 'hex')])));
        const file = path.join(work, `tree-${Math.random().toString(36).slice(2)}`);
        fs.writeFileSync(file, body);
        return (await git(dir, 'hash-object', '-t', 'tree', '--literally', '-w', file)).stdout.trim();
      };
      const hooks = await tree([['100755', 'pre-receive', blob]]);
      for (const entries of [
        [['40000', '.git', await tree([['40000', 'hooks', hooks]])]],
        [['40000', '.GIT', hooks]],
        [['100644', '..', blob]],
        [['100644', 'a/../../x', blob]],
      ] as Array<Array<[string, string, string]>>) {
        const commit = (await git(dir, 'commit-tree', await tree(entries), '-p', before, '-m', 'hostile')).stdout.trim();
        expect(await refused(dir, 'push', '--quiet', 'origin', `${commit}:refs/heads/main`)).toMatch(/fsck|unpack/i);
      }
      const listed = (await api('GET', `/build/api/v1/deployments/${id}/commits`)).json() as { items: Array<{ hash: string }> };
      expect(listed.items[0]?.hash).toBe(before);
      expect(fs.existsSync(path.join(server.app.services.repositories.repositories.pathOf(id), 'hooks', 'post-update'))).toBe(false);
    });

    it('refuses a push that is not a fast-forward and leaves the branch as it was', async () => {
      const id = await createDeployment('ff only');
      const a = await clone(id, adminKey, 'ff-a');
      const b = await clone(id, adminKey, 'ff-b');
      fs.writeFileSync(path.join(a, 'a.yml'), 'a: 1\n');
      await git(a, 'add', '.');
      await git(a, 'commit', '--quiet', '-m', 'from a');
      await git(a, 'push', '--quiet', 'origin', 'main');
      fs.writeFileSync(path.join(b, 'b.yml'), 'b: 1\n');
      await git(b, 'add', '.');
      await git(b, 'commit', '--quiet', '-m', 'from b');
      expect(await refused(b, 'push', 'origin', 'main')).toMatch(/rejected|non-fast-forward|fetch first/);
      expect(await refused(b, 'push', '--force', 'origin', 'main')).toMatch(/rejected|non-fast-forward|denied/);
      const head = (await api('GET', `/build/api/v1/deployments/${id}/commits`)).json().items[0].message;
      expect(head).toBe('from a');
    });

    it('refuses pushes to the deploy branch while deployBranchReadOnly is on, and takes them to a shared branch', async () => {
      const id = await createDeployment('read only');
      expect((await api('PUT', `/api/v1/deployments/${id}`, { deployBranchReadOnly: true })).statusCode).toBe(200);
      const dir = await clone(id, adminKey, 'ro');
      fs.writeFileSync(path.join(dir, 'x.yml'), 'x: 1\n');
      await git(dir, 'add', '.');
      await git(dir, 'commit', '--quiet', '-m', 'to main');
      expect(await refused(dir, 'push', 'origin', 'main')).toContain('read-only');
      await git(dir, 'push', '--quiet', 'origin', 'HEAD:refs/heads/feature/x');
      const feature = (await api('GET', `/build/api/v1/deployments/${id}/commits?branchName=feature/x`)).json().items[0].message;
      expect(feature).toBe('to main');
      expect((await api('GET', `/build/api/v1/deployments/${id}/commits`)).json().items[0].message).toMatch(/starter model/);
      // Only branches, never a personal dev-mode branch of another credential, never a deletion.
      expect(await refused(dir, 'push', 'origin', 'HEAD:refs/heads/dev-someone-main')).toContain('dev-mode branch');
      expect(await refused(dir, 'push', 'origin', 'HEAD:refs/tags/v1')).toContain('only branches');
      expect(await refused(dir, 'push', 'origin', ':feature/x')).toMatch(/deletion prohibited|denied|rejected/);
    });

    it('lets SchemaRead fetch but not push, answers a key scoped elsewhere 403, and asks for Basic credentials', async () => {
      const id = await createDeployment('access');
      const other = await createDeployment('elsewhere');
      const viewerKey = await userKey('VIEWER', 'VIEW', id);
      const dir = await clone(id, viewerKey, 'viewer');
      fs.writeFileSync(path.join(dir, 'v.yml'), 'v: 1\n');
      await git(dir, 'add', '.');
      await git(dir, 'commit', '--quiet', '-m', 'viewer change');
      expect(await refused(dir, 'push', 'origin', 'main')).toContain('403');
      const developerKey = await userKey('DEVELOPER', 'EDIT', id);
      await git(dir, 'push', '--quiet', remote(id, developerKey), 'main');
      const scoped = (await api('POST', '/api/v1/api-keys', { name: 'scoped', deploymentIds: [other] })).json().key as string;
      expect(await refused(work, 'clone', remote(id, scoped), path.join(work, 'scoped'))).toContain('403');
      const strangerKey = await userKey('DEVELOPER', null, id);
      expect(await refused(work, 'clone', remote(id, strangerKey), path.join(work, 'stranger'))).toContain('403');

      const none = await raw(id);
      expect(none.status).toBe(401);
      expect(String(none.headers['www-authenticate'])).toMatch(/^Basic realm="mapi"/);
      const bearer = await raw(id, `Bearer ${adminKey}`);
      expect(bearer.status).toBe(401);
      expect(String(bearer.headers['www-authenticate'])).toMatch(/^Basic/);
      expect((await raw(id, `Basic ${Buffer.from(`x:${generateApiKey()}`).toString('base64')}`)).status).toBe(401);
      expect((await raw(id, `Basic ${Buffer.from(`anyone:${adminKey}`).toString('base64')}`)).status).toBe(200);
      expect((await raw(999_999, `Basic ${Buffer.from(`anyone:${adminKey}`).toString('base64')}`)).status).toBe(404);
    });
  });
}
