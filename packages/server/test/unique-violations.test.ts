import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapUniqueViolation, violatedUniqueIndex, type UniqueIndex } from '../src/db/errors.js';
import { ApiError } from '../src/shared/problems.js';
import { DIALECTS, TestApp } from './harness.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

type Table = 'users' | 'groups' | 'user_attributes' | 'folders' | 'workbooks' | 'reports' | 'policies' | 'oidc_token_configs';

/*
 * Issue 11: unique-violation -> 409 handling has one home (db/errors.ts), which names the index a
 * write ran into. Concurrent writers that both pass a service's check reach the index; each entry
 * is proved here on the real store by writing a row again, so a renamed index cannot silently turn
 * those 409s into 500s.
 */
describe.each(DIALECTS)('unique indexes behind the 409s (%s)', (dialect) => {
  let t: TestApp;
  const rows = new Map<UniqueIndex, { table: Table; id: number }>();

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    const d = await t.deployment('unique');
    const w = new WorkspaceFixtures(t, d);
    const group = await t.group('unique-group');
    const at = new Date().toISOString();
    const attribute = await t.store.db
      .insertInto('user_attributes')
      .values({ tenant_id: t.tenantId, name: 'region', type: 'string', default_value: null, created_at: at, updated_at: at })
      .returning('id')
      .executeTakeFirstOrThrow();
    await t.grant({ type: 'GROUP', id: group }, { type: 'DEPLOYMENT', id: d }, 'VIEW');
    const policy = await t.store.db.selectFrom('policies').select('id').where('principal_id', '=', group).executeTakeFirstOrThrow();
    rows.set('users_tenant_email', { table: 'users', id: (await t.user('VIEWER')).userId });
    rows.set('groups_tenant_name', { table: 'groups', id: group });
    rows.set('user_attributes_tenant_name', { table: 'user_attributes', id: attribute.id });
    rows.set('folders_sibling_name', { table: 'folders', id: await w.folder('twin', await w.folder('parent')) });
    rows.set('workbooks_slug', { table: 'workbooks', id: await w.workbook('twin book') });
    rows.set('reports_public_id', { table: 'reports', id: await w.report('twin report') });
    rows.set('policies_principal_resource', { table: 'policies', id: policy.id });
    const config = { tenant_id: t.tenantId, sub_format: null, custom_claims: null, target_env_var: null, is_enabled: 1, created_at: at, updated_at: at };
    const custom = await t.store.db
      .insertInto('oidc_token_configs')
      .values({ ...config, audience_type: 'Custom', audience: 'x', name: 'twin' })
      .returning('id')
      .executeTakeFirstOrThrow();
    rows.set('oidc_token_configs_name', { table: 'oidc_token_configs', id: custom.id });
  });
  afterAll(async () => t?.close());

  /** Writes the row again without its id: only the unique index can refuse it. */
  async function duplicate(table: Table, id: number): Promise<unknown> {
    const { id: _, ...row } = (await t.store.db.selectFrom(table).selectAll().where('id', '=', id).executeTakeFirstOrThrow()) as { id: number };
    return t.store.db
      .insertInto(table)
      .values(row as never)
      .execute()
      .then(() => new Error(`${table}: the duplicate was stored`))
      .catch((error: unknown) => error);
  }

  it('each named unique index is recognised from the error of a write it refused', async () => {
    for (const [index, { table, id }] of rows) expect(violatedUniqueIndex(await duplicate(table, id)), index).toBe(index);
    expect(violatedUniqueIndex(new Error('UNIQUE constraint failed: index'))).toBeUndefined();
    // A second config of one cloud under another name: only the one-per-cloud index refuses it.
    const at = new Date().toISOString();
    const config = {
      tenant_id: t.tenantId,
      audience_type: 'AWS',
      audience: 'sts.amazonaws.com',
      sub_format: null,
      custom_claims: null,
      target_env_var: null,
      is_enabled: 1,
      created_at: at,
      updated_at: at,
    };
    await t.store.db
      .insertInto('oidc_token_configs')
      .values({ ...config, name: 'aws' })
      .execute();
    const second = await t.store.db
      .insertInto('oidc_token_configs')
      .values({ ...config, name: 'aws-two' })
      .execute()
      .catch((e: unknown) => e);
    expect(violatedUniqueIndex(second)).toBe('oidc_token_configs_one_per_cloud');
  });

  it('a write refused by the named index gets the given 409; any other failure passes through unchanged', async () => {
    const { table, id } = rows.get('workbooks_slug')!;
    const taken = () => new ApiError('WORKBOOK_SLUG_TAKEN', 'taken');
    await expect(mapUniqueViolation({ workbooks_slug: taken }, () => duplicate(table, id).then((e) => Promise.reject(e)))).rejects.toMatchObject({
      code: 'WORKBOOK_SLUG_TAKEN',
      status: 409,
    });
    // Another index than the one named is not this conflict: the original error stays.
    const other = rows.get('reports_public_id')!;
    const refused = await mapUniqueViolation({ workbooks_slug: taken }, () => duplicate(other.table, other.id).then((e) => Promise.reject(e))).catch(
      (e: unknown) => e,
    );
    expect(refused).not.toBeInstanceOf(ApiError);
    expect(violatedUniqueIndex(refused)).toBe('reports_public_id');
  });
});
