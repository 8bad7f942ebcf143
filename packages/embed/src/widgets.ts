import { chartRows, chartSpec, ChartRefused, columnsOf, missingValuesOf, ROWS_DATA_NAME, type Column } from '../../server/src/render/chart-spec.js';
import { snapshotQuery, type DashboardControls } from '../../server/src/render/controls.js';
import { CallFailed, compileChart, query, type QueryResult } from './api.js';
import { el, uid } from './dom.js';
import type { Formats } from './format.js';
import { markdownHtml, openLinksOutside } from './markdown.js';
import { SessionEnded, type EmbedSession } from './session.js';

/**
 * One widget of the dashboard in its cell: a report's chart, KPI or table (queried through the
 * data API as the session's viewer, with the dashboard's controls applied as the server's renders
 * apply them), a text, a filter or time-grain control, a spacer or a divider. Each report widget
 * shows loading, empty and error states of its own.
 */

export interface Widget {
  id: string;
  type: string;
  position: { x: number; y: number; w: number; h: number };
  config?: Record<string, unknown> | null;
}

export interface Snapshot {
  reportId: number;
  name?: string | null;
  title?: string | null;
  kind?: string | null;
  sqlQuery?: string | null;
  spec?: unknown;
}

export interface PageContext {
  session: EmbedSession;
  formats: Formats;
  snapshots: Snapshot[];
  controls: DashboardControls;
  /** Column headers and chart titles: titles, or member names (`showMemberNames`). */
  labels: 'titles' | 'names';
  rowHeight: number;
  font: string;
  /** A control changed: re-query the report widgets. */
  onControls(): void;
}

const str = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value : null);
const configOf = (w: Widget) => (typeof w.config === 'object' && w.config !== null ? w.config : {});

export function reportIdOf(widget: Widget): number | undefined {
  const id = configOf(widget).reportId;
  return typeof id === 'number' && Number.isSafeInteger(id) && id > 0 ? id : undefined;
}

/** A mounted report widget: re-run with the current controls. */
export interface ReportWidget {
  refresh(): Promise<void>;
}

function header(title: string | null): HTMLElement | null {
  return title ? el('h2', { className: 'widget-title', text: title }) : null;
}

function note(body: HTMLElement, text: string, kind: 'empty' | 'error' | 'loading') {
  body.replaceChildren(el('p', { className: `state state-${kind}`, text, attrs: kind === 'error' ? { role: 'alert' } : {} }));
  body.dataset.state = kind;
}

function tableOf(data: QueryResult, columns: Column[], context: PageContext, caption: string | null, hidden = false): HTMLTableElement {
  const label = (c: Column) => (context.labels === 'names' ? c.name : c.title);
  return el(
    'table',
    { className: hidden ? 'data-table visually-hidden' : 'data-table' },
    // The widget's title shows above a visible table: its caption is for screen readers only.
    caption ? el('caption', { text: caption, ...(hidden ? {} : { className: 'visually-hidden' }) }) : null,
    el('thead', {}, el('tr', {}, ...columns.map((c) => el('th', { text: label(c), attrs: { scope: 'col' } })))),
    el(
      'tbody',
      {},
      ...data.rows.map((row) =>
        el(
          'tr',
          {},
          ...columns.map((c) => el('td', { text: context.formats.value(row[c.name], c.kind), ...(c.kind === 'measure' ? { className: 'number' } : {}) })),
        ),
      ),
    ),
  );
}

let chartModule: Promise<typeof import('./chart.js')> | undefined;
/** The chart chunk (Vega; the server compiles Vega-Lite), loaded once with the first chart. */
const charts = () => (chartModule ??= import('./chart.js'));

/** Starts loading the chart chunk while the first queries run, when a widget may draw a chart. */
export function preloadCharts(snapshots: Snapshot[]): void {
  if (snapshots.some((s) => s.kind !== 'kpi' && s.kind !== 'table')) void charts().catch(() => undefined);
}

/** A widget with a report: its chart, KPI or table, re-queried when the controls change. */
export function reportWidget(cell: HTMLElement, widget: Widget, context: PageContext): ReportWidget | null {
  const reportId = reportIdOf(widget);
  if (reportId === undefined) return null;
  const snapshot = context.snapshots.find((s) => s.reportId === reportId);
  const title = str(configOf(widget).title) ?? snapshot?.title ?? snapshot?.name ?? null;
  const body = el('div', { className: 'widget-body' });
  cell.append(...[header(title), body].filter((n): n is HTMLElement => n !== null));
  let finalize: (() => void) | undefined;
  let run = 0;

  async function refresh(): Promise<void> {
    const mine = ++run;
    if (!snapshot) return note(body, `Report ${reportId} is not part of this published version.`, 'error');
    const request = snapshotQuery(snapshot, context.controls);
    if (!request) return note(body, 'This report has no query to run.', 'empty');
    // Times are grouped and answered in the viewer's zone, unless the report names its own.
    if ('query' in request && request.query.timezone === undefined) request.query.timezone = context.formats.timeZone;
    cell.setAttribute('aria-busy', 'true');
    if (body.dataset.state !== 'data') note(body, 'Loading…', 'loading');
    let data: QueryResult;
    try {
      data = await query(context.session, request);
    } catch (error) {
      if (mine !== run) return;
      cell.removeAttribute('aria-busy');
      if (error instanceof SessionEnded) return;
      return note(body, error instanceof CallFailed ? `Not shown: ${error.message}` : 'The data could not be loaded.', 'error');
    }
    if (mine !== run) return;
    cell.removeAttribute('aria-busy');
    finalize?.();
    finalize = undefined;
    if (data.rows.length === 0) return note(body, 'No data.', 'empty');
    const columns = columnsOf(data);
    body.dataset.state = 'data';
    if (snapshot.kind === 'table') {
      body.replaceChildren(
        el(
          'div',
          { className: 'table-scroll', attrs: { tabindex: '0', role: 'region', 'aria-label': title ?? 'Table' } },
          tableOf(data, columns, context, title),
        ),
      );
      return;
    }
    if (snapshot.kind === 'kpi') {
      const measure = columns.find((c) => c.kind === 'measure') ?? columns[0]!;
      body.replaceChildren(
        el(
          'p',
          { className: 'kpi' },
          el('span', { className: 'kpi-value', text: context.formats.value(data.rows[0]![measure.name], 'measure') }),
          el('span', { className: 'kpi-label', text: context.labels === 'names' ? measure.name : measure.title }),
        ),
      );
      return;
    }
    let spec: Record<string, unknown> | null;
    try {
      const width = Math.max(40, body.clientWidth - 8);
      const height = Math.max(30, body.clientHeight - 8);
      // Named data, not the rows: the server compiles the spec (POST /api/v1/charts/compile), the rows stay here.
      spec = chartSpec(data, snapshot.spec, {
        width,
        height,
        font: context.font,
        labels: context.labels,
        background: 'transparent',
        dataName: ROWS_DATA_NAME,
        missingValues: missingValuesOf(configOf(widget)),
      });
    } catch (error) {
      if (error instanceof ChartRefused) return note(body, `Chart not drawn: ${error.message}`, 'error');
      throw error;
    }
    if (!spec) {
      body.replaceChildren(el('div', { className: 'table-scroll', attrs: { tabindex: '0' } }, tableOf(data, columns, context, title)));
      return;
    }
    // The chart, labelled, with its rows as a table for screen readers and a toggle to show it.
    const figureId = uid('chart');
    // The label sits on a frame of its own: Vega labels the element it draws in.
    const chart = el('div', { className: 'chart' });
    const frame = el('div', { className: 'chart-frame', attrs: { role: 'img', 'aria-label': `Chart: ${title ?? 'report'}`, id: figureId } }, chart);
    const table = tableOf(data, columns, context, title ? `${title} (data)` : 'Chart data', true);
    const toggle = el('button', {
      className: 'link-button',
      text: 'Show data',
      attrs: { type: 'button', 'aria-expanded': 'false', 'aria-controls': figureId },
    });
    toggle.addEventListener('click', () => {
      const showing = table.classList.toggle('visually-hidden') === false;
      frame.hidden = showing;
      toggle.textContent = showing ? 'Show chart' : 'Show data';
      toggle.setAttribute('aria-expanded', String(showing));
    });
    body.replaceChildren(frame, table, toggle);
    try {
      // The chunk loads while the server compiles.
      const [{ drawChart }, vega] = await Promise.all([charts(), compileChart(context.session, spec)]);
      if (mine !== run) return;
      const drawn = await drawChart(
        chart,
        vega,
        ROWS_DATA_NAME,
        chartRows(data, snapshot.spec, { labels: context.labels, missingValues: missingValuesOf(configOf(widget)) }),
      );
      // Re-queried while drawing: the newer run draws its own chart.
      if (mine !== run) return drawn();
      finalize = drawn;
    } catch (error) {
      if (mine !== run || error instanceof SessionEnded) return;
      note(body, `Chart not drawn: ${(error as Error).message}`, 'error');
    }
  }

  return { refresh };
}

/** A TEXT widget: its Markdown, sanitised. */
export function textWidget(cell: HTMLElement, widget: Widget): void {
  const config = configOf(widget);
  const source = str(config.text) ?? str(config.content) ?? str(config.markdown) ?? '';
  const body = el('div', { className: 'widget-body markdown' });
  body.innerHTML = markdownHtml(source);
  openLinksOutside(body);
  cell.append(body);
}

const GRAINS = ['day', 'week', 'month', 'quarter', 'year'];

/** A FILTER widget: a list of the member's values (the viewer's own rows), `All` by default. */
export function filterWidget(cell: HTMLElement, widget: Widget, context: PageContext): void {
  const config = configOf(widget);
  const member = str(config.member) ?? str(config.dimension);
  const label = str(config.title) ?? str(config.label) ?? member ?? 'Filter';
  const id = uid('filter');
  const select = el('select', { attrs: { id, disabled: '' } }, el('option', { text: 'All', attrs: { value: '' } }));
  cell.append(el('div', { className: 'widget-body control' }, el('label', { text: label, attrs: { for: id } }), select));
  if (!member) return;
  select.dataset.member = member;
  void query(context.session, { query: { dimensions: [member], order: { [member]: 'asc' }, limit: 500 } })
    .then((data) => {
      for (const row of data.rows) {
        const value = row[member];
        if (value === null || value === undefined) continue;
        select.append(el('option', { text: context.formats.value(value, 'dimension'), attrs: { value: String(value) } }));
      }
      select.disabled = false;
    })
    .catch(() => {
      select.disabled = true;
    });
  select.addEventListener('change', () => {
    const others = (context.controls.filters ?? []).filter((f) => f.member !== member);
    context.controls.filters = select.value === '' ? others : [...others, { member, operator: 'equals', value: [select.value] }];
    context.onControls();
  });
}

/** A TIME_GRAIN widget: the grain of the member's time dimension in every report that groups by it. */
export function timeGrainWidget(cell: HTMLElement, widget: Widget, context: PageContext): void {
  const config = configOf(widget);
  const member = str(config.member) ?? str(config.dimension);
  const label = str(config.title) ?? str(config.label) ?? 'Time grain';
  const grains = Array.isArray(config.grains) ? config.grains.filter((g): g is string => typeof g === 'string') : GRAINS;
  const id = uid('grain');
  const select = el(
    'select',
    { attrs: { id } },
    el('option', { text: 'As saved', attrs: { value: '' } }),
    ...grains.map((g) => el('option', { text: g, attrs: { value: g } })),
  );
  cell.append(el('div', { className: 'widget-body control' }, el('label', { text: label, attrs: { for: id } }), select));
  if (!member) {
    select.disabled = true;
    return;
  }
  select.addEventListener('change', () => {
    const others = (context.controls.timeGrains ?? []).filter((g) => g.member !== member);
    context.controls.timeGrains = select.value === '' ? others : [...others, { member, grain: select.value }];
    context.onControls();
  });
}
