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

/** Columns padded to their widest cell, two spaces apart; the last column is not padded. */
export function formatTable<T>(columns: Column<T>[], rows: readonly T[]): string {
  const cells = rows.map((row) => columns.map((column) => cell(column.value(row))));
  const widths = columns.map((column, i) => Math.max(column.header.length, ...cells.map((r) => (r[i] as string).length)));
  const line = (values: string[]) =>
    values
      .map((value, i) => {
        const last = i === values.length - 1;
        if (columns[i]?.align === 'right') return value.padStart(widths[i] as number);
        return last ? value : value.padEnd(widths[i] as number);
      })
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join('\n') + '\n';
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
