import fs from 'node:fs';
import { parse } from 'yaml';
import { UsageError } from './errors.js';

/**
 * A resource's fields from a file (`-`: stdin), JSON or YAML: YAML reads JSON too, so one parser
 * takes both, and its errors name the line and column.
 */
export function readFields(file: string): Record<string, unknown> {
  const where = file === '-' ? 'stdin' : file;
  let text: string;
  try {
    text = fs.readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    throw new UsageError(`Cannot read ${where}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = parse(text);
  } catch (error) {
    throw new UsageError(`${where} is not valid JSON or YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UsageError(`${where} must hold one object (JSON or YAML), with the fields to send.`);
  return value as Record<string, unknown>;
}
