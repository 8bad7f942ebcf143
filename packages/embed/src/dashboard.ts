import type { DashboardControls } from '../../server/src/render/controls.js';
import { el } from './dom.js';
import {
  filterWidget,
  reportIdOf,
  reportWidget,
  textWidget,
  timeGrainWidget,
  type PageContext,
  type ReportWidget,
  type Snapshot,
  type Widget,
} from './widgets.js';

/**
 * The published dashboard laid out as its config says: a grid of `layout.cols.lg` columns (12 by
 * default) and rows of `layout.rowHeight` pixels, each widget at its `position`. Containers hold
 * the widgets their config lists (`config.widgets`, ids), in a grid of their own; a container
 * whose `config.layout` is `tabs` shows one tab at a time (`config.tabs`: `[{ title, widgets }]`).
 * Positions go through the CSSOM (`style.gridColumn`), which the CSP allows, unlike style attributes.
 */

export interface DashboardData {
  title?: string | null;
  description?: string | null;
  publicId: string;
  config: {
    title?: string | null;
    description?: string | null;
    layout?: { cols?: { lg?: number | null } | null; rowHeight?: number | null; margin?: number[] | null } | null;
    widgets?: Widget[] | null;
    settings?: Record<string, unknown> | null;
  };
  reportSnapshots: Snapshot[];
}

const num = (value: unknown, fallback: number, min: number, max: number) =>
  typeof value === 'number' && Number.isFinite(value) ? Math.min(max, Math.max(min, value)) : fallback;

const idsOf = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

export interface LaidOut {
  reports: ReportWidget[];
}

export function layoutDashboard(root: HTMLElement, dashboard: DashboardData, context: Omit<PageContext, 'rowHeight'>): LaidOut {
  const layout = dashboard.config.layout ?? {};
  const cols = Math.round(num(layout.cols?.lg, 12, 1, 48));
  const rowHeight = num(layout.rowHeight, 60, 10, 1000);
  const gap = num(layout.margin?.[0], 16, 0, 200);
  const widgets = (dashboard.config.widgets ?? []).filter((w) => typeof w.position === 'object' && w.position !== null);
  const byId = new Map(widgets.map((w) => [w.id, w]));
  const children = new Set<string>();
  for (const w of widgets) {
    if (w.type !== 'CONTAINER') continue;
    const config = w.config ?? {};
    for (const id of idsOf(config.widgets)) children.add(id);
    if (Array.isArray(config.tabs)) for (const tab of config.tabs as Array<Record<string, unknown>>) for (const id of idsOf(tab.widgets)) children.add(id);
  }
  const full: PageContext = { ...context, rowHeight };
  const reports: ReportWidget[] = [];

  function grid(list: Widget[], label: string | null): HTMLElement {
    const g = el('div', { className: 'grid', ...(label ? { attrs: { role: 'group', 'aria-label': label } } : {}) });
    g.style.setProperty('--cols', String(cols));
    g.style.setProperty('--row', `${rowHeight}px`);
    g.style.setProperty('--gap', `${gap}px`);
    // Reading order follows the page: top to bottom, then left to right.
    for (const w of [...list].sort((a, b) => a.position.y - b.position.y || a.position.x - b.position.x)) g.append(cell(w));
    return g;
  }

  function cell(w: Widget): HTMLElement {
    const x = Math.max(0, Math.min(cols - 1, w.position.x));
    const span = Math.max(1, Math.min(cols - x, w.position.w));
    const c = el('section', { className: `cell cell-${w.type.toLowerCase()}`, attrs: { 'data-widget-id': w.id } });
    c.style.gridColumn = `${x + 1} / span ${span}`;
    c.style.gridRow = `${Math.max(0, w.position.y) + 1} / span ${Math.max(1, w.position.h)}`;
    const report = reportWidget(c, w, full);
    if (report) {
      reports.push(report);
      return c;
    }
    const config = w.config ?? {};
    const title = typeof config.title === 'string' ? config.title : typeof config.label === 'string' ? config.label : null;
    switch (w.type) {
      case 'TEXT':
        textWidget(c, w);
        break;
      case 'FILTER':
        filterWidget(c, w, full);
        break;
      case 'TIME_GRAIN':
        timeGrainWidget(c, w, full);
        break;
      case 'DIVIDER':
        c.append(el('hr', { className: 'divider' }));
        break;
      case 'SPACER':
        c.setAttribute('aria-hidden', 'true');
        break;
      case 'CONTAINER':
        container(c, w, title);
        break;
      default:
        // AI widgets and parents: their frame and title; what they hold is interactive elsewhere.
        if (title) c.append(el('h2', { className: 'widget-title', text: title }));
    }
    return c;
  }

  function container(c: HTMLElement, w: Widget, title: string | null): void {
    const config = w.config ?? {};
    if (title) c.append(el('h2', { className: 'widget-title', text: title }));
    const tabs = Array.isArray(config.tabs) ? (config.tabs as Array<Record<string, unknown>>) : [];
    if (config.layout !== 'tabs' || tabs.length === 0) {
      c.append(
        grid(
          idsOf(config.widgets).flatMap((id) => byId.get(id) ?? []),
          title,
        ),
      );
      return;
    }
    const list = el('div', { className: 'tabs', attrs: { role: 'tablist', 'aria-label': title ?? 'Tabs' } });
    const panels: HTMLElement[] = [];
    const buttons: HTMLButtonElement[] = [];
    const select = (i: number, focus: boolean) => {
      buttons.forEach((b, j) => {
        b.setAttribute('aria-selected', String(i === j));
        b.tabIndex = i === j ? 0 : -1;
        panels[j]!.hidden = i !== j;
      });
      if (focus) buttons[i]!.focus();
    };
    tabs.forEach((tab, i) => {
      const tabId = `${w.id}-tab-${i}`;
      const panelId = `${w.id}-panel-${i}`;
      const button = el('button', {
        className: 'tab',
        text: typeof tab.title === 'string' ? tab.title : `Tab ${i + 1}`,
        attrs: { type: 'button', role: 'tab', id: tabId, 'aria-controls': panelId },
      });
      button.addEventListener('click', () => select(i, false));
      button.addEventListener('keydown', (event) => {
        const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
        if (step !== 0) select((i + step + tabs.length) % tabs.length, true);
      });
      buttons.push(button);
      list.append(button);
      const panel = el('div', { className: 'tab-panel', attrs: { role: 'tabpanel', id: panelId, 'aria-labelledby': tabId } });
      panel.append(
        grid(
          idsOf(tab.widgets).flatMap((id) => byId.get(id) ?? []),
          null,
        ),
      );
      panels.push(panel);
    });
    c.append(list, ...panels);
    select(0, false);
  }

  const top = widgets.filter((w) => !children.has(w.id));
  root.append(grid(top, null));
  return { reports };
}

export type { DashboardControls, Widget, Snapshot };
export { reportIdOf };
