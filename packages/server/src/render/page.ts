import { FONT_FAMILY } from './fonts.js';

/**
 * The page of a dashboard as one SVG document: the title (and description) on top, then each
 * widget in its grid cell, as the dashboard config's layout places it. The same SVG becomes the
 * PNG and the PDF, so both show the same page.
 */

/** What a widget shows, resolved from its report's data (widgets.ts). */
export type WidgetContent =
  | { kind: 'chart'; title: string | null; svg: string }
  | { kind: 'table'; title: string | null; columns: string[]; rows: string[][] }
  | { kind: 'kpi'; title: string | null; value: string; label: string }
  | { kind: 'text'; text: string }
  | { kind: 'divider' }
  | { kind: 'empty' }
  | { kind: 'note'; title: string | null; text: string };

export interface PlacedWidget {
  id: string;
  position: { x: number; y: number; w: number; h: number };
  content: WidgetContent;
}

export interface PageLayout {
  width: number;
  cols: number;
  rowHeight: number;
  margin: [number, number];
  padding: [number, number];
}

/** A cell of the page: where a widget is drawn, in SVG pixels. */
export interface Cell {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The page is 1200 pixels wide (the `lg` breakpoint); the other values default as in common grid layouts. */
export const PAGE_WIDTH = 1200;
const DEFAULTS = { cols: 12, rowHeight: 60, margin: [16, 16] as [number, number], padding: [24, 24] as [number, number] };

const num = (value: unknown, fallback: number, min: number, max: number) =>
  typeof value === 'number' && Number.isFinite(value) ? Math.min(max, Math.max(min, value)) : fallback;
const pair = (value: unknown, fallback: [number, number]): [number, number] =>
  Array.isArray(value) && value.length >= 2 ? [num(value[0], fallback[0], 0, 200), num(value[1], fallback[1], 0, 200)] : fallback;

/** The grid of the config's `layout` (its `lg` column count, row height, margins, padding), defaults where it says nothing. */
export function pageLayout(layout: unknown): PageLayout {
  const l = (typeof layout === 'object' && layout !== null ? layout : {}) as Record<string, unknown>;
  const cols = (typeof l.cols === 'object' && l.cols !== null ? (l.cols as Record<string, unknown>).lg : undefined) ?? DEFAULTS.cols;
  return {
    width: PAGE_WIDTH,
    cols: Math.round(num(cols, DEFAULTS.cols, 1, 48)),
    rowHeight: num(l.rowHeight, DEFAULTS.rowHeight, 10, 1000),
    margin: pair(l.margin, DEFAULTS.margin),
    padding: pair(l.containerPadding, DEFAULTS.padding),
  };
}

const TITLE_SIZE = 24;
const DESCRIPTION_SIZE = 13;

/** Height of the title band: the title, and the description's first line when there is one. */
export function headerHeight(description: string | null): number {
  return 20 + TITLE_SIZE + (description ? 8 + DESCRIPTION_SIZE + 4 : 0) + 12;
}

export function cellOf(layout: PageLayout, top: number, p: PlacedWidget['position']): Cell {
  const colWidth = (layout.width - 2 * layout.padding[0] - (layout.cols - 1) * layout.margin[0]) / layout.cols;
  const x = Math.max(0, Math.min(layout.cols - 1, p.x));
  const w = Math.max(1, Math.min(layout.cols - x, p.w));
  const y = Math.max(0, p.y);
  const h = Math.max(1, p.h);
  return {
    x: layout.padding[0] + x * (colWidth + layout.margin[0]),
    y: top + layout.padding[1] + y * (layout.rowHeight + layout.margin[1]),
    width: w * colWidth + (w - 1) * layout.margin[0],
    height: h * layout.rowHeight + (h - 1) * layout.margin[1],
  };
}

/** Height of the page that holds every widget. */
export function pageHeight(layout: PageLayout, top: number, widgets: PlacedWidget[]): number {
  const bottom = Math.max(0, ...widgets.map((w) => Math.max(0, w.position.y) + Math.max(1, w.position.h)));
  return Math.ceil(top + 2 * layout.padding[1] + bottom * layout.rowHeight + Math.max(0, bottom - 1) * layout.margin[1]);
}

// XML 1.0 has no place for control characters other than tab and newlines, even escaped.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g;

export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!).replace(CONTROL_CHARACTERS, '');
}

/** DejaVu Sans averages a little over half its size per character; enough to wrap and cut text that fits. */
const charWidth = (size: number) => size * 0.6;

function fit(text: string, width: number, size: number): string {
  const max = Math.max(1, Math.floor(width / charWidth(size)));
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

function wrap(text: string, width: number, size: number): string[] {
  const max = Math.max(1, Math.floor(width / charWidth(size)));
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(/\s+/).filter((w) => w !== '')) {
      if (line === '') line = word;
      else if (line.length + 1 + word.length <= max) line += ` ${word}`;
      else {
        lines.push(line);
        line = word;
      }
    }
    lines.push(line);
  }
  return lines.map((l) => fit(l, width, size));
}

const text = (x: number, y: number, size: number, content: string, extra = '') =>
  `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" font-family="${FONT_FAMILY}" font-size="${size}" ${extra}>${escapeXml(content)}</text>`;

/** A chart's SVG placed in the cell (below the widget title), scaled down to fit if it is larger. */
function placeChart(svg: string, x: number, y: number, width: number, height: number): string {
  const open = /^<svg[^>]*>/.exec(svg);
  if (!open) return '';
  const w = Number(/\swidth="([\d.]+)"/.exec(open[0])?.[1] ?? width);
  const h = Number(/\sheight="([\d.]+)"/.exec(open[0])?.[1] ?? height);
  const body = svg.slice(open[0].length).replace(/<\/svg>\s*$/, '');
  return `<svg x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${width.toFixed(1)}" height="${height.toFixed(1)}" viewBox="0 0 ${w} ${h}" preserveAspectRatio="xMidYMin meet">${body}</svg>`;
}

function widgetSvg(id: string, cell: Cell, content: WidgetContent): string {
  const inner = 12;
  const parts: string[] = [];
  const framed = content.kind !== 'divider' && content.kind !== 'empty' && content.kind !== 'text';
  if (framed)
    parts.push(
      `<rect x="${cell.x.toFixed(1)}" y="${cell.y.toFixed(1)}" width="${cell.width.toFixed(1)}" height="${cell.height.toFixed(1)}" rx="6" fill="#ffffff" stroke="#d9dde3"/>`,
    );
  const left = cell.x + inner;
  const width = cell.width - 2 * inner;
  let top = cell.y + inner;
  const title = 'title' in content ? content.title : null;
  if (title) {
    parts.push(text(left, top + 13, 14, fit(title, width, 14), 'font-weight="bold" fill="#1f2933"'));
    top += 24;
  }
  const bottom = cell.y + cell.height - inner;
  switch (content.kind) {
    case 'chart':
      parts.push(placeChart(content.svg, left, top, width, Math.max(10, bottom - top)));
      break;
    case 'table': {
      const size = 11;
      const line = 18;
      const colWidth = width / Math.max(1, content.columns.length);
      parts.push(...content.columns.map((c, i) => text(left + i * colWidth, top + 12, size, fit(c, colWidth - 6, size), 'font-weight="bold" fill="#3e4c59"')));
      parts.push(`<line x1="${left}" x2="${left + width}" y1="${top + 17}" y2="${top + 17}" stroke="#d9dde3"/>`);
      const fitting = Math.max(0, Math.floor((bottom - top - line) / line));
      const shown = content.rows.slice(0, fitting);
      shown.forEach((row, r) =>
        parts.push(...row.map((v, i) => text(left + i * colWidth, top + line + 12 + r * line, size, fit(v, colWidth - 6, size), 'fill="#1f2933"'))),
      );
      if (content.rows.length > shown.length && fitting > 0)
        parts.push(text(left, bottom, 10, `${content.rows.length - shown.length} more rows`, 'fill="#7b8794"'));
      break;
    }
    case 'kpi': {
      const size = Math.max(14, Math.min(40, (bottom - top) * 0.5));
      parts.push(text(left, top + size, size, fit(content.value, width, size), 'font-weight="bold" fill="#1f2933"'));
      parts.push(text(left, top + size + 18, 12, fit(content.label, width, 12), 'fill="#616e7c"'));
      break;
    }
    case 'text': {
      const size = 13;
      const lines = wrap(content.text, width, size).slice(0, Math.max(1, Math.floor((bottom - top + inner) / (size + 5))));
      lines.forEach((l, i) => parts.push(text(left, top + size + i * (size + 5), size, l, 'fill="#1f2933"')));
      break;
    }
    case 'note':
      wrap(content.text, width, 12)
        .slice(0, 4)
        .forEach((l, i) => parts.push(text(left, top + 12 + i * 17, 12, l, 'fill="#7b8794"')));
      break;
    case 'divider': {
      const y = cell.y + cell.height / 2;
      parts.push(`<line x1="${cell.x}" x2="${cell.x + cell.width}" y1="${y}" y2="${y}" stroke="#bcc4cc" stroke-width="1"/>`);
      break;
    }
    case 'empty':
      break;
  }
  return `<g data-widget="${escapeXml(id)}">${parts.join('')}</g>`;
}

/**
 * Where a printed page may end without cutting a widget: the gaps above each widget's row that no
 * widget crosses (halfway into the grid's margin), in SVG pixels, ascending.
 */
export function cleanBreaks(layout: PageLayout, top: number, widgets: PlacedWidget[]): number[] {
  const cells = widgets.map((w) => cellOf(layout, top, w.position));
  // Not above the first row: a page that ends there holds the title alone.
  const first = Math.min(...cells.map((c) => c.y));
  const candidates = new Set(cells.map((c) => c.y - layout.margin[1] / 2).filter((y) => y > first));
  return [...candidates].filter((y) => !cells.some((c) => c.y < y && y < c.y + c.height)).sort((a, b) => a - b);
}

/** A part of the page (the title band, a widget) and the band of the page it takes, in SVG pixels. */
export interface PagePiece {
  top: number;
  bottom: number;
  markup: string;
}

/** The SVG of the band `[start, end)` of a page: only the pieces that reach into it, so nothing hidden rides along. */
export function bandSvg(pieces: readonly PagePiece[], width: number, start: number, end: number): string {
  const height = end - start;
  const shown = pieces.filter((p) => p.bottom > start && p.top < end).map((p) => p.markup);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 ${start} ${width} ${height}">` +
    `<rect y="${start}" width="${width}" height="${height}" fill="#f5f7fa"/>${shown.join('')}</svg>`
  );
}

/** The whole page: its SVG and size, its pieces, and where a printed page may break (cleanBreaks). */
export function pageSvg(
  title: string,
  description: string | null,
  layout: PageLayout,
  widgets: PlacedWidget[],
): { svg: string; width: number; height: number; pieces: PagePiece[]; breaks: number[] } {
  const top = headerHeight(description);
  const height = pageHeight(layout, top, widgets);
  const width = layout.width;
  const header = [
    text(layout.padding[0], 20 + TITLE_SIZE, TITLE_SIZE, fit(title, width - 2 * layout.padding[0], TITLE_SIZE), 'font-weight="bold" fill="#1f2933"'),
  ];
  if (description)
    header.push(
      text(
        layout.padding[0],
        20 + TITLE_SIZE + 8 + DESCRIPTION_SIZE,
        DESCRIPTION_SIZE,
        fit(description, width - 2 * layout.padding[0], DESCRIPTION_SIZE),
        'fill="#616e7c"',
      ),
    );
  const pieces: PagePiece[] = [
    { top: 0, bottom: top, markup: header.join('') },
    ...widgets.map((w) => {
      const cell = cellOf(layout, top, w.position);
      return { top: cell.y, bottom: cell.y + cell.height, markup: widgetSvg(w.id, cell, w.content) };
    }),
  ];
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">` +
    `<title>${escapeXml(title)}</title><rect width="${width}" height="${height}" fill="#f5f7fa"/>${pieces.map((p) => p.markup).join('')}</svg>`;
  return { svg, width, height, pieces, breaks: cleanBreaks(layout, top, widgets) };
}
