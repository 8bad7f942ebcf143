import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { DELIVERY_JOB } from '../src/areas/notifications/scheduler.js';
import { storeFor, type Store } from '../src/db/database.js';
import { DIALECTS } from './harness.js';
import { serverEnv, type ServerEnv } from './server-env.js';
import { startServerProcess, type ServerProcess } from './server-process.js';
import { startSmtp, type TestSmtp } from './smtp-fixture.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

/** Reads `probe` until it holds (the servers work on their own clock); fails after `timeoutMs`. */
async function until<T>(probe: () => Promise<T>, holds: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (holds(value)) return value;
    if (Date.now() > deadline) throw new Error(`still not there after ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/*
 * Issue 18: several server processes never deliver the same occurrence twice. Two real server
 * processes over one store look for due occurrences every 100 ms; many notifications fall due at
 * once, and each occurrence is claimed by exactly one of them, with one job each, and mailed once:
 * a real SMTP server counts the mails. Due again at an
 * occurrence already delivered (a process that read a stale schedule), nothing is claimed twice.
 */
describe.each(DIALECTS)('notification deliveries across two server processes (%s)', (dialect) => {
  const adminKey = generateApiKey();
  const COUNT = 30;
  let env: ServerEnv;
  let a: ServerProcess;
  let b: ServerProcess;
  let store: Store;
  let smtp: TestSmtp;

  beforeAll(async () => {
    env = await serverEnv(dialect);
    smtp = await startSmtp();
    const mail = { SMTP_HOST: '127.0.0.1', SMTP_PORT: String(smtp.port), SMTP_FROM: 'reports@example.com' };
    const extra = { ...env.env, ...mail, ADMIN_API_KEY: adminKey, RATE_LIMIT_PER_MINUTE: '0', NOTIFICATIONS_TICK_MS: '100' };
    // One after the other: the first start bootstraps the tenant and writes the certificate.
    a = await startServerProcess(extra, env.dataDir);
    b = await startServerProcess(extra, env.dataDir);
    store = storeFor({ databaseUrl: env.env.DATABASE_URL ?? null, dataDir: env.dataDir });
    // Two process starts (migrations, pg-boss's schema) on a busy machine.
  }, 120_000);
  afterAll(async () => {
    await Promise.allSettled([a?.stop(), b?.stop()]);
    await store?.close();
    await smtp?.close();
    await env?.destroy();
  });

  it(
    'each due occurrence is claimed by one process, once, with one job, and mailed once; an occurrence due again is not claimed twice',
    { timeout: 90_000 },
    async () => {
      const tenant = await store.db.selectFrom('tenants').select('id').orderBy('id').executeTakeFirstOrThrow();
      const at = new Date().toISOString();
      const { id: deploymentId } = await store.db
        .insertInto('deployments')
        .values({ tenant_id: tenant.id, name: `notify-${dialect}`, settings: '{}', created_by: null, created_at: at, updated_at: at })
        .returning('id')
        .executeTakeFirstOrThrow();
      const workbookId = await new WorkspaceFixtures({ store, tenantId: tenant.id }, deploymentId).workbook('notified');
      const published = await b.post(`/api/v1/deployments/${deploymentId}/workbooks/${workbookId}/publish`, { config: { widgets: [] } }, adminKey);
      expect(published.status, published.text).toBe(200);

      const ids: number[] = [];
      for (let i = 0; i < COUNT; i++) {
        const server = i % 2 === 0 ? a : b;
        const made = await server.post(
          `/api/v1/deployments/${deploymentId}/notifications`,
          { scheduleType: 'DAILY', minute: 0, hour: 9, dashboardId: published.body.id },
          adminKey,
        );
        expect(made.status, made.text).toBe(200);
        ids.push(made.body.id);
        const added = await server.post(
          `/api/v1/deployments/${deploymentId}/notifications/${made.body.id}/recipients`,
          { recipients: [{ type: 'USER', email: 'admin@localhost' }] },
          adminKey,
        );
        expect(added.status, added.text).toBe(200);
      }
      // The most recent 09:00 UTC, already past: every notification falls due at it, at once.
      const now = new Date();
      const due = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), 9));
      if (due.getTime() > now.getTime()) due.setUTCDate(due.getUTCDate() - 1);
      const occurrence = due.toISOString();
      const makeDue = () => store.db.updateTable('notifications').set({ next_run_at: occurrence }).where('id', 'in', ids).execute();

      await makeDue();
      const deliveries = () => store.db.selectFrom('notification_deliveries').selectAll().where('notification_id', 'in', ids).execute();
      const finished = await until(deliveries, (rows) => rows.length >= COUNT && rows.every((r) => r.status === 'failed' || r.status === 'succeeded'));
      expect(finished).toHaveLength(COUNT);
      expect(new Set(finished.map((r) => r.notification_id)).size).toBe(COUNT);
      expect(new Set(finished.map((r) => r.scheduled_for))).toEqual(new Set([occurrence]));
      for (const row of finished) expect(row).toMatchObject({ status: 'succeeded', message: null });
      // A job is marked done just after its handler has finished the delivery: wait for that too.
      const jobs = await until(
        () => store.db.selectFrom('jobs').select(['id', 'payload', 'state']).where('kind', '=', DELIVERY_JOB).execute(),
        (rows) => rows.length >= COUNT && rows.every((j) => j.state !== 'running' && j.state !== 'queued'),
      );
      expect(jobs).toHaveLength(COUNT);
      expect(new Set(jobs.map((j) => (JSON.parse(j.payload) as { deliveryId: number }).deliveryId))).toEqual(new Set(finished.map((r) => r.id)));
      expect(jobs.every((j) => j.state === 'succeeded')).toBe(true);
      const recipients = await store.db
        .selectFrom('notification_delivery_recipients')
        .selectAll()
        .where(
          'delivery_id',
          'in',
          finished.map((r) => r.id),
        )
        .execute();
      expect(recipients).toHaveLength(COUNT);
      expect(recipients.every((r) => r.status === 'sent' && r.email === 'admin@localhost' && r.attempts === 1 && r.last_error === null)).toBe(true);

      // One mail per occurrence, each with its dashboard attached.
      expect(smtp.received).toHaveLength(COUNT);
      expect(
        smtp.received.every((m) => m.to.join() === 'admin@localhost' && m.mail.attachments.length === 1 && m.mail.attachments[0]!.contentType === 'image/png'),
      ).toBe(true);

      // The same occurrence due again: both processes look, and the unique key refuses a second claim.
      await makeDue();
      await until(
        () => store.db.selectFrom('notifications').select('next_run_at').where('id', 'in', ids).execute(),
        (rows) => rows.every((r) => r.next_run_at !== null && r.next_run_at > occurrence),
      );
      expect(await deliveries()).toHaveLength(COUNT);
      expect(await store.db.selectFrom('jobs').select('id').where('kind', '=', DELIVERY_JOB).execute()).toHaveLength(COUNT);
      expect(smtp.received).toHaveLength(COUNT);

      // The history reads the same from either process.
      const history = await b.get(`/api/v1/deployments/${deploymentId}/notifications/${ids[0]}/deliveries`, adminKey);
      expect(history.status, history.text).toBe(200);
      expect(history.body.items).toMatchObject([
        {
          scheduledFor: occurrence,
          status: 'succeeded',
          message: null,
          recipients: [{ type: 'USER', email: 'admin@localhost', status: 'sent', attempts: 1, lastError: null }],
        },
      ]);
      expect(a.errors().concat(b.errors())).toEqual([]);
    },
  );
});
