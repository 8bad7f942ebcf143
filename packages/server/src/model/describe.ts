import type { Path } from './parse.js';

/** How messages name the lists of a cube or view, one entry of each. */
const ENTRY_NAMES: Record<string, string> = {
  measures: 'measure',
  dimensions: 'dimension',
  segments: 'segment',
  pre_aggregations: 'pre-aggregation',
  hierarchies: 'hierarchy',
  folders: 'folder',
};

const record = (value: unknown): Record<string, unknown> | null =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;

function nameOf(value: unknown, fallback: string): string {
  const name = record(value)?.name;
  return typeof name === 'string' ? `"${name}"` : fallback;
}

export const cubeSubject = (kind: 'cube' | 'view', name: string) => `${kind === 'cube' ? 'Cube' : 'View'} "${name}"`;

/**
 * Names what a path points into, the way a reader of the file would: `Cube "orders": measure
 * "total"`, `Join "customers" of cube "orders"`, `View "v": cubes entry "orders.customers"`.
 * Returns that subject and the rest of the path below it (a key of the entry, or deeper).
 */
export function describePath(root: unknown, path: Path): { subject: string; rest: Path } {
  if (path.length < 2 || (path[0] !== 'cubes' && path[0] !== 'views')) return { subject: 'Model file', rest: path };
  const kind = path[0] === 'cubes' ? 'Cube' : 'View';
  const entity = (record(root)?.[path[0]] as unknown[] | undefined)?.[path[1] as number];
  const entityName = nameOf(entity, `#${(path[1] as number) + 1}`);
  let subject = `${kind} ${entityName}`;
  if (path.length < 4 || typeof path[3] !== 'number') return { subject, rest: path.slice(2) };
  const list = path[2] as string;
  const entry = (record(entity)?.[list] as unknown[] | undefined)?.[path[3]];
  const position = `${path[3] + 1}`;
  if (list === 'joins') subject = `Join ${nameOf(entry, `#${position}`)} of ${kind.toLowerCase()} ${entityName}`;
  else if (list === 'access_policy') subject += `: access policy ${position}`;
  else if (list === 'cubes') subject += `: cubes entry ${typeof record(entry)?.join_path === 'string' ? `"${String(record(entry)!.join_path)}"` : position}`;
  else if (ENTRY_NAMES[list]) subject += `: ${ENTRY_NAMES[list]} ${nameOf(entry, `#${position}`)}`;
  else return { subject, rest: path.slice(2) };
  return { subject, rest: path.slice(4) };
}

/** `rolling_window.offset`, `filters[0].sql`: a path below a subject, as a reader would write it. */
export function fieldPath(rest: Path): string {
  return rest.map((step, i) => (typeof step === 'number' ? `[${step}]` : i === 0 ? step : `.${step}`)).join('');
}
