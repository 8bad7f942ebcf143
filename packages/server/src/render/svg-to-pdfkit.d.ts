declare module 'svg-to-pdfkit' {
  /** Draws an SVG document onto a pdfkit document (svg-to-pdfkit ships no types). */
  export default function SVGtoPDF(doc: PDFKit.PDFDocument, svg: string, x: number, y: number, options?: Record<string, unknown>): void;
}
