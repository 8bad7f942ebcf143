import type { SecurityContext } from '../semantic-layer/query/access.js';

export type { DashboardControls, DashboardFilter, DashboardMemberSwitcher, DashboardTimeGrain } from './controls.js';

/**
 * Whose rows a render shows: a user of the account (their groups and attribute values, read at
 * query time, plus an optional security context), or a whole row-level context (an embed user's).
 */
export type Viewer = { userId: number; securityContext?: Record<string, unknown> } | { context: SecurityContext };

/** What the report-run call answers: rows keyed by member or column name, and their annotation. */
export interface ReportData {
  rows: Array<Record<string, unknown>>;
  annotation: Record<string, unknown>;
}

export type RenderFormat = 'png' | 'pdf';

/** Which published dashboard: by its workbook, its id or its public id. */
export type DashboardRef = { workbookId: number } | { dashboardId: number } | { publicId: string };

/** A widget as the renderer reads it (the workspace's DashboardWidget is one). */
export interface DashboardWidget {
  id: string;
  type: string;
  position: { x: number; y: number; w: number; h: number };
  config?: unknown;
}

/** A report's frozen snapshot in a published version, as the renderer reads it. */
export interface ReportSnapshot {
  reportId: number;
  name?: string | null;
  title?: string | null;
  sqlQuery?: string | null;
  kind?: string | null;
  spec?: unknown;
}

/** A published dashboard as the renderer reads it; the dashboards area gives it (RendererDeps.findPublished). */
export interface Dashboard {
  title?: string | null;
  description?: string | null;
  config: { title?: string | null; description?: string | null; layout?: unknown; widgets?: DashboardWidget[] | null };
  reportSnapshots: ReportSnapshot[];
}
