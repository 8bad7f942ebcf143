import type { DashboardReportSnapshotRow, DashboardRow, DashboardVersionRow, Executor, WorkbookRow } from '../../db/tables.js';

/*
 * The dashboards tables (migration 0016). Every read is bounded by the tenant; a dashboard's
 * deployment and workbook are columns of its row, so readers that start from a public id learn
 * where it lives from the row itself.
 */

export type NewDashboard = Omit<DashboardRow, 'id' | 'ai_widget_threads'>;
export type NewDashboardVersion = Omit<DashboardVersionRow, 'id'>;
export type NewReportSnapshot = Omit<DashboardReportSnapshotRow, 'id'>;

export async function findDashboardByWorkbook(db: Executor, tenantId: number, workbookId: number): Promise<DashboardRow | undefined> {
  return db.selectFrom('dashboards').selectAll().where('tenant_id', '=', tenantId).where('workbook_id', '=', workbookId).executeTakeFirst();
}

export async function findDashboardById(db: Executor, tenantId: number, id: number): Promise<DashboardRow | undefined> {
  return db.selectFrom('dashboards').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function findDashboardByPublicId(db: Executor, tenantId: number, publicId: string): Promise<DashboardRow | undefined> {
  return db.selectFrom('dashboards').selectAll().where('tenant_id', '=', tenantId).where('public_id', '=', publicId).executeTakeFirst();
}

export async function insertDashboard(db: Executor, values: NewDashboard): Promise<DashboardRow> {
  return db.insertInto('dashboards').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function updateAllowEmbed(db: Executor, tenantId: number, dashboardId: number, allowEmbed: boolean, at: string): Promise<DashboardRow> {
  return db
    .updateTable('dashboards')
    .set({ allow_embed: allowEmbed ? 1 : 0, updated_at: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', dashboardId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The version that is `published` now, if any. */
export async function findPublishedVersion(db: Executor, tenantId: number, dashboardId: number): Promise<DashboardVersionRow | undefined> {
  return db
    .selectFrom('dashboard_versions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('dashboard_id', '=', dashboardId)
    .where('status', '=', 'published')
    .orderBy('version_number', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function lastVersionNumber(db: Executor, tenantId: number, dashboardId: number): Promise<number> {
  const row = await db
    .selectFrom('dashboard_versions')
    .select('version_number')
    .where('tenant_id', '=', tenantId)
    .where('dashboard_id', '=', dashboardId)
    .orderBy('version_number', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.version_number ?? 0;
}

/** Every `published` version of the dashboard becomes `archived`: the step before a new one is published. */
export async function archivePublished(db: Executor, tenantId: number, dashboardId: number): Promise<void> {
  await db
    .updateTable('dashboard_versions')
    .set({ status: 'archived' })
    .where('tenant_id', '=', tenantId)
    .where('dashboard_id', '=', dashboardId)
    .where('status', '=', 'published')
    .execute();
}

export async function insertVersion(db: Executor, values: NewDashboardVersion): Promise<DashboardVersionRow> {
  return db.insertInto('dashboard_versions').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function insertSnapshots(db: Executor, values: NewReportSnapshot[]): Promise<DashboardReportSnapshotRow[]> {
  if (values.length === 0) return [];
  const rows = await db.insertInto('dashboard_report_snapshots').values(values).returningAll().execute();
  return rows.sort((a, b) => a.position - b.position);
}

/** A dashboard's versions, newest first, from before `beforeNumber` when given; `limit` rows. */
export async function listVersions(db: Executor, tenantId: number, dashboardId: number, limit: number, beforeNumber?: number): Promise<DashboardVersionRow[]> {
  let query = db.selectFrom('dashboard_versions').selectAll().where('tenant_id', '=', tenantId).where('dashboard_id', '=', dashboardId);
  if (beforeNumber !== undefined) query = query.where('version_number', '<', beforeNumber);
  return query.orderBy('version_number', 'desc').limit(limit).execute();
}

/** The snapshots of the given versions, in their order, by version id. */
export async function snapshotsOf(db: Executor, tenantId: number, versionIds: number[]): Promise<Map<number, DashboardReportSnapshotRow[]>> {
  const byVersion = new Map<number, DashboardReportSnapshotRow[]>(versionIds.map((id) => [id, []]));
  if (versionIds.length === 0) return byVersion;
  const rows = await db
    .selectFrom('dashboard_report_snapshots')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('version_id', 'in', versionIds)
    .orderBy('version_id')
    .orderBy('position')
    .execute();
  for (const row of rows) byVersion.get(row.version_id)?.push(row);
  return byVersion;
}

/*
 * The dashboard columns of a workbook's row: its draft (`dashboard_draft`), the config last
 * published (`dashboard_published`) and the published dashboard (`published_dashboard`, JSON).
 */

export async function findWorkbook(db: Executor, tenantId: number, workbookId: number): Promise<WorkbookRow> {
  return db.selectFrom('workbooks').selectAll().where('tenant_id', '=', tenantId).where('id', '=', workbookId).executeTakeFirstOrThrow();
}

/** Sets the workbook's draft and `updated_at`; answers the row as stored. */
export async function saveWorkbookDraft(db: Executor, tenantId: number, workbookId: number, draft: string | null, at: string): Promise<WorkbookRow> {
  return db
    .updateTable('workbooks')
    .set({ dashboard_draft: draft, updated_at: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', workbookId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Sets the workbook's draft only (a copy's, re-pointed), leaving `updated_at`. */
export async function setWorkbookDraft(db: Executor, tenantId: number, workbookId: number, draft: string): Promise<void> {
  await db.updateTable('workbooks').set({ dashboard_draft: draft }).where('tenant_id', '=', tenantId).where('id', '=', workbookId).execute();
}

/** Records a publication on the workbook: the config published and the published dashboard. */
export async function setWorkbookPublication(db: Executor, tenantId: number, workbookId: number, config: string, published: string, at: string): Promise<void> {
  await db
    .updateTable('workbooks')
    .set({ dashboard_published: config, published_dashboard: published, updated_at: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', workbookId)
    .execute();
}

export async function findWorkbookPublishedDashboard(db: Executor, tenantId: number, workbookId: number): Promise<string | null | undefined> {
  const workbook = await db
    .selectFrom('workbooks')
    .select('published_dashboard')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', workbookId)
    .executeTakeFirst();
  return workbook?.published_dashboard;
}

export async function setWorkbookPublishedDashboard(db: Executor, tenantId: number, workbookId: number, published: string): Promise<void> {
  await db.updateTable('workbooks').set({ published_dashboard: published }).where('tenant_id', '=', tenantId).where('id', '=', workbookId).execute();
}

export async function setAiWidgetThreads(db: Executor, tenantId: number, dashboardId: number, threads: string): Promise<DashboardRow> {
  return db
    .updateTable('dashboards')
    .set({ ai_widget_threads: threads })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', dashboardId)
    .returningAll()
    .executeTakeFirstOrThrow();
}
