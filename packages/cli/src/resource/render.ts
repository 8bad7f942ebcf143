/**
 * How a generated command prints an answer it knows nothing about beyond its shape: a list as a
 * table of its scalar fields, an object as `key  value` lines, both fitted to the terminal. The
 * exact answer is always one `--json` away; tables are for reading, not for parsing.
 */
import { shortDate, write } from '../output.js';

/** Tables never get narrower than this per column before columns are dropped instead. */
const MIN_COLUMN = 8;
const GAP = 2;

/**
 * The width to fit: the terminal's, or (piped, redirected, in CI) COLUMNS when set and 100
 * otherwise, so a table in a log reads the same on every machine. Scripts use --json.
 */
export function outputWidth(): number {
  if (process.stdout.isTTY && process.stdout.columns) return process.stdout.columns;
  const columns = Number(process.env.COLUMNS);
  return Number.isInteger(columns) && columns >= 20 ? columns : 100;
}

type Row = Record<string, unknown>;
const isScalar = (value: unknown) => value === null || ['string', 'number', 'boolean'].includes(typeof value);
const isRow = (value: unknown): value is Row => typeof value === 'object' && value !== null && !Array.isArray(value);

/** One line, at most `width` characters: longer text ends with an ellipsis instead of wrapping. */
export function truncate(text: string, width: number): string {
  const line = text.replace(/[\r\n\t]+/g, ' ');
  return line.length <= width ? line : `${line.slice(0, Math.max(0, width - 1))}…`;
}

function cellText(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  return String(value);
}

/** The rows of a list answer: an array, or the `items` of a page (`data` of the deprecated form, `Resources` of SCIM). */
export function rowsOf(answer: unknown): unknown[] | undefined {
  if (Array.isArray(answer)) return answer;
  if (!isRow(answer)) return undefined;
  for (const key of ['items', 'data', 'Resources']) if (Array.isArray(answer[key])) return answer[key] as unknown[];
  return undefined;
}

/** Columns: the fields that are scalars in the rows, `id` and `name` first, then in the order the server sends them. */
function columnsOf(rows: Row[]): string[] {
  const keys: string[] = [];
  for (const row of rows) for (const [key, value] of Object.entries(row)) if (isScalar(value) && !keys.includes(key)) keys.push(key);
  const first = ['id', 'name'].filter((key) => keys.includes(key));
  return [...first, ...keys.filter((key) => !first.includes(key))];
}

/** A column never takes more than this while others still want room; the last one shown takes what is left. */
const MAX_COLUMN = 40;

/**
 * Widths that fit `width`, in column order: each column at its natural width (at most MAX_COLUMN)
 * while it fits, then one more cut to the room left if that is still a readable column; the
 * columns after it are left out. id and name come first, so they always show in full.
 */
export function fitColumns(natural: number[], width: number): number[] {
  const widths: number[] = [];
  let used = 0;
  for (const w of natural) {
    const gap = widths.length === 0 ? 0 : GAP;
    const wanted = Math.min(w, MAX_COLUMN);
    if (used + gap + wanted <= width) {
      widths.push(wanted);
      used += gap + wanted;
      continue;
    }
    const room = width - used - gap;
    if (widths.length === 0) widths.push(Math.max(1, room));
    else if (room >= MIN_COLUMN) widths.push(room);
    break;
  }
  return widths;
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

export function formatRows(rows: unknown[], width = outputWidth()): string {
  if (!rows.every(isRow)) return rows.map((row) => truncate(isScalar(row) ? cellText(row) : JSON.stringify(row), width)).join('\n') + '\n';
  const keys = columnsOf(rows);
  if (keys.length === 0) return rows.map((row) => truncate(JSON.stringify(row), width)).join('\n') + '\n';
  // Columns with nothing in any row say nothing: they give their room to the others.
  const filled = keys.filter((key) => rows.some((row) => cellText(row[key]) !== '-'));
  if (filled.length > 0) keys.splice(0, keys.length, ...filled);
  const headers = keys.map((key) => key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase());
  // Times to the minute, as the hand-written tables show them; --json has the exact values.
  const cells = rows.map((row) =>
    keys.map((key) => {
      const value = row[key];
      return typeof value === 'string' && ISO_TIME.test(value) ? (shortDate(value) as string) : cellText(value);
    }),
  );
  const natural = keys.map((_, i) => Math.max((headers[i] as string).length, ...cells.map((r) => (r[i] as string).replace(/[\r\n\t]+/g, ' ').length)));
  const widths = fitColumns(natural, width);
  const line = (values: string[]) =>
    widths
      .map((w, i) => {
        const text = truncate(values[i] as string, w);
        return i === widths.length - 1 ? text : text.padEnd(w);
      })
      .join(' '.repeat(GAP))
      .trimEnd();
  const dropped = keys.length - widths.length;
  if (dropped > 0) process.stderr.write(`(${dropped} more ${dropped === 1 ? 'column' : 'columns'}: widen the terminal, or use --json)\n`);
  return [line(headers), ...cells.map(line)].join('\n') + '\n';
}

/** `key  value` lines, keys aligned; nested values as one line of JSON, cut to the width. */
export function formatObject(answer: Row, width = outputWidth()): string {
  const keys = Object.keys(answer);
  if (keys.length === 0) return '(empty)\n';
  const keyWidth = Math.max(...keys.map((key) => key.length));
  return (
    keys
      .map((key) => {
        const value = answer[key];
        const text = isScalar(value) || value === undefined ? cellText(value) : JSON.stringify(value);
        return `${key.padEnd(keyWidth)}  ${truncate(text, Math.max(MIN_COLUMN, width - keyWidth - GAP))}`;
      })
      .join('\n') + '\n'
  );
}

/** A JSON answer for a person: a list as a table (an empty one says so), anything else as lines. */
export function printAnswer(answer: unknown): void {
  const rows = rowsOf(answer);
  if (rows !== undefined) {
    if (rows.length === 0) write('No items.');
    else write(formatRows(rows));
    const pageInfo = isRow(answer) && isRow(answer.pageInfo) ? answer.pageInfo : undefined;
    if (pageInfo?.hasNextPage === true && typeof pageInfo.endCursor === 'string')
      process.stderr.write(`More items: pass --all for every page, or --after ${pageInfo.endCursor} for the next.\n`);
    return;
  }
  if (isRow(answer)) write(formatObject(answer));
  else write(cellText(answer));
}
