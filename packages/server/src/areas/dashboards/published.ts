import type { DashboardReportSnapshotRow, DashboardRow, DashboardVersionRow, Executor, ReportRow } from '../../db/tables.js';
import { normalizeDashboardConfig, type Dashboard, type DashboardConfig, type ReportSnapshot } from '../workspace/index.js';
import { parseJson } from '../workspace/index.js';
import {
  findDashboardById,
  findDashboardByPublicId,
  findDashboardByWorkbook,
  findPublishedVersion,
  findWorkbookPublishedDashboard,
  setWorkbookPublishedDashboard,
  snapshotsOf,
  updateAllowEmbed,
} from './dashboards.store.js';

/*
 * Published dashboards as the rest of the server reads them: the API shapes built from the rows,
 * and the small readers and writers other areas (embedding, embed access) build on. None of them
 * checks the caller's access: the caller of these functions does, and passes the tenant it
 * resolved.
 */

/** What `dashboards` stores of a dashboard, as the API names it. */
export interface DashboardInfo {
  id: number;
  publicId: string;
  tenantId: number;
  deploymentId: number;
  workbookId: number;
  allowEmbed: boolean;
}

export function toInfo(row: DashboardRow): DashboardInfo {
  return {
    id: row.id,
    publicId: row.public_id,
    tenantId: row.tenant_id,
    deploymentId: row.deployment_id,
    workbookId: row.workbook_id,
    allowEmbed: row.allow_embed === 1,
  };
}

/** The snapshot fields a report row gives, frozen as JSON in `dashboard_report_snapshots.content`. */
export type SnapshotContent = Omit<ReportSnapshot, 'id' | 'reportId' | 'versionNumber'>;

export function snapshotContent(report: ReportRow): SnapshotContent {
  return {
    name: report.name,
    title: report.title,
    description: report.description,
    pythonCode: report.python_code,
    sqlQuery: report.sql_query,
    kind: report.kind as SnapshotContent['kind'],
    meta: parseJson(report.meta) as SnapshotContent['meta'],
    spec: parseJson(report.spec) as SnapshotContent['spec'],
    fillMissingRows: parseJson(report.fill_missing_rows) as SnapshotContent['fillMissingRows'],
    periodComparisons: parseJson(report.period_comparisons) as SnapshotContent['periodComparisons'],
    preferences: parseJson(report.preferences) as SnapshotContent['preferences'],
  };
}

/** A snapshot's `versionNumber` is the number of the dashboard version that froze it (reports have no versions of their own). */
function toSnapshot(row: DashboardReportSnapshotRow, versionNumber: number): ReportSnapshot {
  return { ...(JSON.parse(row.content) as SnapshotContent), id: row.id, reportId: row.report_id, versionNumber };
}

/** The spec's `Dashboard`: one version of the dashboard, with what belongs to the dashboard itself (publicId, allowEmbed). */
export function toDashboard(dashboard: DashboardRow, version: DashboardVersionRow, snapshots: DashboardReportSnapshotRow[]): Dashboard {
  return {
    id: dashboard.id,
    publicId: dashboard.public_id,
    deploymentId: dashboard.deployment_id,
    workbookId: dashboard.workbook_id,
    status: version.status,
    allowEmbed: dashboard.allow_embed === 1,
    config: normalizeDashboardConfig(JSON.parse(version.config)) ?? ({} as DashboardConfig),
    versionNumber: version.version_number,
    versionId: version.id,
    reportSnapshots: snapshots.map((s) => toSnapshot(s, version.version_number)),
    createdBy: version.created_by,
    title: version.title,
    description: version.description,
    // The threads belong to the published version: an archived one shows none, nor does one without any.
    ...(version.status === 'published' && dashboard.ai_widget_threads ? { aiWidgetThreads: aiWidgetThreadsOf(dashboard) } : {}),
  };
}

/** What an AI widget's thread is stored as (reference 8.G.4): the thread and the checksum of what it answered. */
export type AiWidgetThreads = Record<string, { threadId: string; checksum: string | null }>;

export function aiWidgetThreadsOf(dashboard: DashboardRow): AiWidgetThreads | null {
  return dashboard.ai_widget_threads ? (JSON.parse(dashboard.ai_widget_threads) as AiWidgetThreads) : null;
}

async function currentOf(db: Executor, row: DashboardRow): Promise<Dashboard | undefined> {
  const version = await findPublishedVersion(db, row.tenant_id, row.id);
  if (!version) return undefined;
  const snapshots = await snapshotsOf(db, row.tenant_id, [version.id]);
  return toDashboard(row, version, snapshots.get(version.id) ?? []);
}

/**
 * The current published version of the dashboard with this public id in the tenant: its config
 * (widgets), its report snapshots, its workbook and deployment (`workbookId`, `deploymentId`) and
 * the dashboard's `allowEmbed`. Undefined when the tenant has no such dashboard. Checks no access:
 * embedding decides who may see it (reference 4.18) and whether `allowEmbed` matters.
 */
export async function findPublishedByPublicId(db: Executor, tenantId: number, publicId: string): Promise<Dashboard | undefined> {
  const row = await findDashboardByPublicId(db, tenantId, publicId);
  return row ? currentOf(db, row) : undefined;
}

/** The current published version of the workbook's dashboard, as `findPublishedByPublicId`. */
export async function findPublishedByWorkbook(db: Executor, tenantId: number, workbookId: number): Promise<Dashboard | undefined> {
  const row = await findDashboardByWorkbook(db, tenantId, workbookId);
  return row ? currentOf(db, row) : undefined;
}

/**
 * The workbook's dashboard (public id, `allowEmbed`), or undefined when the workbook was never
 * published: "does this workbook have a published dashboard" is `(await findByWorkbook(...)) !== undefined`.
 * A dashboard, once published, always has a published version (publishing archives the one
 * before only as it adds the next). The workbook id is not checked against a deployment: the
 * caller has read the workbook in its deployment already.
 */
export async function findByWorkbook(db: Executor, tenantId: number, workbookId: number): Promise<DashboardInfo | undefined> {
  const row = await findDashboardByWorkbook(db, tenantId, workbookId);
  return row ? toInfo(row) : undefined;
}

/** The dashboard with this public id in the tenant (no version read), or undefined. */
export async function findByPublicId(db: Executor, tenantId: number, publicId: string): Promise<DashboardInfo | undefined> {
  const row = await findDashboardByPublicId(db, tenantId, publicId);
  return row ? toInfo(row) : undefined;
}

/**
 * Sets the signed-embedding switch of the workbook's dashboard (reference 3.5, 3.6) and the copy
 * of it in the workbook's `publishedDashboard`, so both read the same. Undefined (and nothing
 * written) when the workbook has no published dashboard. Run it in the caller's transaction when
 * other writes go with it; on its own it is two updates that a reader may see one at a time. `at`:
 * the time of the change, from the caller's clock.
 */
export async function setAllowEmbed(db: Executor, tenantId: number, workbookId: number, allowEmbed: boolean, at: string): Promise<DashboardInfo | undefined> {
  const row = await findDashboardByWorkbook(db, tenantId, workbookId);
  if (!row) return undefined;
  if ((row.allow_embed === 1) === allowEmbed) return toInfo(row);
  const updated = await updateAllowEmbed(db, tenantId, row.id, allowEmbed, at);
  await syncWorkbookAllowEmbed(db, tenantId, workbookId, allowEmbed);
  return toInfo(updated);
}

/** The workbook's `published_dashboard` JSON with `allowEmbed` set, when it holds one. */
async function syncWorkbookAllowEmbed(db: Executor, tenantId: number, workbookId: number, allowEmbed: boolean): Promise<void> {
  await syncWorkbookCopy(db, tenantId, workbookId, { allowEmbed });
}

/** The workbook's `published_dashboard` JSON with `fields` set, when it holds one: the copy reads as the dashboard does. */
export async function syncWorkbookCopy(db: Executor, tenantId: number, workbookId: number, fields: Partial<Dashboard>): Promise<void> {
  const stored = await findWorkbookPublishedDashboard(db, tenantId, workbookId);
  if (!stored) return;
  const published = JSON.parse(stored) as Dashboard;
  await setWorkbookPublishedDashboard(db, tenantId, workbookId, JSON.stringify({ ...published, ...fields }));
}

/** Which dashboard: by its workbook, its id or its public id. */
export type DashboardRef = { workbookId: number } | { dashboardId: number } | { publicId: string };

/** The dashboard `ref` names, when it is in this deployment of the tenant (no version read), or undefined. */
export async function findInDeployment(db: Executor, tenantId: number, deploymentId: number, ref: DashboardRef): Promise<DashboardInfo | undefined> {
  const row =
    'workbookId' in ref
      ? await findDashboardByWorkbook(db, tenantId, ref.workbookId)
      : 'publicId' in ref
        ? await findDashboardByPublicId(db, tenantId, ref.publicId)
        : await findDashboardById(db, tenantId, ref.dashboardId);
  return row && row.deployment_id === deploymentId ? toInfo(row) : undefined;
}

/** The current published version of the dashboard `ref` names in this deployment, or undefined. */
export async function findPublishedInDeployment(db: Executor, tenantId: number, deploymentId: number, ref: DashboardRef): Promise<Dashboard | undefined> {
  const info = await findInDeployment(db, tenantId, deploymentId, ref);
  return info ? findPublishedByWorkbook(db, tenantId, info.workbookId) : undefined;
}
