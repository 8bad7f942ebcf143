import type { Executor, WorkbookRow } from '../../db/tables.js';
import type { WorkspaceScope } from '../workspace/index.js';

export type NewWorkbook = Omit<WorkbookRow, 'id' | 'embed_owner_id'> & { embed_owner_id?: number | null };
export type WorkbookChanges = Partial<Pick<WorkbookRow, 'name' | 'meta' | 'calculated_fields' | 'dashboard_draft'>> & { updated_at: string };

export async function findWorkbookBySlug(db: Executor, scope: WorkspaceScope, slug: string): Promise<WorkbookRow | undefined> {
  return db
    .selectFrom('workbooks')
    .selectAll()
    .where('tenant_id', '=', scope.tenantId)
    .where('deployment_id', '=', scope.deploymentId)
    .where('slug', '=', slug)
    .executeTakeFirst();
}

export async function insertWorkbook(db: Executor, values: NewWorkbook): Promise<WorkbookRow> {
  return db.insertInto('workbooks').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function updateWorkbook(db: Executor, scope: WorkspaceScope, id: number, changes: WorkbookChanges): Promise<WorkbookRow> {
  return db
    .updateTable('workbooks')
    .set(changes)
    .where('tenant_id', '=', scope.tenantId)
    .where('deployment_id', '=', scope.deploymentId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Slugs in the deployment that start with `prefix`: the candidates a fresh slug must avoid. */
export async function slugsStartingWith(db: Executor, scope: WorkspaceScope, prefix: string): Promise<Set<string>> {
  // Slugs hold only [a-z0-9-], so the prefix has no LIKE wildcards to escape.
  const rows = await db
    .selectFrom('workbooks')
    .select('slug')
    .where('tenant_id', '=', scope.tenantId)
    .where('deployment_id', '=', scope.deploymentId)
    .where('slug', 'like', `${prefix}%`)
    .execute();
  return new Set(rows.map((r) => r.slug));
}
