import { unwrap } from './errors.js';
import { DEFAULT_PAGE_SIZE, paginate, type ListOptions, type RawClient } from './pagination.js';
import type { CreateReportDeliveryInput, ReportDelivery, ReportDeliveryRun, UpdateReportDeliveryInput } from './types.js';

type Signal = { signal?: AbortSignal };

/**
 * Report deliveries (extension; admins only): a report's rows mailed as CSV or XLSX (`format`) on a
 * schedule to at most 50 recipients, each sent the rows they may see (at most 10,000 rows per mail).
 */
export interface ReportDeliveries {
  /** Newest first; `reportId`: one report's only. */
  list(deploymentId: number, query?: { reportId?: number }, options?: ListOptions): AsyncIterable<ReportDelivery>;
  get(deploymentId: number, deliveryId: number, options?: Signal): Promise<ReportDelivery>;
  /** `cron` may fire at most hourly; recipients are users (`userId` or `email`) or existing embed users. */
  create(deploymentId: number, input: CreateReportDeliveryInput, options?: Signal): Promise<ReportDelivery>;
  /** Fields left out stay; `recipients` sent replace the list. */
  update(deploymentId: number, deliveryId: number, input: UpdateReportDeliveryInput, options?: Signal): Promise<ReportDelivery>;
  /** Deletes the delivery with its run history. */
  delete(deploymentId: number, deliveryId: number, options?: Signal): Promise<void>;
  /** Idempotent: pausing a paused delivery changes nothing. */
  pause(deploymentId: number, deliveryId: number, options?: Signal): Promise<ReportDelivery>;
  /** Idempotent; the schedule runs from now. */
  resume(deploymentId: number, deliveryId: number, options?: Signal): Promise<ReportDelivery>;
  /** Runs the delivery now (paused or not): the run, queued, with the id of the job that mails it. */
  run(deploymentId: number, deliveryId: number, options?: Signal): Promise<ReportDeliveryRun>;
  /** The delivery's runs, newest first, with each recipient's outcome (the newest 200 are kept). */
  runs(deploymentId: number, deliveryId: number, options?: ListOptions): AsyncIterable<ReportDeliveryRun>;
}

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});
const LIST = '/api/v1/deployments/{deploymentId}/report-deliveries' as const;
const ONE = '/api/v1/deployments/{deploymentId}/report-deliveries/{deliveryId}' as const;

export function createReportDeliveries(api: RawClient): ReportDeliveries {
  return {
    list: (deploymentId, query = {}, { signal } = {}) =>
      paginate(async (after) =>
        unwrap(await api.GET(LIST, { params: { path: { deploymentId }, query: { ...query, first: DEFAULT_PAGE_SIZE, after } }, ...withSignal(signal) })),
      ),
    get: async (deploymentId, deliveryId, { signal } = {}) =>
      unwrap(await api.GET(ONE, { params: { path: { deploymentId, deliveryId } }, ...withSignal(signal) })),
    create: async (deploymentId, input, { signal } = {}) =>
      unwrap(await api.POST(LIST, { params: { path: { deploymentId } }, body: input, ...withSignal(signal) })),
    update: async (deploymentId, deliveryId, input, { signal } = {}) =>
      unwrap(await api.PUT(ONE, { params: { path: { deploymentId, deliveryId } }, body: input, ...withSignal(signal) })),
    async delete(deploymentId, deliveryId, { signal } = {}) {
      unwrap(await api.DELETE(ONE, { params: { path: { deploymentId, deliveryId } }, ...withSignal(signal) }));
    },
    pause: async (deploymentId, deliveryId, { signal } = {}) =>
      unwrap(await api.POST(`${ONE}/pause`, { params: { path: { deploymentId, deliveryId } }, ...withSignal(signal) })),
    resume: async (deploymentId, deliveryId, { signal } = {}) =>
      unwrap(await api.POST(`${ONE}/resume`, { params: { path: { deploymentId, deliveryId } }, ...withSignal(signal) })),
    run: async (deploymentId, deliveryId, { signal } = {}) =>
      unwrap(await api.POST(`${ONE}/run`, { params: { path: { deploymentId, deliveryId } }, ...withSignal(signal) })),
    runs: (deploymentId, deliveryId, { signal } = {}) =>
      paginate(async (after) =>
        unwrap(
          await api.GET(`${ONE}/runs`, { params: { path: { deploymentId, deliveryId }, query: { first: DEFAULT_PAGE_SIZE, after } }, ...withSignal(signal) }),
        ),
      ),
  };
}
