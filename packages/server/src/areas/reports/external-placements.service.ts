import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import { ApiError } from '../../shared/problems.js';
import { openWorkspace, visibilityFor, visibleRows } from '../workspace/index.js';
import type { ExternalDocumentPlacement, ExternalDocumentPlacements } from './external-placements.schemas.js';
import { reportsPlacedIn, visibleReportIds, type PlacedReportRow } from './external-placements.store.js';
import { queryChecksum, readPlacements, withSyncStatus } from './placements.js';

/** Beyond these, one answer would be too large to be useful: the document is refused (422), never cut short. */
export const MAX_PLACED_REPORTS = 500;
export const MAX_DOCUMENT_PLACEMENTS = 2000;
/** Reports read per statement while the tenant's reports are searched. */
const SCAN_PAGE = 200;

function tooMany(documentId: string, what: string): ApiError {
  return new ApiError(
    'PLACEMENTS_TOO_MANY',
    `Document "${documentId}" holds ${what}; one answer lists at most ${MAX_PLACED_REPORTS} placed reports and ${MAX_DOCUMENT_PLACEMENTS} placements. Remove placements that are no longer used, or read them per report.`,
  );
}

/**
 * Reports placed in the document, each with its placements there, across the tenant; 422 past the
 * limits. The search pages by id and stops as soon as a limit is passed.
 */
async function placedIn(store: Store, tenantId: number, documentId: string) {
  const found: Array<{ row: PlacedReportRow; placements: ReturnType<typeof readPlacements> }> = [];
  let placementCount = 0;
  for (let after = 0; ;) {
    const page = await reportsPlacedIn(store.db, tenantId, documentId, after, SCAN_PAGE);
    for (const row of page) {
      const placements = readPlacements(row.placements).filter((p) => p.workbookId === documentId);
      if (placements.length === 0) continue;
      found.push({ row, placements });
      placementCount += placements.length;
      if (found.length > MAX_PLACED_REPORTS) throw tooMany(documentId, `placements of more than ${MAX_PLACED_REPORTS} reports`);
      if (placementCount > MAX_DOCUMENT_PLACEMENTS) throw tooMany(documentId, `more than ${MAX_DOCUMENT_PLACEMENTS} placements`);
    }
    if (page.length < SCAN_PAGE) return found;
    after = page.at(-1)!.id;
  }
}

/**
 * The reports of `deploymentId` among `ids` the caller may read: none outside the key's scope;
 * else those visible to them there (the rule every listing of the workspace uses).
 */
async function readableIn(store: Store, caller: Caller, deploymentId: number, ids: number[]): Promise<Set<number>> {
  const scope = caller.actor.scope;
  if (scope !== null && !scope.includes(deploymentId)) return new Set();
  let context;
  try {
    context = await openWorkspace(store.db, caller, deploymentId);
  } catch (error) {
    // Deleted since the search: its reports went with it.
    if (error instanceof ApiError && error.code === 'DEPLOYMENT_NOT_FOUND') return new Set();
    throw error;
  }
  const visibility = await visibilityFor(context);
  return visibleReportIds(store.db, context.scope.tenantId, deploymentId, ids, visibleRows(visibility, 'reports'));
}

/**
 * Where reports are placed in one external document, across the tenant's deployments (an
 * extension). Any credential may ask: placements of reports the caller cannot read are listed
 * with `access: DENIED` and without what comes from the report, since the document is the
 * caller's own and its cells show that something was placed there.
 */
export function externalPlacementsService(store: Store) {
  return {
    async list(caller: Caller, documentId: string): Promise<ExternalDocumentPlacements> {
      const found = await placedIn(store, caller.actor.tenantId, documentId);
      const byDeployment = new Map<number, number[]>();
      for (const { row } of found) byDeployment.set(row.deployment_id, [...(byDeployment.get(row.deployment_id) ?? []), row.id]);
      const readable = new Set<number>();
      for (const [deploymentId, ids] of byDeployment) for (const id of await readableIn(store, caller, deploymentId, ids)) readable.add(id);
      const items: ExternalDocumentPlacement[] = [];
      found.sort((a, b) => a.row.deployment_id - b.row.deployment_id || a.row.id - b.row.id);
      for (const { row, placements } of found) {
        const granted = readable.has(row.id);
        const current = granted ? queryChecksum(row) : null;
        for (const placement of placements) {
          items.push({
            deploymentId: row.deployment_id,
            reportId: row.id,
            reportName: granted ? row.name : null,
            access: granted ? 'GRANTED' : 'DENIED',
            placement: current === null ? { ...placement, queryChecksum: null, syncStatus: null } : withSyncStatus(placement, current),
          });
        }
      }
      return { externalWorkbookId: documentId, items };
    },
  };
}
export type ExternalPlacementsService = ReturnType<typeof externalPlacementsService>;
