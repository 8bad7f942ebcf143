import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../src/config.js';
import type { Dialect } from '../src/db/database.js';
import { createSchemaSql, sqlOn } from './pg-template.js';

/**
 * What a real server process needs: an environment (DATA_DIR, and DATABASE_URL for PostgreSQL,
 * pointing at a schema of its own) as start-up reads it. For tests that start servers with
 * startServer or spawn main.ts and admin.ts.
 */
export interface ServerEnv {
  dataDir: string;
  /** The variables a process of this dialect gets; extend them per test. */
  env: Record<string, string>;
  /** loadConfig over `env` plus `extra`: port 0, silent logs unless overridden. */
  config(extra?: Record<string, string>): Config;
  destroy(): Promise<void>;
}

export const REPO_ROOT = path.resolve(import.meta.dirname, '../../..');

export async function serverEnv(dialect: Dialect): Promise<ServerEnv> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-server-'));
  // Pods only where a test is about them (it sets RUNTIME_DRIVER=process): elsewhere they would
  // only add child processes to a busy machine.
  const env: Record<string, string> = { DATA_DIR: dataDir, RUNTIME_DRIVER: 'none' };
  let dropSchema: () => Promise<void> = () => Promise.resolve();
  if (dialect === 'postgres') {
    const url = process.env.DATABASE_URL;
    if (!url) throw new Error('DATABASE_URL is not set');
    const schema = `test_${randomBytes(6).toString('hex')}`;
    await sqlOn(url, createSchemaSql(schema));
    const u = new URL(url);
    u.searchParams.set('options', `-c search_path=${schema}`);
    env.DATABASE_URL = u.toString();
    // The jobs service's pg-boss schema sits beside the store's (jobs/pg-boss-dispatch.ts).
    dropSchema = () => sqlOn(url, `drop schema ${schema} cascade; drop schema if exists ${schema}_jobs cascade`);
  }
  return {
    dataDir,
    env,
    config: (extra = {}) => loadConfig({ PORT: '0', LOG_LEVEL: 'silent', ...env, ...extra }),
    async destroy() {
      await dropSchema();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Starts `script` (a path from the repository root) with exactly `env` (plus PATH): compiled from dist/ for the server's sources, else through tsx. */
export function spawnTs(script: string, args: string[], env: Record<string, string>): ChildProcess {
  // The server's own programs run compiled (the global setup builds dist/): a start through tsx
  // costs seconds of CPU. Test fixtures, which are not built, still go through tsx.
  const compiled = /^packages\/server\/src\/(.+)\.ts$/.exec(script);
  const argv = compiled ? [`packages/server/dist/${compiled[1]}.js`, ...args] : ['--import', 'tsx', script, ...args];
  return spawn(process.execPath, argv, {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a TypeScript entry point to completion. */
export async function runTs(script: string, args: string[], env: Record<string, string>): Promise<Finished> {
  const child = spawnTs(script, args, env);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const [code, signal] = await exited(child);
  return { code, signal, stdout, stderr };
}

export function exited(child: ChildProcess): Promise<[number | null, NodeJS.Signals | null]> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve([child.exitCode, child.signalCode]);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve([code, signal]));
  });
}

/** The one API key in a command's output (the first start's banner shows it more than once). */
export function keyIn(output: string): string {
  const keys = [...new Set(output.match(/mapi_[A-Za-z0-9]{40}/g) ?? [])];
  if (keys.length !== 1) throw new Error(`expected one key in output, found ${keys.length}:\n${output}`);
  return keys[0] as string;
}
