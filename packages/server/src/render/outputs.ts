// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- the client and CLI test builds reach this file by import, without the server's include list that holds the declaration
/// <reference path="./svg-to-pdfkit.d.ts" />
import { Resvg } from '@resvg/resvg-wasm';
import { FONT_FAMILY, resvgReady, type Fonts } from './fonts.js';
import { bandSvg, type PagePiece } from './page.js';

/** The page SVG as a PNG of its own size (one SVG pixel, one PNG pixel). */
export async function svgToPng(svg: string, fonts: Fonts): Promise<Buffer> {
  await resvgReady();
  const resvg = new Resvg(svg, {
    font: { fontBuffers: [fonts.regular, fonts.bold], defaultFontFamily: FONT_FAMILY, sansSerifFamily: FONT_FAMILY, loadSystemFonts: false },
    background: 'white',
  });
  try {
    const image = resvg.render();
    const png = Buffer.from(image.asPng());
    image.free();
    return png;
  } finally {
    resvg.free();
  }
}

/** A4 portrait in points, and the margin kept around a printed page's content. */
export const A4 = { width: 595.28, height: 841.89, margin: 36 };

/**
 * The slices of a page `height` SVG pixels tall that printed pages show, `[start, end)` each: as
 * much as a page holds, ending at the last clean break that fits (cleanBreaks), or cut where the
 * page is full when a single widget is taller than a page.
 */
export function printSlices(height: number, pageHeight: number, breaks: readonly number[]): Array<[number, number]> {
  const slices: Array<[number, number]> = [];
  let start = 0;
  while (start < height) {
    let end = Math.min(height, start + pageHeight);
    if (end < height) {
      const fitting = breaks.filter((b) => b > start && b <= end);
      if (fitting.length > 0) end = fitting[fitting.length - 1]!;
    }
    slices.push([start, end]);
    start = end;
  }
  return slices;
}

/**
 * The page SVG as a one-page PDF of its size (points = SVG pixels), or with `print` as A4 portrait
 * pages: scaled to the printable width and split between widget rows (printSlices). Text stays
 * text, in embedded DejaVu, so the PDF is searchable and its text can be extracted.
 */
export async function svgToPdf(
  svg: string,
  size: { width: number; height: number },
  fonts: Fonts,
  title: string,
  print: { breaks: readonly number[]; pieces: readonly PagePiece[] } | null = null,
): Promise<Buffer> {
  const pageSize: [number, number] = print ? [A4.width, A4.height] : [size.width, size.height];
  // Loaded with the process's first PDF: most processes write none.
  const [{ default: PDFDocument }, { default: SVGtoPDF }] = await Promise.all([import('pdfkit'), import('svg-to-pdfkit')]);
  const doc = new PDFDocument({ size: pageSize, margin: 0, autoFirstPage: print === null, info: { Title: title, Creator: 'mapi' } });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve, reject) => {
    doc.on('end', () => resolve());
    doc.on('error', reject);
  });
  doc.registerFont('regular', fonts.regular);
  doc.registerFont('bold', fonts.bold);
  const fontCallback = (_family: string, bold: boolean) => (bold ? 'bold' : 'regular');
  // svg-to-pdfkit hands an <image>'s href to PDFKit's openImage, which reads a path from disk. The
  // page draws no images, so none is opened: a link that reached the SVG stays a missing image.
  const imageCallback = () => '';
  const warningCallback = () => undefined;
  if (print === null) SVGtoPDF(doc, svg, 0, 0, { width: size.width, height: size.height, assumePt: true, fontCallback, imageCallback, warningCallback });
  else {
    const scale = (A4.width - 2 * A4.margin) / size.width;
    for (const [start, end] of printSlices(size.height, (A4.height - 2 * A4.margin) / scale, print.breaks)) {
      doc.addPage({ size: pageSize, margin: 0 });
      // The slice's own SVG (only the pieces that reach into it), clipped to the slice: a widget
      // taller than a page continues on the next one.
      doc.save();
      doc.rect(A4.margin, A4.margin, size.width * scale, (end - start) * scale).clip();
      // preserveAspectRatio makes svg-to-pdfkit fit the SVG's viewBox to width × height (without it, the SVG's own size is kept).
      SVGtoPDF(doc, bandSvg(print.pieces, size.width, start, end), A4.margin, A4.margin, {
        width: size.width * scale,
        height: (end - start) * scale,
        preserveAspectRatio: 'xMinYMin meet',
        assumePt: true,
        fontCallback,
        imageCallback,
        warningCallback,
      });
      doc.restore();
    }
  }
  doc.end();
  await ended;
  return Buffer.concat(chunks);
}
