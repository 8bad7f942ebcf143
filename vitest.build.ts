import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * The CLI tests run the real `mapi` binary, which loads the compiled client and CLI; building them
 * first means a test run never exercises a stale dist/ (tsc -b does nothing when it is current).
 */
export default function setup(): void {
  const root = import.meta.dirname;
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-b', 'packages/client', 'packages/cli'], { cwd: root, stdio: 'inherit' });
}
