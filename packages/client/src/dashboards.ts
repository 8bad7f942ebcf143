import { unwrap } from './errors.js';
import { DEFAULT_PAGE_SIZE, paginate, type ListOptions, type RawClient } from './pagination.js';
import { createPromotions, type WorkbookPromotions } from './promotions.js';
import type { Dashboard, DashboardConfig, DashboardConfigDraft, DashboardConfigDraftInput, PublishDashboardInput, Workbook } from './types.js';

/** A workbook named by slug, created with this name (and folder) or updated to them before the draft is saved. */
export interface WorkbookBySlug {
  slug: string;
  /** The workbook's name: the upsert sets it on every call, as `PUT …/workbooks/by-slug/{slug}` does. */
  name: string;
  /** Where a new workbook goes (null: the root); for an existing one, a different folder moves it. Absent: the root, or unchanged. */
  folderId?: number | null;
}

/** Options of `workbooks.publishFromFile`. */
export interface PublishFromFileOptions {
  /** The publication's title and description; the dashboard's own by default. */
  title?: string;
  description?: string;
  /** Sets the dashboard's signed-embedding switch with the publication; absent: kept (off on a first publication). */
  allowEmbed?: boolean;
  signal?: AbortSignal;
}

/** What `workbooks.publishFromFile` did. */
export interface PublishFromFileResult {
  workbookId: number;
  /** True when the slug named no workbook and one was created. */
  created: boolean;
  /** The new published version: `publicId` is the dashboard's for embedding, the same across versions. */
  dashboard: Dashboard;
}

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
  /**
   * Publishes a dashboard kept in a file: saves `file` (JSON text, or the parsed object: a
   * dashboard draft, as the draft's canonical text reads) as the workbook's draft, widgets without
   * an id getting one, then publishes that draft as the next version. Given a slug instead of an
   * id, it first creates or updates the workbook with that slug. Three calls at most, none of them
   * undone when a later one fails: a refused publish leaves the file saved as the draft.
   */
  publishFromFile(
    deploymentId: number,
    workbook: number | WorkbookBySlug,
    file: string | DashboardConfigDraftInput,
    options?: PublishFromFileOptions,
  ): Promise<PublishFromFileResult>;
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

/** The draft a file holds: JSON text is parsed here (YAML is the caller's to parse); it must be one object. */
export function draftOfFile(file: string | DashboardConfigDraftInput): DashboardConfigDraftInput {
  let value: unknown = file;
  if (typeof file === 'string') {
    try {
      value = JSON.parse(file);
    } catch (error) {
      throw new TypeError(`The dashboard file is not JSON: ${(error as Error).message}`, { cause: error });
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new TypeError('The dashboard file must hold one object: a dashboard draft with its widgets.');
  return value as DashboardConfigDraftInput;
}

export function createDashboards(api: RawClient): { workbooks: Workbooks; dashboards: Dashboards } {
  const workbookPath = (deploymentId: number, workbookId: number) => ({ path: { deploymentId, workbookId } });
  const saveDraft: Workbooks['saveDraft'] = async (deploymentId, workbookId, draft, { signal } = {}) =>
    unwrap(
      await api.PUT('/api/v1/deployments/{deploymentId}/workbooks/{workbookId}/dashboard', {
        params: workbookPath(deploymentId, workbookId),
        body: { dashboardDraft: draft },
        ...withSignal(signal),
      }),
    );
  const publish: Workbooks['publish'] = async (deploymentId, workbookId, input = {}, { signal } = {}) =>
    unwrap(
      await api.POST('/api/v1/deployments/{deploymentId}/workbooks/{workbookId}/publish', {
        params: workbookPath(deploymentId, workbookId),
        body: input,
        ...withSignal(signal),
      }),
    );
  return {
    workbooks: {
      ...createPromotions(api),
      saveDraft,
      publish,
      async publishFromFile(deploymentId, workbook, file, { signal, ...publication } = {}) {
        // Checked before any call, so a file that is not a draft changes nothing.
        const draft = draftOfFile(file);
        let workbookId: number;
        let created = false;
        if (typeof workbook === 'number') workbookId = workbook;
        else {
          const { slug, ...body } = workbook;
          const answer = await api.PUT('/api/v1/deployments/{deploymentId}/workbooks/by-slug/{slug}', {
            params: { path: { deploymentId, slug } },
            body,
            ...withSignal(signal),
          });
          workbookId = unwrap(answer).id;
          created = answer.response.status === 201;
        }
        // Saved as the draft first, not sent as the publication's config: the draft save gives
        // widgets their ids, which a publication requires, and the draft then matches what was published.
        await saveDraft(deploymentId, workbookId, draft, { ...withSignal(signal) });
        const dashboard = await publish(deploymentId, workbookId, publication, { ...withSignal(signal) });
        return { workbookId, created, dashboard };
      },
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
