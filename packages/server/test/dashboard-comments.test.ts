import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MENTION_MAIL_JOB } from '../src/areas/dashboard-comments/index.js';
import { DIALECTS, problem, TestApp } from './harness.js';
import { startSmtp, type TestSmtp } from './smtp-fixture.js';

type Json = Record<string, any>;

const text = { id: 'greeting', type: 'TEXT', position: { x: 0, y: 0, w: 6, h: 4 }, config: { text: 'hello' } };

describe.each(DIALECTS)('comments on embedded dashboards (reference 8.C) (%s)', (dialect) => {
  let t: TestApp;
  let smtp: TestSmtp;
  let clock = Date.now();
  let deploymentId: number;
  /** Shared with both embed tenants; `other` with acme only; `hidden` with nobody. */
  let board: string;
  let other: string;
  let hidden: string;
  /** acme: ann and bob (with addresses) and dave (provisioned without one); globex: carl. */
  let ann: string;
  let bob: string;
  let carl: string;
  let ids: Record<'ann' | 'bob' | 'carl' | 'dave', number>;
  const workbooks = new Map<string, number>();

  const tick = () => {
    clock += 1_000;
  };

  async function embedToken(body: Json): Promise<string> {
    const generated = await t.request({ method: 'POST', url: '/api/v1/embed/generate-session', body: { deploymentId, ...body } });
    expect(generated.statusCode, generated.body).toBe(200);
    const exchanged = await t.request({ method: 'POST', url: '/api/v1/embed/session/token', key: null, body: generated.json() });
    expect(exchanged.statusCode, exchanged.body).toBe(200);
    return (exchanged.json() as { token: string }).token;
  }

  async function published(name: string, embedTenants: string[]): Promise<string> {
    const workbook = await t.request({ method: 'PUT', url: `/api/v1/deployments/${deploymentId}/workbooks/by-slug/${name}`, body: { name } });
    expect(workbook.statusCode, workbook.body).toBe(201);
    const workbookId = (workbook.json() as Json).id as number;
    workbooks.set(name, workbookId);
    const done = await t.request({
      method: 'POST',
      url: `/api/v1/deployments/${deploymentId}/workbooks/${workbookId}/publish`,
      body: { config: { widgets: [text] }, allowEmbed: true, title: `The ${name}` },
    });
    expect(done.statusCode, done.body).toBe(200);
    for (const embedTenantName of embedTenants) {
      const shared = await t.request({
        method: 'PUT',
        url: `/api/v1/deployments/${deploymentId}/workbooks/${workbookId}/embed-access`,
        body: { embedTenantName, action: 'read' },
      });
      expect(shared.statusCode, shared.body).toBe(200);
    }
    return (done.json() as Json).publicId as string;
  }

  /** A request with an embed token (null: the admin's API key). */
  const call = (token: string | null, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: Json) =>
    t.request({
      method,
      url: `/api/v1/embed/dashboard/${path}`,
      ...(token === null ? {} : { key: null, headers: { authorization: `Bearer ${token}` } }),
      ...(body === undefined ? {} : { body }),
    });
  const ok = async (response: Promise<Awaited<ReturnType<typeof call>>>) => {
    const res = await response;
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Json;
  };
  const comment = (token: string, body: string, parentId?: number, on = board) => {
    tick();
    return ok(call(token, 'POST', `${on}/comments`, parentId === undefined ? { body } : { body, parentId }));
  };
  const threads = (token: string, query = '', on = board) => ok(call(token, 'GET', `${on}/comments${query}`));
  const setting = async (value: boolean | null) =>
    expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/embed-settings', body: { enableDashboardComments: value } })).statusCode).toBe(200);
  const mailsTo = (address: string) => smtp.received.filter((m) => m.to.includes(address));

  beforeAll(async () => {
    smtp = await startSmtp();
    t = await TestApp.create(dialect, {
      now: () => new Date(clock),
      notificationMail: { smtp: { host: '127.0.0.1', port: smtp.port, secure: false, user: null, password: null, from: 'comments@example.com' } },
    });
    deploymentId = await t.deployment('commented');
    ann = await embedToken({ externalId: 'ann', embedTenantName: 'acme', email: 'ann@acme.example', userProfile: { displayName: 'Ann' } });
    bob = await embedToken({ externalId: 'bob', embedTenantName: 'acme', email: 'bob@acme.example' });
    carl = await embedToken({ externalId: 'carl', embedTenantName: 'globex', email: 'carl@globex.example' });
    [board, other, hidden] = [await published('board', ['acme', 'globex']), await published('other', ['acme']), await published('hidden', [])];
    expect((await t.request({ method: 'POST', url: '/api/v1/embed-tenants/acme/user', body: { externalId: 'dave' } })).statusCode).toBe(200);
    const rows = await t.store.db.selectFrom('embed_users').select(['id', 'username']).where('tenant_id', '=', t.tenantId).execute();
    ids = Object.fromEntries(rows.map((r) => [r.username, r.id])) as typeof ids;
    await setting(true);
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('a comment takes its author from the session; the body is 1-10000 characters and names no author', async () => {
    const made = await comment(ann, 'First look at the numbers');
    expect(made).toMatchObject({ dashboardId: board, body: 'First look at the numbers', isOwn: true, userId: ids.ann, editedAt: null, removedAt: null });
    expect(Date.parse(made.createdAt as string)).toBe(clock);
    problem(await call(ann, 'POST', `${board}/comments`, { body: '' }), 400, 'VALIDATION_FAILED');
    problem(await call(ann, 'POST', `${board}/comments`, { body: 'x'.repeat(10_001) }), 400, 'VALIDATION_FAILED');
    problem(await call(ann, 'POST', `${board}/comments`, { body: 'as bob', userId: ids.bob }), 400, 'VALIDATION_FAILED');
    expect(await comment(ann, 'y'.repeat(10_000))).toMatchObject({ userId: ids.ann });
    // Seen by another user of the tenant as not their own.
    const seen = (await threads(bob)).items.find((th: Json) => th.root.id === made.id);
    expect(seen.root).toMatchObject({ isOwn: false, userId: ids.ann });
  });

  it('an API key (a credential naming no tenant) is 403 on every operation, and so is the token of an account user’s session', async () => {
    const root = await comment(ann, 'keys stay out');
    const account = await t.user('VIEWER');
    await t.grant({ type: 'USER', id: account.userId }, { type: 'DEPLOYMENT', id: deploymentId }, 'VIEW');
    const internal = await embedToken({ internalId: account.email });
    for (const token of [null, internal]) {
      problem(await call(token, 'GET', `${board}/comments`), 403, 'FORBIDDEN');
      problem(await call(token, 'POST', `${board}/comments`, { body: 'hi' }), 403, 'FORBIDDEN');
      problem(await call(token, 'GET', `${board}/comments/mentionable-users`), 403, 'FORBIDDEN');
      problem(await call(token, 'PATCH', `${board}/comments/${root.id}`, { body: 'hi' }), 403, 'FORBIDDEN');
      problem(await call(token, 'DELETE', `${board}/comments/${root.id}`), 403, 'FORBIDDEN');
      problem(await call(token, 'POST', `${board}/comments/${root.id}/resolve`, { resolved: true }), 403, 'FORBIDDEN');
    }
    // The Api-Key scheme is refused the same way.
    const res = await t.request({ url: `/api/v1/embed/dashboard/${board}/comments`, key: null, headers: { authorization: `Api-Key ${t.admin.key}` } });
    problem(res, 403, 'FORBIDDEN');
  });

  it('a session whose embed tenant was deleted (even if made again under the name) is refused with 403, and writes nothing', async () => {
    const erin = await embedToken({ externalId: 'erin', embedTenantName: 'gone', email: 'erin@gone.example' });
    const shared = await t.request({
      method: 'PUT',
      url: `/api/v1/deployments/${deploymentId}/workbooks/${workbooks.get('board')}/embed-access`,
      body: { embedTenantName: 'gone', action: 'read' },
    });
    expect(shared.statusCode, shared.body).toBe(200);
    const written = await comment(erin, 'from a tenant about to go');
    expect((await t.request({ method: 'DELETE', url: '/api/v1/embed-tenants/gone' })).statusCode).toBeLessThan(300);
    // The tenant's conversations go with it.
    expect(await t.store.db.selectFrom('dashboard_comments').select('id').where('id', '=', written.id).executeTakeFirst()).toBeUndefined();
    problem(await call(erin, 'POST', `${board}/comments`, { body: 'still here?' }), 403, 'FORBIDDEN');
    expect((await t.request({ method: 'POST', url: '/api/v1/embed-tenants/gone/user', body: { externalId: 'erin' } })).statusCode).toBe(200);
    const refused = problem(await call(erin, 'GET', `${board}/comments`), 403, 'FORBIDDEN');
    expect(refused.detail).toContain('no longer exists');
  });

  it('with enableDashboardComments off or not set, every operation is refused with 403 DASHBOARD_COMMENTS_DISABLED, before the dashboard is looked at', async () => {
    const root = await comment(ann, 'before the switch');
    try {
      for (const value of [false, null]) {
        await setting(value);
        for (const res of [
          await call(ann, 'GET', `${board}/comments`),
          await call(ann, 'POST', `${board}/comments`, { body: 'hi' }),
          await call(ann, 'GET', `${board}/comments/mentionable-users`),
          await call(ann, 'PATCH', `${board}/comments/${root.id}`, { body: 'hi' }),
          await call(ann, 'DELETE', `${board}/comments/${root.id}`),
          await call(ann, 'POST', `${board}/comments/${root.id}/resolve`, { resolved: true }),
          await call(ann, 'GET', 'no-such-dashboard/comments'),
        ]) {
          expect(problem(res, 403, 'DASHBOARD_COMMENTS_DISABLED').detail).toContain('enableDashboardComments');
        }
      }
    } finally {
      await setting(true);
    }
    expect((await threads(ann)).items.some((th: Json) => th.root.id === root.id)).toBe(true);
  });

  it('a dashboard the session cannot see is 404, as GET /api/v1/embed/dashboard/{publicId} answers', async () => {
    problem(await call(ann, 'GET', `${hidden}/comments`), 404, 'DASHBOARD_NOT_FOUND');
    problem(await call(ann, 'POST', `${hidden}/comments`, { body: 'hi' }), 404, 'DASHBOARD_NOT_FOUND');
    problem(await call(carl, 'GET', `${other}/comments/mentionable-users`), 404, 'DASHBOARD_NOT_FOUND');
    problem(await call(ann, 'GET', 'no-such-dashboard/comments'), 404, 'DASHBOARD_NOT_FOUND');
  });

  it('threads are listed newest opened first, and a reply does not move a thread', async () => {
    const older = await comment(bob, 'older thread', undefined, other);
    const newer = await comment(bob, 'newer thread', undefined, other);
    const reply = await comment(ann, 'a late reply', older.id, other);
    const listed = await threads(ann, '', other);
    expect(listed.items.map((th: Json) => th.root.id)).toEqual([newer.id, older.id]);
    expect(listed.items[1]).toMatchObject({ replies: [{ id: reply.id, body: 'a late reply', isOwn: true }], resolvedAt: null, resolvedBy: null });
    // Replies oldest first.
    const second = await comment(bob, 'another reply', older.id, other);
    expect((await threads(ann, '', other)).items[1].replies.map((r: Json) => r.id)).toEqual([reply.id, second.id]);
  });

  it('threads page with first and after', async () => {
    const page1 = await threads(ann, '?first=1', other);
    expect(page1.items).toHaveLength(1);
    expect(page1.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const page2 = await threads(ann, `?first=1&after=${page1.pageInfo.endCursor}`, other);
    expect(page2.items).toHaveLength(1);
    expect(page2.items[0].root.id).not.toBe(page1.items[0].root.id);
    expect(page2.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    problem(await call(ann, 'GET', `${other}/comments?after=bm9wZQ`), 400, 'INVALID_CURSOR');
  });

  it('replying to a reply is a 400', async () => {
    const root = await comment(ann, 'root');
    const reply = await comment(bob, 'reply', root.id);
    const res = await call(ann, 'POST', `${board}/comments`, { body: 'nested', parentId: reply.id });
    expect(problem(res, 400, 'INVALID_OPERATION').detail).toContain(String(root.id));
  });

  it('a parentId on another dashboard, removed or missing is a 404', async () => {
    const elsewhere = await comment(ann, 'on the other dashboard', undefined, other);
    problem(await call(ann, 'POST', `${board}/comments`, { body: 'x', parentId: elsewhere.id }), 404, 'COMMENT_NOT_FOUND');
    const removed = await comment(ann, 'to be removed');
    await ok(call(ann, 'DELETE', `${board}/comments/${removed.id}`));
    problem(await call(ann, 'POST', `${board}/comments`, { body: 'x', parentId: removed.id }), 404, 'COMMENT_NOT_FOUND');
    problem(await call(ann, 'POST', `${board}/comments`, { body: 'x', parentId: 987_654 }), 404, 'COMMENT_NOT_FOUND');
  });

  it('editing is for the author only (403 otherwise); a comment not on this dashboard is 404; editedAt is set', async () => {
    const mine = await comment(ann, 'tpyo');
    problem(await call(bob, 'PATCH', `${board}/comments/${mine.id}`, { body: 'hijacked' }), 403, 'FORBIDDEN');
    problem(await call(ann, 'PATCH', `${other}/comments/${mine.id}`, { body: 'typo' }), 404, 'COMMENT_NOT_FOUND');
    problem(await call(ann, 'PATCH', `${board}/comments/987654`, { body: 'typo' }), 404, 'COMMENT_NOT_FOUND');
    problem(await call(ann, 'PATCH', `${board}/comments/${mine.id}`, { body: '' }), 400, 'VALIDATION_FAILED');
    tick();
    const edited = await ok(call(ann, 'PATCH', `${board}/comments/${mine.id}`, { body: 'typo' }));
    expect(edited).toMatchObject({ id: mine.id, body: 'typo', createdAt: mine.createdAt, isOwn: true });
    expect(Date.parse(edited.editedAt as string)).toBe(clock);
  });

  it('removing is a soft delete by the author only (200 {}); a removed comment is listed with its body emptied and removedAt set', async () => {
    const root = await comment(ann, 'thread');
    const reply = await comment(bob, 'regrettable');
    const own = await comment(bob, 'keep me', root.id);
    const gone = await comment(bob, 'remove me', root.id);
    problem(await call(ann, 'DELETE', `${board}/comments/${gone.id}`), 403, 'FORBIDDEN');
    tick();
    expect(await ok(call(bob, 'DELETE', `${board}/comments/${gone.id}`))).toEqual({});
    problem(await call(bob, 'DELETE', `${board}/comments/${gone.id}`), 404, 'COMMENT_NOT_FOUND');
    problem(await call(bob, 'PATCH', `${board}/comments/${gone.id}`, { body: 'back' }), 404, 'COMMENT_NOT_FOUND');
    const thread = (await threads(ann)).items.find((th: Json) => th.root.id === root.id);
    expect(thread.replies).toEqual([
      expect.objectContaining({ id: own.id, body: 'keep me', removedAt: null }),
      expect.objectContaining({ id: gone.id, body: '', removedAt: new Date(clock).toISOString(), userId: ids.bob }),
    ]);
    // The row stays.
    const row = await t.store.db.selectFrom('dashboard_comments').select(['body', 'removed_at']).where('id', '=', gone.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ body: 'remove me', removed_at: new Date(clock).toISOString() });
    expect(reply.id).toBeGreaterThan(0);
  });

  it('deleting a root removes its replies too', async () => {
    const root = await comment(ann, 'whole thread');
    const replies = [await comment(bob, 'one', root.id), await comment(ann, 'two', root.id)];
    tick();
    expect(await ok(call(ann, 'DELETE', `${board}/comments/${root.id}`))).toEqual({});
    const thread = (await threads(bob)).items.find((th: Json) => th.root.id === root.id);
    expect(thread.root).toMatchObject({ body: '', removedAt: new Date(clock).toISOString() });
    expect(thread.replies.map((r: Json) => [r.id, r.body, r.removedAt])).toEqual(replies.map((r) => [r.id, '', new Date(clock).toISOString()]));
  });

  it('deleting a reply recomputes the thread’s last-activity time', async () => {
    const root = await comment(ann, 'activity');
    const first = await comment(bob, 'first reply', root.id);
    const last = await comment(bob, 'last reply', root.id);
    const activity = async () => (await threads(ann)).items.find((th: Json) => th.root.id === root.id).lastActivityAt as string;
    expect(await activity()).toBe(last.createdAt);
    tick();
    await ok(call(bob, 'DELETE', `${board}/comments/${last.id}`));
    expect(await activity()).toBe(first.createdAt);
    tick();
    const edited = await ok(call(ann, 'PATCH', `${board}/comments/${root.id}`, { body: 'activity, edited' }));
    expect(await activity()).toBe(edited.editedAt);
    await ok(call(bob, 'DELETE', `${board}/comments/${first.id}`));
    expect(await activity()).toBe(edited.editedAt);
  });

  it('resolving is for the thread starter only, on threads only (a reply id is 400); the list hides resolved threads unless asked', async () => {
    const root = await comment(ann, 'please fix');
    const reply = await comment(bob, 'on it', root.id);
    problem(await call(bob, 'POST', `${board}/comments/${root.id}/resolve`, { resolved: true }), 403, 'FORBIDDEN');
    problem(await call(ann, 'POST', `${board}/comments/${reply.id}/resolve`, { resolved: true }), 400, 'INVALID_OPERATION');
    problem(await call(ann, 'POST', `${other}/comments/${root.id}/resolve`, { resolved: true }), 404, 'COMMENT_NOT_FOUND');
    problem(await call(ann, 'POST', `${board}/comments/${root.id}/resolve`, {}), 400, 'VALIDATION_FAILED');
    tick();
    const resolved = await ok(call(ann, 'POST', `${board}/comments/${root.id}/resolve`, { resolved: true }));
    expect(resolved).toMatchObject({ root: { id: root.id }, replies: [{ id: reply.id }], resolvedAt: new Date(clock).toISOString(), resolvedBy: ids.ann });
    const has = (page: Json) => page.items.some((th: Json) => th.root.id === root.id);
    expect(has(await threads(ann))).toBe(false);
    expect(has(await threads(ann, '?includeResolved=true'))).toBe(true);
    const only = await threads(ann, '?resolvedOnly=true');
    expect(has(only)).toBe(true);
    expect(only.items.every((th: Json) => th.resolvedAt !== null)).toBe(true);
    // Again: the first resolution stands. Reopening clears it.
    tick();
    expect(await ok(call(ann, 'POST', `${board}/comments/${root.id}/resolve`, { resolved: true }))).toMatchObject({ resolvedAt: resolved.resolvedAt });
    expect(await ok(call(ann, 'POST', `${board}/comments/${root.id}/resolve`, { resolved: false }))).toMatchObject({ resolvedAt: null, resolvedBy: null });
    expect(has(await threads(ann))).toBe(true);
  });

  it('a thread whose root was deleted but has replies can still be resolved; one without replies is gone (404)', async () => {
    const root = await comment(ann, 'soon removed');
    await comment(bob, 'a reply', root.id);
    await ok(call(ann, 'DELETE', `${board}/comments/${root.id}`));
    const resolved = await ok(call(ann, 'POST', `${board}/comments/${root.id}/resolve`, { resolved: true }));
    expect(resolved).toMatchObject({ root: { id: root.id, body: '' }, resolvedBy: ids.ann });
    const alone = await comment(ann, 'no replies');
    await ok(call(ann, 'DELETE', `${board}/comments/${alone.id}`));
    problem(await call(ann, 'POST', `${board}/comments/${alone.id}/resolve`, { resolved: true }), 404, 'COMMENT_NOT_FOUND');
  });

  it('mentionable users are the embed users of the caller’s own tenant only, sorted by username; email is null without a real one', async () => {
    const all = await ok(call(ann, 'GET', `${board}/comments/mentionable-users`));
    expect(all.items).toEqual([
      { id: ids.ann, username: 'ann', email: 'ann@acme.example', firstName: 'Ann' },
      { id: ids.bob, username: 'bob', email: 'bob@acme.example', firstName: null },
      { id: ids.dave, username: 'dave', email: null, firstName: null },
    ]);
    expect((await ok(call(ann, 'GET', `${board}/comments/mentionable-users?search=BO`))).items.map((u: Json) => u.username)).toEqual(['bob']);
    problem(await call(ann, 'GET', `${board}/comments/mentionable-users?search=${'x'.repeat(256)}`), 400, 'VALIDATION_FAILED');
    const page1 = await ok(call(ann, 'GET', `${board}/comments/mentionable-users?first=2`));
    expect(page1.items.map((u: Json) => u.username)).toEqual(['ann', 'bob']);
    const page2 = await ok(call(ann, 'GET', `${board}/comments/mentionable-users?first=2&after=${page1.pageInfo.endCursor}`));
    expect(page2).toMatchObject({ items: [{ username: 'dave' }], pageInfo: { hasNextPage: false, hasPreviousPage: true } });
    // The other tenant's user sees only their own tenant.
    expect((await ok(call(carl, 'GET', `${board}/comments/mentionable-users`))).items.map((u: Json) => u.username)).toEqual(['carl']);
  });

  it('tenant isolation: another embed tenant’s threads on a dashboard shared with both are never read, answered, changed or resolved', async () => {
    const acme = await comment(ann, 'acme only');
    const globex = await comment(carl, 'globex only');
    const carlSees = (await threads(carl, '?includeResolved=true')).items.map((th: Json) => th.root.id);
    expect(carlSees).toContain(globex.id);
    expect(carlSees).not.toContain(acme.id);
    expect((await threads(ann, '?includeResolved=true')).items.map((th: Json) => th.root.id)).not.toContain(globex.id);
    problem(await call(carl, 'POST', `${board}/comments`, { body: 'sneaky', parentId: acme.id }), 404, 'COMMENT_NOT_FOUND');
    problem(await call(carl, 'PATCH', `${board}/comments/${acme.id}`, { body: 'x' }), 404, 'COMMENT_NOT_FOUND');
    problem(await call(carl, 'DELETE', `${board}/comments/${acme.id}`), 404, 'COMMENT_NOT_FOUND');
    problem(await call(carl, 'POST', `${board}/comments/${acme.id}/resolve`, { resolved: true }), 404, 'COMMENT_NOT_FOUND');
    problem(await call(ann, 'PATCH', `${board}/comments/${globex.id}`, { body: 'x' }), 404, 'COMMENT_NOT_FOUND');
  });

  it('a mention mails the mentioned user through the mail server, never another tenant’s user, the author or one without an address', async () => {
    await comment(ann, 'Hey @bob, see this (and @carl @ann @dave @nobody).');
    await vi.waitFor(() => expect(mailsTo('bob@acme.example')).toHaveLength(1), { timeout: 20_000, interval: 50 });
    const [mail] = mailsTo('bob@acme.example');
    expect(mail!.mail.subject).toBe('ann mentioned you on “The board”');
    expect(mail!.mail.text).toContain('Hey @bob, see this');
    // Every mail job has finished: nobody else got one.
    const jobs = await t.app.services.jobs.list(t.tenantId, { kind: MENTION_MAIL_JOB, limit: 100 });
    for (const job of jobs) await t.app.services.jobs.waitFor(t.tenantId, job.id);
    expect(mailsTo('carl@globex.example')).toHaveLength(0);
    expect(mailsTo('ann@acme.example')).toHaveLength(0);
    expect(smtp.tried.filter((to) => to !== 'bob@acme.example')).toEqual([]);
  });

  it('an edit that adds a mention mails the new one only; @{username} and trailing punctuation work', async () => {
    smtp.received.length = 0;
    const made = await comment(bob, 'cc @{ann}.');
    await vi.waitFor(() => expect(mailsTo('ann@acme.example')).toHaveLength(1), { timeout: 20_000, interval: 50 });
    const edited = await ok(call(bob, 'PATCH', `${board}/comments/${made.id}`, { body: 'cc @ann and @carl, plus @bob' }));
    expect(edited.editedAt).not.toBeNull();
    const again = await ok(call(ann, 'PATCH', `${board}/comments/${(await comment(ann, 'plain')).id}`, { body: 'now @bob!' }));
    expect(again.body).toBe('now @bob!');
    await vi.waitFor(() => expect(mailsTo('bob@acme.example')).toHaveLength(1), { timeout: 20_000, interval: 50 });
    const jobs = await t.app.services.jobs.list(t.tenantId, { kind: MENTION_MAIL_JOB, limit: 100 });
    for (const job of jobs) await t.app.services.jobs.waitFor(t.tenantId, job.id);
    expect(mailsTo('ann@acme.example')).toHaveLength(1);
    expect(mailsTo('carl@globex.example')).toHaveLength(0);
  });

  it('a mail server that refuses the address does not fail the comment', async () => {
    smtp.refuse.set('bob@acme.example', Infinity);
    try {
      const made = await comment(ann, 'ping @bob');
      expect(made.body).toBe('ping @bob');
      const jobs = await t.app.services.jobs.list(t.tenantId, { kind: MENTION_MAIL_JOB, limit: 1, newestFirst: true });
      const finished = await t.app.services.jobs.waitFor(t.tenantId, jobs[0]!.id);
      expect(finished).toMatchObject({ state: 'failed', attempts: 3 });
      expect((await threads(bob)).items.some((th: Json) => th.root.id === made.id)).toBe(true);
    } finally {
      smtp.refuse.delete('bob@acme.example');
    }
  });

  it('writes are audited as the embed session while the audit log is on', async () => {
    expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/settings', body: { auditLogEnabled: true } })).statusCode).toBe(200);
    const made = await comment(ann, 'audited');
    await ok(call(ann, 'POST', `${board}/comments/${made.id}/resolve`, { resolved: true }));
    await ok(call(ann, 'DELETE', `${board}/comments/${made.id}`));
    const events = await t.request({ url: '/api/v1/tenant/audit-events?first=10' });
    expect(events.statusCode, events.body).toBe(200);
    const actions = (events.json() as Json).items.filter((e: Json) => e.target?.commentId === made.id).map((e: Json) => e.action);
    expect(actions.sort()).toEqual(['dashboard-comment.created', 'dashboard-comment.removed', 'dashboard-comment.resolved']);
    expect((events.json() as Json).items.find((e: Json) => e.action === 'dashboard-comment.created')).toMatchObject({
      credentialKind: 'embed',
      target: { dashboardId: board },
      details: { embedTenant: 'acme', embedUserId: ids.ann },
    });
  });
});
