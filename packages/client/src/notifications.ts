import { unwrap } from './errors.js';
import { DEFAULT_PAGE_SIZE, paginate, type ListOptions, type RawClient } from './pagination.js';
import { abortReason, sleep } from './retry.js';
import type {
  AddNotificationRecipientsResult,
  CreateNotificationInput,
  Notification,
  NotificationDelivery,
  NotificationRecipient,
  NotificationRecipientInput,
  NotificationRecipientRef,
  QueryOf,
  UpdateNotificationInput,
} from './types.js';

/** Filters of the list: one dashboard form, one recipient form (reference 6.1). */
export type NotificationListQuery = Omit<QueryOf<'listNotifications'>, 'after' | 'first'>;

/** The server's limit per recipients call (reference 6.7, 6.8). */
export const RECIPIENTS_PER_REQUEST = 1000;

export interface WaitForDeliveryOptions {
  signal?: AbortSignal;
  /** The first wait between reads of the history (ms); it doubles up to `maxIntervalMs`. Default 500. */
  intervalMs?: number;
  maxIntervalMs?: number;
  /** Give up after this long (ms), with a DeliveryWaitTimeoutError. Default 10 minutes. */
  timeoutMs?: number;
  /** Each read of the delivery, e.g. to show progress. */
  onUpdate?: (delivery: NotificationDelivery) => void;
}

/** The delivery was still pending or running when `waitForDelivery` gave up; `delivery` is its last state. */
export class DeliveryWaitTimeoutError extends Error {
  constructor(
    readonly delivery: NotificationDelivery,
    timeoutMs: number,
  ) {
    super(`Delivery ${delivery.id} was still ${delivery.status} after ${Math.round(timeoutMs / 1000)} s.`);
    this.name = 'DeliveryWaitTimeoutError';
  }
}

const isFinished = (d: NotificationDelivery) => d.status === 'succeeded' || d.status === 'failed';

/** A deployment's scheduled dashboard deliveries and their recipients (reference 6; admin). */
export interface Notifications {
  /** Newest first. */
  list(deploymentId: number, query?: NotificationListQuery, options?: ListOptions): AsyncIterable<Notification>;
  create(deploymentId: number, input: CreateNotificationInput, options?: { signal?: AbortSignal }): Promise<Notification>;
  get(deploymentId: number, id: number, options?: { signal?: AbortSignal }): Promise<Notification>;
  /** Fields left out stay; `filters`, `timeGrains` and `memberSwitchers` sent replace the set. */
  update(deploymentId: number, id: number, input: UpdateNotificationInput, options?: { signal?: AbortSignal }): Promise<Notification>;
  delete(deploymentId: number, id: number, options?: { signal?: AbortSignal }): Promise<void>;
  /** Newest first. */
  recipients(deploymentId: number, id: number, options?: ListOptions): AsyncIterable<NotificationRecipient>;
  /** Any number of recipients, sent 1,000 to a request; the results are merged. Idempotent. */
  addRecipients(
    deploymentId: number,
    id: number,
    recipients: readonly NotificationRecipientInput[],
    options?: { signal?: AbortSignal },
  ): Promise<AddNotificationRecipientsResult>;
  /** Any number, 1,000 to a request; ones not subscribed are skipped. */
  removeRecipients(deploymentId: number, id: number, recipients: readonly NotificationRecipientRef[], options?: { signal?: AbortSignal }): Promise<void>;
  /** The deliveries history (an extension), newest first, with each recipient's state. */
  deliveries(deploymentId: number, id: number, options?: ListOptions): AsyncIterable<NotificationDelivery>;
  /**
   * Delivers the notification now (an extension), as a scheduled occurrence would, and answers the
   * queued delivery (`trigger` SEND_NOW). While an earlier send-now of it is queued or running, that
   * one is answered instead. ApiError 409 `NOTIFICATION_SENDING_OFF` or `NOTIFICATION_NO_RECIPIENTS`
   * when there is nobody to mail.
   */
  sendNow(deploymentId: number, id: number, options?: { signal?: AbortSignal }): Promise<NotificationDelivery>;
  /** Reads the deliveries history until delivery `deliveryId` has succeeded or failed, and answers it. */
  waitForDelivery(deploymentId: number, id: number, deliveryId: number, options?: WaitForDeliveryOptions): Promise<NotificationDelivery>;
}

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});
const LIST = '/api/v1/deployments/{deploymentId}/notifications' as const;
const ONE = '/api/v1/deployments/{deploymentId}/notifications/{id}' as const;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += RECIPIENTS_PER_REQUEST) out.push(items.slice(i, i + RECIPIENTS_PER_REQUEST));
  return out;
}

export function createNotifications(api: RawClient): Notifications {
  const deliveries: Notifications['deliveries'] = (deploymentId, id, { signal } = {}) =>
    paginate(async (after) =>
      unwrap(await api.GET(`${ONE}/deliveries`, { params: { path: { deploymentId, id }, query: { first: DEFAULT_PAGE_SIZE, after } }, ...withSignal(signal) })),
    );

  /** The delivery from the history (newest first): read until it, or an older one, shows up. */
  async function findDelivery(deploymentId: number, id: number, deliveryId: number, signal: AbortSignal | undefined): Promise<NotificationDelivery> {
    for await (const delivery of deliveries(deploymentId, id, withSignal(signal))) {
      if (delivery.id === deliveryId) return delivery;
      if (delivery.id < deliveryId) break;
    }
    throw new Error(`Notification ${id} has no delivery ${deliveryId}.`);
  }

  return {
    list: (deploymentId, query, { signal } = {}) =>
      paginate(async (after) =>
        unwrap(await api.GET(LIST, { params: { path: { deploymentId }, query: { ...query, first: DEFAULT_PAGE_SIZE, after } }, ...withSignal(signal) })),
      ),
    create: async (deploymentId, input, { signal } = {}) =>
      unwrap(await api.POST(LIST, { params: { path: { deploymentId } }, body: input, ...withSignal(signal) })),
    get: async (deploymentId, id, { signal } = {}) => unwrap(await api.GET(ONE, { params: { path: { deploymentId, id } }, ...withSignal(signal) })),
    update: async (deploymentId, id, input, { signal } = {}) =>
      unwrap(await api.PUT(ONE, { params: { path: { deploymentId, id } }, body: input, ...withSignal(signal) })),
    async delete(deploymentId, id, { signal } = {}) {
      unwrap(await api.DELETE(ONE, { params: { path: { deploymentId, id } }, ...withSignal(signal) }));
    },
    recipients: (deploymentId, id, { signal } = {}) =>
      paginate(async (after) =>
        unwrap(
          await api.GET(`${ONE}/recipients`, { params: { path: { deploymentId, id }, query: { first: DEFAULT_PAGE_SIZE, after } }, ...withSignal(signal) }),
        ),
      ),
    async addRecipients(deploymentId, id, recipients, { signal } = {}) {
      const merged: AddNotificationRecipientsResult = { createdRecipients: [], updatedRecipients: [], unchangedRecipients: [] };
      for (const chunk of chunks(recipients)) {
        const result = unwrap(
          await api.POST(`${ONE}/recipients`, { params: { path: { deploymentId, id } }, body: { recipients: chunk }, ...withSignal(signal) }),
        );
        merged.createdRecipients.push(...result.createdRecipients);
        merged.updatedRecipients.push(...result.updatedRecipients);
        merged.unchangedRecipients.push(...result.unchangedRecipients);
      }
      return merged;
    },
    async removeRecipients(deploymentId, id, recipients, { signal } = {}) {
      for (const chunk of chunks(recipients))
        unwrap(await api.DELETE(`${ONE}/recipients`, { params: { path: { deploymentId, id } }, body: { recipients: chunk }, ...withSignal(signal) }));
    },
    deliveries,
    sendNow: async (deploymentId, id, { signal } = {}) =>
      unwrap(await api.POST(`${ONE}/send-now`, { params: { path: { deploymentId, id } }, ...withSignal(signal) })),
    async waitForDelivery(deploymentId, id, deliveryId, options = {}) {
      const { signal } = options;
      const timeoutMs = options.timeoutMs ?? 10 * 60_000;
      const maxInterval = options.maxIntervalMs ?? 5000;
      const deadline = Date.now() + timeoutMs;
      let interval = options.intervalMs ?? 500;
      for (;;) {
        if (signal?.aborted) throw abortReason(signal);
        const current = await findDelivery(deploymentId, id, deliveryId, signal);
        options.onUpdate?.(current);
        if (isFinished(current)) return current;
        if (Date.now() + interval > deadline) throw new DeliveryWaitTimeoutError(current, timeoutMs);
        await sleep(interval, signal);
        interval = Math.min(interval * 2, maxInterval);
      }
    },
  };
}
