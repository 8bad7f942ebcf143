import type { Mailer, OutgoingMail, SmtpConfig } from '../../mail/index.js';
import type { DashboardControls, Renderer, RenderResult, Viewer } from '../../render/index.js';
import { boundedRenderData, type Summariser, type SummariserConfig } from './summary.js';

/*
 * The one place a claimed delivery is rendered and sent. The scheduler (scheduler.ts) claims each
 * occurrence once across processes and runs this in a job. Each recipient gets the dashboard
 * rendered as themselves (their own row-level context), mailed as an attachment; a failed send is
 * tried again, with a growing wait, for that recipient only. A recipient is recorded `sent` as soon
 * as the SMTP server accepts their mail, and only recipients not sent are tried again, so nobody is
 * mailed twice by one delivery.
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
  /** Whose rows the recipient's render shows; null: they cannot be rendered for (SLACK, or an embed user since removed). */
  viewer: Viewer | null;
  /** The data of this recipient's latest earlier render of this notification (boundedRenderData), or null. */
  previousData: string | null;
}

export interface DeliveryWork {
  tenant: { id: number; slug: string };
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
  /** The data this recipient's render showed (boundedRenderData), kept for the next delivery's summary. */
  rendered(recipientId: number, data: string): Promise<void>;
}

export interface DeliveryOutcome {
  status: 'succeeded' | 'failed';
  /** Shown in the history as the delivery's message. */
  message: string | null;
}

/** How notifications are mailed: the SMTP server (null: none), and how often and how patiently a failed send is tried again. */
export interface NotificationMailOptions {
  smtp: SmtpConfig | null;
  /** Tries of one recipient's send in all (NOTIFICATION_SEND_ATTEMPTS, default 3). */
  attempts?: number;
  /** The wait before the second try; each later wait doubles it (NOTIFICATION_RETRY_BASE_MS, default 30 s). */
  retryBaseMs?: number;
  /** `notificationAiSummary`'s fallback writer (NOTIFICATION_SUMMARY_*), used where the account's AI settings give none; absent or null: none. */
  summariser?: SummariserConfig | null;
}

export interface DeliveryDeps {
  renderer: Renderer;
  /** Null: no SMTP server is configured. */
  mailer: Mailer | null;
  attempts: number;
  retryBaseMs: number;
  /** Null: no summariser is configured. */
  summariser: Summariser | null;
}

export const NOT_SENT_DISABLED = 'Rendered, not sent: the notification’s notificationEnabled is off.';
export const NOT_SENT_NO_SMTP = 'Rendered, not sent: no SMTP server is configured (SMTP_HOST).';
export const NOT_SENT_SLACK = 'Not sent: Slack delivery is not available; only email recipients are mailed.';
export const NOT_SENT_NO_EMAIL = 'Not sent: the recipient has no email address.';
export const NOT_SENT_GONE = 'Not sent: the recipient no longer exists.';
export const NO_SUMMARY_UNCONFIGURED = 'No AI summary: no summariser is configured (the account’s AI settings, or NOTIFICATION_SUMMARY_URL).';
export const NO_SUMMARY_FIRST = 'No AI summary for recipients without an earlier render to compare with.';

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Waits `ms`, or less when the job is aborted. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** A recipient's mail, held while the SMTP server refuses it. */
interface Outgoing {
  recipientId: number;
  mail: OutgoingMail;
}

/** A file name from the dashboard's title: letters, digits and dashes. */
export function attachmentName(title: string, scheduledFor: string, format: 'png' | 'pdf'): string {
  const base =
    title
      .normalize('NFKD')
      .replace(/[^A-Za-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80) || 'dashboard';
  return `${base}-${scheduledFor.slice(0, 10)}.${format}`;
}

/** Renders the delivery's dashboard for each recipient, as them, and mails it to those it may. */
/** A value with its object keys in order, so two equal contexts written in another order compare equal. */
function ordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(ordered);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, ordered((value as Record<string, unknown>)[key])]),
  );
}

/** Recipients who see exactly the same rows (one user; embed users with equal contexts) share one render. */
export const viewerKey = (viewer: Viewer): string => JSON.stringify(ordered(viewer));

export async function deliverNotification(work: DeliveryWork, record: DeliveryRecorder, deps: DeliveryDeps): Promise<DeliveryOutcome> {
  const controls = { filters: work.filters, timeGrains: work.timeGrains, memberSwitchers: work.memberSwitchers } as DashboardControls;
  const mailer = work.send ? deps.mailer : null;
  const notSent = !work.send ? NOT_SENT_DISABLED : deps.mailer === null ? NOT_SENT_NO_SMTP : null;
  // Why some mail carries no summary, said once in the delivery's message.
  const summaryNotes = new Set<string>();
  let failures = 0;
  let rendered = 0;

  /** The summary of what changed for this recipient, or null with the reason noted; a summariser's failure never stops the mail. */
  async function summaryFor(recipient: DeliveryRecipient, title: string, data: string): Promise<string | null> {
    if (deps.summariser === null || !(await deps.summariser.available(work.tenant.id))) {
      summaryNotes.add(NO_SUMMARY_UNCONFIGURED);
      return null;
    }
    if (recipient.previousData === null) {
      summaryNotes.add(NO_SUMMARY_FIRST);
      return null;
    }
    try {
      const reader = recipient.userId !== null ? { userId: recipient.userId } : recipient.embedUserId !== null ? { embedUserId: recipient.embedUserId } : null;
      return await deps.summariser.summarise(work.tenant.id, title, recipient.previousData, data, reader);
    } catch (error) {
      summaryNotes.add(`No AI summary for some recipients: ${messageOf(error)}.`);
      return null;
    }
  }

  /** One try of one recipient's mail; true once the SMTP server accepted it (and it is recorded `sent`). */
  async function trySend(m: Mailer, item: Outgoing, attempt: number): Promise<boolean> {
    try {
      await m.send(item.mail);
    } catch (error) {
      await record.failed(item.recipientId, messageOf(error));
      await work.log(`Sending to recipient ${item.recipientId} failed (attempt ${attempt}): ${messageOf(error)}`);
      return false;
    }
    // Written before anything else can try this recipient again.
    await record.sent(item.recipientId);
    return true;
  }

  // A render is kept only while a later recipient with the same viewer still needs it.
  const pendingUses = new Map<string, number>();
  for (const recipient of work.recipients) {
    if (recipient.type === 'SLACK' || recipient.viewer === null) continue;
    const key = viewerKey(recipient.viewer);
    pendingUses.set(key, (pendingUses.get(key) ?? 0) + 1);
  }
  const renders = new Map<string, Promise<RenderResult>>();
  const renderFor = (viewer: Viewer): Promise<RenderResult> => {
    const key = viewerKey(viewer);
    let render = renders.get(key);
    if (render === undefined) {
      render = deps.renderer.renderDashboard({
        tenant: work.tenant,
        deploymentId: work.deploymentId,
        dashboardId: work.dashboardId,
        viewer,
        format: work.format,
        ...controls,
      });
      renders.set(key, render);
    }
    const left = (pendingUses.get(key) ?? 1) - 1;
    pendingUses.set(key, left);
    if (left <= 0) renders.delete(key);
    return render;
  };

  // Each recipient rendered as themselves and mailed at once; only mails refused are held for another try.
  let retry: Outgoing[] = [];
  let served = 0;
  for (const recipient of work.recipients) {
    if (work.signal.aborted) break;
    served += 1;
    if (recipient.type === 'SLACK') {
      await record.skipped(recipient.id, NOT_SENT_SLACK);
      continue;
    }
    if (recipient.viewer === null) {
      await record.skipped(recipient.id, NOT_SENT_GONE);
      continue;
    }
    let page: RenderResult;
    try {
      page = await renderFor(recipient.viewer);
      rendered += 1;
    } catch (error) {
      // A dashboard that does not render will not render on a second try either.
      failures += 1;
      await record.failed(recipient.id, `Rendering failed: ${messageOf(error)}`);
      continue;
    }
    // Kept only where a summary will want it next time: the data is the recipient's rows.
    const data = work.aiSummary ? boundedRenderData(page.data) : '';
    if (work.aiSummary) await record.rendered(recipient.id, data);
    if (mailer === null) {
      await record.skipped(recipient.id, notSent ?? NOT_SENT_NO_SMTP);
      continue;
    }
    if (recipient.email === null) {
      await record.skipped(recipient.id, NOT_SENT_NO_EMAIL);
      continue;
    }
    const summary = work.aiSummary ? await summaryFor(recipient, page.title, data) : null;
    const when = `${page.title}, as of ${work.scheduledFor.replace('T', ' ').slice(0, 16)} UTC, is attached.`;
    const item: Outgoing = {
      recipientId: recipient.id,
      mail: {
        to: recipient.email,
        subject: page.title,
        text: summary === null ? when : `What changed since last time:\n${summary}\n\n${when}`,
        attachment: { filename: attachmentName(page.title, work.scheduledFor, work.format), contentType: page.contentType, content: page.bytes },
      },
    };
    if (!(await trySend(mailer, item, 1))) retry.push(item);
  }

  // The refused ones again, alone, after 1×, 2×, 4×… the base wait.
  for (let attempt = 2; mailer !== null && retry.length > 0 && attempt <= deps.attempts && !work.signal.aborted; attempt += 1) {
    await pause(deps.retryBaseMs * 2 ** (attempt - 2), work.signal);
    const still: Outgoing[] = [];
    for (const item of retry) if (work.signal.aborted || !(await trySend(mailer, item, attempt))) still.push(item);
    retry = still;
  }
  failures += retry.length;

  const total = work.recipients.length;
  const notes = [...summaryNotes].join(' ');
  const withNotes = (message: string | null) => (notes === '' ? message : message === null ? notes : `${message} ${notes}`);
  if (served < total) return { status: 'failed', message: withNotes(`Stopped after ${served} of ${total} recipient(s): the job was cancelled or timed out.`) };
  if (failures > 0)
    return { status: 'failed', message: withNotes(`${failures} of ${total} recipient(s) could not be delivered to; see each recipient’s lastError.`) };
  if (notSent !== null) return { status: 'succeeded', message: `${notSent} (${rendered} of ${total} recipient(s) rendered)` };
  return { status: 'succeeded', message: withNotes(null) };
}
