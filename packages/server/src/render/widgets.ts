import { ChartRefused, chartSvg, columnsOf, missingValuesOf } from './charts.js';
import { snapshotQuery } from './controls.js';
import type { Cell, WidgetContent } from './page.js';
import type { DashboardControls, DashboardWidget, ReportData, ReportSnapshot } from './types.js';

export { snapshotQuery } from './controls.js';

/**
 * What each widget of a published dashboard shows. A widget with a report (`config.reportId`)
 * runs that report's frozen snapshot: its semantic query (`spec.query`) with the dashboard's
 * controls applied, or its `sqlQuery` as written. A query the runtime refuses for this viewer
 * (a member their policies hide, a broken query) is shown in the widget, so the rest of the
 * dashboard still renders; an unreachable runtime fails the whole render (the caller retries).
 */

export type RunQuery = (request: { sql: string } | { query: unknown }) => Promise<ReportData>;

/** A refusal that belongs in the widget rather than failing the render: the runtime's 400 and 403 answers. */
export type IsRefusal = (error: unknown) => boolean;

type Config = Record<string, unknown>;

const configOf = (widget: DashboardWidget): Config => (typeof widget.config === 'object' && widget.config !== null ? (widget.config as Config) : {});
const str = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value : null);

export function reportIdOf(widget: DashboardWidget): number | undefined {
  const id = configOf(widget).reportId;
  return typeof id === 'number' && Number.isSafeInteger(id) && id > 0 ? id : undefined;
}

export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'number') return value.toLocaleString('en-US', { maximumFractionDigits: 2 });
  if (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value) && value.length < 16)
    return Number(value).toLocaleString('en-US', { maximumFractionDigits: 2 });
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function table(title: string | null, data: ReportData): WidgetContent {
  const columns = columnsOf(data);
  return { kind: 'table', title, columns: columns.map((c) => c.title), rows: data.rows.map((row) => columns.map((c) => formatValue(row[c.name]))) };
}

/** Plain text of a TEXT widget: markdown's markers and any HTML tags dropped. */
function plainText(config: Config): string {
  const raw = str(config.text) ?? str(config.content) ?? str(config.markdown) ?? str(config.html) ?? '';
  return raw
    .replace(/<[^>]*>/g, ' ')
    .replace(/^#{1,6}\s+/gm, '')
    .replace(/(\*\*|__|\*|_|`)/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
}

function describeControls(config: Config, kind: 'FILTER' | 'TIME_GRAIN', controls: DashboardControls): string {
  const member = str(config.member) ?? str(config.dimension);
  if (kind === 'TIME_GRAIN') {
    const grain = (controls.timeGrains ?? []).find((g) => member === null || g.member === member);
    return grain ? `${grain.member} by ${grain.grain}` : member ? `${member}: as saved` : 'As saved';
  }
  const applied = (controls.filters ?? []).filter((f) => member === null || f.member === member);
  if (applied.length === 0) return member ? `${member}: all` : 'No filter applied';
  return applied
    .map(
      (f) =>
        `${f.member} ${(f.operator ?? 'equals').replace(/_/g, ' ')}${f.value === undefined || f.value === null ? '' : ` ${Array.isArray(f.value) ? f.value.map(formatValue).join(', ') : formatValue(f.value)}`}`,
    )
    .join('; ');
}

export interface WidgetResult {
  content: WidgetContent;
  /** The report's rows, for widgets that ran one. */
  data?: { reportId: number; rows: ReportData['rows'] };
}

/** One widget's content in a cell of `cell`'s size. */
export async function widgetContent(
  widget: DashboardWidget,
  cell: Cell,
  snapshots: ReportSnapshot[],
  controls: DashboardControls,
  run: RunQuery,
  isRefusal: IsRefusal,
): Promise<WidgetResult> {
  const config = configOf(widget);
  const reportId = reportIdOf(widget);
  if (reportId !== undefined) {
    const snapshot = snapshots.find((s) => s.reportId === reportId);
    const title = str(config.title) ?? snapshot?.title ?? snapshot?.name ?? null;
    if (!snapshot) return { content: { kind: 'note', title, text: `Report ${reportId} is not part of this published version.` } };
    const request = snapshotQuery(snapshot, controls);
    if (!request) return { content: { kind: 'note', title, text: 'This report has no query to run.' } };
    let data: ReportData;
    try {
      data = await run(request);
    } catch (error) {
      if (isRefusal(error)) return { content: { kind: 'note', title, text: `Not shown: ${(error as Error).message}` } };
      throw error;
    }
    const result = { reportId, rows: data.rows };
    if (data.rows.length === 0) return { content: { kind: 'note', title, text: 'No data.' }, data: result };
    if (snapshot.kind === 'table') return { content: table(title, data), data: result };
    if (snapshot.kind === 'kpi') {
      const measure = columnsOf(data).find((c) => c.kind === 'measure') ?? columnsOf(data)[0]!;
      return { content: { kind: 'kpi', title, value: formatValue(data.rows[0]![measure.name]), label: measure.title }, data: result };
    }
    let chart;
    try {
      chart = await chartSvg(data, snapshot.spec, cell.width - 24, cell.height - 24 - (title ? 24 : 0), missingValuesOf(config));
    } catch (error) {
      // A refused spec is the report author's to fix; the rest of the dashboard still renders.
      if (error instanceof ChartRefused) return { content: { kind: 'note', title, text: `Chart not drawn: ${error.message}` }, data: result };
      throw error;
    }
    return { content: chart ? { kind: 'chart', title, svg: chart.svg } : table(title, data), data: result };
  }
  switch (widget.type) {
    case 'TEXT':
      return { content: { kind: 'text', text: plainText(config) } };
    case 'DIVIDER':
      return { content: { kind: 'divider' } };
    case 'SPACER':
      return { content: { kind: 'empty' } };
    case 'FILTER':
    case 'TIME_GRAIN':
      return {
        content: {
          kind: 'note',
          title: str(config.title) ?? str(config.label) ?? (widget.type === 'FILTER' ? 'Filter' : 'Time grain'),
          text: describeControls(config, widget.type, controls),
        },
      };
    default:
      // Containers, AI widgets and parents: their frame and title; what they hold is interactive.
      return { content: { kind: 'note', title: str(config.title) ?? str(config.label), text: '' } };
  }
}
