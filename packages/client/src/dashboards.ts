import { unwrap } from './errors.js';
import { DEFAULT_PAGE_SIZE, paginate, type ListOptions, type RawClient } from './pagination.js';
import { createPromotions, type WorkbookPromotions } from './promotions.js';
import type { Dashboard, DashboardConfig, DashboardConfigDraft, DashboardConfigDraftInput, PublishDashboardInput, Workbook } from './types.js';

/** What `PUT …/workbooks/{id}/dashboard` answers: the draft as stored (ids assigned) and the published config. */
export interface DashboardDraftResult {
  dashboardDraft: DashboardConfigDraft | null;
  dashboardPublished: DashboardConfig | null;
}

/** Options of `workbooks.duplicate` (reference 8.G.1); a creator-mode embed session copies from the shared workspace with `sharedWorkspace.copy`. */
export interface DuplicateWorkbookOptions {
  /** Where the copy goes (EDIT needed there); null for the root. Absent: beside the source, or the root. */
  folderId?: number | null;
  /** The copy's name; "Copy of <name>" by default. */
  name?: string;
  signal?: AbortSignal;
}

/** A workbook's dashboard: its draft, its publications (reference 8.G.1-8.G.3); and its promotion to other deployments. */
export interface Workbooks extends WorkbookPromotions {
  /** Saves the draft (null clears it); widgets without an id get one. Needs EDIT on the workbook. */
  saveDraft(
    deploymentId: number,
    workbookId: number,
    draft: DashboardConfigDraftInput | null,
    options?: { signal?: AbortSignal },
  ): Promise<DashboardDraftResult>;
  /**
   * Publishes `input.config`, or the saved draft when it is left out, as the next version; answers
   * the new version. A config with `FIELD` widgets or widgets without ids is a 400 ApiError.
   */
  publish(deploymentId: number, workbookId: number, input?: PublishDashboardInput, options?: { signal?: AbortSignal }): Promise<Dashboard>;
  /** Every published version of the workbook's dashboard, newest first, following the pages. */
  dashboardVersions(deploymentId: number, workbookId: number, options?: ListOptions): AsyncIterable<Dashboard>;
  /** A copy of the workbook with its reports and published dashboard (allowEmbed off). */
  duplicate(deploymentId: number, workbookId: number, options?: DuplicateWorkbookOptions): Promise<Workbook>;
}

export interface Dashboards {
  /** Switches signed embedding on or off for the dashboard with this public id (admin; reference 3.6). */
  setAllowEmbed(publicId: string, allowEmbed: boolean, options?: { signal?: AbortSignal }): Promise<{ publicId: string; allowEmbed: boolean }>;
}

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});

export function createDashboards(api: RawClient): { workbooks: Workbooks; dashboards: Dashboards } {
  const workbookPath = (deploymentId: number, workbookId: number) => ({ path: { deploymentId, workbookId } });
  return {
    workbooks: {
      ...createPromotions(api),
      saveDraft: async (deploymentId, workbookId, draft, { signal } = {}) =>
        unwrap(
          await api.PUT('/api/v1/deployments/{deploymentId}/workbooks/{workbookId}/dashboard', {
            params: workbookPath(deploymentId, workbookId),
            body: { dashboardDraft: draft },
            ...withSignal(signal),
          }),
        ),
      publish: async (deploymentId, workbookId, input = {}, { signal } = {}) =>
        unwrap(
          await api.POST('/api/v1/deployments/{deploymentId}/workbooks/{workbookId}/publish', {
            params: workbookPath(deploymentId, workbookId),
            body: input,
            ...withSignal(signal),
          }),
        ),
      dashboardVersions: (deploymentId, workbookId, { signal } = {}) =>
        paginate(async (after) =>
          unwrap(
            await api.GET('/api/v1/deployments/{deploymentId}/workbooks/{workbookId}/dashboard/versions', {
              params: { ...workbookPath(deploymentId, workbookId), query: { first: DEFAULT_PAGE_SIZE, after } },
              ...withSignal(signal),
            }),
          ),
        ),
      duplicate: async (deploymentId, workbookId, { signal, ...body } = {}) =>
        unwrap(
          await api.POST('/api/v1/deployments/{deploymentId}/workbooks/{workbookId}/duplicate', {
            params: workbookPath(deploymentId, workbookId),
            body,
            ...withSignal(signal),
          }),
        ),
    },
    dashboards: {
      setAllowEmbed: async (publicId, allowEmbed, { signal } = {}) =>
        unwrap(await api.PATCH('/api/v1/embed/dashboard/{publicId}', { params: { path: { publicId } }, body: { allowEmbed }, ...withSignal(signal) })),
    },
  };
}
