import { randomUUID } from 'node:crypto';
import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { ReportRow } from '../../db/tables.js';
import { ApiError } from '../../shared/problems.js';
import { timestamp, type Clock } from '../../time.js';
import { loadViewContext, parseJson } from '../workspace/index.js';
import type { ItemRead } from '../workspace/index.js';
import { itemNotFound, openWorkspace, readAuthorized, viewOptionsOf, type WorkspaceContext } from '../workspace/index.js';
import { findLegacyAt, findPlacement, namesAPlacement, queryChecksum, readPlacements, type PlacementTarget, type StoredPlacement } from './placements.js';
import type { ConnectInput, DisconnectInput, RefreshInput } from './placements.schemas.js';
import { findReport, swapPlacements } from './placements.store.js';
import type { ReportRunsService } from './report-runs.js';
import type { Report } from './reports.schemas.js';
import { toReport } from './reports.service.js';

/** Placements one report may hold: each is kept on the report row and comes with every read of it. */
export const MAX_PLACEMENTS = 500;
/** Compare-and-set rounds before a write of a report's placements gives up under contention. */
const MAX_ROUNDS = 20;

const notFound = (reportId: number, target: PlacementTarget) =>
  new ApiError(
    'PLACEMENT_NOT_FOUND',
    target.placementId
      ? `Report ${reportId} has no placement with id "${target.placementId}"${target.sheetId ? ` stored under sheet id "${target.sheetId}"` : ''}.`
      : `Report ${reportId} has no placement in document "${target.externalWorkbookId}" at the sheet and anchor cell named${target.sheetId ? ` under sheet id "${target.sheetId}"` : ''} (both a sheet name and an anchor cell are needed, sent or in resultLocation).`,
  );

const unnamed = () =>
  new ApiError(
    'VALIDATION_FAILED',
    'Name the placement: `placementId`, or `externalWorkbookId` with `sheetName` and `anchorCell` (or a `resultLocation` that names both).',
    {
      errors: [{ pointer: '/body/placementId', message: 'is required unless externalWorkbookId names the placement' }],
    },
  );

/**
 * Report placements in external spreadsheets (reference 3.1-3.3). Read access to the report is
 * enough for all three: they never change the report itself, only where it is placed. The
 * placements live on the report row (migration 0026) and change by compare-and-set, so two
 * clients writing placements of one report at once both land, and each call is idempotent per
 * placement.
 */
export function placementsService(store: Store, runs: Pick<ReportRunsService, 'runContent'>, now: Clock) {
  const { db } = store;

  async function open(caller: Caller, deploymentId: number, reportId: number) {
    const context = await openWorkspace(db, caller, deploymentId);
    const read = await readAuthorized(db, store.dialect, context, 'REPORT', reportId, 'VIEW', 'view');
    return { context, read, row: read.item.row as ReportRow };
  }

  async function render(caller: Caller, context: WorkspaceContext, read: ItemRead, row: ReportRow): Promise<Report> {
    return toReport(row, await loadViewContext(db, context.scope, caller, [{ type: 'REPORT', row }], viewOptionsOf(read)));
  }

  /**
   * Applies `edit` to the report's placements and writes them if no one else did meanwhile; on a
   * lost race, reads them again and applies `edit` afresh. `edit` answers null to change nothing.
   */
  async function change(
    context: WorkspaceContext,
    row: ReportRow,
    edit: (placements: StoredPlacement[], row: ReportRow) => StoredPlacement[] | null,
  ): Promise<ReportRow> {
    let current = row;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const next = edit(readPlacements(current.placements), current);
      if (next === null) return current;
      const written = await swapPlacements(db, context.scope, current.id, current.placements, next.length === 0 ? null : JSON.stringify(next));
      if (written) return written;
      const fresh = await findReport(db, context.scope, current.id);
      if (!fresh) throw itemNotFound(context, 'REPORT', current.id);
      current = fresh;
    }
    throw new ApiError('UNAVAILABLE', `The placements of report ${row.id} are changing too fast to apply this change; nothing was changed. Retry.`);
  }

  /** The placement a connect writes, from the body; `existing` keeps its refresh record. */
  function placed(caller: Caller, input: ConnectInput, id: string, row: ReportRow, existing: StoredPlacement | undefined): StoredPlacement {
    return {
      ...addressOf(input),
      id,
      placedAt: timestamp(now),
      placedByUserId: caller.actor.userId,
      refreshedAt: existing?.refreshedAt ?? null,
      refreshedByUserId: existing?.refreshedByUserId ?? null,
      // The cells now hold the report's query as it stands.
      queryChecksum: queryChecksum(row),
      resultChecksum: input.resultChecksum ?? null,
    };
  }

  return {
    /**
     * Reference 3.1: places the report in the caller's spreadsheet, or updates the placement the
     * body names (by `placementId`, else by document, sheet and anchor). A new `placementId`
     * takes over a placement without an id at the same address. `addressOnly` corrects the
     * address of an existing placement and keeps its fingerprint and checksums.
     */
    async connect(caller: Caller, deploymentId: number, reportId: number, input: ConnectInput): Promise<Report> {
      if (input.addressOnly && input.resultChecksum) {
        throw new ApiError(
          'VALIDATION_FAILED',
          '`addressOnly` corrects the address only and keeps the stored fingerprint: send `resultChecksum` without `addressOnly`.',
          {
            errors: [{ pointer: '/body/resultChecksum', message: 'cannot be combined with addressOnly' }],
          },
        );
      }
      const { context, read, row } = await open(caller, deploymentId, reportId);
      const written = await change(context, row, (placements, current) => {
        // An id names the placement wherever it now is: the body's sheetId is its new one, not a narrowing.
        let index = input.placementId ? findPlacement(placements, { placementId: input.placementId }) : findPlacement(placements, input);
        if (index < 0 && input.placementId) index = findLegacyAt(placements, input);
        const existing = index >= 0 ? placements[index] : undefined;
        if (input.addressOnly) {
          if (!existing) throw notFound(reportId, input);
          const next = { ...existing, ...addressOf(input), id: existing.id ?? input.placementId ?? randomUUID() };
          return replaceAt(placements, index, next);
        }
        if (!existing && placements.length >= MAX_PLACEMENTS) {
          throw new ApiError(
            'PLACEMENT_LIMIT_REACHED',
            `Report ${reportId} already has ${MAX_PLACEMENTS} placements, the most one report holds; remove placements that are no longer used first.`,
          );
        }
        const next = placed(caller, input, existing?.id ?? input.placementId ?? randomUUID(), current, existing);
        // The same call again (a retry) changes nothing, not even when it was placed.
        if (existing && samePlacement(existing, next)) return null;
        return existing ? replaceAt(placements, index, next) : [...placements, next];
      });
      return render(caller, context, read, written);
    },

    /** Reference 3.2: removes the placement the body names; naming none that exists changes nothing. */
    async disconnect(caller: Caller, deploymentId: number, reportId: number, input: DisconnectInput): Promise<Report> {
      if (!namesAPlacement(input)) throw unnamed();
      const { context, read, row } = await open(caller, deploymentId, reportId);
      const written = await change(context, row, (placements) => {
        const index = findPlacement(placements, input);
        return index < 0 ? null : placements.filter((_, i) => i !== index);
      });
      return render(caller, context, read, written);
    },

    /**
     * Reference 3.3: runs the report's query as the caller (their row-level access applies; a
     * query they may not run fails and records nothing), then records the refresh of the
     * placement the body names: when, by whom, the query it ran and the new fingerprint.
     */
    async refresh(caller: Caller, deploymentId: number, reportId: number, input: RefreshInput): Promise<Report> {
      if (!namesAPlacement(input)) throw unnamed();
      const { context, read, row } = await open(caller, deploymentId, reportId);
      if (findPlacement(readPlacements(row.placements), input) < 0) throw notFound(reportId, input);
      await runs.runContent(caller, deploymentId, { id: row.id, sqlQuery: row.sql_query, spec: parseJson(row.spec) as Report['spec'] });
      const checksum = queryChecksum(row);
      const written = await change(context, row, (placements) => {
        const index = findPlacement(placements, input);
        if (index < 0) throw notFound(reportId, input);
        const next = {
          ...placements[index]!,
          refreshedAt: timestamp(now),
          refreshedByUserId: caller.actor.userId,
          queryChecksum: checksum,
          resultChecksum: input.resultChecksum ?? null,
        };
        return replaceAt(placements, index, next);
      });
      return render(caller, context, read, written);
    },
  };
}
export type PlacementsService = ReturnType<typeof placementsService>;

/** Equal but for when it was placed. */
function samePlacement(a: StoredPlacement, b: StoredPlacement): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)] as Array<keyof StoredPlacement>);
  return [...keys].every((key) => key === 'placedAt' || JSON.stringify(a[key] ?? null) === JSON.stringify(b[key] ?? null));
}

function replaceAt(placements: StoredPlacement[], index: number, next: StoredPlacement): StoredPlacement[] {
  return placements.map((p, i) => (i === index ? next : p));
}

/** The address fields of a connect body, as stored (absent ones null). */
function addressOf(
  input: ConnectInput,
): Omit<StoredPlacement, 'id' | 'placedAt' | 'placedByUserId' | 'refreshedAt' | 'refreshedByUserId' | 'queryChecksum' | 'resultChecksum'> {
  return {
    workbookId: input.externalWorkbookId,
    resultLocation: input.resultLocation,
    host: input.host ?? null,
    sheetId: input.sheetId ?? null,
    sheetName: input.sheetName ?? null,
    anchorCell: input.anchorCell ?? null,
    endResultCell: input.endResultCell ?? null,
    workbookName: input.workbookName ?? null,
  };
}
