import writeExcelFile, { type Cell, type Row } from 'write-excel-file/node';
import { columnsOf } from './csv.js';

/*
 * Rows as an XLSX workbook of one sheet: a bold header row of the column names (ordered as the
 * CSV orders them, frozen so it stays in view), then one row per data row. Numbers are number
 * cells and booleans boolean cells; text is a text cell, never a formula, so a value such as
 * `=1+1` shows as written and no quote mark is added (the CSV needs one because a spreadsheet
 * guesses a CSV field's type). Dates are ISO 8601 text as the CSV writes them, objects are JSON
 * text, null and absent values are empty cells. A spreadsheet cell holds at most 32,767
 * characters, so longer text is cut there.
 */

export const XLSX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** The most characters a spreadsheet program keeps in one cell. */
const MAX_CELL_TEXT = 32_767;

function textCell(value: string): Cell {
  return { type: String, value: value.length > MAX_CELL_TEXT ? value.slice(0, MAX_CELL_TEXT) : value };
}

function cell(value: unknown): Cell {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return Number.isFinite(value) ? { type: Number, value } : textCell(String(value));
  if (typeof value === 'bigint')
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
      ? { type: Number, value: Number(value) }
      : textCell(String(value));
  if (typeof value === 'boolean') return { type: Boolean, value };
  if (typeof value === 'string') return textCell(value);
  if (value instanceof Date) return textCell(value.toISOString());
  return textCell(JSON.stringify(value));
}

export async function toXlsx(rows: ReadonlyArray<Record<string, unknown>>): Promise<Buffer> {
  const columns = columnsOf(rows);
  const sheet: Row[] = [
    columns.map((name): Cell => ({ type: String, value: name, fontWeight: 'bold' })),
    ...rows.map((row) => columns.map((c) => cell(row[c]))),
  ];
  return writeExcelFile(sheet, { stickyRowsCount: 1 }).toBuffer();
}
