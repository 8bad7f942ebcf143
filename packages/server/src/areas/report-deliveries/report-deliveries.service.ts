import type { Caller } from '../../access/caller.js';
import type { Audit } from '../../audit/index.js';
import type { Store } from '../../db/database.js';
import type { DeploymentRow, Executor, ReportDeliveryRow, ReportDeliveryRunRow } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import type { Jobs } from '../../jobs/index.js';
import { afterId, pageRequest, toPage } from '../../shared/pagination.js';
import { ApiError, notFound } from '../../shared/problems.js';
import type { Clock } from '../../time.js';
import { findDeployment } from '../deployments/index.js';
import { findEmbedTenant, findEmbedUserByExternalId, normalizeExternalId, SYNTHETIC_EMAIL_DOMAIN } from '../embed-tenants/index.js';
import { findUserByEmail, findUserById } from '../users/index.js';
import {
  MAX_RECIPIENTS,
  type CreateReportDeliveryInput,
  type ListReportDeliveriesInput,
  type RecipientInput,
  type ReportDelivery,
  type ReportDeliveryRecipient,
  type ReportDeliveryRun,
  type RunResult,
  type RunsInput,
  type UpdateReportDeliveryInput,
} from './report-deliveries.schemas.js';
import {
  deleteDelivery,
  embedUsersByIds,
  findDelivery,
  findReport,
  insertDelivery,
  insertRun,
  listDeliveries,
  listRuns,
  updateDelivery,
  updateRun,
  usersByIds,
  type DeliveryChanges,
} from './report-deliveries.store.js';
import { canonicalTimeZone, checkHourlyCron, nextOccurrence } from '../../shared/hourly-cron.js';

/** The job kind that runs one delivery once. */
export const REPORT_DELIVERY_JOB = 'report-delivery';

/** A recipient as kept on the delivery: whom to mail, and whose rows they get. */
export interface StoredRecipient {
  type: 'USER' | 'EMBED_USER';
  userId: number | null;
  embedUserId: number | null;
  /** EMBED_USER: the security context their rows are read with. */
  securityContext: Record<string, unknown> | null;
}

export const storedRecipients = (row: Pick<ReportDeliveryRow, 'recipients'>): StoredRecipient[] => JSON.parse(row.recipients) as StoredRecipient[];

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Where an embed user is mailed: their address, unless it is a synthetic one (never deliverable),
 * else an email-shaped external id, as notifications decide; null when they have neither.
 */
export function embedAddress(email: string, externalId: string | null): string | null {
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  if (domain !== SYNTHETIC_EMAIL_DOMAIN && !domain.endsWith(`.${SYNTHETIC_EMAIL_DOMAIN}`)) return email;
  return externalId !== null && EMAIL.test(externalId) ? externalId : null;
}

function invalid(pointer: string, message: string, detail: string): ApiError {
  return new ApiError('VALIDATION_FAILED', detail, { errors: [{ pointer, message }] });
}

/** The delivery's recipients as shown: each with their address and names as they stand now. */
async function recipientViews(db: Executor, tenantId: number, rows: ReportDeliveryRow[]): Promise<Map<number, ReportDeliveryRecipient[]>> {
  const all = rows.flatMap(storedRecipients);
  const users = new Map((await usersByIds(db, tenantId, [...new Set(all.flatMap((r) => (r.userId === null ? [] : [r.userId])))])).map((u) => [u.id, u]));
  const embeds = new Map(
    (await embedUsersByIds(db, tenantId, [...new Set(all.flatMap((r) => (r.embedUserId === null ? [] : [r.embedUserId])))])).map((u) => [u.id, u]),
  );
  return new Map(
    rows.map((row) => [
      row.id,
      storedRecipients(row).map((r): ReportDeliveryRecipient => {
        const embed = r.embedUserId === null ? undefined : embeds.get(r.embedUserId);
        return {
          type: r.type,
          userId: r.userId,
          email: r.type === 'USER' ? (users.get(r.userId ?? 0)?.email ?? null) : embed ? embedAddress(embed.email, embed.external_id) : null,
          embedUserId: r.embedUserId,
          embedTenantName: embed?.tenant_name ?? null,
          externalId: embed?.external_id ?? null,
        };
      }),
    ]),
  );
}

function toDelivery(row: ReportDeliveryRow, recipients: ReportDeliveryRecipient[]): ReportDelivery {
  return {
    id: row.id,
    deploymentId: row.deployment_id,
    reportId: row.report_id,
    name: row.name,
    format: row.format as ReportDelivery['format'],
    cron: row.cron,
    timezone: row.timezone,
    paused: row.paused === 1,
    recipients,
    nextRunAt: row.paused === 1 ? null : row.next_run_at,
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toRun(row: ReportDeliveryRunRow): ReportDeliveryRun {
  return {
    id: row.id,
    deliveryId: row.delivery_id,
    trigger: row.trigger as ReportDeliveryRun['trigger'],
    scheduledFor: row.scheduled_for,
    status: row.status,
    jobId: row.job_id,
    message: row.message,
    recipients: row.results === null ? [] : (JSON.parse(row.results) as RunResult[]),
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

/**
 * Report deliveries of a deployment: a report's rows mailed as CSV or XLSX on a schedule, each recipient
 * sent the rows they may see. As with notifications, every operation is an admin's: a delivery
 * mails rows as other people see them, which only an admin may ask for (as `renderAs` is).
 */
export function reportDeliveriesService(store: Store, options: { now: Clock; audit: Audit; jobs: Jobs }) {
  const { db } = store;
  const at = () => options.now().toISOString();

  async function deploymentOf({ actor, access }: Caller, deploymentId: number, action: string): Promise<DeploymentRow> {
    access.requireAdmin(action);
    const row = await findDeployment(db, actor.tenantId, deploymentId);
    if (!row) throw notFound('DEPLOYMENT_NOT_FOUND', 'Deployment', deploymentId);
    return row;
  }

  async function requireDelivery(executor: Executor, tenantId: number, deploymentId: number, id: number): Promise<ReportDeliveryRow> {
    const row = await findDelivery(executor, tenantId, deploymentId, id);
    if (!row) throw new ApiError('REPORT_DELIVERY_NOT_FOUND', `Deployment ${deploymentId} has no report delivery ${id}.`);
    return row;
  }

  async function requireReport(tenantId: number, deploymentId: number, reportId: number) {
    const report = await findReport(db, tenantId, deploymentId, reportId);
    if (!report)
      throw new ApiError('REPORT_NOT_FOUND', `Deployment ${deploymentId} has no report ${reportId}.`, {
        errors: [{ pointer: '/body/reportId', message: 'names no report of this deployment' }],
      });
    const spec = report.spec === null ? null : (JSON.parse(report.spec) as unknown);
    const hasQuery = typeof spec === 'object' && spec !== null && 'query' in spec && (spec as { query: unknown }).query != null;
    if (!report.sql_query && !hasQuery)
      throw invalid('/body/reportId', 'has no query to run', `Report ${reportId} has neither an sqlQuery nor a spec with a query, so it has no rows to mail.`);
    return report;
  }

  /** Every recipient resolved to a user or an existing embed user with an address, or 400/404 before anything is written. */
  async function resolveRecipients(tenantId: number, entries: RecipientInput[]): Promise<StoredRecipient[]> {
    const out: StoredRecipient[] = [];
    const seen = new Set<string>();
    for (const [i, entry] of entries.entries()) {
      const pointer = `/body/recipients/${i}`;
      let recipient: StoredRecipient;
      if (entry.type === 'USER') {
        if ((entry.userId == null) === (entry.email == null))
          throw invalid(pointer, 'needs exactly one of userId and email', `Recipient ${i} (USER) is named by exactly one of userId and email.`);
        if (entry.embedTenantName != null || entry.externalId != null || entry.securityContext != null)
          throw invalid(pointer, 'has embed-user members', `Recipient ${i} is a USER: embedTenantName, externalId and securityContext are for EMBED_USER.`);
        const user = entry.userId != null ? await findUserById(db, tenantId, entry.userId) : await findUserByEmail(db, tenantId, entry.email as string);
        if (!user || user.deactivated_at !== null)
          throw new ApiError('USER_NOT_FOUND', `Recipient ${i}: no active user ${entry.userId ?? JSON.stringify(entry.email)}.`, {
            errors: [{ pointer, message: 'names no active user' }],
          });
        recipient = { type: 'USER', userId: user.id, embedUserId: null, securityContext: null };
      } else {
        if (entry.embedTenantName == null || entry.externalId == null)
          throw invalid(pointer, 'needs embedTenantName and externalId', `Recipient ${i} (EMBED_USER) is named by embedTenantName and externalId.`);
        if (entry.userId != null || entry.email != null)
          throw invalid(pointer, 'has user members', `Recipient ${i} is an EMBED_USER: userId and email are for USER.`);
        const embedTenant = await findEmbedTenant(db, tenantId, entry.embedTenantName.toLowerCase());
        const user = embedTenant && (await findEmbedUserByExternalId(db, tenantId, embedTenant.id, normalizeExternalId(entry.externalId)));
        if (!user)
          throw new ApiError('EMBED_USER_NOT_FOUND', `Recipient ${i}: embed tenant ${entry.embedTenantName} has no user ${JSON.stringify(entry.externalId)}.`, {
            errors: [{ pointer, message: 'names no embed user' }],
          });
        if (embedAddress(user.email, user.external_id) === null)
          throw invalid(
            pointer,
            'has no email address',
            `Recipient ${i}: embed user ${JSON.stringify(entry.externalId)} has neither an email address nor an email-shaped externalId to mail.`,
          );
        recipient = { type: 'EMBED_USER', userId: null, embedUserId: user.id, securityContext: (entry.securityContext as Record<string, unknown>) ?? {} };
      }
      const key = `${recipient.type}:${recipient.userId ?? recipient.embedUserId}`;
      if (seen.has(key)) throw invalid(pointer, 'is already a recipient', `Recipient ${i} is named twice; each recipient is listed once.`);
      seen.add(key);
      out.push(recipient);
    }
    if (out.length > MAX_RECIPIENTS)
      throw invalid('/body/recipients', `has more than ${MAX_RECIPIENTS} entries`, `A report delivery has at most ${MAX_RECIPIENTS} recipients.`);
    return out;
  }

  function nextRun(cron: string, timezone: string, paused: boolean): string | null {
    return paused ? null : (nextOccurrence(cron, timezone, options.now())?.toISOString() ?? null);
  }

  async function view(row: ReportDeliveryRow): Promise<ReportDelivery> {
    return toDelivery(row, (await recipientViews(db, row.tenant_id, [row])).get(row.id) ?? []);
  }

  /** Inserts a queued run of the delivery (pruning to the newest kept); the caller holds the delivery's lock or passes none. */
  async function enqueueRun(
    delivery: ReportDeliveryRow,
    trigger: 'schedule' | 'manual',
    scheduledFor: string | null,
    executor?: Executor,
  ): Promise<ReportDeliveryRunRow> {
    const add = (trx: Executor) =>
      insertRun(trx, {
        tenant_id: delivery.tenant_id,
        delivery_id: delivery.id,
        trigger,
        scheduled_for: scheduledFor,
        status: 'queued',
        job_id: null,
        message: null,
        results: null,
        created_at: at(),
        started_at: null,
        finished_at: null,
      });
    return executor ? add(executor) : serialized(store, lockKey.reportDelivery(delivery.id), add);
  }

  async function startJob(run: ReportDeliveryRunRow): Promise<ReportDeliveryRunRow> {
    // A process that only serves requests still runs the deliveries it enqueues.
    await options.jobs.start();
    const job = await options.jobs.enqueue(run.tenant_id, REPORT_DELIVERY_JOB, { runId: run.id });
    return (await updateRun(db, run.id, { job_id: job.id })) ?? { ...run, job_id: job.id };
  }

  /** Pauses or resumes: idempotent, so a second call changes nothing and records nothing. */
  async function setPaused(caller: Caller, deploymentId: number, id: number, paused: boolean): Promise<ReportDelivery> {
    const deployment = await deploymentOf(caller, deploymentId, paused ? 'pause report deliveries' : 'resume report deliveries');
    const { row, changed } = await serialized(store, lockKey.reportDelivery(id), async (trx) => {
      const current = await requireDelivery(trx, caller.actor.tenantId, deployment.id, id);
      if ((current.paused === 1) === paused) return { row: current, changed: false };
      const updated = await updateDelivery(trx, current.id, {
        paused: paused ? 1 : 0,
        // Resumed, the schedule runs from now: occurrences missed while paused are not made up.
        next_run_at: nextRun(current.cron, current.timezone, paused),
        updated_at: at(),
      });
      return { row: updated, changed: true };
    });
    if (changed)
      await options.audit.record(caller, { action: paused ? 'report-delivery.paused' : 'report-delivery.resumed', target: { deploymentId, deliveryId: id } });
    return view(row);
  }

  return {
    enqueueRun,
    startJob,

    async list(caller: Caller, deploymentId: number, input: ListReportDeliveriesInput) {
      const deployment = await deploymentOf(caller, deploymentId, 'list report deliveries');
      const page = pageRequest(input);
      const rows = await listDeliveries(db, caller.actor.tenantId, deployment.id, input.reportId ?? null, afterId(page), page.first + 1);
      const { items, pageInfo } = toPage(rows, page, (r) => [r.id]);
      const recipients = await recipientViews(db, caller.actor.tenantId, items);
      return { items: items.map((r) => toDelivery(r, recipients.get(r.id) ?? [])), pageInfo };
    },

    async get(caller: Caller, deploymentId: number, id: number): Promise<ReportDelivery> {
      const deployment = await deploymentOf(caller, deploymentId, 'view report deliveries');
      return view(await requireDelivery(db, caller.actor.tenantId, deployment.id, id));
    },

    async create(caller: Caller, deploymentId: number, input: CreateReportDeliveryInput): Promise<ReportDelivery> {
      const deployment = await deploymentOf(caller, deploymentId, 'create report deliveries');
      const tenantId = caller.actor.tenantId;
      const cron = checkHourlyCron(input.cron, 'a report delivery');
      const timezone = canonicalTimeZone(input.timezone ?? 'UTC');
      const report = await requireReport(tenantId, deployment.id, input.reportId);
      const recipients = await resolveRecipients(tenantId, input.recipients);
      const paused = input.paused === true;
      const stamp = at();
      const row = await insertDelivery(db, {
        tenant_id: tenantId,
        deployment_id: deployment.id,
        report_id: report.id,
        name: input.name?.trim() || report.title || report.name,
        format: input.format ?? 'csv',
        cron,
        timezone,
        recipients: JSON.stringify(recipients),
        paused: paused ? 1 : 0,
        next_run_at: nextRun(cron, timezone, paused),
        created_by: caller.actor.userId,
        created_at: stamp,
        updated_at: stamp,
      });
      await options.audit.record(caller, {
        action: 'report-delivery.created',
        target: { deploymentId: deployment.id, deliveryId: row.id },
        details: { reportId: report.id, cron, recipients: recipients.length },
      });
      return view(row);
    },

    /** Fields left out (or null) stay; recipients sent replace the list; a new schedule runs from now. */
    async update(caller: Caller, deploymentId: number, id: number, input: UpdateReportDeliveryInput): Promise<ReportDelivery> {
      const deployment = await deploymentOf(caller, deploymentId, 'change report deliveries');
      const tenantId = caller.actor.tenantId;
      const cron = input.cron == null ? undefined : checkHourlyCron(input.cron, 'a report delivery');
      const timezone = input.timezone == null ? undefined : canonicalTimeZone(input.timezone);
      await requireDelivery(db, tenantId, deployment.id, id);
      const recipients = input.recipients == null ? undefined : await resolveRecipients(tenantId, input.recipients);
      const row = await serialized(store, lockKey.reportDelivery(id), async (trx) => {
        const current = await requireDelivery(trx, tenantId, deployment.id, id);
        const changes: DeliveryChanges = {};
        if (input.name != null) changes.name = input.name.trim();
        if (input.format != null) changes.format = input.format;
        if (cron !== undefined) changes.cron = cron;
        if (timezone !== undefined) changes.timezone = timezone;
        if (recipients !== undefined) changes.recipients = JSON.stringify(recipients);
        if (cron !== undefined || timezone !== undefined)
          changes.next_run_at = nextRun(cron ?? current.cron, timezone ?? current.timezone, current.paused === 1);
        if (Object.keys(changes).length === 0) return current;
        return updateDelivery(trx, current.id, { ...changes, updated_at: at() });
      });
      const fields = Object.entries(input)
        .filter(([, v]) => v != null)
        .map(([k]) => k)
        .sort()
        .join(',');
      await options.audit.record(caller, { action: 'report-delivery.updated', target: { deploymentId, deliveryId: id }, details: { fields } });
      return view(row);
    },

    async remove(caller: Caller, deploymentId: number, id: number): Promise<void> {
      const deployment = await deploymentOf(caller, deploymentId, 'delete report deliveries');
      await serialized(store, lockKey.reportDelivery(id), async (trx) => {
        const row = await requireDelivery(trx, caller.actor.tenantId, deployment.id, id);
        await deleteDelivery(trx, row.id);
      });
      await options.audit.record(caller, { action: 'report-delivery.deleted', target: { deploymentId, deliveryId: id } });
    },

    pause: (caller: Caller, deploymentId: number, id: number) => setPaused(caller, deploymentId, id, true),
    resume: (caller: Caller, deploymentId: number, id: number) => setPaused(caller, deploymentId, id, false),

    /** Runs the delivery now (paused or not): a run is recorded as queued and a `report-delivery` job runs it. */
    async runNow(caller: Caller, deploymentId: number, id: number): Promise<ReportDeliveryRun> {
      const deployment = await deploymentOf(caller, deploymentId, 'run report deliveries');
      const row = await requireDelivery(db, caller.actor.tenantId, deployment.id, id);
      const run = await enqueueRun(row, 'manual', null);
      await options.audit.record(caller, { action: 'report-delivery.run', target: { deploymentId, deliveryId: id, runId: run.id } });
      return toRun(await startJob(run));
    },

    /** The delivery's runs, newest first, a page at a time (the newest 200 are kept). */
    async runs(caller: Caller, deploymentId: number, id: number, input: RunsInput) {
      const deployment = await deploymentOf(caller, deploymentId, 'view report delivery runs');
      const row = await requireDelivery(db, caller.actor.tenantId, deployment.id, id);
      const page = pageRequest(input);
      const rows = await listRuns(db, row.id, afterId(page), page.first + 1);
      const { items, pageInfo } = toPage(rows, page, (r) => [r.id]);
      return { items: items.map(toRun), pageInfo };
    },
  };
}
export type ReportDeliveriesService = ReturnType<typeof reportDeliveriesService>;
