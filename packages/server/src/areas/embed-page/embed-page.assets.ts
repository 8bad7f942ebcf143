import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The embedded dashboard page's files, as `npm run build` (Vite, packages/embed) leaves them:
 * `index.html` and fingerprinted assets under `assets/`. Read once per process into memory (a
 * few files, a few hundred kilobytes): serving them is a lookup, and a file can never be half
 * written under a request.
 */

/** Where the build puts them: packages/embed/dist, the same two levels up from src/ and dist/. */
export const DEFAULT_EMBED_PAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../embed/dist');

export interface PageAsset {
  body: Buffer;
  type: string;
}

export interface PageFiles {
  /** The page's HTML as built, null when the page was not built. */
  html: string | null;
  /** Fingerprinted files by name (`index-3f2a9c1b.js`). */
  assets: ReadonlyMap<string, PageAsset>;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
  '.png': 'image/png',
  '.map': 'application/json; charset=utf-8',
};

export function loadPageFiles(dir: string): PageFiles {
  const index = path.join(dir, 'index.html');
  if (!fs.existsSync(index)) return { html: null, assets: new Map() };
  const assets = new Map<string, PageAsset>();
  const assetDir = path.join(dir, 'assets');
  if (fs.existsSync(assetDir)) {
    for (const name of fs.readdirSync(assetDir)) {
      const type = TYPES[path.extname(name)];
      if (type !== undefined) assets.set(name, { body: fs.readFileSync(path.join(assetDir, name)), type });
    }
  }
  return { html: fs.readFileSync(index, 'utf8'), assets };
}
