import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');

describe('generated types', () => {
  it('src/generated/api.ts is exactly what openapi-typescript makes of the committed openapi.json', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-client-types-'));
    try {
      const fresh = path.join(dir, 'api.ts');
      execFileSync(
        process.execPath,
        [path.join(ROOT, 'node_modules/openapi-typescript/bin/cli.js'), path.join(ROOT, 'packages/server/openapi.json'), '--output', fresh],
        { cwd: ROOT, stdio: 'pipe' },
      );
      const committed = fs.readFileSync(path.join(ROOT, 'packages/client/src/generated/api.ts'));
      // A failure here means the document changed without `npm run openapi` (which regenerates both).
      expect(committed.equals(fs.readFileSync(fresh)), 'src/generated/api.ts is stale: run `npm run openapi`').toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
