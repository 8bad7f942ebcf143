import type { WorkerPool } from '../jobs/index.js';
import { loadFonts } from './fonts.js';
import { svgToPdf, svgToPng } from './outputs.js';
import type { PagePiece } from './page.js';
import type { RenderFormat } from './types.js';

/**
 * Rendering's tasks on the jobs service's worker pool: turning a page's SVG into PNG (resvg) or
 * PDF (pdfkit) holds a CPU for hundreds of milliseconds on a big dashboard, which on the event
 * loop would hold every request of the process meanwhile. The queries and the SVG stay on the
 * calling thread; only the conversion, plain data in and bytes out, crosses.
 */

/** The name these tasks are registered under on the pool. */
export const RENDER_TASKS = 'render';

export interface ConvertTask {
  svg: string;
  width: number;
  height: number;
  title: string;
  format: RenderFormat;
  /** Given for a printed PDF: where it may break pages, and the pieces the slices are cut from. */
  print: { breaks: readonly number[]; pieces: readonly PagePiece[] } | null;
  fontsDir: string;
}

export function registerRenderTasks(pool: WorkerPool): void {
  pool.register(RENDER_TASKS, new URL('./render-tasks.js', import.meta.url));
}

/** The conversion, on a pool thread. */
export async function convert(task: ConvertTask): Promise<Uint8Array> {
  const fonts = loadFonts(task.fontsDir);
  if (task.format === 'png') return svgToPng(task.svg, fonts);
  return svgToPdf(task.svg, { width: task.width, height: task.height }, fonts, task.title, task.print);
}
