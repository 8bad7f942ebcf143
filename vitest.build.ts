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
 * The embedded dashboard page (packages/embed) is built too when its sources are newer than its
 * build, since the browser tests load it from the server.
 * With PostgreSQL, it also makes the migrated template that test schemas are cloned from.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const root = import.meta.dirname;
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-b', 'packages/server', 'packages/client', 'packages/cli'], {
    cwd: root,
    stdio: 'inherit',
  });
  buildEmbedPage(root);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-pg-template-'));
  const url = process.env.DATABASE_URL;
  project.provide('pgTemplateFile', url ? await prepareTemplate(url, dir) : null);
  return () => fs.rmSync(dir, { recursive: true, force: true });
}

/** Vite builds the page in seconds, but most runs change none of it: built only when a source is newer. */
function buildEmbedPage(root: string): void {
  const pkg = path.join(root, 'packages/embed');
  const built = path.join(pkg, 'dist/index.html');
  const newest = (dir: string): number =>
    fs.readdirSync(dir, { withFileTypes: true }).reduce((max, entry) => {
      const full = path.join(dir, entry.name);
      return Math.max(max, entry.isDirectory() ? newest(full) : fs.statSync(full).mtimeMs);
    }, 0);
  const sources = Math.max(
    newest(path.join(pkg, 'src')),
    newest(path.join(root, 'packages/server/src/render')),
    fs.statSync(path.join(pkg, 'index.html')).mtimeMs,
  );
  if (fs.existsSync(built) && fs.statSync(built).mtimeMs >= sources) return;
  execFileSync('npm', ['run', 'build', '-w', 'packages/embed'], { cwd: root, stdio: 'inherit' });
}
