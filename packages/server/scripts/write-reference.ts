/**
 * Writes docs/api/reference.html: the API reference as one file that needs no server, the
 * committed openapi.json (what GET /api/v1/spec serves; `npm run openapi` refreshes it) rendered
 * by Redoc's standalone bundle, both inlined. The running server serves the same reference at
 * GET /api/v1/reference.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { standaloneReference } from '../src/http/reference.js';
import { OPENAPI_FILE } from './write-openapi.js';

export const REFERENCE_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'docs', 'api', 'reference.html');

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const doc: unknown = JSON.parse(fs.readFileSync(OPENAPI_FILE, 'utf8'));
  fs.mkdirSync(path.dirname(REFERENCE_FILE), { recursive: true });
  fs.writeFileSync(REFERENCE_FILE, standaloneReference(doc));
  process.stdout.write(`wrote ${path.relative(process.cwd(), REFERENCE_FILE)}\n`);
}
