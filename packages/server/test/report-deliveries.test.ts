import { readSheet } from 'read-excel-file/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toCsv } from '../src/areas/report-deliveries/csv.js';
import { toXlsx } from '../src/areas/report-deliveries/xlsx.js';
import { DIALECTS, problem } from './harness.js';
import { renderShop, type RenderShop } from './render-fixtures.js';
import { startSmtp, type TestSmtp } from './smtp-fixture.js';

/*
 * Report deliveries (extension; reference 9 names them): a report's rows mailed as CSV or XLSX on a
 * schedule through the jobs and mail services, to a real SMTP server here, each recipient sent the
 * rows their row-level security lets them see.
 */

describe('CSV attachments', () => {
  it('quote what needs quoting, keep a header of every column, and defuse spreadsheet formulas', () => {
    const csv = toCsv([
      { a: 'plain', b: 'with, comma', c: null },
      { a: 'say "hi"', b: 'two\nlines', d: '=1+1' },
    ]);
    expect(csv).toBe('\uFEFFa,b,c,d\r\nplain,"with, comma",,\r\n"say ""hi""","two\nlines",,\'=1+1\r\n');
    expect(toCsv([])).toBe('\uFEFF\r\n');
  });
});

describe('XLSX attachments', () => {
  it('hold a header of every column, numbers as numbers, text as text (a leading = is not a formula), null as empty', async () => {
    const when = new Date('2026-01-02T03:04:05.000Z');
    const file = await toXlsx([
      { a: 'plain', b: 1.5, c: null },
      { a: '=1+1', b: 2, d: true, e: when, f: { x: 1 } },
    ]);
    expect(await readSheet(file)).toEqual([
      ['a', 'b', 'c', 'd', 'e', 'f'],
      ['plain', 1.5, null, null, null, null],
      ['=1+1', 2, null, true, '2026-01-02T03:04:05.000Z', '{"x":1}'],
    ]);
    expect(await readSheet(await toXlsx([]))).toEqual([]);
  });
});

describe.each(DIALECTS)('report deliveries (%s)', (dialect) => {
  let smtp: TestSmtp;
  let shop: RenderShop;
  let reportId: number;
  const base = (suffix = '') => `/api/v1/deployments/${shop.deploymentId}/report-deliveries${suffix}`;

  beforeAll(async () => {
    smtp = await startSmtp();
    shop = await renderShop(dialect, {
      notificationMail: { smtp: { host: '127.0.0.1', port: smtp.port, secure: false, user: null, password: null, from: 'reports@example.com' } },
      // The row bound, made small enough to reach with the shop's few orders (10,000 by default).
      reportDeliveryMaxRows: 2,
    });
    reportId = (await shop.t.store.db.selectFrom('reports').select('id').where('public_id', '=', 'by-customer').executeTakeFirstOrThrow()).id;
  }, 180_000);
  afterAll(async () => {
    await shop?.close();
    await smtp?.close();
  });

  const create = (body: Record<string, unknown>, key?: string) =>
    shop.t.request({
      method: 'POST',
      url: base(),
      key,
      body: { reportId, cron: '0 9 * * 1', recipients: [{ type: 'USER', userId: shop.eu.userId }], ...body },
    });
  const made = async (body: Record<string, unknown> = {}) => {
    const res = await create(body);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const mailsTo = (address: string) => smtp.received.filter((m) => m.to.includes(address));
  /** Waits for a run's job and answers the run as the history shows it. */
  const finished = async (deliveryId: number, run: { id: number; jobId: number }) => {
    await shop.t.app.services.jobs.waitFor(shop.t.tenantId, run.jobId);
    const runs = (await shop.t.request({ url: base(`/${deliveryId}/runs`) })).json().items as Array<{ id: number }>;
    return runs.find((r) => r.id === run.id) as Record<string, any>;
  };

  it('extension: creating a delivery answers it running, in UTC, with its next run and its recipients’ addresses; get and list show it', async () => {
    const delivery = await made({ name: 'Weekly customers', timezone: 'europe/berlin' });
    expect(delivery).toEqual({
      id: expect.any(Number),
      deploymentId: shop.deploymentId,
      reportId,
      name: 'Weekly customers',
      format: 'csv',
      cron: '0 9 * * 1',
      timezone: 'Europe/Berlin',
      paused: false,
      recipients: [{ type: 'USER', userId: shop.eu.userId, email: shop.eu.email, embedUserId: null, embedTenantName: null, externalId: null }],
      nextRunAt: expect.any(String),
      createdBy: expect.any(Number),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await made()).name).toBe('Orders by customer');
    expect((await shop.t.request({ url: base(`/${delivery.id}`) })).json()).toEqual(delivery);
    const list = (await shop.t.request({ url: `${base()}?reportId=${reportId}&first=1` })).json();
    expect(list.items).toHaveLength(1);
    expect(list.pageInfo.hasNextPage).toBe(true);
    const next = (await shop.t.request({ url: `${base()}?reportId=${reportId}&first=1&after=${encodeURIComponent(list.pageInfo.endCursor)}` })).json();
    expect(next.items[0].id).toBeLessThan(list.items[0].id);
  });

  it('permissions as for notifications: only admins create, read, change or run deliveries (403 otherwise)', async () => {
    const delivery = await made();
    for (const who of [shop.eu, await shop.t.user('VIEWER')]) {
      problem(await create({}, who.key), 403, 'FORBIDDEN');
      problem(await shop.t.request({ url: base(), key: who.key }), 403, 'FORBIDDEN');
      problem(await shop.t.request({ url: base(`/${delivery.id}`), key: who.key }), 403, 'FORBIDDEN');
      problem(await shop.t.request({ method: 'POST', url: base(`/${delivery.id}/run`), key: who.key }), 403, 'FORBIDDEN');
      problem(await shop.t.request({ url: base(`/${delivery.id}/runs`), key: who.key }), 403, 'FORBIDDEN');
    }
    problem(await shop.t.request({ url: base('/999999') }), 404, 'REPORT_DELIVERY_NOT_FOUND');
  });

  it('validation: clear 400s for the cron, the zone, the format and recipients; 404 for a report or a recipient that names nobody; nothing written', async () => {
    const count = async () =>
      Number(
        (
          await shop.t.store.db
            .selectFrom('report_deliveries')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirst()
        )?.n,
      );
    const before = await count();
    expect(problem(await create({ cron: '*/5 * * * *' }), 400, 'VALIDATION_FAILED').errors).toEqual([
      { pointer: '/body/cron', message: 'may fire more often than hourly' },
    ]);
    expect(problem(await create({ cron: '0 9 * * * *' }), 400, 'VALIDATION_FAILED').errors).toEqual([{ pointer: '/body/cron', message: 'is not five fields' }]);
    expect(problem(await create({ timezone: 'Mars/Olympus' }), 400, 'VALIDATION_FAILED').errors).toEqual([
      { pointer: '/body/timezone', message: 'is not an IANA time zone' },
    ]);
    problem(await create({ format: 'pdf' }), 400, 'VALIDATION_FAILED');
    problem(await create({ recipients: [] }), 400, 'VALIDATION_FAILED');
    const many = Array.from({ length: 51 }, (_, i) => ({ type: 'USER', email: `nobody${i}@example.com` }));
    problem(await create({ recipients: many }), 400, 'VALIDATION_FAILED');
    expect(problem(await create({ recipients: [{ type: 'USER' }] }), 400, 'VALIDATION_FAILED').errors).toEqual([
      { pointer: '/body/recipients/0', message: 'needs exactly one of userId and email' },
    ]);
    expect(
      problem(
        await create({
          recipients: [
            { type: 'USER', userId: shop.eu.userId },
            { type: 'USER', email: shop.eu.email.toUpperCase() },
          ],
        }),
        400,
        'VALIDATION_FAILED',
      ).errors,
    ).toEqual([{ pointer: '/body/recipients/1', message: 'is already a recipient' }]);
    expect(problem(await create({ recipients: [{ type: 'EMBED_USER', externalId: 'x' }] }), 400, 'VALIDATION_FAILED').errors).toEqual([
      { pointer: '/body/recipients/0', message: 'needs embedTenantName and externalId' },
    ]);
    problem(await create({ recipients: [{ type: 'USER', email: 'nobody@example.com' }] }), 404, 'USER_NOT_FOUND');
    problem(await create({ recipients: [{ type: 'EMBED_USER', embedTenantName: 'nowhere', externalId: 'x' }] }), 404, 'EMBED_USER_NOT_FOUND');
    problem(await create({ reportId: 999_999 }), 404, 'REPORT_NOT_FOUND');
    expect(await count()).toBe(before);
  });

  it(
    'run now enqueues a job and answers its run; each recipient is mailed the report’s rows as CSV as they may see them (row-level security by region)',
    { timeout: 120_000 },
    async () => {
      const delivery = await made({
        name: 'Customers by region',
        recipients: [
          { type: 'USER', userId: shop.eu.userId },
          { type: 'USER', userId: shop.us.userId },
        ],
      });
      const res = await shop.t.request({ method: 'POST', url: base(`/${delivery.id}/run`) });
      expect(res.statusCode, res.body).toBe(202);
      const run = res.json();
      expect(run).toMatchObject({
        deliveryId: delivery.id,
        trigger: 'manual',
        scheduledFor: null,
        status: 'queued',
        jobId: expect.any(Number),
        recipients: [],
      });
      const done = await finished(delivery.id, run);
      expect(done).toMatchObject({ status: 'succeeded', message: null, startedAt: expect.any(String), finishedAt: expect.any(String) });
      expect(done.recipients).toEqual([
        { type: 'USER', userId: shop.eu.userId, embedUserId: null, email: shop.eu.email, status: 'sent', rows: 2, truncated: false, error: null },
        { type: 'USER', userId: shop.us.userId, embedUserId: null, email: shop.us.email, status: 'sent', rows: 1, truncated: false, error: null },
      ]);
      const attachment = (address: string) => {
        const mails = mailsTo(address).filter((m) => m.mail.subject === 'Customers by region');
        expect(mails).toHaveLength(1);
        const { mail } = mails[0]!;
        expect(mail.from?.text).toBe('reports@example.com');
        expect(mail.text).toContain('row(s) attached as CSV');
        expect(mail.attachments).toHaveLength(1);
        const [file] = mail.attachments;
        expect(file!.contentType).toBe('text/csv');
        expect(file!.filename).toMatch(/^Customers-by-region-\d{4}-\d{2}-\d{2}\.csv$/);
        return file!.content.toString('utf8').replace(/^\uFEFF/, '');
      };
      // EU: Ada and Cy; US: Bo only. Another recipient's rows differ.
      const eu = attachment(shop.eu.email);
      const us = attachment(shop.us.email);
      const lines = (csv: string) => csv.trimEnd().split('\r\n');
      expect(lines(eu)[0]).toBe('customers.name,orders.count');
      expect(
        lines(eu)
          .slice(1)
          .map((l) => l.split(',')[0]),
      ).toEqual(['Ada', 'Cy']);
      expect(
        lines(us)
          .slice(1)
          .map((l) => l.split(',')[0]),
      ).toEqual(['Bo']);
      expect(eu).not.toContain('Bo');
      expect(us).not.toContain('Ada');
    },
  );

  it(
    'format xlsx: each recipient is mailed an .xlsx of exactly the rows they may see (the same rows as the CSV), numbers as numbers; an invalid format is a 400 that changes nothing',
    { timeout: 120_000 },
    async () => {
      const recipients = [
        { type: 'USER', userId: shop.eu.userId },
        { type: 'USER', userId: shop.us.userId },
      ];
      const xlsx = await made({ name: 'Customers as XLSX', format: 'xlsx', recipients });
      expect(xlsx.format).toBe('xlsx');
      expect((await shop.t.request({ url: base(`/${xlsx.id}`) })).json()).toEqual(xlsx);
      // An invalid format on update: 400 and the delivery stays as it was.
      problem(await shop.t.request({ method: 'PUT', url: base(`/${xlsx.id}`), body: { format: 'ods', name: 'Changed' } }), 400, 'VALIDATION_FAILED');
      problem(await shop.t.request({ method: 'PUT', url: base(`/${xlsx.id}`), body: { format: 'XLSX' } }), 400, 'VALIDATION_FAILED');
      expect((await shop.t.request({ url: base(`/${xlsx.id}`) })).json()).toEqual(xlsx);
      // The same report mailed as CSV to the same recipients: what each XLSX must hold.
      const csv = await made({ name: 'Customers as CSV', recipients });
      for (const delivery of [xlsx, csv]) {
        const run = (await shop.t.request({ method: 'POST', url: base(`/${delivery.id}/run`) })).json();
        const done = await finished(delivery.id, run);
        expect(done).toMatchObject({ status: 'succeeded', message: null });
        expect(done.recipients).toMatchObject([
          { userId: shop.eu.userId, status: 'sent', rows: 2, truncated: false },
          { userId: shop.us.userId, status: 'sent', rows: 1, truncated: false },
        ]);
      }
      const fileOf = (address: string, subject: string) => {
        const mails = mailsTo(address).filter((m) => m.mail.subject === subject);
        expect(mails).toHaveLength(1);
        expect(mails[0]!.mail.attachments).toHaveLength(1);
        return { text: mails[0]!.mail.text, file: mails[0]!.mail.attachments[0]! };
      };
      const sheets = new Map<string, unknown[][]>();
      for (const who of [shop.eu, shop.us]) {
        const { text, file } = fileOf(who.email, 'Customers as XLSX');
        expect(text).toContain('row(s) attached as XLSX');
        expect(file.contentType).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
        expect(file.filename).toMatch(/^Customers-as-XLSX-\d{4}-\d{2}-\d{2}\.xlsx$/);
        const sheet = await readSheet(file.content);
        const lines = fileOf(who.email, 'Customers as CSV')
          .file.content.toString('utf8')
          .replace(/^\uFEFF/, '')
          .trimEnd()
          .split('\r\n')
          .map((l) => l.split(','));
        // Cell for cell the CSV's rows; numbers are number cells.
        expect(sheet.map((row) => row.map((v) => (v === null ? '' : String(v))))).toEqual(lines);
        expect(sheet.slice(1).every((row) => typeof row[1] === 'number')).toBe(true);
        sheets.set(who.email, sheet);
      }
      // EU: Ada and Cy; US: Bo only.
      expect(sheets.get(shop.eu.email)![0]).toEqual(['customers.name', 'orders.count']);
      expect(
        sheets
          .get(shop.eu.email)!
          .slice(1)
          .map((r) => r[0]),
      ).toEqual(['Ada', 'Cy']);
      expect(
        sheets
          .get(shop.us.email)!
          .slice(1)
          .map((r) => r[0]),
      ).toEqual(['Bo']);
      // Switched back to CSV by update.
      const back = await shop.t.request({ method: 'PUT', url: base(`/${xlsx.id}`), body: { format: 'csv' } });
      expect(back.statusCode, back.body).toBe(200);
      expect(back.json().format).toBe('csv');
    },
  );

  it(
    'an embed user is mailed the rows of their embed context (their attribute values), as their embed session would see them',
    { timeout: 120_000 },
    async () => {
      const address = `us-embed-${dialect}@acme.example`;
      const provisioned = await shop.t.request({ method: 'POST', url: '/api/v1/embed-tenants/acme/user', body: { externalId: address } });
      expect(provisioned.statusCode, provisioned.body).toBeLessThan(300);
      const embedUserId = provisioned.json().id as number;
      const region = await shop.t.store.db.selectFrom('user_attributes').select('id').where('name', '=', 'region').executeTakeFirstOrThrow();
      await shop.t.store.db
        .insertInto('embed_user_attribute_values')
        .values({
          tenant_id: shop.t.tenantId,
          embed_user_id: embedUserId,
          attribute_id: region.id,
          value: JSON.stringify('US'),
          updated_at: new Date().toISOString(),
        })
        .execute();
      // One with neither an address nor an email-shaped external id cannot be mailed: 400, nothing written.
      expect(
        (await shop.t.request({ method: 'POST', url: '/api/v1/embed-tenants/acme/user', body: { externalId: `no-address-${dialect}` } })).statusCode,
      ).toBeLessThan(300);
      expect(
        problem(await create({ recipients: [{ type: 'EMBED_USER', embedTenantName: 'acme', externalId: `no-address-${dialect}` }] }), 400, 'VALIDATION_FAILED')
          .errors,
      ).toEqual([{ pointer: '/body/recipients/0', message: 'has no email address' }]);
      const delivery = await made({ name: 'Embedded customers', recipients: [{ type: 'EMBED_USER', embedTenantName: 'ACME', externalId: address }] });
      expect(delivery.recipients).toEqual([{ type: 'EMBED_USER', userId: null, email: address, embedUserId, embedTenantName: 'acme', externalId: address }]);
      const run = (await shop.t.request({ method: 'POST', url: base(`/${delivery.id}/run`) })).json();
      const done = await finished(delivery.id, run);
      expect(done.recipients).toMatchObject([{ type: 'EMBED_USER', embedUserId, email: address, status: 'sent', rows: 1 }]);
      const csv = mailsTo(address)[0]!.mail.attachments[0]!.content.toString('utf8');
      expect(csv).toContain('Bo');
      expect(csv).not.toContain('Ada');
    },
  );

  it('the row bound: a recipient who may see more rows than the bound gets the first ones, and the mail and the run say so', { timeout: 120_000 }, async () => {
    const made = await shop.t.request({
      method: 'PUT',
      url: `/api/v1/deployments/${shop.deploymentId}/reports/by-public-id/orders-by-id`,
      body: { name: 'orders-by-id', kind: 'table', spec: { query: { measures: ['orders.count'], dimensions: ['orders.id'], order: { 'orders.id': 'asc' } } } },
    });
    expect(made.statusCode, made.body).toBeLessThan(300);
    const delivery = await shop.t.request({
      method: 'POST',
      url: base(),
      body: { reportId: made.json().id, name: 'Orders by id', cron: '0 9 * * 1', recipients: [{ type: 'USER', userId: shop.eu.userId }] },
    });
    expect(delivery.statusCode, delivery.body).toBe(200);
    const run = (await shop.t.request({ method: 'POST', url: base(`/${delivery.json().id}/run`) })).json();
    const done = await finished(delivery.json().id, run);
    // EU may see orders 1, 2 and 4: three rows, two attached.
    expect(done.recipients).toMatchObject([{ status: 'sent', rows: 2, truncated: true }]);
    const { mail } = mailsTo(shop.eu.email).find((m) => m.mail.subject === 'Orders by id')!;
    expect(mail.text).toContain('Only the first 2 of 3 rows are attached.');
    const lines = mail.attachments[0]!.content.toString('utf8')
      .replace(/^\uFEFF/, '')
      .trimEnd()
      .split('\r\n');
    expect(lines).toEqual(['orders.id,orders.count', '1,1', '2,1']);
    // The same bound for XLSX: the first rows, and the run says so.
    const asXlsx = await shop.t.request({
      method: 'POST',
      url: base(),
      body: { reportId: made.json().id, name: 'Orders by id XLSX', format: 'xlsx', cron: '0 9 * * 1', recipients: [{ type: 'USER', userId: shop.eu.userId }] },
    });
    expect(asXlsx.statusCode, asXlsx.body).toBe(200);
    const xlsxRun = (await shop.t.request({ method: 'POST', url: base(`/${asXlsx.json().id}/run`) })).json();
    expect((await finished(asXlsx.json().id, xlsxRun)).recipients).toMatchObject([{ status: 'sent', rows: 2, truncated: true }]);
    const xlsxMail = mailsTo(shop.eu.email).find((m) => m.mail.subject === 'Orders by id XLSX')!.mail;
    expect(xlsxMail.text).toContain('Only the first 2 of 3 rows are attached.');
    expect((await readSheet(xlsxMail.attachments[0]!.content)).map((row) => row.map(String))).toEqual([
      ['orders.id', 'orders.count'],
      ['1', '1'],
      ['2', '1'],
    ]);
  });

  it('pause and resume are idempotent; a paused delivery’s schedule does not fire, a resumed one does, once per occurrence', { timeout: 120_000 }, async () => {
    const delivery = await made({ name: 'Scheduled', recipients: [{ type: 'USER', userId: shop.us.userId }] });
    const pause = () => shop.t.request({ method: 'POST', url: base(`/${delivery.id}/pause`) });
    const resume = () => shop.t.request({ method: 'POST', url: base(`/${delivery.id}/resume`) });
    const paused = (await pause()).json();
    expect(paused).toMatchObject({ paused: true, nextRunAt: null });
    const again = await pause();
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(paused);
    // Due now, but paused: nothing is claimed.
    const due = () =>
      shop.t.store.db
        .updateTable('report_deliveries')
        .set({ next_run_at: new Date(Date.now() - 1_000).toISOString() })
        .where('id', '=', delivery.id)
        .execute();
    await due();
    await shop.t.app.services.reportDeliveryScheduler.tick();
    expect((await shop.t.request({ url: base(`/${delivery.id}/runs`) })).json().items).toEqual([]);
    const resumed = (await resume()).json();
    expect(resumed).toMatchObject({ paused: false, nextRunAt: expect.any(String) });
    expect(new Date(resumed.nextRunAt).getTime()).toBeGreaterThan(Date.now());
    expect((await resume()).json()).toEqual(resumed);
    await due();
    expect(await shop.t.app.services.reportDeliveryScheduler.tick()).toBeGreaterThanOrEqual(1);
    expect(await shop.t.app.services.reportDeliveryScheduler.tick()).toBe(0);
    const [run] = (await shop.t.request({ url: base(`/${delivery.id}/runs`) })).json().items;
    expect(run).toMatchObject({ trigger: 'schedule', scheduledFor: expect.any(String) });
    expect((await finished(delivery.id, run)).status).toBe('succeeded');
    expect(mailsTo(shop.us.email).filter((m) => m.mail.subject === 'Scheduled')).toHaveLength(1);
  });

  it('run history: newest first with cursor paging; update changes what it is sent; delete takes the history', { timeout: 120_000 }, async () => {
    const delivery = await made({ name: 'History' });
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      const run = (await shop.t.request({ method: 'POST', url: base(`/${delivery.id}/run`) })).json();
      await shop.t.app.services.jobs.waitFor(shop.t.tenantId, run.jobId);
      ids.push(run.id);
    }
    const first = (await shop.t.request({ url: `${base(`/${delivery.id}/runs`)}?first=2` })).json();
    expect(first.items.map((r: { id: number }) => r.id)).toEqual([ids[2], ids[1]]);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const rest = (await shop.t.request({ url: `${base(`/${delivery.id}/runs`)}?first=2&after=${encodeURIComponent(first.pageInfo.endCursor)}` })).json();
    expect(rest.items.map((r: { id: number }) => r.id)).toEqual([ids[0]]);
    expect(rest.pageInfo.hasNextPage).toBe(false);
    problem(await shop.t.request({ url: `${base(`/${delivery.id}/runs`)}?after=not-a-cursor` }), 400, 'INVALID_CURSOR');

    const put = await shop.t.request({
      method: 'PUT',
      url: base(`/${delivery.id}`),
      body: { name: 'Renamed', cron: '30 7 * * *', recipients: [{ type: 'USER', email: shop.us.email }] },
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({ name: 'Renamed', cron: '30 7 * * *', recipients: [{ userId: shop.us.userId }] });
    problem(await shop.t.request({ method: 'PUT', url: base(`/${delivery.id}`), body: { cron: '* * * * *' } }), 400, 'VALIDATION_FAILED');

    expect((await shop.t.request({ method: 'DELETE', url: base(`/${delivery.id}`) })).statusCode).toBe(204);
    problem(await shop.t.request({ url: base(`/${delivery.id}`) }), 404, 'REPORT_DELIVERY_NOT_FOUND');
    expect(await shop.t.store.db.selectFrom('report_delivery_runs').select('id').where('delivery_id', '=', delivery.id).execute()).toEqual([]);
  });

  it('records audit events for writes, pauses, resumes and runs', { timeout: 120_000 }, async () => {
    expect((await shop.t.request({ method: 'PUT', url: '/api/v1/tenant/settings', body: { auditLogEnabled: true } })).statusCode).toBe(200);
    try {
      const delivery = await made({ name: 'Audited' });
      await shop.t.request({ method: 'PUT', url: base(`/${delivery.id}`), body: { name: 'Audited again' } });
      await shop.t.request({ method: 'POST', url: base(`/${delivery.id}/pause`) });
      await shop.t.request({ method: 'POST', url: base(`/${delivery.id}/pause`) });
      await shop.t.request({ method: 'POST', url: base(`/${delivery.id}/resume`) });
      const run = (await shop.t.request({ method: 'POST', url: base(`/${delivery.id}/run`) })).json();
      await shop.t.app.services.jobs.waitFor(shop.t.tenantId, run.jobId);
      await shop.t.request({ method: 'DELETE', url: base(`/${delivery.id}`) });
      const actions = (
        await shop.t.store.db.selectFrom('audit_events').select('action').where('action', 'like', 'report-delivery.%').orderBy('id').execute()
      ).map((r) => r.action);
      expect(actions).toEqual([
        'report-delivery.created',
        'report-delivery.updated',
        'report-delivery.paused',
        'report-delivery.resumed',
        'report-delivery.run',
        'report-delivery.run-succeeded',
        'report-delivery.deleted',
      ]);
    } finally {
      await shop.t.request({ method: 'PUT', url: '/api/v1/tenant/settings', body: { auditLogEnabled: false } });
    }
  });
});
