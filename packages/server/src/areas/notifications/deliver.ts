/*
 * The one place a claimed delivery is rendered and sent. The scheduler (scheduler.ts) claims each
 * occurrence once across processes and runs this in a job; rendering the dashboard and mailing it
 * plug in here, and nowhere else. Until they do, every delivery is recorded as not rendered, and
 * nothing pretends to have been sent.
 */

export interface DeliveryRecipient {
  /** The row of this recipient in this delivery (`notification_delivery_recipients.id`). */
  id: number;
  type: 'USER' | 'EMBED_USER' | 'SLACK';
  userId: number | null;
  embedUserId: number | null;
  email: string | null;
  /** The recipient's own security context for rendering (embed recipients), or null. */
  securityContext: Record<string, unknown> | null;
}

export interface DeliveryWork {
  tenantId: number;
  deploymentId: number;
  notificationId: number;
  dashboardId: number;
  deliveryId: number;
  /** The occurrence of the schedule (UTC ISO). */
  scheduledFor: string;
  /** False (`notificationEnabled` off): render into the history, send nothing. */
  send: boolean;
  format: 'png' | 'pdf';
  aiSummary: boolean;
  filters: unknown[] | null;
  timeGrains: unknown[] | null;
  memberSwitchers: unknown[] | null;
  recipients: DeliveryRecipient[];
  /** Aborted when the job is cancelled, times out, or its process stops. */
  signal: AbortSignal;
  /** A line in the job's log. */
  log(line: string): Promise<void>;
}

/** Where the outcome for each recipient is written (the deliveries history). */
export interface DeliveryRecorder {
  sent(recipientId: number): Promise<void>;
  /** One failed attempt for this recipient; `error` is readable in the history. */
  failed(recipientId: number, error: string): Promise<void>;
  /** Nothing was attempted for this recipient, for `reason`. */
  skipped(recipientId: number, reason: string): Promise<void>;
}

export interface DeliveryOutcome {
  status: 'succeeded' | 'failed';
  /** Shown in the history as the delivery's message. */
  message: string | null;
}

export const RENDERING_UNAVAILABLE = 'Rendering is not yet available: nothing was rendered or sent.';

/** Renders the delivery's dashboard and sends it to its recipients. */
export async function deliverNotification(work: DeliveryWork, record: DeliveryRecorder): Promise<DeliveryOutcome> {
  for (const recipient of work.recipients) await record.skipped(recipient.id, RENDERING_UNAVAILABLE);
  return { status: 'failed', message: RENDERING_UNAVAILABLE };
}
