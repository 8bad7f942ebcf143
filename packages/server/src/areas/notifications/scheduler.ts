import type { Clock } from '../../time.js';
import type { Store } from '../../db/database.js';
import type { Executor, NotificationDeliveryRow, NotificationRow } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import type { JobContext, Jobs, ScheduleHandle } from '../../jobs/index.js';
import { deliverNotification, type DeliveryDeps, type DeliveryRecipient } from './deliver.js';
import { embedRecipientContexts } from './recipient-context.js';
import {
  advanceSchedule,
  type DeliveryTrigger,
  deliveryRecipients,
  dueNotifications,
  finishDelivery,
  insertDelivery,
  insertDeliveryRecipients,
  orphanedDeliveries,
  previousRenderData,
  recordRecipient,
  setRenderData,
  setDeliveryJob,
  startDelivery,
} from './deliveries.store.js';
import { allRecipients, findNotificationById, findTenantOf } from './notifications.store.js';
import { catchUp } from './schedule.js';

export const DELIVERY_JOB = 'notification-delivery';
/** A delivery's job gets this long; rendering a dashboard for many recipients is not quick. */
const DELIVERY_TIMEOUT_MS = 30 * 60_000;
/** Due notifications read per statement; a tick reads again while pages come back full. */
const BATCH = 100;
/** A claimed delivery without a live job after this long lost its process between the claim and the enqueue. */
const ORPHAN_AFTER_MS = 60_000;

export interface SchedulerOptions {
  /** How often due occurrences are looked for (NOTIFICATIONS_TICK_MS); default 10 s. */
  tickMs?: number;
  /** The scheduler's clock; tests move it. */
  now: Clock;
  /** Names this process in `claimed_by`. */
  owner: string;
  /** What deliveries render and mail with. */
  delivery: DeliveryDeps;
  onError?: (error: unknown) => void;
}

/**
 * Runs notifications' schedules: every `tickMs` (and on `tick()`), claims each due occurrence
 * once across every process sharing the store, records a delivery with a row per recipient, and
 * enqueues a job on the jobs service that runs `deliverNotification` for it. A process that was
 * away for several occurrences of one schedule delivers only the newest of them.
 */
export class NotificationScheduler {
  readonly #loop: ScheduleHandle;
  #running: Promise<number> | null = null;
  #again = false;
  #closed = false;
  readonly #now: () => Date;

  constructor(
    private readonly store: Store,
    private readonly jobs: Jobs,
    private readonly options: SchedulerOptions,
  ) {
    this.#now = options.now;
    jobs.register<{ deliveryId: number }, { status: string }>({
      kind: DELIVERY_JOB,
      maxAttempts: 1,
      timeoutMs: DELIVERY_TIMEOUT_MS,
      run: (ctx) => this.#run(ctx),
    });
    // The due-time loop is one of the jobs service's schedules: it runs once they are started
    // (`jobs.startSchedules()`, or `start()` here), and `jobs.stop()` ends it.
    this.#loop = jobs.schedule({
      name: 'notifications.due',
      everyMs: options.tickMs ?? 10_000,
      run: () => this.tick(),
      runAtStart: true,
      ...(options.onError ? { onError: options.onError } : {}),
    });
  }

  start(): void {
    this.#loop.start();
  }

  /** Stops the loop and waits for a tick in progress, so nothing touches the store after it closes. */
  async stop(): Promise<void> {
    this.#closed = true;
    await this.#loop.stop();
    await this.#running;
  }

  /** Claims what is due now; resolves with how many occurrences this call claimed. One tick at a time; a call during one runs another after it. */
  tick(): Promise<number> {
    if (this.#closed) return Promise.resolve(0);
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = (async () => {
      let claimed = 0;
      do {
        this.#again = false;
        try {
          claimed += await this.#claimDue();
          await this.#requeueOrphans();
        } catch (error) {
          this.options.onError?.(error);
        }
      } while (this.#again && !this.#closed);
      return claimed;
    })().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  async #claimDue(): Promise<number> {
    let claimed = 0;
    for (;;) {
      const now = this.#now();
      const due = await dueNotifications(this.store.db, now.toISOString(), BATCH);
      for (const row of due) {
        if (this.#closed) return claimed;
        const deliveryId = await this.#claim(row, now);
        if (deliveryId === undefined) continue;
        claimed += 1;
        await this.enqueue(row.tenant_id, deliveryId);
      }
      if (due.length < BATCH) return claimed;
    }
  }

  /** One occurrence of one notification, claimed in one transaction; undefined when another process had it. */
  async #claim(row: NotificationRow, now: Date): Promise<number | undefined> {
    if (row.next_run_at === null) return undefined;
    const { latest, following } = catchUp(row.cron_expression, row.timezone, new Date(row.next_run_at), now);
    return serialized(this.store, lockKey.notification(row.id), async (trx) => {
      if (!(await advanceSchedule(trx, row.id, row.next_run_at as string, following?.toISOString() ?? null))) return undefined;
      const delivery = await this.record(trx, row, { trigger: 'SCHEDULE', scheduledFor: latest.toISOString(), at: now.toISOString() });
      return delivery?.id;
    });
  }

  /**
   * Records a delivery of the notification as it is now, with a row per current recipient, inside
   * the caller's transaction (which holds the notification's lock). A scheduled occurrence claimed
   * before answers undefined. `enqueue` then hands it to the delivery job.
   */
  async record(
    trx: Executor,
    row: NotificationRow,
    { trigger, scheduledFor, at }: { trigger: DeliveryTrigger; scheduledFor: string; at: string },
  ): Promise<NotificationDeliveryRow | undefined> {
    const delivery = await insertDelivery(trx, {
      tenant_id: row.tenant_id,
      notification_id: row.id,
      scheduled_for: scheduledFor,
      claimed_at: at,
      claimed_by: this.options.owner,
      job_id: null,
      status: 'pending',
      send: row.notification_enabled,
      format: row.notification_format,
      message: null,
      finished_at: null,
      trigger,
    });
    if (!delivery) return undefined;
    const recipients = await allRecipients(trx, row.tenant_id, row.id);
    await insertDeliveryRecipients(
      trx,
      recipients.map((r) => ({
        tenant_id: row.tenant_id,
        delivery_id: delivery.id,
        type: r.type,
        user_id: r.user_id,
        embed_user_id: r.embed_user_id,
        email: r.user_email ?? r.embed_email,
        status: 'pending',
        last_error: null,
        updated_at: at,
      })),
    );
    return delivery;
  }

  /** Starts a recorded delivery's job; answers the delivery with its job id. */
  async enqueue(tenantId: number, deliveryId: number): Promise<number> {
    // A process that only serves requests still runs the deliveries it claims.
    await this.jobs.start();
    const job = await this.jobs.enqueue(tenantId, DELIVERY_JOB, { deliveryId });
    await setDeliveryJob(this.store.db, deliveryId, job.id);
    return job.id;
  }

  /** Deliveries whose process stopped between the claim and the enqueue get a job; the first job to start one takes it. */
  async #requeueOrphans(): Promise<void> {
    const before = new Date(this.#now().getTime() - ORPHAN_AFTER_MS).toISOString();
    for (const delivery of await orphanedDeliveries(this.store.db, before, BATCH)) await this.enqueue(delivery.tenant_id, delivery.id);
  }

  async #run(ctx: JobContext<{ deliveryId: number }>): Promise<{ status: string }> {
    const { db } = this.store;
    const delivery = await startDelivery(db, ctx.payload.deliveryId, ctx.id);
    if (!delivery) return { status: 'taken' };
    const notification = await findNotificationById(db, delivery.notification_id);
    if (!notification) return { status: 'deleted' };
    const tenant = await findTenantOf(db, delivery.tenant_id);
    const rows = await deliveryRecipients(db, [delivery.id]);
    const contexts = new Map(
      (await allRecipients(db, delivery.tenant_id, notification.id)).map((r) => [`${r.user_id}:${r.embed_user_id}`, r.security_context]),
    );
    const securityContextOf = (r: { user_id: number | null; embed_user_id: number | null }) => {
      const context = contexts.get(`${r.user_id}:${r.embed_user_id}`) ?? null;
      return context === null ? null : (JSON.parse(context) as Record<string, unknown>);
    };
    const previous = notification.notification_ai_summary === 1 ? await previousRenderData(db, notification.id, delivery.id) : new Map<string, string>();
    const embedIds = rows.flatMap((r) => (r.embed_user_id === null ? [] : [r.embed_user_id]));
    const embedContexts = await embedRecipientContexts(
      db,
      delivery.tenant_id,
      embedIds,
      new Map(rows.flatMap((r) => (r.embed_user_id === null ? [] : [[r.embed_user_id, securityContextOf(r) ?? {}]]))),
    );
    const recipients: DeliveryRecipient[] = rows.map((r) => {
      const embed = r.embed_user_id === null ? undefined : embedContexts.get(r.embed_user_id);
      return {
        id: r.id,
        type: r.type as DeliveryRecipient['type'],
        userId: r.user_id,
        embedUserId: r.embed_user_id,
        email: r.email,
        securityContext: securityContextOf(r),
        // A console user's rows: their groups and attribute values, read when the queries run.
        viewer: r.type === 'USER' && r.user_id !== null ? { userId: r.user_id } : embed ? { context: embed } : null,
        previousData: previous.get(`${r.user_id}:${r.embed_user_id}`) ?? null,
      };
    });
    const json = (text: string | null) => (text === null ? null : (JSON.parse(text) as unknown[]));
    const stamp = () => this.#now().toISOString();
    try {
      const outcome = await deliverNotification(
        {
          tenant: { id: tenant.id, slug: tenant.slug },
          deploymentId: notification.deployment_id,
          notificationId: notification.id,
          dashboardId: notification.dashboard_id,
          deliveryId: delivery.id,
          scheduledFor: delivery.scheduled_for,
          send: delivery.send === 1,
          format: delivery.format as 'png' | 'pdf',
          aiSummary: notification.notification_ai_summary === 1,
          filters: json(notification.filters),
          timeGrains: json(notification.time_grains),
          memberSwitchers: json(notification.member_switchers),
          recipients,
          signal: ctx.signal,
          log: ctx.log,
        },
        {
          sent: (id) => recordRecipient(db, delivery.id, id, 'sent', null, true, stamp()),
          failed: (id, error) => recordRecipient(db, delivery.id, id, 'failed', error, true, stamp()),
          skipped: (id, reason) => recordRecipient(db, delivery.id, id, 'skipped', reason, false, stamp()),
          rendered: (id, data) => setRenderData(db, delivery.id, id, data),
        },
        this.options.delivery,
      );
      await finishDelivery(db, delivery.id, outcome.status, outcome.message, stamp());
      return { status: outcome.status };
    } catch (error) {
      await finishDelivery(db, delivery.id, 'failed', error instanceof Error ? error.message : String(error), stamp());
      throw error;
    }
  }
}
