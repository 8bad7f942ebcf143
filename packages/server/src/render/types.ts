import type { SecurityContext } from '../semantic-layer/query/access.js';

/** A dashboard filter as section 6.0 of the reference gives it (DashboardFilterInput). */
export interface DashboardFilter {
  member: string;
  operator?: string | null;
  value?: unknown;
  caseSensitive?: unknown;
  startInclusive?: unknown;
  endInclusive?: unknown;
}

export interface DashboardTimeGrain {
  member: string;
  grain: string;
}

export interface DashboardMemberSwitcher {
  member: string;
  selected: string;
}

/** What a render applies to every report of the dashboard, as a viewer's controls would. */
export interface DashboardControls {
  filters?: DashboardFilter[] | null;
  timeGrains?: DashboardTimeGrain[] | null;
  memberSwitchers?: DashboardMemberSwitcher[] | null;
}

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
