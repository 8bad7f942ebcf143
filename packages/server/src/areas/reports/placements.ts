import { createHash } from 'node:crypto';
import type { ReportRow } from '../../db/tables.js';
import type { ReportPlacement, ResultChecksum } from './placements.schemas.js';

/**
 * Report placements (reference 3.0-3.3), as rules over the array a report row keeps: how a
 * request names a placement, and the checksums that say whether its cells still match the report.
 */

/** A placement as stored: the API shape without `syncStatus`, which is worked out on every read. */
export type StoredPlacement = Omit<ReportPlacement, 'syncStatus'>;

/** The fields a request names a placement by (3.2; 3.1 and 3.3 use the same). */
export interface PlacementTarget {
  placementId?: string | null | undefined;
  externalWorkbookId?: string | null | undefined;
  sheetName?: string | null | undefined;
  anchorCell?: string | null | undefined;
  resultLocation?: string | null | undefined;
  sheetId?: string | null | undefined;
}

/** JSON with object keys sorted at every level: the same value always gives the same text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

function parsed(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * SHA-256 (hex) of the report's query, normalised: its `sqlQuery` with line endings unified and
 * the surrounding blank space trimmed, and its `spec` with object keys in a fixed order. Edits
 * that cannot change the results (key order, a trailing newline) keep the checksum; any other
 * change to either gives a new one.
 */
export function queryChecksum(row: Pick<ReportRow, 'sql_query' | 'spec'>): string {
  const sqlQuery = row.sql_query === null ? null : row.sql_query.replace(/\r\n?/g, '\n').trim();
  return createHash('sha256')
    .update(canonical({ sqlQuery, spec: parsed(row.spec) }))
    .digest('hex');
}

export function readPlacements(text: string | null): StoredPlacement[] {
  if (text === null) return [];
  return JSON.parse(text) as StoredPlacement[];
}

export function withSyncStatus(placement: StoredPlacement, current: string): ReportPlacement {
  const syncStatus = placement.queryChecksum === null ? 'UNKNOWN' : placement.queryChecksum === current ? 'UP_TO_DATE' : 'CHANGED';
  return { ...placement, syncStatus };
}

/** `B2`, `b2` and `$B$2` name the same cell. */
function normalCell(cell: string | null | undefined): string | null {
  if (cell === null || cell === undefined) return null;
  const plain = cell.replace(/\$/g, '').trim().toUpperCase();
  return plain === '' ? null : plain;
}

/**
 * The sheet and anchor cell a result location names: `Sales!B2:F40`, `'Q1 ''24'!$B$2`, `Sales!B2`.
 * Null parts when it names no sheet (`B2:F40`) or no cell.
 */
export function parseLocation(location: string | null | undefined): { sheetName: string | null; anchorCell: string | null } {
  if (location === null || location === undefined) return { sheetName: null, anchorCell: null };
  let sheetName: string | null = null;
  let range = location;
  const quoted = /^'((?:[^']|'')+)'!(.*)$/s.exec(location);
  if (quoted) {
    sheetName = quoted[1]!.replace(/''/g, "'");
    range = quoted[2]!;
  } else {
    const bang = location.lastIndexOf('!');
    if (bang > 0) {
      sheetName = location.slice(0, bang);
      range = location.slice(bang + 1);
    } else if (bang === 0) {
      range = location.slice(1);
    }
  }
  const first = range.split(':')[0];
  return { sheetName, anchorCell: normalCell(first) };
}

/** The sheet and anchor of a placement or a target: its own fields, else what its result location names. */
function addressOf(sheetName: string | null | undefined, anchorCell: string | null | undefined, resultLocation: string | null | undefined) {
  const fromLocation = parseLocation(resultLocation);
  return { sheetName: sheetName ?? fromLocation.sheetName, anchorCell: normalCell(anchorCell) ?? fromLocation.anchorCell };
}

/** Whether the target names anything at all: a placement id, or a document. */
export function namesAPlacement(target: PlacementTarget): boolean {
  return Boolean(target.placementId) || Boolean(target.externalWorkbookId);
}

/**
 * The index of the placement `target` names, or -1 (3.2):
 * - by `placementId`: the placement with that id;
 * - else by `externalWorkbookId` plus both a sheet name and an anchor cell (sent, or named by
 *   `resultLocation`): the placement in that document at that sheet and anchor, whether or not it
 *   has an id (the rule placements recorded before ids were addressed by). A target missing the
 *   sheet or the anchor matches nothing;
 * - `sheetId`, when sent, only narrows: a placement stored under another sheet id (or none) does
 *   not match, whatever its name and anchor.
 */
export function findPlacement(placements: readonly StoredPlacement[], target: PlacementTarget): number {
  const narrowed = (p: StoredPlacement) => !target.sheetId || p.sheetId === target.sheetId;
  if (target.placementId) return placements.findIndex((p) => p.id === target.placementId && narrowed(p));
  if (!target.externalWorkbookId) return -1;
  const wanted = addressOf(target.sheetName, target.anchorCell, target.resultLocation);
  if (wanted.sheetName === null || wanted.anchorCell === null) return -1;
  return placements.findIndex((p) => {
    if (p.workbookId !== target.externalWorkbookId || !narrowed(p)) return false;
    const at = addressOf(p.sheetName, p.anchorCell, p.resultLocation);
    return at.sheetName === wanted.sheetName && at.anchorCell === wanted.anchorCell;
  });
}

/** The placement a connect (3.1) with a new `placementId` takes over: one without an id at the same address. */
export function findLegacyAt(placements: readonly StoredPlacement[], target: PlacementTarget): number {
  const index = findPlacement(placements, { ...target, placementId: null });
  return index >= 0 && placements[index]!.id === null ? index : -1;
}

export type { ResultChecksum };
