import type { Executor, ReportRow } from '../../db/tables.js';
import type { WorkspaceScope } from '../workspace/index.js';

export async function findReport(db: Executor, scope: WorkspaceScope, id: number): Promise<ReportRow | undefined> {
  return db
    .selectFrom('reports')
    .selectAll()
    .where('tenant_id', '=', scope.tenantId)
    .where('deployment_id', '=', scope.deploymentId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * Writes the report's placements if they are still `seen` (compare-and-set); undefined when they
 * changed meanwhile or the report is gone. The report's own columns, `updated_at` included, are
 * left alone: placing a report does not change it.
 */
export async function swapPlacements(
  db: Executor,
  scope: WorkspaceScope,
  id: number,
  seen: string | null,
  next: string | null,
): Promise<ReportRow | undefined> {
  return db
    .updateTable('reports')
    .set({ placements: next })
    .where('tenant_id', '=', scope.tenantId)
    .where('deployment_id', '=', scope.deploymentId)
    .where('id', '=', id)
    .where('placements', seen === null ? 'is' : '=', seen)
    .returningAll()
    .executeTakeFirst();
}
