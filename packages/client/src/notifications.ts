import { unwrap } from './errors.js';
import { DEFAULT_PAGE_SIZE, paginate, type ListOptions, type RawClient } from './pagination.js';
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
    deliveries: (deploymentId, id, { signal } = {}) =>
      paginate(async (after) =>
        unwrap(
          await api.GET(`${ONE}/deliveries`, { params: { path: { deploymentId, id }, query: { first: DEFAULT_PAGE_SIZE, after } }, ...withSignal(signal) }),
        ),
      ),
  };
}
