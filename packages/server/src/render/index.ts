import type { WorkerPool } from '../jobs/index.js';
import { DEFAULT_FONTS_DIR } from './fonts.js';
import { convert as convertTask, registerRenderTasks, RENDER_TASKS, type ConvertTask } from './render-tasks.js';
import { cellOf, headerHeight, pageLayout, pageSvg, type PagePiece, type PlacedWidget } from './page.js';
import type { Dashboard, DashboardControls, DashboardRef, DashboardWidget, RenderFormat, ReportData, Viewer } from './types.js';
import { widgetContent, type IsRefusal } from './widgets.js';

export type { DashboardControls, DashboardFilter, DashboardMemberSwitcher, DashboardTimeGrain, RenderFormat, ReportData, Viewer } from './types.js';

/**
 * Renders a published dashboard to PNG or PDF, for one viewer: the dashboard's current published
 * version, its widgets in their grid cells, each report's rows fetched from the deployment's
 * runtime as that viewer (their row-level security) with the given controls applied, charts
 * drawn as Vega-Lite → SVG, the page as one SVG, then PNG (resvg, WebAssembly) or PDF (pdfkit),
 * converted on the jobs service's worker pool when given one.
 * No browser: see docs/decisions/no-headless-browser.md for the measured reason.
 *
 * The renderer checks no access: its callers (exports, notifications) decide who may render
 * what, and as whom.
 *
 * @example
 * const { bytes, contentType } = await renderer.renderDashboard({ tenant, deploymentId: 1, workbookId: 7, viewer: { userId: 42 }, format: 'pdf', filters: [{ member: 'orders.status', operator: 'equals', value: ['completed'] }] });
 */
export interface RenderInput extends DashboardControls {
  tenant: { id: number; slug: string };
  deploymentId: number;
  /** Which dashboard: its workbook, its id or its public id (one of them). */
  workbookId?: number;
  dashboardId?: number;
  dashboardPublicId?: string;
  viewer: Viewer;
  format: RenderFormat;
  /** `print`: A4 pages split between widget rows (PDF only); default `screenshot`, one page of the dashboard's size. */
  layout?: RenderLayout;
}

export type RenderLayout = 'screenshot' | 'print';

export interface RenderedPage {
  title: string;
  /** The page as SVG (the PNG's and the PDF's source). */
  svg: string;
  width: number;
  height: number;
  /** Where a printed page may end without cutting a widget (SVG pixels). */
  breaks: number[];
  /** The page's parts and the bands they take: a printed page draws only its own. */
  pieces: PagePiece[];
  /** The rows of each widget that ran a report, in the order of the config's widgets. */
  data: Array<{ widgetId: string; reportId: number; rows: ReportData['rows'] }>;
}

export interface RenderResult extends RenderedPage {
  bytes: Buffer;
  contentType: 'image/png' | 'application/pdf';
}

export interface RendererDeps {
  /** The current published version of the dashboard in the deployment, or undefined. */
  findPublished(tenantId: number, deploymentId: number, ref: DashboardRef): Promise<Dashboard | undefined>;
  /** A query on the deployment's production runtime as the viewer (the internal report-run call). */
  run(tenant: { id: number; slug: string }, deploymentId: number, viewer: Viewer, request: { sql: string } | { query: unknown }): Promise<ReportData>;
  /** Errors of `run` that are the runtime refusing the query for this viewer, shown in their widget. */
  isRefusal: IsRefusal;
  fontsDir?: string;
  /** The jobs service's worker pool, where pages are converted to PNG or PDF; absent: on this thread. */
  pool?: WorkerPool;
}

/** Raised when the dashboard has no published version in the deployment. */
export class DashboardNotPublished extends Error {
  constructor(what: string) {
    super(`${what} has no published dashboard in this deployment.`);
    this.name = 'DashboardNotPublished';
  }
}

/** At most this many report queries of one render run at once. */
const QUERY_CONCURRENCY = 4;

function refOf(input: RenderInput): DashboardRef {
  if (input.dashboardId !== undefined) return { dashboardId: input.dashboardId };
  if (input.dashboardPublicId !== undefined) return { publicId: input.dashboardPublicId };
  if (input.workbookId !== undefined) return { workbookId: input.workbookId };
  throw new TypeError('renderDashboard needs a workbookId, dashboardId or dashboardPublicId');
}

async function mapLimited<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export function createRenderer(deps: RendererDeps) {
  const fontsDir = deps.fontsDir ?? DEFAULT_FONTS_DIR;
  if (deps.pool) registerRenderTasks(deps.pool);

  /** The dashboard's page as SVG, with the data behind it: the stages before PNG or PDF. */
  async function renderPage(input: Omit<RenderInput, 'format'>): Promise<RenderedPage> {
    const ref = refOf(input as RenderInput);
    const dashboard = await deps.findPublished(input.tenant.id, input.deploymentId, ref);
    if (!dashboard)
      throw new DashboardNotPublished(
        'workbookId' in ref ? `Workbook ${ref.workbookId}` : 'dashboardId' in ref ? `Dashboard ${ref.dashboardId}` : `Dashboard ${ref.publicId}`,
      );
    const config = dashboard.config;
    const title = dashboard.title ?? config.title ?? 'Dashboard';
    const description = dashboard.description ?? config.description ?? null;
    const layout = pageLayout(config.layout);
    const top = headerHeight(description);
    const widgets = ((config.widgets ?? []) as DashboardWidget[]).filter((w) => typeof w.position === 'object' && w.position !== null);
    const controls: DashboardControls = {
      filters: input.filters ?? null,
      timeGrains: input.timeGrains ?? null,
      memberSwitchers: input.memberSwitchers ?? null,
    };
    const run = (request: { sql: string } | { query: unknown }) => deps.run(input.tenant, input.deploymentId, input.viewer, request);
    const results = await mapLimited(widgets, QUERY_CONCURRENCY, (w) =>
      widgetContent(w, cellOf(layout, top, w.position), dashboard.reportSnapshots, controls, run, deps.isRefusal),
    );
    const placed: PlacedWidget[] = widgets.map((w, i) => ({ id: w.id, position: w.position, content: results[i]!.content }));
    const page = pageSvg(title, description, layout, placed);
    const data = widgets.flatMap((w, i) => {
      const d = results[i]!.data;
      return d ? [{ widgetId: w.id, reportId: d.reportId, rows: d.rows }] : [];
    });
    return { title, ...page, data };
  }

  /** Converts a page to the format asked for. */
  async function convert(page: RenderedPage, format: RenderFormat, layout: RenderLayout = 'screenshot'): Promise<RenderResult> {
    const task: ConvertTask = {
      svg: page.svg,
      width: page.width,
      height: page.height,
      title: page.title,
      format,
      print: layout === 'print' ? { breaks: page.breaks, pieces: page.pieces } : null,
      fontsDir,
    };
    const bytes = deps.pool ? Buffer.from(await deps.pool.run<ConvertTask, Uint8Array>(RENDER_TASKS, 'convert', task)) : Buffer.from(await convertTask(task));
    return { ...page, bytes, contentType: format === 'png' ? 'image/png' : 'application/pdf' };
  }

  return {
    renderPage,
    convert,
    /** The dashboard as PNG or PDF for one viewer; see RenderInput. */
    async renderDashboard(input: RenderInput): Promise<RenderResult> {
      return convert(await renderPage(input), input.format, input.layout);
    },
  };
}
export type Renderer = ReturnType<typeof createRenderer>;
