import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { prepareTemplate } from './packages/server/test/pg-template.js';

/**
 * Builds the server, the client and the CLI before any test: the server's processes (main.ts,
 * admin.ts, the runtimes) are spawned compiled, which starts each in a fraction of the time tsx
 * takes, and the CLI tests run the real `mapi` binary, which loads the compiled client and CLI.
 * A test run never exercises a stale dist/ (tsc -b does nothing when it is current).
 * With PostgreSQL, it also makes the migrated template that test schemas are cloned from.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const root = import.meta.dirname;
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-b', 'packages/server', 'packages/client', 'packages/cli'], {
    cwd: root,
    stdio: 'inherit',
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-pg-template-'));
  const url = process.env.DATABASE_URL;
  project.provide('pgTemplateFile', url ? await prepareTemplate(url, dir) : null);
  return () => fs.rmSync(dir, { recursive: true, force: true });
}
