import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from './harness.js';
import { DIALECTS, TestApp, problem } from './harness.js';

describe.each(DIALECTS)('scheduled agent tasks (%s)', (dialect) => {
  let t: TestApp;
  let deploymentId: number;
  let agentId: number;
  let viewer: Caller;
  let otherViewer: Caller;
  let stranger: Caller;
  // The clock of the schedules: each test that needs it sets it.
  let clock = new Date('2026-06-01T08:00:00Z');

  beforeAll(async () => {
    t = await TestApp.create(dialect, { now: () => clock });
    deploymentId = await t.deployment('tasks');
    viewer = await t.user('VIEWER');
    otherViewer = await t.user('VIEWER');
    stranger = await t.user('DEVELOPER');
    for (const u of [viewer, otherViewer]) await t.grant({ type: 'USER', id: u.userId }, { type: 'DEPLOYMENT', id: deploymentId }, 'VIEW');
    const agent = await t.request({ method: 'POST', url: `/api/v1/deployments/${deploymentId}/agents`, body: { name: 'Reporter' } });
    agentId = agent.json().id;
  });
  afterAll(async () => t?.close());

  const url = (suffix = '') => `/api/v1/deployments/${deploymentId}/scheduled-tasks${suffix}`;
  const create = (body: Record<string, unknown>, key?: string) =>
    t.request({ method: 'POST', url: url(), body: { agentId, prompt: 'Weekly revenue?', ...body }, key });
  const made = async (body: Record<string, unknown> = {}, key?: string) => {
    const res = await create({ cron: '0 9 * * 1', ...body }, key);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  it('creates a task owned by the caller, active, in UTC by default, with its next run', async () => {
    clock = new Date('2026-06-01T08:00:00Z');
    const task = await made({}, viewer.key);
    expect(task).toEqual({
      id: expect.any(Number),
      deploymentId,
      agentId,
      prompt: 'Weekly revenue?',
      cron: '0 9 * * 1',
      timezone: 'UTC',
      active: true,
      owner: { id: viewer.userId, email: viewer.email, firstName: null, picture: null },
      nextRunAt: '2026-06-01T09:00:00.000Z',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const zoned = await made({ timezone: 'europe/berlin', active: false }, viewer.key);
    expect(zoned).toMatchObject({ timezone: 'Europe/Berlin', active: false, nextRunAt: null });
  });

  it('the hourly rule: a cron that may fire more often than hourly is a 400; hourly and rarer are accepted', async () => {
    for (const cron of ['* * * * *', '*/5 * * * *', '0,30 * * * *', '0-10 9 * * *', '*/59 * * * *']) {
      const body = problem(await create({ cron }), 400, 'VALIDATION_FAILED');
      expect(body.detail).toContain('at most hourly');
      expect(body.errors).toEqual([{ pointer: '/body/cron', message: 'may fire more often than hourly' }]);
    }
    for (const cron of ['0 * * * *', '15 */2 * * *', '59 23 * * 0']) expect((await create({ cron, active: false })).statusCode).toBe(200);
    problem(await create({ cron: '0 9 * *' }), 400, 'VALIDATION_FAILED');
    problem(await create({ cron: '0 25 * * *' }), 400, 'VALIDATION_FAILED');
    problem(await create({ cron: '0 9 * * *', timezone: 'Mars/Base' }), 400, 'VALIDATION_FAILED');
    problem(await create({ cron: '0 9 * * *', prompt: '' }), 400, 'VALIDATION_FAILED');
    problem(await create({ cron: '0 9 * * *', prompt: 'x'.repeat(4001) }), 400, 'VALIDATION_FAILED');
    problem(await create({ cron: '0 9 * * *', agentId: 999_999 }), 404, 'AGENT_NOT_FOUND');
  });

  it('at most 20 active tasks per user: the 21st is a 409, also when switching one on; inactive ones do not count; another user is not affected', async () => {
    const user = await t.user('VIEWER');
    await t.grant({ type: 'USER', id: user.userId }, { type: 'DEPLOYMENT', id: deploymentId }, 'VIEW');
    // Twenty at once: the lock counts them one at a time, so all twenty fit and none more.
    const results = await Promise.all(Array.from({ length: 21 }, () => create({ cron: '0 9 * * *' }, user.key)));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(20);
    const refused = results.find((r) => r.statusCode !== 200)!;
    expect(problem(refused, 409, 'AGENT_TASK_LIMIT').detail).toContain('20 active scheduled tasks');
    const off = await made({ active: false }, user.key);
    problem(await t.request({ method: 'PUT', url: url(`/${off.id}`), body: { active: true }, key: user.key }), 409, 'AGENT_TASK_LIMIT');
    const first = results[0]!.json();
    expect((await t.request({ method: 'PUT', url: url(`/${first.id}`), body: { active: false }, key: user.key })).statusCode).toBe(200);
    expect((await t.request({ method: 'PUT', url: url(`/${off.id}`), body: { active: true }, key: user.key })).statusCode).toBe(200);
    expect((await create({ cron: '0 9 * * *' }, otherViewer.key)).statusCode).toBe(200);
  });

  it("an owner sees and edits their own; another user's task is a 404 to them; admins see and change any", async () => {
    const task = await made({}, viewer.key);
    expect((await t.request({ url: url(`/${task.id}`), key: viewer.key })).statusCode).toBe(200);
    problem(await t.request({ url: url(`/${task.id}`), key: otherViewer.key }), 404, 'AGENT_TASK_NOT_FOUND');
    problem(await t.request({ method: 'PUT', url: url(`/${task.id}`), body: { prompt: 'x' }, key: otherViewer.key }), 404, 'AGENT_TASK_NOT_FOUND');
    problem(await t.request({ method: 'DELETE', url: url(`/${task.id}`), key: otherViewer.key }), 404, 'AGENT_TASK_NOT_FOUND');
    problem(await t.request({ method: 'POST', url: url(`/${task.id}/run`), key: otherViewer.key }), 404, 'AGENT_TASK_NOT_FOUND');
    problem(await t.request({ url: url(`/${task.id}/runs`), key: otherViewer.key }), 404, 'AGENT_TASK_NOT_FOUND');
    const mine = (await t.request({ url: url('?first=200'), key: otherViewer.key })).json().items as Array<{ owner: { id: number } }>;
    expect(mine.every((x) => x.owner.id === otherViewer.userId)).toBe(true);
    const all = (await t.request({ url: url('?first=200') })).json().items as Array<{ id: number }>;
    expect(all.map((x) => x.id)).toContain(task.id);
    const changed = await t.request({ method: 'PUT', url: url(`/${task.id}`), body: { prompt: 'Changed by an admin', cron: '30 7 * * *' } });
    expect(changed.json()).toMatchObject({ prompt: 'Changed by an admin', cron: '30 7 * * *', owner: { id: viewer.userId } });
    // Using an agent needs VIEW on the deployment.
    problem(await create({ cron: '0 9 * * *' }, stranger.key), 403, 'FORBIDDEN');
    problem(await t.request({ url: url(), key: stranger.key }), 403, 'FORBIDDEN');
    expect((await t.request({ method: 'DELETE', url: url(`/${task.id}`), key: viewer.key })).statusCode).toBe(204);
    problem(await t.request({ url: url(`/${task.id}`), key: viewer.key }), 404, 'AGENT_TASK_NOT_FOUND');
  });

  it('runs now as an agent-task job; without a model provider the run fails saying so', async () => {
    const task = await made({}, viewer.key);
    const res = await t.request({ method: 'POST', url: url(`/${task.id}/run`), key: viewer.key });
    expect(res.statusCode, res.body).toBe(202);
    const queued = res.json();
    expect(queued).toMatchObject({ taskId: task.id, trigger: 'manual', scheduledFor: null, status: 'queued', jobId: expect.any(Number) });
    const job = await t.app.services.jobs.waitFor(t.tenantId, queued.jobId);
    expect(job).toMatchObject({ kind: 'agent-task', state: 'failed' });
    const runs = (await t.request({ url: url(`/${task.id}/runs`), key: viewer.key })).json().items;
    expect(runs).toEqual([
      expect.objectContaining({
        id: queued.id,
        status: 'failed',
        error: 'No model provider is configured',
        answer: null,
        threadId: null,
        startedAt: expect.any(String),
        finishedAt: expect.any(String),
      }),
    ]);
  });

  it('the due-time schedule claims an occurrence once, enqueues it and moves the next run on', async () => {
    clock = new Date('2026-06-01T08:00:00Z');
    const task = await made({ cron: '0 9 * * *' }, viewer.key);
    const scheduler = t.app.services.agentTaskScheduler;
    clock = new Date('2026-06-01T08:59:00Z');
    expect(await scheduler.tick()).toBe(0);
    clock = new Date('2026-06-01T09:00:30Z');
    // Two ticks at once (two processes) claim the occurrence once.
    const claimed = await Promise.all([scheduler.tick(), scheduler.tick()]);
    expect(claimed.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
    const runs = (await t.request({ url: url(`/${task.id}/runs`), key: viewer.key })).json().items;
    const scheduled = runs.filter((r: { trigger: string }) => r.trigger === 'schedule');
    expect(scheduled).toHaveLength(1);
    expect(scheduled[0].scheduledFor).toBe('2026-06-01T09:00:00.000Z');
    await t.app.services.jobs.waitFor(t.tenantId, scheduled[0].jobId);
    expect((await t.request({ url: url(`/${task.id}`), key: viewer.key })).json().nextRunAt).toBe('2026-06-02T09:00:00.000Z');
    clock = new Date('2026-06-01T09:30:00Z');
    // Other tasks of this file may be due; this one is not again.
    await scheduler.tick();
    expect(
      (await t.request({ url: url(`/${task.id}/runs`), key: viewer.key })).json().items.filter((r: { trigger: string }) => r.trigger === 'schedule'),
    ).toHaveLength(1);
  });

  it('after several missed occurrences (the server was down), runs the newest once and moves the next run past now', async () => {
    clock = new Date('2026-07-01T08:00:00Z');
    const task = await made({ cron: '0 9 * * *' }, viewer.key);
    expect(task.nextRunAt).toBe('2026-07-01T09:00:00.000Z');
    // Three daily occurrences pass with no tick.
    clock = new Date('2026-07-03T10:15:00Z');
    expect(await t.app.services.agentTaskScheduler.tick()).toBeGreaterThanOrEqual(1);
    const scheduled = (await t.request({ url: url(`/${task.id}/runs`), key: viewer.key }))
      .json()
      .items.filter((r: { trigger: string }) => r.trigger === 'schedule');
    expect(scheduled.map((r: { scheduledFor: string }) => r.scheduledFor)).toEqual(['2026-07-03T09:00:00.000Z']);
    await t.app.services.jobs.waitFor(t.tenantId, scheduled[0].jobId);
    expect((await t.request({ url: url(`/${task.id}`), key: viewer.key })).json().nextRunAt).toBe('2026-07-04T09:00:00.000Z');
  });

  it('keeps only the 50 most recent runs, newest first', async () => {
    const task = await made({ active: false }, viewer.key);
    const services = t.app.services.agentTasks;
    const row = await t.store.db.selectFrom('agent_tasks').selectAll().where('id', '=', task.id).executeTakeFirstOrThrow();
    const ids: number[] = [];
    for (let i = 0; i < 55; i++) ids.push((await services.enqueueRun(row, 'manual', null)).id);
    const runs = (await t.request({ url: url(`/${task.id}/runs`), key: viewer.key })).json().items as Array<{ id: number }>;
    expect(runs.map((r) => r.id)).toEqual(ids.slice(5).reverse());
    const stored = await t.store.db.selectFrom('agent_task_runs').select('id').where('task_id', '=', task.id).execute();
    expect(stored).toHaveLength(50);
  });

  it('records audit events for task writes and runs', async () => {
    expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/settings', body: { auditLogEnabled: true } })).statusCode).toBe(200);
    const task = await made({}, viewer.key);
    await t.request({ method: 'PUT', url: url(`/${task.id}`), body: { prompt: 'again' }, key: viewer.key });
    const run = (await t.request({ method: 'POST', url: url(`/${task.id}/run`), key: viewer.key })).json();
    await t.app.services.jobs.waitFor(t.tenantId, run.jobId);
    await t.request({ method: 'DELETE', url: url(`/${task.id}`), key: viewer.key });
    const actions = (await t.store.db.selectFrom('audit_events').select('action').where('action', 'like', 'agent-task.%').execute()).map((r) => r.action);
    expect(actions).toEqual(
      expect.arrayContaining(['agent-task.created', 'agent-task.updated', 'agent-task.run', 'agent-task.run-failed', 'agent-task.deleted']),
    );
    expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/settings', body: { auditLogEnabled: false } })).statusCode).toBe(200);
  });
});
