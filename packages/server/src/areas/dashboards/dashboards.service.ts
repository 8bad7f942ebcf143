import { randomUUID } from 'node:crypto';
import { randomId } from '../../shared/random-id.js';
import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { Access, DashboardRow, Executor, ReportRow, WorkbookRow } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { afterId, encodeCursor, pageRequest } from '../../shared/pagination.js';
import { ApiError } from '../../shared/problems.js';
import type { PageInfo } from '../../shared/schemas.js';
import { timestamp, type Clock } from '../../time.js';
import { normalizeDashboardConfig, type Dashboard, type DashboardConfig, type DashboardConfigDraft } from '../workspace/index.js';
import { parseJson } from '../workspace/index.js';
import { findItem, type StoredItem } from '../workspace/index.js';
import { itemNotFound, openWorkspace, requireItemAccess, type WorkspaceContext } from '../workspace/index.js';
import type { AiWidgetThreadInput, PublishInput, SaveDraftInput, VersionsInput } from './dashboards.schemas.js';
import {
  archivePublished,
  findDashboardByPublicId,
  findDashboardByWorkbook,
  insertDashboard,
  insertSnapshots,
  insertVersion,
  findPublishedVersion,
  lastVersionNumber,
  setAiWidgetThreads,
  listVersions,
  saveWorkbookDraft,
  setWorkbookPublication,
  snapshotsOf,
  updateAllowEmbed,
} from './dashboards.store.js';
import { aiWidgetThreadsOf, setAllowEmbed, snapshotContent, syncWorkbookCopy, toDashboard, type SnapshotContent } from './published.js';

type WorkbookItem = StoredItem & { type: 'WORKBOOK' };
type Widget = Record<string, unknown>;

const VERB: Record<Access, string> = { VIEW: 'view', EDIT: 'update', MANAGE: 'manage' };

function draftOf(workbook: WorkbookRow): DashboardConfigDraft | null {
  return normalizeDashboardConfig(parseJson(workbook.dashboard_draft)) as DashboardConfigDraft | null;
}

/** 128 random bits, base64url: a public id nobody can guess from another. */
export function newPublicId(): string {
  return randomId(16);
}

function widgetsOf(config: DashboardConfig | DashboardConfigDraft | null): Widget[] {
  const widgets = (config as { widgets?: unknown } | null)?.widgets;
  return Array.isArray(widgets) ? (widgets as Widget[]) : [];
}

/** The widget of this id among `widgets` or nested in a container's `config.widgets`. */
export function findWidget(widgets: Widget[], id: string): Widget | undefined {
  for (const w of widgets) {
    if (w.id === id) return w;
    const nested = (w.config as { widgets?: unknown } | null | undefined)?.widgets;
    const inner = Array.isArray(nested) ? findWidget(nested as Widget[], id) : undefined;
    if (inner) return inner;
  }
  return undefined;
}

function describeWidget(widget: Widget, index: number): string {
  return typeof widget.id === 'string' ? `"${widget.id}"` : `at index ${index}`;
}

function invalid(detail: string, errors: Array<{ pointer: string; message: string }>): ApiError {
  return new ApiError('VALIDATION_FAILED', detail, { errors });
}

/** 400 when two widgets share an id: widgets are addressed by it (AI threads, embeds). */
function refuseDuplicateIds(widgets: Widget[], pointer: string): void {
  const seen = new Set<string>();
  for (const [i, widget] of widgets.entries()) {
    if (typeof widget.id !== 'string') continue;
    if (seen.has(widget.id))
      throw invalid(`Widget id "${widget.id}" is used more than once; widget ids are unique within a dashboard.`, [
        { pointer: `${pointer}/widgets/${i}/id`, message: 'is a duplicate' },
      ]);
    seen.add(widget.id);
  }
}

/**
 * A draft as it is stored: legacy widget types converted, and an id for every top-level widget
 * that came without one (reference 8.G.3). Widgets nested in a container's config are the
 * client's to identify.
 */
function draftWithIds(input: SaveDraftInput['dashboardDraft'], pointer = '/body/dashboardDraft'): DashboardConfigDraft | null {
  const config = normalizeDashboardConfig(input) as DashboardConfigDraft | null;
  if (config === null) return null;
  const widgets = widgetsOf(config);
  refuseDuplicateIds(widgets, pointer);
  if (widgets.every((w) => typeof w.id === 'string')) return config;
  return { ...config, widgets: widgets.map((w) => (typeof w.id === 'string' ? w : { id: randomUUID(), ...w })) } as DashboardConfigDraft;
}

/**
 * What a publication needs of its config (reference 8.G.2): every widget has an id, ids are
 * unique, and no `FIELD` widget is left (a 400 naming them all).
 */
function publishable(config: DashboardConfigDraft, fromBody: boolean): DashboardConfig {
  const pointer = fromBody ? '/body/config' : '/body';
  const widgets = widgetsOf(config);
  const without = widgets.map((w, i) => ({ w, i })).filter(({ w }) => typeof w.id !== 'string');
  if (without.length > 0) {
    const where = fromBody ? 'the config' : 'the saved draft';
    throw invalid(
      `Every widget of a published dashboard needs an \`id\` of at most 128 characters; in ${where}, the widgets at index ${without.map(({ i }) => i).join(', ')} have none.`,
      without.map(({ i }) => ({ pointer: fromBody ? `${pointer}/widgets/${i}/id` : pointer, message: 'is required to publish' })),
    );
  }
  refuseDuplicateIds(widgets, pointer);
  const fields = widgets.map((w, i) => ({ w, i })).filter(({ w }) => w.type === 'FIELD');
  if (fields.length > 0) {
    const names = fields.map(({ w, i }) => describeWidget(w, i)).join(', ');
    throw invalid(
      `The dashboard still holds FIELD widgets (${names}); a published dashboard cannot show FIELD widgets: change or remove them, then publish.`,
      fields.map(({ i }) => ({ pointer: fromBody ? `${pointer}/widgets/${i}/type` : pointer, message: 'FIELD widgets cannot be published' })),
    );
  }
  return config as DashboardConfig;
}

/** The report a widget shows: `config.reportId`, when it is a positive integer. */
export function reportIdOf(widget: Widget): number | undefined {
  const config = widget.config;
  if (typeof config !== 'object' || config === null) return undefined;
  const id = (config as { reportId?: unknown }).reportId;
  return typeof id === 'number' && Number.isSafeInteger(id) && id > 0 ? id : undefined;
}

/** The reports a config shows, each once, in the order their first widget comes. */
export function reportIdsOf(config: DashboardConfig | DashboardConfigDraft | null): number[] {
  const ids: number[] = [];
  for (const widget of widgetsOf(config)) {
    const id = reportIdOf(widget);
    if (id !== undefined && !ids.includes(id)) ids.push(id);
  }
  return ids;
}

async function authorizedWorkbook(trx: Executor, context: WorkspaceContext, workbookId: number, need: Access): Promise<WorkbookRow> {
  const item = (await findItem(trx, context.scope, 'WORKBOOK', workbookId)) as WorkbookItem | undefined;
  if (!item) throw itemNotFound(context, 'WORKBOOK', workbookId);
  await requireItemAccess(trx, context, item, need, VERB[need]);
  return item.row;
}

/**
 * The reports a publication freezes: each must be in the deployment (400 naming the widget) and
 * readable by the publisher (403): publishing copies them where the dashboard's viewers see them.
 */
async function reportsShown(trx: Executor, context: WorkspaceContext, config: DashboardConfig): Promise<ReportRow[]> {
  const rows: ReportRow[] = [];
  for (const reportId of reportIdsOf(config)) {
    const item = await findItem(trx, context.scope, 'REPORT', reportId);
    if (!item) {
      const widget = widgetsOf(config).find((w) => reportIdOf(w) === reportId)!;
      throw invalid(`Widget "${String(widget.id)}" shows report ${reportId}, which does not exist in deployment ${context.scope.deploymentId}.`, [
        { pointer: '/body', message: `report ${reportId} does not exist` },
      ]);
    }
    await requireItemAccess(trx, context, item, 'VIEW', 'publish a dashboard showing');
    rows.push(item.row as ReportRow);
  }
  return rows;
}

/** A report as a publication freezes it. */
export interface FrozenReport {
  reportId: number;
  content: SnapshotContent;
}

/**
 * Writes a new published version of the workbook's dashboard (creating the dashboard on the first
 * publication) with the frozen `snapshots`, archives the version before it, and mirrors the
 * result in the workbook's `dashboardPublished` and `publishedDashboard`. The caller holds the
 * deployment's lock and has checked access. Shared by publish and duplicate.
 */
export async function writePublication(
  trx: Executor,
  workbook: WorkbookRow,
  options: {
    config: DashboardConfig;
    snapshots: FrozenReport[];
    title: string | null;
    description: string | null;
    allowEmbed: boolean | null;
    /** Null: made by nobody's user (a creator-mode embed session's copy). */
    userId: number | null;
    at: string;
  },
): Promise<Dashboard> {
  const tenantId = workbook.tenant_id;
  const { at } = options;
  let dashboard: DashboardRow | undefined = await findDashboardByWorkbook(trx, tenantId, workbook.id);
  if (!dashboard) {
    dashboard = await insertDashboard(trx, {
      tenant_id: tenantId,
      deployment_id: workbook.deployment_id,
      workbook_id: workbook.id,
      public_id: newPublicId(),
      allow_embed: options.allowEmbed === true ? 1 : 0,
      created_by: options.userId,
      created_at: at,
      updated_at: at,
    });
  } else if (options.allowEmbed !== null && (dashboard.allow_embed === 1) !== options.allowEmbed) {
    dashboard = await updateAllowEmbed(trx, tenantId, dashboard.id, options.allowEmbed, at);
  }
  const versionNumber = (await lastVersionNumber(trx, tenantId, dashboard.id)) + 1;
  await archivePublished(trx, tenantId, dashboard.id);
  const version = await insertVersion(trx, {
    tenant_id: tenantId,
    dashboard_id: dashboard.id,
    version_number: versionNumber,
    status: 'published',
    title: options.title,
    description: options.description,
    config: JSON.stringify(options.config),
    created_by: options.userId,
    created_at: at,
  });
  const snapshots = await insertSnapshots(
    trx,
    options.snapshots.map((s, position) => ({
      tenant_id: tenantId,
      version_id: version.id,
      position,
      report_id: s.reportId,
      content: JSON.stringify(s.content),
    })),
  );
  const published = toDashboard(dashboard, version, snapshots);
  await setWorkbookPublication(trx, tenantId, workbook.id, JSON.stringify(options.config), JSON.stringify(published), at);
  return published;
}

/** Reference 8.G.4's write: the AI widget's thread and checksum on the published dashboard (and the workbook's copy of it). */
async function storeAiWidgetThreadIn(
  store: Store,
  tenantId: number,
  workbookId: number,
  widgetId: string,
  thread: { threadId: string; checksum: string | null },
): Promise<Dashboard> {
  const found = await findDashboardByWorkbook(store.db, tenantId, workbookId);
  if (!found) throw new ApiError('DASHBOARD_NOT_FOUND', `Workbook ${workbookId} has no published dashboard.`);
  return serialized(store, lockKey.dashboard(found.id), async (trx) => {
    const dashboard = (await findDashboardByWorkbook(trx, tenantId, workbookId)) ?? found;
    const version = await findPublishedVersion(trx, tenantId, dashboard.id);
    if (!version) throw new ApiError('DASHBOARD_NOT_FOUND', `Workbook ${workbookId} has no published dashboard.`);
    const config = normalizeDashboardConfig(JSON.parse(version.config)) as DashboardConfig | null;
    if (!findWidget(widgetsOf(config), widgetId))
      throw new ApiError('WIDGET_NOT_FOUND', `The published dashboard of workbook ${workbookId} has no widget ${JSON.stringify(widgetId)}.`);
    const threads = { ...aiWidgetThreadsOf(dashboard), [widgetId]: thread };
    const updated = await setAiWidgetThreads(trx, tenantId, dashboard.id, JSON.stringify(threads));
    await syncWorkbookCopy(trx, tenantId, workbookId, { aiWidgetThreads: threads });
    const snapshots = await snapshotsOf(trx, tenantId, [version.id]);
    return toDashboard(updated, version, snapshots.get(version.id) ?? []);
  });
}

/** Dashboards of workbooks: the draft, publications and their versions, and the embedding switch. */
export function dashboardsService(store: Store, now: Clock) {
  const { db } = store;

  const storeAiWidgetThread = (tenantId: number, workbookId: number, widgetId: string, thread: { threadId: string; checksum: string | null }) =>
    storeAiWidgetThreadIn(store, tenantId, workbookId, widgetId, thread);

  /** Writes the draft `draftFor` makes of the workbook (EDIT on it checked first), unless it is the stored one. */
  async function writeDraft(
    caller: Caller,
    deploymentId: number,
    workbookId: number,
    draftFor: (workbook: WorkbookRow) => DashboardConfigDraft | null,
  ): Promise<WorkbookRow> {
    const context = await openWorkspace(db, caller, deploymentId);
    return serialized(store, lockKey.deployment(deploymentId), async (trx) => {
      const workbook = await authorizedWorkbook(trx, context, workbookId, 'EDIT');
      const draft = draftFor(workbook);
      const stored = draft === null ? null : JSON.stringify(draft);
      if (stored === workbook.dashboard_draft) return workbook;
      return saveWorkbookDraft(trx, context.scope.tenantId, workbookId, stored, timestamp(now));
    });
  }
  return {
    /** Saves the workbook's draft (EDIT on the workbook); answers the draft as stored and the published config. */
    async saveDraft(
      caller: Caller,
      deploymentId: number,
      workbookId: number,
      input: SaveDraftInput,
    ): Promise<{ dashboardDraft: DashboardConfigDraft | null; dashboardPublished: DashboardConfig | null }> {
      const draft = draftWithIds(input.dashboardDraft);
      const row = await writeDraft(caller, deploymentId, workbookId, () => draft);
      return { dashboardDraft: draftOf(row), dashboardPublished: normalizeDashboardConfig(parseJson(row.dashboard_published)) };
    },

    /** The workbook's draft as stored (VIEW on the workbook); null when it has none. */
    async readDraft(caller: Caller, deploymentId: number, workbookId: number): Promise<DashboardConfigDraft | null> {
      const context = await openWorkspace(db, caller, deploymentId);
      return draftOf(await authorizedWorkbook(db, context, workbookId, 'VIEW'));
    },

    /**
     * Saves the draft `edit` makes of the stored one, under the draft save's lock and rules (EDIT
     * on the workbook first; `edit` runs only for a caller who has it, and may refuse by throwing).
     * `pointer` prefixes the pointers of the save's own refusals (duplicate widget ids).
     */
    async editDraft(
      caller: Caller,
      deploymentId: number,
      workbookId: number,
      edit: (current: DashboardConfigDraft | null) => SaveDraftInput['dashboardDraft'],
      pointer: string,
    ): Promise<DashboardConfigDraft | null> {
      return draftOf(await writeDraft(caller, deploymentId, workbookId, (workbook) => draftWithIds(edit(draftOf(workbook)), pointer)));
    },

    /**
     * Publishes `config`, or the saved draft when it is left out, as the next version of the
     * workbook's dashboard (EDIT on the workbook, VIEW on every report it shows).
     */
    async publish(caller: Caller, deploymentId: number, workbookId: number, input: PublishInput): Promise<Dashboard> {
      const context = await openWorkspace(db, caller, deploymentId);
      if (input.workbookId !== undefined && input.workbookId !== workbookId) {
        throw invalid(`The body names workbook ${input.workbookId} but the path workbook ${workbookId}; leave \`workbookId\` out or send the same id.`, [
          { pointer: '/body/workbookId', message: 'differs from the path' },
        ]);
      }
      return serialized(store, lockKey.deployment(deploymentId), async (trx) => {
        const workbook = await authorizedWorkbook(trx, context, workbookId, 'EDIT');
        const fromBody = input.config !== undefined && input.config !== null;
        const source = fromBody
          ? (normalizeDashboardConfig(input.config) as DashboardConfigDraft)
          : (normalizeDashboardConfig(parseJson(workbook.dashboard_draft)) as DashboardConfigDraft | null);
        if (source === null) {
          throw invalid(
            `Workbook ${workbookId} has no saved draft to publish; send a \`config\`, or save a draft with PUT …/workbooks/${workbookId}/dashboard first.`,
            [{ pointer: '/body/config', message: 'is required when there is no saved draft' }],
          );
        }
        const config = publishable(source, fromBody);
        if (input.dashboardId !== undefined && input.dashboardId !== null) {
          const existing = await findDashboardByWorkbook(trx, context.scope.tenantId, workbookId);
          if (existing?.id !== input.dashboardId) {
            throw invalid(
              existing
                ? `The dashboard of workbook ${workbookId} is ${existing.id}, not ${input.dashboardId}.`
                : `Workbook ${workbookId} has no dashboard yet; leave \`dashboardId\` out to publish its first version.`,
              [{ pointer: '/body/dashboardId', message: 'is not this workbook’s dashboard' }],
            );
          }
        }
        const reports = await reportsShown(trx, context, config);
        return writePublication(trx, workbook, {
          config,
          snapshots: reports.map((report) => ({ reportId: report.id, content: snapshotContent(report) })),
          title: input.title ?? config.title ?? null,
          description: input.description ?? config.description ?? null,
          allowEmbed: input.allowEmbed ?? null,
          userId: caller.actor.userId,
          at: timestamp(now),
        });
      });
    },

    /**
     * Reference 8.G.4: stores the chat thread of an AI widget on the published dashboard. VIEW
     * suffices: viewers regenerate AI widgets too, and requiring EDIT once sent read-only viewers
     * edit-permission errors. Only the thread id and the checksum are kept, never the text.
     */
    async setAiWidgetThread(caller: Caller, deploymentId: number, workbookId: number, input: AiWidgetThreadInput): Promise<Dashboard> {
      const context = await openWorkspace(db, caller, deploymentId);
      const tenantId = context.scope.tenantId;
      await authorizedWorkbook(db, context, workbookId, 'VIEW');
      return storeAiWidgetThread(tenantId, workbookId, input.widgetId, { threadId: input.threadId, checksum: input.checksum ?? null });
    },

    /**
     * 8.G.4's write without an access check, for a summary the caller was already allowed to see
     * (agents' AI widget summaries, which embed sessions regenerate too).
     */
    storeAiWidgetThread: (tenantId: number, workbookId: number, widgetId: string, thread: { threadId: string; checksum: string | null }) =>
      storeAiWidgetThread(tenantId, workbookId, widgetId, thread),

    /** The workbook's dashboard versions, newest first (VIEW on the workbook); empty before the first publication. */
    async versions(caller: Caller, deploymentId: number, workbookId: number, query: VersionsInput): Promise<{ items: Dashboard[]; pageInfo: PageInfo }> {
      const context = await openWorkspace(db, caller, deploymentId);
      const page = pageRequest(query);
      const before = afterId(page);
      await authorizedWorkbook(db, context, workbookId, 'VIEW');
      const dashboard = await findDashboardByWorkbook(db, context.scope.tenantId, workbookId);
      const rows = dashboard ? await listVersions(db, context.scope.tenantId, dashboard.id, page.first + 1, before) : [];
      const shown = rows.slice(0, page.first);
      const snapshots = await snapshotsOf(
        db,
        context.scope.tenantId,
        shown.map((v) => v.id),
      );
      const items = shown.map((v) => toDashboard(dashboard!, v, snapshots.get(v.id) ?? []));
      const first = shown[0];
      const last = shown.at(-1);
      return {
        items,
        pageInfo: {
          startCursor: first ? encodeCursor([first.version_number]) : null,
          endCursor: last ? encodeCursor([last.version_number]) : null,
          hasNextPage: rows.length > page.first,
          hasPreviousPage: page.after !== undefined,
        },
      };
    },

    /**
     * Sets the signed-embedding switch of the dashboard with this public id (reference 3.6):
     * admins only; 404 when the caller's tenant has no such dashboard; a key scoped to other
     * deployments than the dashboard's gets 403, as on the deployment's own routes.
     */
    async setAllowEmbedByPublicId(caller: Caller, publicId: string, allowEmbed: boolean): Promise<{ publicId: string; allowEmbed: boolean }> {
      caller.access.requireAdmin('switch signed embedding of a dashboard');
      const tenantId = caller.actor.tenantId;
      const found = await findDashboardByPublicId(db, tenantId, publicId);
      if (!found) throw new ApiError('DASHBOARD_NOT_FOUND', `No dashboard has public id "${publicId}".`);
      const scope = caller.actor.scope;
      if (scope !== null && !scope.includes(found.deployment_id)) {
        throw new ApiError(
          'KEY_SCOPE_FORBIDDEN',
          `This API key is scoped to deployments ${scope.join(', ') || '(none)'} and cannot act on deployment ${found.deployment_id}, where this dashboard is.`,
        );
      }
      const info = await serialized(store, lockKey.deployment(found.deployment_id), (trx) =>
        setAllowEmbed(trx, tenantId, found.workbook_id, allowEmbed, timestamp(now)),
      );
      // Deleted with its workbook between the read and the lock.
      if (!info) throw new ApiError('DASHBOARD_NOT_FOUND', `No dashboard has public id "${publicId}".`);
      return { publicId: info.publicId, allowEmbed: info.allowEmbed };
    },
  };
}
export type DashboardsService = ReturnType<typeof dashboardsService>;
