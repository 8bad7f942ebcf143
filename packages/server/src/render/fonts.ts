import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { initWasm } from '@resvg/resvg-wasm';

/**
 * The fonts every render uses: DejaVu from Debian's fonts-dejavu-core, read from disk once per
 * process, never downloaded. The page and the charts name `DejaVu Sans`, so the PNG (resvg) and
 * the PDF (pdfkit) lay text out with the same metrics.
 */
export const FONT_FAMILY = 'DejaVu Sans';
export const DEFAULT_FONTS_DIR = '/usr/share/fonts/truetype/dejavu';

export interface Fonts {
  regular: Buffer;
  bold: Buffer;
}

const loaded = new Map<string, Fonts>();

export function loadFonts(dir: string = DEFAULT_FONTS_DIR): Fonts {
  let fonts = loaded.get(dir);
  if (!fonts) {
    try {
      fonts = { regular: fs.readFileSync(path.join(dir, 'DejaVuSans.ttf')), bold: fs.readFileSync(path.join(dir, 'DejaVuSans-Bold.ttf')) };
    } catch (error) {
      throw new Error(`The DejaVu fonts are not in ${dir} (install Debian's fonts-dejavu-core, or set RENDER_FONTS_DIR): ${(error as Error).message}`, {
        cause: error,
      });
    }
    loaded.set(dir, fonts);
  }
  return fonts;
}

let wasm: Promise<void> | undefined;

/** resvg's WebAssembly module, shipped in the npm package: compiled once per process, on the first PNG. */
export function resvgReady(): Promise<void> {
  wasm ??= (async () => {
    const require = createRequire(import.meta.url);
    await initWasm(fs.readFileSync(require.resolve('@resvg/resvg-wasm/index_bg.wasm')));
  })();
  return wasm;
}
