import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp, problem } from './harness.js';

describe.each(DIALECTS)('dbt-sync settings (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
  });
  afterAll(async () => t?.close());

  const url = (id: number) => `/api/v1/deployments/${id}/dbt-sync-settings`;
  const get = (id: number, key?: string) => t.request({ url: url(id), key });
  const put = (id: number, body: unknown, key?: string) => t.request({ method: 'PUT', url: url(id), body, key });

  it('answers the defaults before anything is saved: the deployment’s own repository, target/manifest.json, model/cubes/dbt, every model', async () => {
    const id = await t.deployment('defaults');
    const res = await get(id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      deploymentId: id,
      repository: { type: 'deployment' },
      ref: null,
      manifestPath: 'target/manifest.json',
      outputPath: 'model/cubes/dbt',
      selector: { paths: [], tags: [], names: [] },
      updatedAt: null,
    });
  });

  it('a PUT merges: keys left out keep their values, a selector list given replaces that list, ref null goes back to the deploy branch', async () => {
    const id = await t.deployment('merge');
    let res = await put(id, {
      ref: 'release/v2',
      manifestPath: './dbt/target/manifest.json',
      outputPath: 'model/cubes/generated/',
      selector: { tags: ['finance'], paths: ['models/marts/'] },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      ref: 'release/v2',
      manifestPath: 'dbt/target/manifest.json',
      outputPath: 'model/cubes/generated',
      selector: { paths: ['models/marts'], tags: ['finance'], names: [] },
    });
    res = await put(id, { selector: { names: ['orders'] } });
    expect(res.json()).toMatchObject({
      ref: 'release/v2',
      manifestPath: 'dbt/target/manifest.json',
      selector: { paths: ['models/marts'], tags: ['finance'], names: ['orders'] },
    });
    res = await put(id, { ref: null });
    expect(res.json()).toMatchObject({ ref: null, outputPath: 'model/cubes/generated' });
    expect((await get(id)).json()).toEqual(res.json());
    expect(typeof res.json().updatedAt).toBe('string');
  });

  it('bad input is a 400 naming every problem and changes nothing', async () => {
    const id = await t.deployment('bad');
    await put(id, { outputPath: 'model/cubes/mine' });
    const before = (await get(id)).json();
    const body = problem(
      await put(id, { manifestPath: '../secrets.json', outputPath: '.git/hooks', ref: 'bad..ref', selector: { tags: ['x'] } }),
      400,
      'VALIDATION_FAILED',
    );
    expect(body.errors?.map((e) => e.pointer).sort()).toEqual(['/body/manifestPath', '/body/outputPath', '/body/ref']);
    problem(await put(id, { repository: { type: 'url' } }), 400, 'VALIDATION_FAILED');
    problem(await put(id, { unknown: 1 }), 400, 'VALIDATION_FAILED');
    expect((await get(id)).json()).toEqual(before);
  });

  it('access: SchemaRead reads, DeploymentUpdate writes; scoped keys 403; other tenants 404', async () => {
    const id = await t.deployment('access');
    const viewer = await t.user('VIEWER');
    await t.grant({ type: 'USER', id: viewer.userId }, { type: 'DEPLOYMENT', id }, 'VIEW');
    const editor = await t.user('DEVELOPER');
    await t.grant({ type: 'USER', id: editor.userId }, { type: 'DEPLOYMENT', id }, 'EDIT');
    const manager = await t.user('DEVELOPER');
    await t.grant({ type: 'USER', id: manager.userId }, { type: 'DEPLOYMENT', id }, 'MANAGE');
    const stranger = await t.user('DEVELOPER');

    expect((await get(id, viewer.key)).statusCode).toBe(200);
    problem(await put(id, { ref: 'main' }, viewer.key), 403, 'FORBIDDEN');
    problem(await put(id, { ref: 'main' }, editor.key), 403, 'FORBIDDEN');
    problem(await get(id, stranger.key), 403, 'FORBIDDEN');
    expect((await put(id, { ref: 'main' }, manager.key)).statusCode).toBe(200);

    const elsewhere = await t.deployment('elsewhere');
    const scoped = await t.key(t.admin.userId, { deploymentIds: [elsewhere] });
    problem(await get(id, scoped), 403, 'KEY_SCOPE_FORBIDDEN');
    problem(await put(id, { ref: 'x' }, scoped), 403, 'KEY_SCOPE_FORBIDDEN');

    const other = await t.tenant(`dbt-settings-${dialect}`);
    const foreign = await t.deployment('foreign', { tenantId: other.tenantId });
    problem(await get(foreign), 404, 'DEPLOYMENT_NOT_FOUND');
    problem(await put(foreign, { ref: 'x' }), 404, 'DEPLOYMENT_NOT_FOUND');
    expect((await get(id)).json()).toMatchObject({ ref: 'main' });
  });
});
