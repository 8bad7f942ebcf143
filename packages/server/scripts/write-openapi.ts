/**
 * Writes the OpenAPI document the server serves at GET /api/v1/spec to openapi.json, so the
 * client package can generate its types from a committed file. A test fails when they drift.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.js';
import { migrate, openStore } from '../src/db/database.js';

export const OPENAPI_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'openapi.json');

export async function servedDocument(): Promise<unknown> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-openapi-'));
  const store = openStore({ dialect: 'sqlite', file: path.join(dir, 'doc.sqlite') });
  try {
    await migrate(store);
    const app = await buildApp({ store, baseDomain: null });
    const doc = app.swagger();
    await app.close();
    return JSON.parse(JSON.stringify(doc));
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const doc = await servedDocument();
  fs.writeFileSync(OPENAPI_FILE, `${JSON.stringify(doc, null, 2)}\n`);
  process.stdout.write(`wrote ${path.relative(process.cwd(), OPENAPI_FILE)}\n`);
}
