import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * Builds the server, the client and the CLI before any test: the server's processes (main.ts,
 * admin.ts, the runtimes) are spawned compiled, which starts each in a fraction of the time tsx
 * takes, and the CLI tests run the real `mapi` binary, which loads the compiled client and CLI.
 * A test run never exercises a stale dist/ (tsc -b does nothing when it is current).
 */
export default function setup(): void {
  const root = import.meta.dirname;
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-b', 'packages/server', 'packages/client', 'packages/cli'], { cwd: root, stdio: 'inherit' });
}
