import type { Store } from '../../db/database.js';
import type { Jobs } from '../../jobs/index.js';
import type { DashboardControls, RenderFormat, Renderer, RenderLayout, Viewer } from '../../render/index.js';
import { findExportById, markCompleted, markFailed, markProcessing } from './exports.store.js';

export const EXPORT_JOB = 'dashboard-export';

/** What a render job carries: everything the render needs, so any process can run it. */
export interface ExportJobPayload extends DashboardControls {
  exportId: number;
  tenant: { id: number; slug: string };
  deploymentId: number;
  dashboardId: number;
  format: RenderFormat;
  /** Absent in jobs queued before layouts existed: screenshot. */
  layout?: RenderLayout;
  viewer: Viewer;
}

/** A render is quick (see docs/performance.md, Dashboard renders); a stuck runtime must not hold a worker for long. */
const RENDER_TIMEOUT_MS = 120_000;

/**
 * The job that renders an export and keeps its file with the export's row. A failure is written
 * to the row (the status route shows it, the download answers 422) and fails the job; an export
 * that expired before its turn is skipped.
 */
export function registerExportJob(store: Store, jobs: Jobs, renderer: Renderer, now: () => Date): void {
  const at = () => now().toISOString();
  jobs.register<ExportJobPayload, { skipped?: true; bytes?: number }>({
    kind: EXPORT_JOB,
    timeoutMs: RENDER_TIMEOUT_MS,
    async run({ payload }) {
      const row = await findExportById(store.db, payload.exportId);
      if (!row || row.expires_at <= at() || !(await markProcessing(store.db, row.id, at()))) return { skipped: true };
      try {
        const result = await renderer.renderDashboard({
          tenant: payload.tenant,
          deploymentId: payload.deploymentId,
          dashboardId: payload.dashboardId,
          viewer: payload.viewer,
          format: payload.format,
          layout: payload.layout ?? 'screenshot',
          filters: payload.filters ?? null,
          timeGrains: payload.timeGrains ?? null,
          memberSwitchers: payload.memberSwitchers ?? null,
        });
        await markCompleted(store.db, row.id, result.contentType, result.bytes, at());
        return { bytes: result.bytes.length };
      } catch (error) {
        await markFailed(store.db, row.id, error instanceof Error ? error.message : String(error), at());
        throw error;
      }
    },
  });
}
