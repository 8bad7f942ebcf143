/**
 * The benchmarks' workspace: 10,000 folders over 10 levels, workbooks and reports in random
 * folders, written straight to the store in multi-row statements (seeding through the API would
 * take longer than the benchmarks themselves). Shared by bench:bulk-move and bench:read.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { insertKey } from '../../src/areas/api-keys/api-keys.store.js';
import { generateApiKey } from '../../src/areas/api-keys/key-format.js';
import type { Store } from '../../src/db/database.js';

export const FOLDERS_PER_LEVEL = [20, 60, 150, 300, 600, 1000, 1600, 2000, 2200, 2070];
const BATCH = 1000;

export const stamp = () => new Date().toISOString();

export function shuffle<T>(list: T[]): T[] {
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [list[i], list[j]] = [list[j]!, list[i]!];
  }
  return list;
}

/** Inserts rows in multi-row statements, all in one transaction, returning the new ids in order. */
async function insertMany(store: Store, table: 'folders' | 'workbooks' | 'reports', rows: any[]): Promise<number[]> {
  return store.db.transaction().execute(async (trx) => {
    const ids: number[] = [];
    for (let i = 0; i < rows.length; i += BATCH) {
      const inserted = await trx
        .insertInto(table)
        .values(rows.slice(i, i + BATCH))
        .returning('id')
        .execute();
      ids.push(...inserted.map((r) => r.id));
    }
    return ids;
  });
}

/** The workspace: folders level by level (parents from the level above), then workbooks and reports in random folders. */
export async function seed(store: Store, tenantId: number, deploymentId: number, itemsPerType: number) {
  const base = { tenant_id: tenantId, deployment_id: deploymentId, created_by: null, created_at: stamp(), updated_at: stamp() };
  const levels: number[][] = [];
  for (const [index, count] of FOLDERS_PER_LEVEL.entries()) {
    const above = levels[index - 1];
    const rows = Array.from({ length: count }, (_, i) => ({
      ...base,
      parent_id: above ? above[Math.floor(Math.random() * above.length)]! : null,
      name: `f-${index + 1}-${i}`,
    }));
    levels.push(await insertMany(store, 'folders', rows));
  }
  const all = levels.flat();
  const anyFolder = () => all[Math.floor(Math.random() * all.length)]!;
  const workbooks = await insertMany(
    store,
    'workbooks',
    Array.from({ length: itemsPerType }, (_, i) => ({
      ...base,
      folder_id: anyFolder(),
      name: `Workbook ${i}`,
      slug: `workbook-${i}`,
      meta: '{"owner":"bench"}',
      calculated_fields: '{}',
      dashboard_draft: null,
      dashboard_published: null,
      published_dashboard: null,
    })),
  );
  const reports = await insertMany(
    store,
    'reports',
    Array.from({ length: itemsPerType }, (_, i) => ({
      ...base,
      folder_id: anyFolder(),
      name: `Report ${i}`,
      public_id: `report-${i}`,
      kind: 'table',
      title: `Report ${i}`,
      description: null,
      sql_query: 'select 1',
      python_code: null,
      spec: null,
      meta: '{}',
      preferences: null,
      period_comparisons: null,
      fill_missing_rows: null,
      last_viewed_at: null,
    })),
  );
  return { levels, workbooks, reports };
}

/** An explorer whose only access is MANAGE on every top-level folder, granted to a group they belong to. */
export type Seeded = Awaited<ReturnType<typeof seed>>;

export async function explorer(store: Store, tenantId: number, topLevel: number[]): Promise<string> {
  const at = stamp();
  const user = await store.db
    .insertInto('users')
    .values({
      tenant_id: tenantId,
      email: 'explorer@bench.example',
      first_name: 'Bench',
      role: 'EXPLORER',
      deactivated_at: null,
      created_at: at,
      updated_at: at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const group = await store.db
    .insertInto('groups')
    .values({ tenant_id: tenantId, name: 'Movers', description: null, created_at: at, updated_at: at })
    .returning('id')
    .executeTakeFirstOrThrow();
  await store.db.insertInto('group_members').values({ tenant_id: tenantId, group_id: group.id, user_id: user.id, created_at: at }).execute();
  await store.db
    .insertInto('policies')
    .values(
      topLevel.map((id) => ({
        tenant_id: tenantId,
        principal_type: 'GROUP' as const,
        principal_id: group.id,
        resource_type: 'FOLDER' as const,
        resource_id: id,
        access: 'MANAGE' as const,
        created_by: null,
        created_at: at,
      })),
    )
    .execute();
  const key = generateApiKey();
  await insertKey(store.db, { tenantId, userId: user.id, name: 'bench', key, source: 'api', deploymentIds: null, expiresAt: null, createdAt: at });
  return key;
}

/** A PostgreSQL schema for this run only, or null on SQLite. */
export async function temporarySchema(url: string | undefined) {
  if (!url) return null;
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  const run = async (statement: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await run(`create schema ${schema}`);
  const scoped = new URL(url);
  scoped.searchParams.set('options', `-c search_path=${schema}`);
  return { url: scoped.toString(), drop: () => run(`drop schema ${schema} cascade`) };
}
