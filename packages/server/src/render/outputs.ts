// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- the client and CLI test builds reach this file by import, without the server's include list that holds the declaration
/// <reference path="./svg-to-pdfkit.d.ts" />
import PDFDocument from 'pdfkit';
import SVGtoPDF from 'svg-to-pdfkit';
import { Resvg } from '@resvg/resvg-wasm';
import { FONT_FAMILY, resvgReady, type Fonts } from './fonts.js';

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

/**
 * The page SVG as a one-page PDF of its size (points = SVG pixels). Text stays text, in embedded
 * DejaVu, so the PDF is searchable and its text can be extracted.
 */
export async function svgToPdf(svg: string, size: { width: number; height: number }, fonts: Fonts, title: string): Promise<Buffer> {
  const doc = new PDFDocument({ size: [size.width, size.height], margin: 0, autoFirstPage: true, info: { Title: title, Creator: 'mapi' } });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve, reject) => {
    doc.on('end', () => resolve());
    doc.on('error', reject);
  });
  doc.registerFont('regular', fonts.regular);
  doc.registerFont('bold', fonts.bold);
  SVGtoPDF(doc, svg, 0, 0, { width: size.width, height: size.height, assumePt: true, fontCallback: (_family: string, bold: boolean) => (bold ? 'bold' : 'regular') });
  doc.end();
  await ended;
  return Buffer.concat(chunks);
}
