import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from './harness.js';
import { DIALECTS, TestApp, problem } from './harness.js';

describe.each(DIALECTS)('agents (%s)', (dialect) => {
  let t: TestApp;
  let deploymentId: number;
  let other: number;
  /** VIEW on the deployment as a VIEWER; EDIT as a DEVELOPER; VIEW as a DEVELOPER; EDIT as an EXPLORER; no grant at all. */
  let viewer: Caller;
  let developer: Caller;
  let viewingDeveloper: Caller;
  let editingExplorer: Caller;
  let stranger: Caller;
  let seq = 0;

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    deploymentId = await t.deployment('agents');
    other = await t.deployment('agents-other');
    viewer = await t.user('VIEWER');
    developer = await t.user('DEVELOPER');
    viewingDeveloper = await t.user('DEVELOPER');
    editingExplorer = await t.user('EXPLORER');
    stranger = await t.user('DEVELOPER');
    const on = { type: 'DEPLOYMENT' as const, id: deploymentId };
    await t.grant({ type: 'USER', id: viewer.userId }, on, 'VIEW');
    await t.grant({ type: 'USER', id: developer.userId }, on, 'EDIT');
    await t.grant({ type: 'USER', id: viewingDeveloper.userId }, on, 'VIEW');
    await t.grant({ type: 'USER', id: editingExplorer.userId }, on, 'EDIT');
  });
  afterAll(async () => t?.close());

  const base = (d = deploymentId) => `/api/v1/deployments/${d}/agents`;
  const create = (body: Record<string, unknown>, key?: string, d = deploymentId) => t.request({ method: 'POST', url: base(d), body, key });
  const made = async (body: Record<string, unknown> = {}) => {
    const res = await create({ name: `agent-${++seq}`, ...body });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  it('creates an agent with the documented defaults and reads it back; the creator is a ResourceOwner', async () => {
    const agent = await made({
      name: 'Sales',
      instructions: 'Answer about sales.',
      members: ['orders', 'customers_view'],
      starterPrompts: ['Revenue by month?'],
    });
    expect(agent).toEqual({
      id: expect.any(Number),
      deploymentId,
      name: 'Sales',
      description: null,
      instructions: 'Answer about sales.',
      members: ['orders', 'customers_view'],
      starterPrompts: ['Revenue by month?'],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      createdBy: { id: t.admin.userId, email: t.admin.email, firstName: null, picture: null },
    });
    expect((await t.request({ url: `${base()}/${agent.id}` })).json()).toEqual(agent);
    const bare = await made();
    expect(bare).toMatchObject({ instructions: '', members: null, starterPrompts: [] });
  });

  it('refuses a name taken in the deployment (409), on create and on rename; another deployment may reuse it', async () => {
    const first = await made({ name: 'Unique' });
    problem(await create({ name: 'Unique' }), 409, 'AGENT_NAME_TAKEN');
    const second = await made();
    problem(await t.request({ method: 'PUT', url: `${base()}/${second.id}`, body: { name: 'Unique' } }), 409, 'AGENT_NAME_TAKEN');
    expect((await t.request({ method: 'PUT', url: `${base()}/${first.id}`, body: { name: 'Unique' } })).statusCode).toBe(200);
    expect((await create({ name: 'Unique' }, undefined, other)).statusCode).toBe(200);
  });

  it('bounds the fields: name 1-255, description 2000, instructions 20000, members 200, starter prompts 20 of 500', async () => {
    for (const body of [
      { name: '' },
      { name: 'x'.repeat(256) },
      { name: 'a', description: 'x'.repeat(2001) },
      { name: 'a', instructions: 'x'.repeat(20_001) },
      { name: 'a', members: Array.from({ length: 201 }, (_, i) => `cube_${i}`) },
      { name: 'a', starterPrompts: Array.from({ length: 21 }, (_, i) => `prompt ${i}`) },
      { name: 'a', starterPrompts: ['x'.repeat(501)] },
    ]) {
      problem(await create(body), 400, 'VALIDATION_FAILED');
    }
    expect(
      (await create({ name: 'limits', members: Array.from({ length: 200 }, (_, i) => `cube_${i}`), starterPrompts: Array(20).fill('p') })).statusCode,
    ).toBe(200);
  });

  it('updates only the fields sent; members null means every member again', async () => {
    const agent = await made({ members: ['orders'], description: 'd' });
    const res = await t.request({ method: 'PUT', url: `${base()}/${agent.id}`, body: { members: null, starterPrompts: ['new'] } });
    expect(res.json()).toMatchObject({ name: agent.name, description: 'd', members: null, starterPrompts: ['new'] });
  });

  it('DeploymentAgentRead: VIEW on the deployment, any role, reads agents; no access is 403; another deployment or id is 404', async () => {
    const agent = await made();
    for (const caller of [viewer, viewingDeveloper, editingExplorer, developer]) {
      expect((await t.request({ url: base(), key: caller.key })).statusCode).toBe(200);
      expect((await t.request({ url: `${base()}/${agent.id}`, key: caller.key })).statusCode).toBe(200);
    }
    problem(await t.request({ url: base(), key: stranger.key }), 403, 'FORBIDDEN');
    problem(await t.request({ url: `${base()}/${agent.id}`, key: stranger.key }), 403, 'FORBIDDEN');
    problem(await t.request({ url: `${base(other)}/${agent.id}` }), 404, 'AGENT_NOT_FOUND');
  });

  it('AgentUpdate: writing needs EDIT and the role DEVELOPER; VIEW as a developer and EDIT as an explorer are 403', async () => {
    const agent = await made();
    for (const caller of [viewer, viewingDeveloper, editingExplorer, stranger]) {
      problem(await create({ name: `refused-${++seq}` }, caller.key), 403, 'FORBIDDEN');
      problem(await t.request({ method: 'PUT', url: `${base()}/${agent.id}`, body: { name: 'x' }, key: caller.key }), 403, 'FORBIDDEN');
      problem(await t.request({ method: 'DELETE', url: `${base()}/${agent.id}`, key: caller.key }), 403, 'FORBIDDEN');
    }
    const mine = await create({ name: `developer-${++seq}` }, developer.key);
    expect(mine.statusCode, mine.body).toBe(200);
    expect(mine.json().createdBy.id).toBe(developer.userId);
    expect((await t.request({ method: 'PUT', url: `${base()}/${agent.id}`, body: { description: 'by a developer' }, key: developer.key })).statusCode).toBe(
      200,
    );
    expect((await t.request({ method: 'DELETE', url: `${base()}/${agent.id}`, key: developer.key })).statusCode).toBe(204);
    problem(await t.request({ url: `${base()}/${agent.id}` }), 404, 'AGENT_NOT_FOUND');
  });

  it('lists newest first with cursor pagination', async () => {
    const d = await t.deployment(`paging-${++seq}`);
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create({ name: `p${i}` }, undefined, d)).json().id);
    const first = (await t.request({ url: `${base(d)}?first=2` })).json();
    expect(first.items.map((a: { id: number }) => a.id)).toEqual([ids[4], ids[3]]);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const rest = (await t.request({ url: `${base(d)}?first=10&after=${first.pageInfo.endCursor}` })).json();
    expect(rest.items.map((a: { id: number }) => a.id)).toEqual([ids[2], ids[1], ids[0]]);
    problem(await t.request({ url: `${base(d)}?after=nonsense` }), 400, 'INVALID_CURSOR');
  });

  it('agent-suggestions: the starter prompts of the agents the caller may use, agent by agent; none without access', async () => {
    const d = await t.deployment(`suggestions-${++seq}`);
    await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id: d }, 'VIEW');
    const a = (await create({ name: 'A', starterPrompts: ['one', 'two'] }, undefined, d)).json();
    const b = (await create({ name: 'B', starterPrompts: ['three'] }, undefined, d)).json();
    await create({ name: 'C' }, undefined, d);
    const res = await t.request({ url: `/api/v1/deployments/${d}/agent-suggestions`, key: viewer.key });
    expect(res.json()).toEqual({
      items: [
        { agentId: a.id, agentName: 'A', prompt: 'one' },
        { agentId: a.id, agentName: 'A', prompt: 'two' },
        { agentId: b.id, agentName: 'B', prompt: 'three' },
      ],
    });
    problem(await t.request({ url: `/api/v1/deployments/${d}/agent-suggestions`, key: stranger.key }), 403, 'FORBIDDEN');
  });

  it('records audit events for agent writes', async () => {
    expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/settings', body: { auditLogEnabled: true } })).statusCode).toBe(200);
    const agent = await made();
    await t.request({ method: 'PUT', url: `${base()}/${agent.id}`, body: { description: 'x' } });
    await t.request({ method: 'DELETE', url: `${base()}/${agent.id}` });
    const actions = await t.store.db.selectFrom('audit_events').select('action').where('action', 'like', 'agent.%').execute();
    expect(actions.map((r) => r.action)).toEqual(expect.arrayContaining(['agent.created', 'agent.updated', 'agent.deleted']));
    expect((await t.request({ method: 'PUT', url: '/api/v1/tenant/settings', body: { auditLogEnabled: false } })).statusCode).toBe(200);
  });

  describe('chat threads', () => {
    const services = () => t.app.services.agents;

    it('threads are visible only to their owner and to admins (ChatHistoryRead); others get 404', async () => {
      const agent = await made();
      const row = await t.store.db.selectFrom('agents').selectAll().where('id', '=', agent.id).executeTakeFirstOrThrow();
      const thread = await services().createThread(row, { userId: viewer.userId }, 'Revenue');
      await services().appendMessage(thread.id, { role: 'user', text: 'Revenue by month?' });
      await services().appendMessage(thread.id, {
        role: 'assistant',
        text: 'Here it is.',
        steps: [{ tool: 'query', result: { rows: 3 } }],
        usage: { inputTokens: 10 },
      });
      const url = `/api/v1/deployments/${deploymentId}/threads/${thread.id}`;
      const own = await t.request({ url, key: viewer.key });
      expect(own.statusCode, own.body).toBe(200);
      expect(own.json()).toEqual({
        id: thread.id,
        deploymentId,
        agentId: agent.id,
        userId: viewer.userId,
        embedUserId: null,
        title: 'Revenue',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        messages: [
          { seq: 1, role: 'user', text: 'Revenue by month?', steps: null, usage: null, createdAt: expect.any(String) },
          {
            seq: 2,
            role: 'assistant',
            text: 'Here it is.',
            steps: [{ tool: 'query', result: { rows: 3 } }],
            usage: { inputTokens: 10 },
            createdAt: expect.any(String),
          },
        ],
      });
      problem(await t.request({ url, key: developer.key }), 404, 'AGENT_THREAD_NOT_FOUND');
      expect((await t.request({ url })).statusCode).toBe(200);
      problem(await t.request({ url: `/api/v1/deployments/${other}/threads/${thread.id}` }), 404, 'AGENT_THREAD_NOT_FOUND');

      const list = `${base()}/${agent.id}/threads`;
      expect((await t.request({ url: list, key: viewer.key })).json().items.map((x: { id: string }) => x.id)).toEqual([thread.id]);
      expect((await t.request({ url: list, key: developer.key })).json().items).toEqual([]);
      problem(await t.request({ url: `${list}?userId=${viewer.userId}`, key: developer.key }), 403, 'FORBIDDEN');
      expect((await t.request({ url: `${list}?userId=${viewer.userId}` })).json().items.map((x: { id: string }) => x.id)).toEqual([thread.id]);
    });

    it('two appends at once to one thread keep order: seqs 1..n without gaps or duplicates', async () => {
      const agent = await made();
      const row = await t.store.db.selectFrom('agents').selectAll().where('id', '=', agent.id).executeTakeFirstOrThrow();
      const thread = await services().createThread(row, { userId: t.admin.userId });
      const appended = await Promise.all(
        Array.from({ length: 20 }, (_, i) => services().appendMessage(thread.id, { role: i % 2 ? 'assistant' : 'user', text: `m${i}` })),
      );
      expect(appended.map((m) => m.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      const messages = await services().messages(thread.id);
      expect(messages.map((m) => m.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      // Each message keeps the seq it was given.
      for (const m of appended) expect(messages.find((x) => x.seq === m.seq)?.text).toBe(m.text);
    });

    it('deleting an agent deletes its threads', async () => {
      const agent = await made();
      const row = await t.store.db.selectFrom('agents').selectAll().where('id', '=', agent.id).executeTakeFirstOrThrow();
      const thread = await services().createThread(row, { userId: t.admin.userId });
      await t.request({ method: 'DELETE', url: `${base()}/${agent.id}` });
      expect(await services().findThread(thread.id)).toBeUndefined();
    });
  });
});
