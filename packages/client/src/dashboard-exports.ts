import { unwrap } from './errors.js';
import type { RawClient } from './pagination.js';
import { abortReason, sleep } from './retry.js';
import type { DashboardExportStatus, StartDashboardExportInput, StartDashboardExportResponse } from './types.js';

/** Reference 8.A.2: only `completed` and `failed` end an export. */
export const isExportFinished = (status: { status: string }): boolean => status.status === 'completed' || status.status === 'failed';

export interface WaitForExportOptions {
  /** The first wait between two polls; default 250 ms, then half as long again each time, up to maxIntervalMs. */
  intervalMs?: number;
  /** Default 2,000 ms. */
  maxIntervalMs?: number;
  /** Default 5 minutes: the server drops an export and its file 5 minutes after it was submitted. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Called with each status read, the final one included. */
  onUpdate?: (status: DashboardExportStatus) => void;
}

/** The wait ran out while the export was still rendering; `status` is the last one read. */
export class ExportWaitTimeoutError extends Error {
  override readonly name = 'ExportWaitTimeoutError';
  constructor(
    readonly jobId: string,
    readonly status: DashboardExportStatus,
    timeoutMs: number,
  ) {
    super(`Export ${jobId} was still ${status.status} after ${Math.round(timeoutMs / 1000)} s.`);
  }
}

/** A rendered export's file. */
export interface DashboardExportFile {
  /** The file's bytes (a Buffer in Node, which is a Uint8Array). */
  bytes: Uint8Array;
  /** `image/png` or `application/pdf`. */
  contentType: string;
  /** The name the server gives it (`dashboard.png`, or `<filename>.<ext>`), from Content-Disposition. */
  filename: string | null;
}

export interface DownloadExportOptions {
  /** The stem of the file name the server gives (its extension follows the format). */
  filename?: string;
  signal?: AbortSignal;
}

/** Options of `export`: those of the wait, and the file name's stem. */
export interface ExportDashboardOptions extends WaitForExportOptions {
  filename?: string;
  /** Called once the export is accepted, before the wait: its job id (for `status` elsewhere) and expiry. */
  onStart?: (started: StartDashboardExportResponse) => void;
}

/** Renders of published dashboards to PNG or PDF (reference 8.A.1-8.A.3). */
export interface DashboardExports {
  /**
   * Starts a render; exactly one of `dashboardId` and `dashboardPublicId`. Needs MANAGE on the
   * dashboard's workbook (`renderAs`: admin). An ApiError 403 `DATA_DOWNLOAD_RESTRICTED` while the
   * account restricts data downloads; 429 `DASHBOARD_EXPORT_LIMIT` while as many exports as allowed
   * are rendering for the identity rendered as (not retried: wait for one of them to finish).
   */
  start(deploymentId: number, input: StartDashboardExportInput, options?: { signal?: AbortSignal }): Promise<StartDashboardExportResponse>;
  /** The export's status; only its submitter sees it, and only until `expiresAt`. */
  status(deploymentId: number, jobId: string, options?: { signal?: AbortSignal }): Promise<DashboardExportStatus>;
  /** Polls the status until `completed` or `failed` and returns the last one. */
  waitFor(deploymentId: number, jobId: string, options?: WaitForExportOptions): Promise<DashboardExportStatus>;
  /**
   * The rendered file. An ApiError 409 `DASHBOARD_EXPORT_RENDERING` while it renders, 422
   * `DASHBOARD_EXPORT_FAILED` (with the reason) after the render failed.
   */
  download(deploymentId: number, jobId: string, options?: DownloadExportOptions): Promise<DashboardExportFile>;
  /**
   * start, waitFor, download: the file with its job id. A failed render is the download's ApiError
   * 422 `DASHBOARD_EXPORT_FAILED`, whose detail carries the reason.
   */
  export(deploymentId: number, input: StartDashboardExportInput, options?: ExportDashboardOptions): Promise<DashboardExportFile & { jobId: string }>;
}

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});
const BASE = '/api/v1/deployments/{deploymentId}/dashboard-exports' as const;

/** The name of a Content-Disposition header: the UTF-8 `filename*` when present, else `filename`. */
export function dispositionFilename(header: string | null): string | null {
  if (!header) return null;
  const extended = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(header);
  if (extended) {
    try {
      return decodeURIComponent(extended[1]!.trim());
    } catch {
      // A malformed escape: fall back to the plain name.
    }
  }
  const plain = /filename\s*=\s*"([^"]*)"/i.exec(header) ?? /filename\s*=\s*([^;\s]+)/i.exec(header);
  return plain ? plain[1]! : null;
}

export function createDashboardExports(api: RawClient): DashboardExports {
  const start: DashboardExports['start'] = async (deploymentId, input, { signal } = {}) =>
    unwrap(await api.POST(BASE, { params: { path: { deploymentId } }, body: input, ...withSignal(signal) }));
  const status: DashboardExports['status'] = async (deploymentId, jobId, { signal } = {}) =>
    unwrap(await api.GET(`${BASE}/{jobId}`, { params: { path: { deploymentId, jobId } }, ...withSignal(signal) }));

  const waitFor: DashboardExports['waitFor'] = async (deploymentId, jobId, options = {}) => {
    const { signal } = options;
    const timeoutMs = options.timeoutMs ?? 5 * 60_000;
    const maxInterval = options.maxIntervalMs ?? 2000;
    const deadline = Date.now() + timeoutMs;
    let interval = options.intervalMs ?? 250;
    for (;;) {
      if (signal?.aborted) throw abortReason(signal);
      const current = await status(deploymentId, jobId, { ...withSignal(signal) });
      options.onUpdate?.(current);
      if (isExportFinished(current)) return current;
      if (Date.now() + interval > deadline) throw new ExportWaitTimeoutError(jobId, current, timeoutMs);
      await sleep(interval, signal);
      interval = Math.min(maxInterval, Math.round(interval * 1.5));
    }
  };

  const download: DashboardExports['download'] = async (deploymentId, jobId, { filename, signal } = {}) => {
    const answer = await api.GET(`${BASE}/{jobId}/download`, {
      params: { path: { deploymentId, jobId }, ...(filename === undefined ? {} : { query: { filename } }) },
      parseAs: 'arrayBuffer',
      ...withSignal(signal),
    });
    const body = unwrap(answer) as unknown as ArrayBuffer;
    const { headers } = answer.response;
    return {
      bytes: new Uint8Array(body),
      contentType: headers.get('content-type') ?? 'application/octet-stream',
      filename: dispositionFilename(headers.get('content-disposition')),
    };
  };

  return {
    start,
    status,
    waitFor,
    download,
    async export(deploymentId, input, options = {}) {
      const { filename, onStart, ...wait } = options;
      const started = await start(deploymentId, input, { ...withSignal(wait.signal) });
      onStart?.(started);
      // A failed render is left to the download, whose 422 carries the reason as an ApiError.
      await waitFor(deploymentId, started.jobId, wait);
      const file = await download(deploymentId, started.jobId, { ...(filename === undefined ? {} : { filename }), ...withSignal(wait.signal) });
      return { ...file, jobId: started.jobId };
    },
  };
}
