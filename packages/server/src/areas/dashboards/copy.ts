import type { Executor, ReportRow, WorkbookRow } from '../../db/tables.js';
import { insertReport, updateReport } from '../reports/index.js';
import { normalizeDashboardConfig, type Dashboard, type DashboardConfig, type DashboardConfigDraft, type ReportSnapshot } from '../workspace/index.js';
import { parseJson } from '../workspace/index.js';
import { findItem } from '../workspace/index.js';
import { requireItemAccess, type WorkspaceContext, type WorkspaceScope } from '../workspace/index.js';
import { newPublicId, reportIdOf, reportIdsOf, writePublication } from './dashboards.service.js';
import { findWorkbook, setWorkbookDraft } from './dashboards.store.js';
import { findPublishedByWorkbook, snapshotContent, type SnapshotContent } from './published.js';

type Config = DashboardConfig | DashboardConfigDraft;

function withoutIds({ id: _id, reportId: _reportId, versionNumber: _versionNumber, ...content }: ReportSnapshot): SnapshotContent {
  return content;
}

/** `config` with each widget's `config.reportId` replaced through `copies`; widgets showing no copied report stay as they are. */
function repointed<T extends Config>(config: T, copies: Map<number, number>): T {
  if (!Array.isArray(config.widgets)) return config;
  const widgets = (config.widgets as Array<Record<string, unknown>>).map((widget) => {
    const from = reportIdOf(widget);
    const to = from === undefined ? undefined : copies.get(from);
    return to === undefined ? widget : { ...widget, config: { ...(widget.config as Record<string, unknown>), reportId: to } };
  });
  return { ...config, widgets } as T;
}

/** The columns a copy takes from the content it is made from. */
function reportColumns(content: SnapshotContent, sourceId: number) {
  const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));
  return {
    name: content.name ?? `Report ${sourceId}`,
    kind: content.kind ?? null,
    title: content.title ?? null,
    description: content.description ?? null,
    sql_query: content.sqlQuery ?? null,
    python_code: content.pythonCode ?? null,
    spec: json(content.spec),
    meta: json(content.meta),
    preferences: json(content.preferences),
    period_comparisons: json(content.periodComparisons),
    fill_missing_rows: json(content.fillMissingRows),
  };
}

/** Who a copy is made for: a user of the account, or an embed user (a creator-mode session). */
type Maker = { userId: number } | { embedUserId: number };

async function insertCopy(
  trx: Executor,
  scope: WorkspaceScope,
  maker: Maker,
  folderId: number | null,
  sourceId: number,
  content: SnapshotContent,
  at: string,
): Promise<ReportRow> {
  return insertReport(trx, {
    tenant_id: scope.tenantId,
    deployment_id: scope.deploymentId,
    folder_id: folderId,
    public_id: newPublicId(),
    ...reportColumns(content, sourceId),
    // Placements stay with the report that was placed: a copy starts in no spreadsheet.
    placements: null,
    last_viewed_at: null,
    created_by: 'userId' in maker ? maker.userId : null,
    embed_owner_id: 'embedUserId' in maker ? maker.embedUserId : null,
    created_at: at,
    updated_at: at,
  });
}

/** A report copied into the copy's deployment: inserted, or written over the copy an earlier promotion made. */
export interface CopiedReport {
  sourceReportId: number;
  targetReportId: number;
  outcome: 'CREATED' | 'UPDATED';
}

/** Where the copies go, when not beside the source in its own deployment. */
export interface CopyInto {
  /** The copy's deployment, as the caller works in it. */
  target: WorkspaceContext;
  /** Source report id → the report an earlier copy made, overwritten (EDIT needed on it) instead of a new one. */
  existing: Map<number, number>;
  /** Null keeps an existing dashboard's `allowEmbed` (a new one starts off); false turns it off. */
  allowEmbed: boolean | null;
}

/** A report a workbook's dashboards show, as it would be copied: the report now, or its frozen snapshot once it is gone. */
export interface SourceReport {
  id: number;
  content: SnapshotContent;
}

/**
 * What a copy of the workbook `source` is made from: its draft, its published version, and the
 * reports either shows (VIEW on each needed, 403 otherwise: a copy must not reveal a report its
 * maker could not read). A report deleted since the publication is taken from its snapshot; one
 * neither stored nor frozen is left out (and stays referenced as it was).
 */
export async function sourceReportsOf(
  trx: Executor,
  context: WorkspaceContext,
  source: WorkbookRow,
): Promise<{ draft: DashboardConfigDraft | null; published: Dashboard | undefined; reports: SourceReport[] }> {
  const draft = normalizeDashboardConfig(parseJson(source.dashboard_draft)) as DashboardConfigDraft | null;
  const published = await findPublishedByWorkbook(trx, context.scope.tenantId, source.id);
  const ids = [...new Set([...reportIdsOf(draft), ...reportIdsOf(published?.config ?? null), ...(published?.reportSnapshots.map((s) => s.reportId) ?? [])])];
  const reports: SourceReport[] = [];
  for (const id of ids) {
    const item = await findItem(trx, context.scope, 'REPORT', id);
    let content: SnapshotContent | undefined;
    if (item) {
      await requireItemAccess(trx, context, item, 'VIEW', 'copy');
      content = snapshotContent(item.row as ReportRow);
    } else {
      const frozen = published?.reportSnapshots.find((s) => s.reportId === id);
      content = frozen && withoutIds(frozen);
    }
    if (content) reports.push({ id, content });
  }
  return { draft, published, reports };
}

/**
 * Gives `copy`, a fresh duplicate of the workbook `source`, copies of what its dashboards show
 * (reference 8.G.1): every report the draft or the published version shows is copied beside the
 * copy and owned by the caller (VIEW on each needed, 403 otherwise: a copy must not reveal a
 * report its maker could not read); the draft and the published version are re-pointed at the
 * copies; the published version becomes version 1 of a new dashboard (its own public id,
 * `allowEmbed` off, the source's frozen snapshots re-pointed). A report deleted since the
 * publication is copied from its snapshot; one neither stored nor frozen stays referenced as it
 * was. Only the current published version is copied, not the archived ones, and no sharing.
 * Runs in the duplicate's transaction, under the deployment's lock.
 */
export async function copyDashboards(trx: Executor, context: WorkspaceContext, source: WorkbookRow, copy: WorkbookRow, at: string): Promise<WorkbookRow> {
  return (await copyDashboardsInto(trx, context, source, copy, at, { target: context, existing: new Map(), allowEmbed: false })).workbook;
}

/**
 * The same copy into another deployment's workbook (a promotion): reports read in `context` (the
 * source's), written in `into.target`; a report with an entry in `into.existing` overwrites that
 * earlier copy, and the published version is published again on the copy's dashboard as its next
 * version. Answers the copy, the reports copied, and whether a published version was copied.
 */
export async function copyDashboardsInto(
  trx: Executor,
  context: WorkspaceContext,
  source: WorkbookRow,
  copy: WorkbookRow,
  at: string,
  into: CopyInto,
): Promise<{ workbook: WorkbookRow; reports: CopiedReport[]; published: boolean }> {
  const { draft, published, reports: sources } = await sourceReportsOf(trx, context, source);
  const copies = new Map<number, number>();
  const reports: CopiedReport[] = [];
  for (const { id, content } of sources) {
    const earlier = into.existing.get(id);
    const earlierItem = earlier === undefined ? undefined : await findItem(trx, into.target.scope, 'REPORT', earlier);
    if (earlierItem) {
      await requireItemAccess(trx, into.target, earlierItem, 'EDIT', 'update');
      await updateReport(trx, into.target.scope, earlierItem.row.id, { ...reportColumns(content, id), updated_at: at });
      copies.set(id, earlierItem.row.id);
      reports.push({ sourceReportId: id, targetReportId: earlierItem.row.id, outcome: 'UPDATED' });
    } else {
      const inserted = await insertCopy(trx, into.target.scope, { userId: into.target.caller.actor.userId }, copy.folder_id, id, content, at);
      copies.set(id, inserted.id);
      reports.push({ sourceReportId: id, targetReportId: inserted.id, outcome: 'CREATED' });
    }
  }
  if (draft !== null) {
    await setWorkbookDraft(trx, into.target.scope.tenantId, copy.id, JSON.stringify(repointed(draft, copies)));
  }
  if (published) {
    await writePublication(trx, copy, {
      config: repointed(published.config, copies),
      snapshots: published.reportSnapshots.map((s) => ({ reportId: copies.get(s.reportId) ?? s.reportId, content: withoutIds(s) })),
      title: published.title ?? null,
      description: published.description ?? null,
      allowEmbed: into.allowEmbed,
      userId: into.target.caller.actor.userId,
      at,
    });
  }
  return { workbook: await findWorkbook(trx, into.target.scope.tenantId, copy.id), reports, published: published !== undefined };
}

/**
 * Gives `copy`, a creator-mode session's copy of the shared workbook `source` (reference 8.G.1
 * `shared: true`), what the source's **published** dashboard shows, and nothing of its draft: a
 * report made from each of the version's report snapshots, at the root beside the copy and owned
 * by the embed user; the version re-pointed at them becomes version 1 of the copy's own dashboard
 * (new public id, `allowEmbed` off) and the copy's draft. The caller has checked that the source
 * is shared with the session and has a published dashboard.
 */
export async function copySharedPublication(
  trx: Executor,
  scope: WorkspaceScope,
  source: WorkbookRow,
  copy: WorkbookRow,
  embedUserId: number,
  at: string,
): Promise<WorkbookRow> {
  const published = await findPublishedByWorkbook(trx, scope.tenantId, source.id);
  if (!published) throw new Error(`Workbook ${source.id} has no published dashboard to copy`);
  const copies = new Map<number, number>();
  for (const snapshot of published.reportSnapshots) {
    if (copies.has(snapshot.reportId)) continue;
    const report = await insertCopy(trx, scope, { embedUserId }, copy.folder_id, snapshot.reportId, withoutIds(snapshot), at);
    copies.set(snapshot.reportId, report.id);
  }
  const config = repointed(published.config, copies);
  await setWorkbookDraft(trx, scope.tenantId, copy.id, JSON.stringify(config));
  await writePublication(trx, copy, {
    config,
    snapshots: published.reportSnapshots.map((s) => ({ reportId: copies.get(s.reportId) ?? s.reportId, content: withoutIds(s) })),
    title: published.title ?? null,
    description: published.description ?? null,
    allowEmbed: false,
    userId: null,
    at,
  });
  return findWorkbook(trx, scope.tenantId, copy.id);
}
