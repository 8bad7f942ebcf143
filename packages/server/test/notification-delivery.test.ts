import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PNG } from 'pngjs';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import {
  deliverNotification,
  NO_SUMMARY_FIRST,
  NO_SUMMARY_UNCONFIGURED,
  NOT_SENT_DISABLED,
  type DeliveryRecipient,
} from '../src/areas/notifications/deliver.js';
import { createMailer, Masked } from '../src/mail/index.js';
import type { Renderer } from '../src/render/index.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { DIALECTS } from './harness.js';
import { DASHBOARD_TITLE, renderShop, type RenderShop } from './render-fixtures.js';
import { startSmtp, type TestSmtp } from './smtp-fixture.js';

/*
 * Issue 18, "Delivery": a due notification renders its dashboard for each recipient as that
 * recipient (their own row-level context) and mails it through a real SMTP server; a recipient
 * whose send fails is tried again, alone, and nobody is mailed twice.
 */

async function pdfText(bytes: Buffer): Promise<string> {
  const doc = await getDocument({ data: new Uint8Array(bytes), useSystemFonts: false, isEvalSupported: false }).promise;
  const parts: string[] = [];
  for (let i = 1; i <= doc.numPages; i++) {
    const content = await (await doc.getPage(i)).getTextContent();
    parts.push(content.items.map((item) => ('str' in item ? item.str : '')).join(' '));
  }
  await doc.destroy();
  return parts.join('\n');
}

describe('SMTP configuration', () => {
  it('is off without SMTP_HOST; with it, the defaults; the password (and the summariser’s key) never shows in the printed configuration', () => {
    expect(loadConfig({}).smtp).toBeNull();
    const config = loadConfig({ SMTP_HOST: 'mail.example.com', SMTP_USER: 'reports', SMTP_PASSWORD: 'hunter2-secret', ADMIN_EMAIL: 'ops@example.com' });
    expect(config.smtp).toMatchObject({ host: 'mail.example.com', port: 587, secure: false, user: 'reports', from: 'ops@example.com' });
    expect(config.smtp?.password?.reveal()).toBe('hunter2-secret');
    expect(JSON.stringify(config)).not.toContain('hunter2-secret');
    expect(inspect(config, { depth: 10 })).not.toContain('hunter2-secret');
    expect(loadConfig({ SMTP_HOST: 'mail.example.com', SMTP_SECURE: 'true' }).smtp).toMatchObject({ port: 465, secure: true });
    expect(() => loadConfig({ SMTP_HOST: 'mail.example.com', SMTP_SECURE: 'yes', SMTP_FROM: 'nobody', SMTP_PASSWORD: 'x' })).toThrow(ConfigError);
    const summary = loadConfig({ NOTIFICATION_SUMMARY_URL: 'http://127.0.0.1:9/v1/chat/completions', NOTIFICATION_SUMMARY_API_KEY: 'sk-very-secret' });
    expect(summary.summariser).toMatchObject({ url: 'http://127.0.0.1:9/v1/chat/completions', model: 'gpt-4o-mini' });
    expect(JSON.stringify(summary) + inspect(summary, { depth: 10 })).not.toContain('sk-very-secret');
    expect(() => loadConfig({ NOTIFICATION_SUMMARY_URL: 'http://127.0.0.1:9/v1/chat/completions' })).toThrow(
      'NOTIFICATION_SUMMARY_URL needs NOTIFICATION_SUMMARY_API_KEY',
    );
    const problems = (() => {
      try {
        loadConfig({ SMTP_SECURE: 'yes', SMTP_FROM: 'nobody', SMTP_USER: 'u' });
        return null;
      } catch (error) {
        return (error as ConfigError).problems;
      }
    })();
    expect(problems).toEqual([
      'SMTP_SECURE must be "true" (TLS from the start, usually port 465) or "false" (STARTTLS when offered), got "yes"',
      'SMTP_FROM must be an email address, got "nobody"',
      'SMTP_USER and SMTP_PASSWORD need SMTP_HOST (the SMTP server to sign in to)',
    ]);
  });
});

/** A stand-in for an OpenAI-compatible summariser: only POST /v1/chat/completions, answering one fixed sentence. */
async function startSummariser() {
  const requests: Array<{ authorization: string | undefined; body: { model: string; messages: Array<{ role: string; content: string }> } }> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      requests.push({ authorization: req.headers.authorization, body: JSON.parse(body) });
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'Revenue fell from 180 to 100.' } }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
  return { url, requests, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('notificationAiSummary without a summariser', () => {
  it('mails the dashboard saying nothing of a summary, and the delivery’s message says why', async () => {
    const smtp = await startSmtp();
    const mailer = createMailer({ host: '127.0.0.1', port: smtp.port, secure: false, user: null, password: null, from: 'reports@example.com' });
    try {
      const page = { title: 'Weekly', svg: '<svg/>', width: 10, height: 10, data: [], bytes: Buffer.from('%PDF-1.4'), contentType: 'application/pdf' as const };
      const renderer = { renderDashboard: async () => page } as unknown as Renderer;
      const recipient: DeliveryRecipient = {
        id: 1,
        type: 'USER',
        userId: 1,
        embedUserId: null,
        email: 'ann@example.com',
        securityContext: null,
        viewer: { userId: 1 },
        previousData: '[]',
      };
      const outcomes: string[] = [];
      const outcome = await deliverNotification(
        {
          tenant: { id: 1, slug: 'default' },
          deploymentId: 1,
          notificationId: 1,
          dashboardId: 1,
          deliveryId: 1,
          scheduledFor: '2026-07-01T09:00:00.000Z',
          send: true,
          format: 'pdf',
          aiSummary: true,
          filters: null,
          timeGrains: null,
          memberSwitchers: null,
          recipients: [recipient],
          signal: new AbortController().signal,
          log: async () => {},
        },
        {
          sent: async (id) => void outcomes.push(`sent ${id}`),
          failed: async (id, e) => void outcomes.push(`failed ${id} ${e}`),
          skipped: async (id, r) => void outcomes.push(`skipped ${id} ${r}`),
          rendered: async () => {},
        },
        { renderer, mailer, summariser: null, attempts: 1, retryBaseMs: 0 },
      );
      expect(outcome).toEqual({ status: 'succeeded', message: NO_SUMMARY_UNCONFIGURED });
      expect(outcomes).toEqual(['sent 1']);
      expect(smtp.received).toHaveLength(1);
      expect(smtp.received[0]!.mail.text).not.toMatch(/changed|summary/i);
      expect(smtp.received[0]!.mail.text).toContain('Weekly, as of 2026-07-01 09:00 UTC, is attached.');
    } finally {
      mailer.close();
      await smtp.close();
    }
  });
});

describe('recipients who see the same rows', () => {
  it('share one render: the same user, or embed users with equal contexts (in any key order); everyone else is rendered as themselves, and everyone is mailed', async () => {
    const smtp = await startSmtp();
    const mailer = createMailer({ host: '127.0.0.1', port: smtp.port, secure: false, user: null, password: null, from: 'reports@example.com' });
    try {
      const viewers: unknown[] = [];
      const renderer = {
        renderDashboard: async (request: { viewer: unknown }) => {
          viewers.push(request.viewer);
          return {
            title: 'Weekly',
            svg: '<svg/>',
            width: 10,
            height: 10,
            data: [],
            bytes: Buffer.from(`%PDF-1.4 ${viewers.length}`),
            contentType: 'application/pdf' as const,
          };
        },
      } as unknown as Renderer;
      const embed = (id: number, context: Record<string, unknown>): DeliveryRecipient => ({
        id,
        type: 'EMBED_USER',
        userId: null,
        embedUserId: id,
        email: `e${id}@example.com`,
        securityContext: null,
        viewer: { context: context as never },
        previousData: null,
      });
      const recipients: DeliveryRecipient[] = [
        embed(1, { userId: null, groups: ['eu'], userAttributes: { region: 'EU' }, securityContext: { tenant: 'acme', team: 7 } }),
        { id: 2, type: 'USER', userId: 5, embedUserId: null, email: 'ann@example.com', securityContext: null, viewer: { userId: 5 }, previousData: null },
        embed(3, { securityContext: { team: 7, tenant: 'acme' }, userAttributes: { region: 'EU' }, groups: ['eu'], userId: null }),
        embed(4, { userId: null, groups: ['us'], userAttributes: { region: 'US' }, securityContext: { tenant: 'acme', team: 7 } }),
        { id: 5, type: 'USER', userId: 6, embedUserId: null, email: 'bo@example.com', securityContext: null, viewer: { userId: 6 }, previousData: null },
      ];
      const outcomes: string[] = [];
      await deliverNotification(
        {
          tenant: { id: 1, slug: 'default' },
          deploymentId: 1,
          notificationId: 1,
          dashboardId: 1,
          deliveryId: 1,
          scheduledFor: '2026-07-01T09:00:00.000Z',
          send: true,
          format: 'pdf',
          aiSummary: false,
          filters: null,
          timeGrains: null,
          memberSwitchers: null,
          recipients,
          signal: new AbortController().signal,
          log: async () => {},
        },
        {
          sent: async (id) => void outcomes.push(`sent ${id}`),
          failed: async (id, e) => void outcomes.push(`failed ${id} ${e}`),
          skipped: async (id, r) => void outcomes.push(`skipped ${id} ${r}`),
          rendered: async () => {},
        },
        { renderer, mailer, summariser: null, attempts: 1, retryBaseMs: 0 },
      );
      // Four viewers: the EU embed context once for recipients 1 and 3, then the user, the US embed user and the other user.
      expect(viewers).toHaveLength(4);
      expect(outcomes.sort()).toEqual(['sent 1', 'sent 2', 'sent 3', 'sent 4', 'sent 5']);
      const attachmentOf = (to: string) => smtp.received.find((m) => m.to.includes(to))!.mail.attachments[0]!.content.toString();
      expect(attachmentOf('e1@example.com')).toBe(attachmentOf('e3@example.com'));
      expect(new Set(['e1@example.com', 'ann@example.com', 'e4@example.com', 'bo@example.com'].map(attachmentOf)).size).toBe(4);
    } finally {
      mailer.close();
      await smtp.close();
    }
  });
});

describe.each(DIALECTS)('notification delivery by mail (%s)', (dialect) => {
  let smtp: TestSmtp;
  let summariser: Awaited<ReturnType<typeof startSummariser>>;
  let shop: RenderShop;
  const base = () => `/api/v1/deployments/${shop.deploymentId}/notifications`;

  beforeAll(async () => {
    smtp = await startSmtp();
    summariser = await startSummariser();
    shop = await renderShop(dialect, {
      notificationMail: {
        smtp: { host: '127.0.0.1', port: smtp.port, secure: false, user: null, password: null, from: 'reports@example.com' },
        attempts: 3,
        retryBaseMs: 1,
        summariser: { url: summariser.url, apiKey: new Masked('summary-key'), model: 'stand-in' },
      },
    });
    // Embed recipients see what the workbook shares with their embed tenant.
    const share = await shop.t.request({
      method: 'PUT',
      url: `/api/v1/deployments/${shop.deploymentId}/workbooks/${shop.workbookId}/embed-access`,
      body: { embedTenantName: 'acme', action: 'read' },
    });
    if (share.statusCode >= 300) {
      await shop.t.request({ method: 'POST', url: '/api/v1/embed-tenants/acme/user', body: { externalId: 'seed' } });
      const again = await shop.t.request({
        method: 'PUT',
        url: `/api/v1/deployments/${shop.deploymentId}/workbooks/${shop.workbookId}/embed-access`,
        body: { embedTenantName: 'acme', action: 'read' },
      });
      expect(again.statusCode, again.body).toBeLessThan(300);
    }
  }, 180_000);
  afterAll(async () => {
    await shop?.close();
    await smtp?.close();
    await summariser?.close();
  });

  /** A notification with these recipients, due now; runs its delivery and answers its history entry. */
  async function deliver(body: Record<string, unknown>, recipients: unknown[]) {
    const made = await shop.t.request({
      method: 'POST',
      url: base(),
      body: { scheduleType: 'DAILY', minute: 0, hour: 9, dashboardId: shop.dashboardId, ...body },
    });
    expect(made.statusCode, made.body).toBe(200);
    const id = made.json().id as number;
    const added = await shop.t.request({ method: 'POST', url: `${base()}/${id}/recipients`, body: { recipients } });
    expect(added.statusCode, added.body).toBe(200);
    return deliverAgain(id);
  }
  /** Makes notification `id` due now again and runs that delivery. */
  async function deliverAgain(id: number) {
    await shop.t.store.db
      .updateTable('notifications')
      .set({ next_run_at: new Date(Date.now() - 1_000).toISOString() })
      .where('id', '=', id)
      .execute();
    expect(await shop.t.app.services.notificationScheduler.tick()).toBe(1);
    const pending = (await shop.t.request({ url: `${base()}/${id}/deliveries` })).json().items[0];
    await shop.t.app.services.jobs.waitFor(shop.t.tenantId, pending.jobId);
    const history = await shop.t.request({ url: `${base()}/${id}/deliveries` });
    expect(history.statusCode, history.body).toBe(200);
    return history.json().items[0];
  }
  const mailsTo = (address: string) => smtp.received.filter((m) => m.to.includes(address));

  it(
    'mails each recipient the PDF rendered with their own rows: console users by their attributes, an embed user by theirs',
    { timeout: 120_000 },
    async () => {
      const embedAddress = `us-viewer-${dialect}@acme.example`;
      const delivery = await deliver({ notificationFormat: 'pdf' }, [
        { type: 'USER', userId: shop.eu.userId },
        { type: 'USER', userId: shop.us.userId },
        { type: 'EMBED_USER', embedTenantName: 'acme', externalId: embedAddress, userAttributes: [{ name: 'region', value: 'US' }] },
      ]);
      expect(delivery).toMatchObject({ status: 'succeeded', message: null });
      expect(delivery.recipients.map((r: { status: string; attempts: number; lastError: string | null }) => [r.status, r.attempts, r.lastError])).toEqual([
        ['sent', 1, null],
        ['sent', 1, null],
        ['sent', 1, null],
      ]);
      const texts: Record<string, string> = {};
      for (const address of [shop.eu.email, shop.us.email, embedAddress]) {
        const mails = mailsTo(address);
        expect(mails).toHaveLength(1);
        const { mail } = mails[0]!;
        expect(mail.subject).toBe(DASHBOARD_TITLE);
        expect(mail.from?.text).toBe('reports@example.com');
        expect(mail.attachments).toHaveLength(1);
        const [file] = mail.attachments;
        expect(file!.contentType).toBe('application/pdf');
        expect(file!.filename).toMatch(/^Regional-sales-\d{4}-\d{2}-\d{2}\.pdf$/);
        texts[address] = await pdfText(file!.content);
        expect(texts[address]).toContain(DASHBOARD_TITLE);
      }
      // EU: revenue 180 (orders 1, 2 and 4), Ada and Cy; US: revenue 70, Bo only.
      expect(texts[shop.eu.email]).toContain('180');
      expect(texts[shop.eu.email]).toContain('Ada');
      expect(texts[shop.eu.email]).not.toContain('Bo ');
      for (const us of [shop.us.email, embedAddress]) {
        expect(texts[us]).toContain('70');
        expect(texts[us]).toContain('Bo');
        expect(texts[us]).not.toContain('Ada');
      }
    },
  );

  it(
    'a recipient the SMTP server refuses is tried again alone: refused once, mailed once; refused always, failed with the server’s reply; the others mailed once',
    { timeout: 120_000 },
    async () => {
      const ok = await shop.t.user('VIEWER');
      const flaky = await shop.t.user('VIEWER');
      const gone = await shop.t.user('VIEWER');
      smtp.refuse.set(flaky.email, 1);
      smtp.refuse.set(gone.email, Infinity);
      const delivery = await deliver({ notificationFormat: 'png' }, [
        { type: 'USER', userId: ok.userId },
        { type: 'USER', userId: flaky.userId },
        { type: 'USER', userId: gone.userId },
      ]);
      expect(delivery.status).toBe('failed');
      expect(delivery.message).toContain('1 of 3');
      const byEmail = Object.fromEntries(delivery.recipients.map((r: { email: string }) => [r.email, r]));
      expect(byEmail[ok.email]).toMatchObject({ status: 'sent', attempts: 1, lastError: null });
      expect(byEmail[flaky.email]).toMatchObject({ status: 'sent', attempts: 2, lastError: null });
      expect(byEmail[gone.email]).toMatchObject({ status: 'failed', attempts: 3, lastError: expect.stringContaining(`Mailbox ${gone.email} is unavailable`) });
      // The SMTP server was asked once for the first, twice for the refused-once, three times for the other.
      expect(smtp.tried.filter((a) => a === ok.email)).toHaveLength(1);
      expect(smtp.tried.filter((a) => a === flaky.email)).toHaveLength(2);
      expect(smtp.tried.filter((a) => a === gone.email)).toHaveLength(3);
      expect(mailsTo(ok.email)).toHaveLength(1);
      expect(mailsTo(flaky.email)).toHaveLength(1);
      expect(mailsTo(gone.email)).toHaveLength(0);
      // The attachment is the dashboard as a PNG of the layout's width, not blank.
      const file = mailsTo(ok.email)[0]!.mail.attachments[0]!;
      expect(file.contentType).toBe('image/png');
      const image = PNG.sync.read(file.content);
      expect(image.width).toBe(1200);
      expect(new Set(Array.from({ length: 200 }, (_, i) => image.data.readUInt32BE(Math.floor((i / 200) * (image.data.length / 4)) * 4))).size).toBeGreaterThan(
        1,
      );
    },
  );

  it('notificationEnabled false renders for each recipient and mails nothing, saying why', { timeout: 120_000 }, async () => {
    const quiet = await shop.t.user('VIEWER');
    const delivery = await deliver({ notificationEnabled: false }, [{ type: 'USER', userId: quiet.userId }]);
    expect(delivery).toMatchObject({ status: 'succeeded', send: false, message: `${NOT_SENT_DISABLED} (1 of 1 recipient(s) rendered)` });
    expect(delivery.recipients).toMatchObject([{ status: 'skipped', attempts: 0, lastError: NOT_SENT_DISABLED }]);
    expect(mailsTo(quiet.email)).toHaveLength(0);
    expect(smtp.tried).not.toContain(quiet.email);
  });

  it(
    'notificationAiSummary: the first mail has nothing to compare; the next starts with the summariser’s words on the two renders’ data',
    { timeout: 120_000 },
    async () => {
      const reader = await shop.t.user('VIEWER');
      await shop.t.request({ method: 'POST', url: `/api/v1/user-attribute-values/${reader.userId}`, body: { values: { region: 'EU' } } });
      const first = await deliver({ notificationAiSummary: true }, [{ type: 'USER', userId: reader.userId }]);
      expect(first).toMatchObject({ status: 'succeeded', message: NO_SUMMARY_FIRST });
      expect(summariser.requests).toHaveLength(0);
      expect(mailsTo(reader.email)[0]!.mail.text).not.toContain('What changed');

      // Only completed orders from now on: the EU revenue goes from 180 to 100.
      const put = await shop.t.request({
        method: 'PUT',
        url: `${base()}/${first.notificationId}`,
        body: { filters: [{ member: 'orders.status', operator: 'equals', value: ['completed'] }] },
      });
      expect(put.statusCode, put.body).toBe(200);
      const second = await deliverAgain(first.notificationId);
      expect(second).toMatchObject({ status: 'succeeded', message: null });
      expect(summariser.requests).toHaveLength(1);
      const [call] = summariser.requests;
      expect(call!.authorization).toBe('Bearer summary-key');
      expect(call!.body.model).toBe('stand-in');
      const prompt = call!.body.messages.find((m) => m.role === 'user')!.content;
      const [previous, current] = prompt.split('Current data (JSON):');
      expect(previous).toContain('"orders.total_amount":180');
      expect(current).toContain('"orders.total_amount":100');
      const mails = mailsTo(reader.email);
      expect(mails).toHaveLength(2);
      expect(mails[1]!.mail.text).toMatch(/^What changed since last time:\nRevenue fell from 180 to 100\./);
    },
  );
});
