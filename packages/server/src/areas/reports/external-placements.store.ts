import { sql, type Expression, type SqlBool } from 'kysely';
import type { Executor, ReportRow } from '../../db/tables.js';

export type PlacedReportRow = Pick<ReportRow, 'id' | 'deployment_id' | 'name' | 'sql_query' | 'spec' | 'placements'>;

/** `%`, `_` and the escape itself, escaped for `like ... escape '\'`. */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * A page (by id) of the tenant's reports whose placements may be in `documentId`: the stored
 * array's text contains the id as a placement's `workbookId` writes it. A prefilter only (SQLite's
 * `like` ignores ASCII case, and the text could sit in another field); the caller filters exactly.
 */
export async function reportsPlacedIn(db: Executor, tenantId: number, documentId: string, afterId: number, limit: number): Promise<PlacedReportRow[]> {
  const pattern = `%${likeLiteral(`"workbookId":${JSON.stringify(documentId)}`)}%`;
  return db
    .selectFrom('reports')
    .select(['id', 'deployment_id', 'name', 'sql_query', 'spec', 'placements'])
    .where('tenant_id', '=', tenantId)
    .where('id', '>', afterId)
    .where(sql<SqlBool>`placements like ${pattern} escape '\\'`)
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Which of `ids` (reports of one deployment) pass `visible`, the caller's visibility condition there. */
export async function visibleReportIds(
  db: Executor,
  tenantId: number,
  deploymentId: number,
  ids: number[],
  visible: Expression<SqlBool>,
): Promise<Set<number>> {
  const rows = await db
    .selectFrom('reports')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('deployment_id', '=', deploymentId)
    .where('id', 'in', ids)
    .where(visible)
    .execute();
  return new Set(rows.map((r) => r.id));
}
