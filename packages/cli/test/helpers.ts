import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateApiKey } from '../../server/src/areas/api-keys/key-format.js';
import type { Dialect } from '../../server/src/db/database.js';
import { REPO_ROOT, serverEnv, type ServerEnv } from '../../server/test/server-env.js';
import { startServerProcess, type HttpAnswer, type ServerProcess } from '../../server/test/server-process.js';

/**
 * A real server process over HTTPS, with a known admin key, and a direct HTTPS reader so tests
 * check the server's state without going through the CLI they are testing.
 */
export interface TestServer {
  url: string;
  /** The admin API key (ADMIN_API_KEY). */
  key: string;
  /** Path of the server's self-signed certificate, for MAPI_CA_CERT. */
  caFile: string;
  get(pathname: string, key?: string): Promise<HttpAnswer>;
  post(pathname: string, body: unknown, key?: string): Promise<HttpAnswer>;
  put(pathname: string, body: unknown, key?: string): Promise<HttpAnswer>;
  /** Creates a deployment and returns its id. */
  deployment(name: string): Promise<number>;
  folder(deploymentId: number, name: string, parentId?: number | null): Promise<number>;
  workbook(deploymentId: number, name: string, folderId?: number | null): Promise<number>;
  report(deploymentId: number, name: string, folderId?: number | null): Promise<number>;
  /** Entries of one folder ('root' for the root), as the server lists them. */
  listing(deploymentId: number, folderId: number | 'root'): Promise<{ type: string; id: number; name: string; folderId: number | null }[]>;
  stop(): Promise<void>;
}

let slugCounter = 0;

/** Server variables that run deployments' pods, starting and restarting them within a second or two. */
export const FAST_RUNTIME_ENV: Record<string, string> = {
  RUNTIME_DRIVER: 'process',
  RUNTIME_TICK_MS: '200',
  RUNTIME_LEASE_MS: '1000',
  RUNTIME_HEALTH_INTERVAL_MS: '300',
  RUNTIME_BACKOFF_MS: '200',
};

/** `extraEnv` goes on top of the server's variables, e.g. FAST_RUNTIME_ENV (pods are off otherwise). */
export async function startTestServer(dialect: Dialect, extraEnv: Record<string, string> = {}): Promise<TestServer> {
  const env: ServerEnv = await serverEnv(dialect);
  const key = generateApiKey();
  let server: ServerProcess;
  try {
    server = await startServerProcess({ ...env.env, ADMIN_API_KEY: key, RATE_LIMIT_PER_MINUTE: '0', ...extraEnv }, env.dataDir);
  } catch (error) {
    await env.destroy();
    throw error;
  }
  const caFile = path.join(env.dataDir, 'tls', 'localhost.crt');

  const get = (pathname: string, as = key) => server.get(pathname, as);

  const created = (answer: HttpAnswer, what: string): number => {
    // A deployment is created with 200 (reference 1.1); folders and the rest with 201.
    if (answer.status !== 201 && answer.status !== 200) throw new Error(`creating ${what}: ${answer.status} ${answer.text}`);
    return (answer.body as { id: number }).id;
  };

  return {
    url: server.url,
    key,
    caFile,
    get,
    post: (pathname, body, as = key) => server.post(pathname, body, as),
    put: (pathname, body, as = key) => server.put(pathname, body, as),
    deployment: async (name) => created(await server.post('/build/api/v1/deployments/', { name }, key), `deployment ${name}`),
    folder: async (d, name, parentId = null) => created(await server.post(`/api/v1/deployments/${d}/folders`, { name, parentId }, key), `folder ${name}`),
    workbook: async (d, name, folderId = null) =>
      created(await server.put(`/api/v1/deployments/${d}/workbooks/by-slug/wb-${++slugCounter}`, { name, folderId }, key), `workbook ${name}`),
    report: async (d, name, folderId = null) =>
      created(await server.put(`/api/v1/deployments/${d}/reports/by-public-id/r-${++slugCounter}`, { name, folderId }, key), `report ${name}`),
    async listing(d, folderId) {
      const answer = await get(`/api/v1/deployments/${d}/workspace?folderId=${folderId}&first=200`);
      if (answer.status !== 200) throw new Error(`listing: ${answer.status} ${answer.text}`);
      return (answer.body as { items: { type: string; id: number; name: string; folderId: number | null }[] }).items;
    },
    async stop() {
      await server.stop();
      await env.destroy();
    },
  };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Variables on top of an isolated environment (its own HOME and MAPI_CONFIG_DIR, no MAPI_* from the caller). */
  env?: Record<string, string>;
  /** Written to stdin, which is then closed; stdin is closed at once without it. */
  input?: string;
}

const BIN = path.join(REPO_ROOT, 'packages/cli/bin/mapi.js');

const tempDirs: string[] = [];

/** A fresh, empty directory under the OS temp dir; removeTempDirs() deletes them all. */
export function tempDir(prefix = 'mapi-cli-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * The environment a user would have, minus anything of the machine running the tests: a HOME and
 * config directory of its own, so no real profile is read or written.
 */
export function isolatedEnv(extra: Record<string, string> = {}): Record<string, string> {
  const home = tempDir('mapi-home-');
  return { PATH: process.env.PATH ?? '', HOME: home, MAPI_CONFIG_DIR: path.join(home, 'config'), ...extra };
}

/** Starts the real `mapi` binary with stdin, stdout and stderr as pipes (so neither is a TTY). */
export function spawnCli(args: string[], options: CliOptions = {}): ChildProcess {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO_ROOT, env: options.env ?? isolatedEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin?.end(options.input ?? '');
  return child;
}

/** Collects a started command's output; resolves on 'close', once its output is complete (unlike 'exit'). */
export function completion(child: ChildProcess): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return completion(spawnCli(args, options));
}

/** The environment that points the CLI at `server` through MAPI_* variables. */
export function serverVars(server: TestServer, token = server.key): Record<string, string> {
  return { MAPI_URL: server.url, MAPI_TOKEN: token, MAPI_CA_CERT: server.caFile };
}

/** A readable failure message: the command's output, when an assertion on its exit code fails. */
export function show(result: CliResult): string {
  return `exit ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}
