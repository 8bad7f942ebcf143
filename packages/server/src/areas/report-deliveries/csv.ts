/*
 * Rows as CSV (RFC 4180): UTF-8 with a byte-order mark (so spreadsheet programs read accents
 * right), CRLF line ends, a header row of the column names in the order the first row gives
 * them (columns first seen in later rows follow), every field quoted when it holds a comma, a
 * quote or a line break. Null and absent values are empty fields; objects are JSON. A field
 * starting with = + - @ (a formula to a spreadsheet) is prefixed with a quote mark, so opening
 * the file never runs what a data value says.
 */

function text(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value instanceof Date) return value.toISOString();
  return JSON.stringify(value);
}

function field(value: unknown): string {
  let s = text(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The column names in the order the first row gives them; columns first seen in later rows follow. */
export function columnsOf(rows: ReadonlyArray<Record<string, unknown>>): string[] {
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const row of rows)
    for (const key of Object.keys(row))
      if (!seen.has(key)) {
        seen.add(key);
        columns.push(key);
      }
  return columns;
}

export function toCsv(rows: ReadonlyArray<Record<string, unknown>>): string {
  const columns = columnsOf(rows);
  const lines = [columns.map(field).join(','), ...rows.map((row) => columns.map((c) => field(row[c])).join(','))];
  return `\uFEFF${lines.join('\r\n')}\r\n`;
}
