import type { Audit } from '../../audit/index.js';
import type { Store } from '../../db/database.js';
import type { ReportDeliveryRow, ReportDeliveryRunRow } from '../../db/tables.js';
import { lockKey } from '../../db/transactions.js';
import { DueClaims, type JobContext, type Jobs } from '../../jobs/index.js';
import type { Mailer } from '../../mail/index.js';
import type { SecurityContext } from '../../semantic-layer/query/access.js';
import type { Clock } from '../../time.js';
import type { DataApiGrant, DataApiService } from '../data-api/index.js';
import { embedSecurityContexts } from '../embed-tenants/index.js';
import { toCsv } from './csv.js';
import type { DeliveryFormat, RunResult } from './report-deliveries.schemas.js';
import { embedAddress, REPORT_DELIVERY_JOB, storedRecipients, type ReportDeliveriesService, type StoredRecipient } from './report-deliveries.service.js';
import {
  advanceDelivery,
  dueDeliveries,
  embedUsersByIds,
  findDeliveryById,
  findReport,
  findRun,
  startRun,
  updateRun,
  usersByIds,
} from './report-deliveries.store.js';
import { toXlsx, XLSX_CONTENT_TYPE } from './xlsx.js';

/** A run's job gets this long: one query per distinct recipient context, and a mail each. */
const RUN_TIMEOUT_MS = 15 * 60_000;

export const NOT_SENT_NO_SMTP = 'Not sent: no SMTP server is configured (SMTP_HOST).';
export const NOT_SENT_GONE = 'Not sent: the recipient no longer exists or is deactivated.';

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** A file name from the delivery's name: letters, digits and dashes, then the day and the format's extension. */
export function attachmentName(name: string, day: string, format: DeliveryFormat): string {
  const base =
    name
      .normalize('NFKD')
      .replace(/[^A-Za-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80) || 'report';
  return `${base}-${day}.${format}`;
}

/** A value with its object keys in order, so two equal contexts written in another order share one query. */
function ordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(ordered);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, ordered((value as Record<string, unknown>)[key])]),
  );
}

/** The attachment of one recipient's rows in the delivery's format. */
async function attachment(format: DeliveryFormat, filename: string, rows: Array<Record<string, unknown>>) {
  if (format === 'xlsx') return { filename, contentType: XLSX_CONTENT_TYPE, content: await toXlsx(rows) };
  return { filename, contentType: 'text/csv; charset=utf-8', content: Buffer.from(toCsv(rows), 'utf8') };
}

/**
 * Claims due deliveries once across processes and runs them as `report-delivery` jobs. The
 * due-time loop is the jobs service's `DueClaims` (jobs/due-claims.ts; tests drive it with
 * `tick()`): a claim moves `next_run_at` on with a compare-and-set, so of two processes seeing one
 * occurrence, one claims it, and a process that was away for several occurrences runs the newest only.
 *
 * A run reads the report's query once per distinct row-level context among its recipients (a
 * console user's own groups and attributes; an embed user's context as their embed session would
 * carry it, with the security context kept for them), through the data API as that recipient, and
 * mails each their rows as CSV or XLSX (the delivery's `format`); at most `maxRows` rows go in one attachment.
 */
export class ReportDeliveryScheduler {
  readonly #loop: DueClaims<ReportDeliveryRow, ReportDeliveryRunRow>;

  constructor(
    private readonly store: Store,
    jobs: Jobs,
    private readonly deliveries: ReportDeliveriesService,
    private readonly options: {
      now: Clock;
      audit: Audit;
      dataApi: DataApiService;
      mailer: Mailer | null;
      /** The most rows one recipient's attachment holds (MAX_ROWS unless configured). */
      maxRows: number;
      tickMs?: number;
      onError?: (error: unknown) => void;
    },
  ) {
    jobs.register<{ runId: number }, { status: string }>({
      kind: REPORT_DELIVERY_JOB,
      maxAttempts: 1,
      timeoutMs: RUN_TIMEOUT_MS,
      run: (ctx) => this.#run(ctx),
    });
    this.#loop = new DueClaims<ReportDeliveryRow, ReportDeliveryRunRow>(store, jobs, {
      name: 'report-deliveries.due',
      everyMs: options.tickMs ?? 30_000,
      ...(options.onError ? { onError: options.onError } : {}),
      now: options.now,
      due: dueDeliveries,
      lock: (delivery) => lockKey.reportDelivery(delivery.id),
      advance: advanceDelivery,
      record: (trx, delivery, scheduledFor) => this.deliveries.enqueueRun(delivery, 'schedule', scheduledFor, trx),
      enqueue: (run) => this.deliveries.startJob(run),
    });
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
  }

  /** Claims and enqueues what is due now; resolves with how many occurrences this call claimed. */
  tick(): Promise<number> {
    return this.#loop.tick();
  }

  /** The grants each recipient's query runs with, by recipient index; null for one who cannot be mailed any more. */
  async #grants(tenantId: number, recipients: StoredRecipient[]) {
    const { db } = this.store;
    const users = new Map(
      (
        await usersByIds(
          db,
          tenantId,
          recipients.flatMap((r) => (r.userId === null ? [] : [r.userId])),
        )
      ).map((u) => [u.id, u] as const),
    );
    const embedIds = recipients.flatMap((r) => (r.embedUserId === null ? [] : [r.embedUserId]));
    const embeds = new Map((await embedUsersByIds(db, tenantId, embedIds)).map((u) => [u.id, u] as const));
    const contexts: Map<number, SecurityContext> = await embedSecurityContexts(
      db,
      tenantId,
      embedIds,
      new Map(recipients.flatMap((r) => (r.embedUserId === null ? [] : [[r.embedUserId, r.securityContext ?? {}] as const]))),
    );
    return recipients.map((r): { email: string; grant: DataApiGrant } | null => {
      if (r.type === 'USER') {
        const user = users.get(r.userId ?? 0);
        if (!user || user.deactivated_at !== null) return null;
        // A console user's rows: their groups and attribute values, read when the query runs.
        return { email: user.email, grant: { scopes: null, userId: user.id, securityContext: {} } };
      }
      const embed = embeds.get(r.embedUserId ?? 0);
      const context = contexts.get(r.embedUserId ?? 0);
      const email = embed ? embedAddress(embed.email, embed.external_id) : null;
      if (!embed || !context || email === null) return null;
      return { email, grant: { scopes: ['sql-runner'], userId: 0, securityContext: context.securityContext, context } };
    });
  }

  async #run(ctx: JobContext<{ runId: number }>): Promise<{ status: string }> {
    const { db } = this.store;
    const stamp = () => this.options.now().toISOString();
    const run = await startRun(db, ctx.payload.runId, stamp());
    if (!run) return { status: 'taken' };
    const delivery = await findDeliveryById(db, run.delivery_id);
    if (!delivery) return { status: 'deleted' };
    const audit = (status: 'succeeded' | 'failed', details: Record<string, string | number | null>) =>
      this.options.audit.recordFor(
        delivery.tenant_id,
        { userId: delivery.created_by, email: null, credentialKind: 'report-delivery', credentialId: String(delivery.id) },
        { action: `report-delivery.run-${status}`, target: { deploymentId: delivery.deployment_id, deliveryId: delivery.id, runId: run.id }, details },
      );
    const finish = async (status: 'succeeded' | 'failed', message: string | null, results: RunResult[]) => {
      await updateRun(db, run.id, { status, message, results: JSON.stringify(results), finished_at: stamp() });
      await audit(status, { message, recipients: results.length, sent: results.filter((r) => r.status === 'sent').length });
      return { status };
    };
    try {
      const report = await findReport(db, delivery.tenant_id, delivery.deployment_id, delivery.report_id);
      if (!report) return await finish('failed', `Report ${delivery.report_id} no longer exists.`, []);
      const spec = report.spec === null ? null : (JSON.parse(report.spec) as { query?: unknown } | null);
      const request = report.sql_query ? { sql: report.sql_query } : spec && typeof spec === 'object' && spec.query != null ? { query: spec.query } : null;
      if (request === null) return await finish('failed', `Report ${report.id} has neither an sqlQuery nor a spec with a query.`, []);
      const tenant = await db.selectFrom('tenants').select(['id', 'slug']).where('id', '=', delivery.tenant_id).executeTakeFirstOrThrow();
      const recipients = storedRecipients(delivery);
      const grants = await this.#grants(delivery.tenant_id, recipients);
      const queries = new Map<string, Promise<Array<Record<string, unknown>>>>();
      const rowsFor = (grant: DataApiGrant) => {
        const key = JSON.stringify(ordered({ userId: grant.userId, context: grant.context ?? null }));
        let rows = queries.get(key);
        if (!rows) {
          rows = this.options.dataApi.runAs(tenant, delivery.deployment_id, grant, request).then((answer) => answer.data);
          queries.set(key, rows);
        }
        return rows;
      };
      const day = (run.scheduled_for ?? run.created_at).slice(0, 10);
      // Rows stored before XLSX existed, or written by hand, read as the default.
      const format: DeliveryFormat = delivery.format === 'xlsx' ? 'xlsx' : 'csv';
      const results: RunResult[] = [];
      for (const [i, recipient] of recipients.entries()) {
        const target = grants[i] ?? null;
        const base = { type: recipient.type, userId: recipient.userId, embedUserId: recipient.embedUserId, email: target?.email ?? null };
        if (ctx.signal.aborted) {
          results.push({ ...base, status: 'skipped', rows: null, truncated: false, error: 'Not sent: the job was cancelled or timed out.' });
          continue;
        }
        if (target === null) {
          results.push({ ...base, status: 'skipped', rows: null, truncated: false, error: NOT_SENT_GONE });
          continue;
        }
        let rows: Array<Record<string, unknown>>;
        try {
          rows = await rowsFor(target.grant);
        } catch (error) {
          results.push({ ...base, status: 'failed', rows: null, truncated: false, error: `The report's query failed: ${messageOf(error)}` });
          continue;
        }
        const { maxRows } = this.options;
        const truncated = rows.length > maxRows;
        const attached = truncated ? rows.slice(0, maxRows) : rows;
        if (this.options.mailer === null) {
          results.push({ ...base, status: 'skipped', rows: attached.length, truncated, error: NOT_SENT_NO_SMTP });
          continue;
        }
        const note = truncated ? ` Only the first ${maxRows} of ${rows.length} rows are attached.` : '';
        try {
          await this.options.mailer.send({
            to: target.email,
            subject: delivery.name,
            text: `${delivery.name}, as of ${(run.scheduled_for ?? stamp()).replace('T', ' ').slice(0, 16)} UTC: ${attached.length} row(s) attached as ${format.toUpperCase()}.${note}`,
            attachment: await attachment(format, attachmentName(delivery.name, day, format), attached),
          });
          results.push({ ...base, status: 'sent', rows: attached.length, truncated, error: null });
        } catch (error) {
          await ctx.log(`Sending to recipient ${i} failed: ${messageOf(error)}`);
          results.push({ ...base, status: 'failed', rows: attached.length, truncated, error: messageOf(error) });
        }
      }
      const failed = results.filter((r) => r.status === 'failed').length;
      const skipped = results.filter((r) => r.status === 'skipped').length;
      if (failed > 0)
        return await finish('failed', `${failed} of ${results.length} recipient(s) could not be delivered to; see each recipient's error.`, results);
      if (skipped > 0) return await finish('succeeded', `${skipped} of ${results.length} recipient(s) were not sent; see each recipient's error.`, results);
      return await finish('succeeded', null, results);
    } catch (error) {
      await finish('failed', messageOf(error), []);
      // The job fails with the run, so the jobs list and the run's row agree.
      throw error;
    }
  }

  /** A run by id (tests read it back). */
  run(id: number) {
    return findRun(this.store.db, id);
  }
}
