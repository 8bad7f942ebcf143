/**
 * Everything a command prints goes through here: results to stdout (tables for people, JSON for
 * scripts), notes and errors to stderr, so `mapi ... --json | jq` always sees clean JSON.
 */

export interface Column<T> {
  header: string;
  value: (row: T) => string | number | boolean | null | undefined;
  /** Right-align numbers so they line up by magnitude. */
  align?: 'left' | 'right';
}

function cell(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined || value === '') return '-';
  // Table cells are one line each; a name with a newline would break the alignment.
  return String(value).replace(/[\r\n\t]+/g, ' ');
}

const MIN_CELL = 8;

/**
 * Widths that fit a terminal of `width` columns: the widest column gives up room first, down to
 * MIN_CELL, so ids and short fields stay whole while a long name or message is cut.
 */
function fitToTerminal(widths: number[], width: number): number[] {
  const fitted = [...widths];
  const total = () => fitted.reduce((sum, w) => sum + w, 0) + 2 * (fitted.length - 1);
  while (total() > width) {
    const widest = fitted.indexOf(Math.max(...fitted));
    if ((fitted[widest] as number) <= MIN_CELL) break;
    fitted[widest] = Math.max(MIN_CELL, (fitted[widest] as number) - (total() - width));
  }
  return fitted;
}

/**
 * Columns padded to their widest cell, two spaces apart; the last column is not padded. On a
 * terminal the table is fitted to its width, longer cells ending in an ellipsis; piped or
 * redirected, cells are whole (scripts that need every field use --json).
 */
export function formatTable<T>(columns: Column<T>[], rows: readonly T[]): string {
  let cells = rows.map((row) => columns.map((column) => cell(column.value(row))));
  let widths = columns.map((column, i) => Math.max(column.header.length, ...cells.map((r) => (r[i] as string).length)));
  const cut = (text: string, i: number) => (text.length <= (widths[i] as number) ? text : `${text.slice(0, (widths[i] as number) - 1)}…`);
  if (process.stdout.isTTY && process.stdout.columns) {
    widths = fitToTerminal(widths, process.stdout.columns);
    cells = cells.map((r) => r.map(cut));
  }
  const line = (values: string[]) =>
    values
      .map((value, i) => {
        const last = i === values.length - 1;
        if (columns[i]?.align === 'right') return value.padStart(widths[i] as number);
        return last ? value : value.padEnd(widths[i] as number);
      })
      .join('  ')
      .trimEnd();
  return [line(columns.map((c, i) => cut(c.header, i))), ...cells.map(line)].join('\n') + '\n';
}

export function write(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

export function note(text: string): void {
  process.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
}

export function writeJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** A table, or a line saying there is nothing (so an empty result is not mistaken for a hang or a bug). */
export function writeTable<T>(columns: Column<T>[], rows: readonly T[], empty: string): void {
  if (rows.length === 0) write(empty);
  else write(formatTable(columns, rows));
}

/** Dates as a person reads them in a table: minutes precision, UTC, no T/Z noise. */
export function shortDate(iso: string | null | undefined): string | null {
  if (!iso) return null;
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toISOString().slice(0, 16).replace('T', ' ');
}

/** Collects an async iterable (the client's paginated lists). */
export async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** Bytes as a person reads them: 512 bytes, 4.2 KiB, 1.3 MiB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return plural(bytes, 'byte');
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}
