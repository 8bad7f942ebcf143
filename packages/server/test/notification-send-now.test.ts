import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem } from './harness.js';
import { startSmtp, type TestSmtp } from './smtp-fixture.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

/*
 * POST …/notifications/{id}/send-now: the notification is delivered at once through the job a
 * scheduled occurrence runs, to a real SMTP server, and the delivery joins the history marked
 * SEND_NOW; the schedule does not move; one click sends once.
 */
describe.each(DIALECTS)('sending a notification now (%s)', (dialect) => {
  let t: TestApp;
  let smtp: TestSmtp;
  let deploymentId: number;
  let dashboardId: number;

  beforeAll(async () => {
    smtp = await startSmtp();
    t = await TestApp.create(dialect, {
      notificationMail: {
        smtp: { host: '127.0.0.1', port: smtp.port, secure: false, user: null, password: null, from: 'reports@example.com' },
        attempts: 2,
        // A refused mail waits this long for its second try: a delivery held so stays running until cancelled.
        retryBaseMs: 3_600_000,
      },
    });
    deploymentId = await t.deployment('send-now');
    const workbookId = await new WorkspaceFixtures(t, deploymentId).workbook('send-now');
    const published = await t.request({
      method: 'POST',
      url: `/api/v1/deployments/${deploymentId}/workbooks/${workbookId}/publish`,
      body: { config: { widgets: [] } },
    });
    expect(published.statusCode, published.body).toBe(200);
    dashboardId = published.json().id;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  const base = () => `/api/v1/deployments/${deploymentId}/notifications`;
  const sendNow = (id: number, key?: string) => t.request({ method: 'POST', url: `${base()}/${id}/send-now`, ...(key ? { key } : {}) });
  const history = async (id: number) => {
    const res = await t.request({ url: `${base()}/${id}/deliveries` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().items as Array<Record<string, any>>;
  };
  /** A daily notification at 09:00 UTC, with these console users as recipients. */
  async function notification(emails: string[], extra: Record<string, unknown> = {}) {
    const made = await t.request({ method: 'POST', url: base(), body: { scheduleType: 'DAILY', minute: 0, hour: 9, dashboardId, ...extra } });
    expect(made.statusCode, made.body).toBe(200);
    const n = made.json();
    if (emails.length > 0) {
      const added = await t.request({
        method: 'POST',
        url: `${base()}/${n.id}/recipients`,
        body: { recipients: emails.map((email) => ({ type: 'USER', email })) },
      });
      expect(added.statusCode, added.body).toBe(200);
    }
    return n as { id: number; nextRunAt: string | null };
  }
  const mailsTo = (email: string) => smtp.received.filter((m) => m.to.includes(email));

  it('mails every recipient at once through the delivery job, records it in the history as SEND_NOW, and leaves the schedule where it was', async () => {
    const ann = await t.user('VIEWER');
    const bo = await t.user('EXPLORER');
    const n = await notification([ann.email, bo.email]);

    const sent = await sendNow(n.id);
    expect(sent.statusCode, sent.body).toBe(202);
    const queued = sent.json();
    expect(queued).toMatchObject({ notificationId: n.id, trigger: 'SEND_NOW', send: true, format: 'png', jobId: expect.any(Number), finishedAt: null });
    expect(['pending', 'running']).toContain(queued.status);
    expect(queued.recipients.map((r: { email: string }) => r.email)).toEqual([ann.email, bo.email]);

    expect((await t.app.services.jobs.waitFor(t.tenantId, queued.jobId)).state).toBe('succeeded');
    const [done, ...older] = await history(n.id);
    expect(older).toEqual([]);
    expect(done).toMatchObject({ id: queued.id, trigger: 'SEND_NOW', status: 'succeeded', finishedAt: expect.any(String) });
    expect(done!.recipients).toMatchObject([
      { email: ann.email, status: 'sent', attempts: 1, lastError: null },
      { email: bo.email, status: 'sent', attempts: 1, lastError: null },
    ]);
    for (const email of [ann.email, bo.email]) {
      const [mail, ...more] = mailsTo(email);
      expect(more).toEqual([]);
      expect(mail!.mail.attachments).toHaveLength(1);
      expect(mail!.mail.attachments[0]).toMatchObject({ contentType: 'image/png', filename: expect.stringMatching(/\.png$/) });
    }
    // The next occurrence is still the one the schedule named before.
    expect((await t.request({ url: `${base()}/${n.id}` })).json().nextRunAt).toBe(n.nextRunAt);
  });

  it('sends while the schedule is switched off, and the schedule stays off', async () => {
    const cy = await t.user('VIEWER');
    const n = await notification([cy.email]);
    const off = await t.request({ method: 'PUT', url: `${base()}/${n.id}`, body: { isEnabled: false } });
    expect(off.json()).toMatchObject({ isEnabled: false, nextRunAt: null });

    const sent = await sendNow(n.id);
    expect(sent.statusCode, sent.body).toBe(202);
    expect((await t.app.services.jobs.waitFor(t.tenantId, sent.json().jobId)).state).toBe('succeeded');
    expect(mailsTo(cy.email)).toHaveLength(1);
    expect((await t.request({ url: `${base()}/${n.id}` })).json()).toMatchObject({ isEnabled: false, nextRunAt: null });
  });

  it('is refused, recording nothing, for a notification with sending off or without recipients, one that does not exist, and a caller who may not change it', async () => {
    const dee = await t.user('VIEWER');
    const empty = await notification([]);
    problem(await sendNow(empty.id), 409, 'NOTIFICATION_NO_RECIPIENTS');
    expect(await history(empty.id)).toEqual([]);

    const quiet = await notification([dee.email], { notificationEnabled: false });
    problem(await sendNow(quiet.id), 409, 'NOTIFICATION_SENDING_OFF');
    expect(await history(quiet.id)).toEqual([]);

    problem(await sendNow(quiet.id + 1000), 404, 'NOTIFICATION_NOT_FOUND');

    // Changing a notification is an admin's; so is sending it.
    const ready = await notification([dee.email]);
    problem(await sendNow(ready.id, dee.key), 403, 'FORBIDDEN');
    expect(await history(ready.id)).toEqual([]);
    expect(mailsTo(dee.email)).toEqual([]);
  });

  it('sends once for calls made while a send-now is queued or running: they answer that delivery; once it is over, a call sends again', async () => {
    const eve = await t.user('VIEWER');
    const n = await notification([eve.email]);
    // Eve's mail is refused, so the delivery waits an hour for its second try: it stays running.
    smtp.refuse.set(eve.email, Infinity);

    const [first, second] = await Promise.all([sendNow(n.id), sendNow(n.id)]);
    expect(first.statusCode, first.body).toBe(202);
    expect(second.statusCode, second.body).toBe(202);
    expect(second.json().id).toBe(first.json().id);
    const again = await sendNow(n.id);
    expect(again.json().id).toBe(first.json().id);
    expect(await history(n.id)).toHaveLength(1);

    await t.app.services.jobs.cancel(t.tenantId, first.json().jobId);
    await t.app.services.jobs.waitFor(t.tenantId, first.json().jobId);
    smtp.refuse.delete(eve.email);

    const next = await sendNow(n.id);
    expect(next.statusCode, next.body).toBe(202);
    expect(next.json().id).not.toBe(first.json().id);
    expect((await t.app.services.jobs.waitFor(t.tenantId, next.json().jobId)).state).toBe('succeeded');
    const [latest, earlier] = await history(n.id);
    expect(latest).toMatchObject({ id: next.json().id, trigger: 'SEND_NOW', status: 'succeeded' });
    expect(earlier).toMatchObject({ id: first.json().id, trigger: 'SEND_NOW' });
    expect(earlier!.status).not.toBe('succeeded');
    expect(mailsTo(eve.email)).toHaveLength(1);
  });

  it('scheduled occurrences keep their own history entries, marked SCHEDULE', async () => {
    const fay = await t.user('VIEWER');
    const n = await notification([fay.email]);
    await t.store.db
      .updateTable('notifications')
      .set({ next_run_at: new Date(Date.now() - 1_000).toISOString() })
      .where('id', '=', n.id)
      .execute();
    expect(await t.app.services.notificationScheduler.tick()).toBe(1);
    const sent = await sendNow(n.id);
    expect(sent.statusCode, sent.body).toBe(202);
    const [now, scheduled] = await history(n.id);
    expect(now).toMatchObject({ trigger: 'SEND_NOW' });
    expect(scheduled).toMatchObject({ trigger: 'SCHEDULE' });
    for (const d of [now!, scheduled!]) await t.app.services.jobs.waitFor(t.tenantId, d.jobId);
    expect(mailsTo(fay.email)).toHaveLength(2);
  });
});
