import { unwrap } from './errors.js';
import type { RawClient } from './pagination.js';
import type { ConnectReportToWorkbookInput, DisconnectReportFromWorkbookInput, RefreshReportInput, Report, ReportPlacement } from './types.js';

type CallOptions = { signal?: AbortSignal };
const withSignal = ({ signal }: CallOptions = {}) => (signal ? { signal } : {});

/**
 * A report's placements in external spreadsheets (reference 3.1-3.3). Read access to the report
 * is enough for all of them; each answers the report with its `externalWorkbookPlacements`.
 *
 * @example
 * const report = await mapi.reportPlacements.connect(1, 42, { placementId: 'sheet-7', externalWorkbookId: docId, resultLocation: 'Sales!B2:F40', resultChecksum });
 * const stale = report.externalWorkbookPlacements.filter((p) => p.syncStatus === 'CHANGED');
 */
export interface ReportPlacements {
  /** Places the report, or updates the placement named by `placementId` (else by document, sheet and anchor): idempotent per placement. */
  connect(deploymentId: number, reportId: number, input: ConnectReportToWorkbookInput, options?: CallOptions): Promise<Report>;
  /** Removes one placement; naming one that does not exist succeeds and changes nothing. */
  disconnect(deploymentId: number, reportId: number, target: DisconnectReportFromWorkbookInput, options?: CallOptions): Promise<Report>;
  /** Runs the report as the caller and records the placement's refresh (404 ApiError when it names none). */
  refresh(deploymentId: number, reportId: number, target: RefreshReportInput, options?: CallOptions): Promise<Report>;
  /** The placement with this id in a report as answered, or undefined. */
  find(report: Report, placementId: string): ReportPlacement | undefined;
}

export function createReportPlacements(api: RawClient): { reportPlacements: ReportPlacements } {
  const path = (deploymentId: number, reportId: number) => ({ path: { deploymentId, reportId } });
  return {
    reportPlacements: {
      connect: async (deploymentId, reportId, input, options) =>
        unwrap(
          await api.PUT('/api/v1/deployments/{deploymentId}/reports/{reportId}/connect-workbook', {
            params: path(deploymentId, reportId),
            body: input,
            ...withSignal(options),
          }),
        ),
      disconnect: async (deploymentId, reportId, target, options) =>
        unwrap(
          await api.DELETE('/api/v1/deployments/{deploymentId}/reports/{reportId}/connect-workbook', {
            params: path(deploymentId, reportId),
            body: target,
            ...withSignal(options),
          }),
        ),
      refresh: async (deploymentId, reportId, target, options) =>
        unwrap(
          await api.PUT('/api/v1/deployments/{deploymentId}/reports/{reportId}/refresh', {
            params: path(deploymentId, reportId),
            body: target,
            ...withSignal(options),
          }),
        ),
      find: (report, placementId) => report.externalWorkbookPlacements.find((p) => p.id === placementId),
    },
  };
}
