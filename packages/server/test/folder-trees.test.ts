import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { chainsOf } from '../src/areas/workspace/tree.store.js';
import { FolderTrees } from '../src/areas/workspace/folder-trees.js';
import { storeFor, type Store } from '../src/db/database.js';
import { DIALECTS, TestApp } from './harness.js';
import { serverEnv, type ServerEnv } from './server-env.js';
import { startServerProcess, type HttpAnswer, type ServerProcess } from './server-process.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

/*
 * The folder paths of views and lists come from each deployment's folder tree in memory when it
 * is valid (areas/workspace/folder-trees.ts), and must be exactly what SQL would give: the "Do not
 * trade correctness for speed" and "Caches are per tenant and can never answer for another
 * tenant".
 */

type Chains = Map<number, { entries: Array<{ id: number; name: string; createdBy: number | null }> }>;
const plain = (chains: Chains) => Object.fromEntries([...chains].sort(([a], [b]) => a - b).map(([id, c]) => [id, c.entries]));

describe.each(DIALECTS)('folder trees in memory give the chains SQL gives (%s)', (dialect) => {
  let t: TestApp;
  let d: number;
  let w: WorkspaceFixtures;
  let trees: FolderTrees;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
    d = await t.deployment('trees');
    w = new WorkspaceFixtures(t, d);
    trees = new FolderTrees(t.store.db, { settleMs: 0 });
  });
  afterAll(async () => t?.close());

  const scope = () => ({ tenantId: t.tenantId, deploymentId: d });
  const version = async (id: number) =>
    (await sql<{ version: number | string }>`select version from folder_tree_versions where deployment_id = ${id}`.execute(t.store.db)).rows[0]?.version;
  const allFolders = async () => (await t.store.db.selectFrom('folders').select('id').where('deployment_id', '=', d).execute()).map((r) => r.id);
  /** The chains as the tree answers them: a first request loads it, the next is answered from it. */
  async function fromTree(ids: number[]): Promise<Chains> {
    await trees.chains(t.store.db, scope(), ids);
    await trees.settled();
    expect(trees.heldVersion(scope()), 'the tree held is at the stored version').toBe(Number(await version(d)));
    return trees.chains(t.store.db, scope(), ids);
  }

  it('after every create, move, rename and delete, in a random order, the tree answers exactly as the SQL walk', async () => {
    let seed = 7;
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) ids.push(await w.folder(`F${i}`, ids.length > 0 && i % 3 !== 0 ? ids[random(ids.length)]! : null));
    for (let step = 0; step < 40; step++) {
      const existing = await allFolders();
      const pick = existing[random(existing.length)]!;
      const op = step % 4;
      if (op === 0) ids.push(await w.folder(`New ${step}`, pick));
      if (op === 1) {
        const to = existing[random(existing.length)]!;
        // Through the API, so the move's own rules keep the tree a tree (a refused move changes nothing).
        await t.request({
          method: 'POST',
          url: `/api/v1/deployments/${d}/workspace/move`,
          body: { type: 'FOLDER', id: pick, folderId: random(4) === 0 ? null : to },
        });
      }
      if (op === 2)
        await t.store.db
          .updateTable('folders')
          .set({ name: `Renamed ${step}` })
          .where('id', '=', pick)
          .execute();
      if (op === 3 && step % 8 === 3) await t.request({ method: 'DELETE', url: `/api/v1/deployments/${d}/folders/${pick}` });
      const now = await allFolders();
      expect(plain(await fromTree(now)), `step ${step}`).toEqual(plain(await chainsOf(t.store.db, scope(), now)));
    }
  });

  it('a change rolled back leaves the tree valid and unchanged; a committed one is answered at once, then loaded', async () => {
    const top = await w.folder('Rollback top');
    const child = await w.folder('Rollback child', top);
    const names = (chains: Chains) => chains.get(child)!.entries.map((e) => e.name);
    expect(names(await fromTree([child]))).toEqual(['Rollback top', 'Rollback child']);
    const held = trees.heldVersion(scope());
    await expect(
      t.store.db.transaction().execute(async (trx) => {
        await trx.updateTable('folders').set({ name: 'Never committed' }).where('id', '=', top).execute();
        // A transaction is answered from SQL: it sees its own change, which the tree must never hold.
        expect(names(await trees.chains(trx, scope(), [child]))).toEqual(['Never committed', 'Rollback child']);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(Number(await version(d)), 'a rollback takes its bump with it').toBe(held);
    expect(names(await trees.chains(t.store.db, scope(), [child]))).toEqual(['Rollback top', 'Rollback child']);
    expect(trees.heldVersion(scope())).toBe(held);
    await t.store.db.updateTable('folders').set({ name: 'Committed' }).where('id', '=', top).execute();
    expect(names(await trees.chains(t.store.db, scope(), [child])), 'the very next answer, before any load').toEqual(['Committed', 'Rollback child']);
    expect(names(await fromTree([child]))).toEqual(['Committed', 'Rollback child']);
  });

  it('moving a workbook or a report does not change the version; a deleted deployment takes its version with it', async () => {
    const f = await w.folder('Holder');
    const wb = await w.workbook('Moved workbook');
    const before = Number(await version(d));
    const moved = await t.request({ method: 'POST', url: `/api/v1/deployments/${d}/workspace/move`, body: { type: 'WORKBOOK', id: wb, folderId: f } });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(Number(await version(d))).toBe(before);
    const gone = await t.deployment('gone');
    await new WorkspaceFixtures(t, gone).folder('Gone');
    expect(await version(gone)).toBeDefined();
    await t.store.db.deleteFrom('deployments').where('id', '=', gone).execute();
    expect(await version(gone)).toBeUndefined();
  });

  it('a tree is kept per tenant: another tenant asking for the same deployment id gets none of its folders', async () => {
    const f = await w.folder('Tenant A only');
    expect((await fromTree([f])).get(f)?.entries.map((e) => e.name)).toEqual(['Tenant A only']);
    const other = { tenantId: t.tenantId + 1000, deploymentId: d };
    for (let i = 0; i < 2; i++) {
      expect((await trees.chains(t.store.db, other, [f])).size, 'no chain of tenant A for tenant B').toBe(0);
      await trees.settled();
    }
    expect(trees.heldVersion(other) === undefined || (await trees.chains(t.store.db, other, [f])).size === 0).toBe(true);
  });

  it('a deployment whose folders keep changing is answered from SQL and loaded only once they hold still for the settle time', async () => {
    const slow = new FolderTrees(t.store.db, { settleMs: 60_000 });
    const f = await w.folder('Settling');
    for (let i = 0; i < 3; i++) {
      expect((await slow.chains(t.store.db, scope(), [f])).get(f)?.entries.map((e) => e.name)).toEqual(['Settling']);
      await slow.settled();
    }
    expect(slow.heldVersion(scope()), 'not loaded within the settle time').toBeUndefined();
  });
});

/*
 * Across processes: every change below is made through server A, and the very next list on
 * server B, whose tree was loaded before, shows the new paths.
 */
describe.each(DIALECTS)('folder paths on another process follow every change at once (%s)', (dialect) => {
  const adminKey = generateApiKey();
  let env: ServerEnv;
  let a: ServerProcess;
  let b: ServerProcess;
  let store: Store;
  let d: number;

  const ok = (res: HttpAnswer, status = 200) => {
    expect(res.status, res.text).toBe(status);
    return res.body as Record<string, any>;
  };

  beforeAll(async () => {
    env = await serverEnv(dialect);
    const extra = { ...env.env, ADMIN_API_KEY: adminKey, RATE_LIMIT_PER_MINUTE: '0', FOLDER_TREE_SETTLE_MS: '0' };
    const started = await Promise.allSettled([startServerProcess(extra, env.dataDir), startServerProcess(extra, env.dataDir)]);
    const failure = started.find((s) => s.status === 'rejected');
    [a, b] = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : [])) as [ServerProcess, ServerProcess];
    if (failure) throw failure.reason;
    store = storeFor({ databaseUrl: env.env.DATABASE_URL ?? null, dataDir: env.dataDir });
    const at = new Date().toISOString();
    const tenant = await store.db.selectFrom('tenants').select('id').orderBy('id').executeTakeFirstOrThrow();
    d = (
      await store.db
        .insertInto('deployments')
        .values({ tenant_id: tenant.id, name: 'paths', settings: '{}', created_by: null, created_at: at, updated_at: at })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
  });
  afterAll(async () => {
    await Promise.allSettled([a?.stop(), b?.stop()]);
    await store?.close();
    await env?.destroy();
  });

  /** The report's folder path as server B's list shows it, and as its single GET (read in SQL) shows it. */
  async function pathsOnB(reportId: number): Promise<{ listed: string[]; single: string[] }> {
    // The single GET first: each read may start B loading the new tree, which the other would then use.
    const single = ok(await b.get(`/api/v1/deployments/${d}/reports/${reportId}`, adminKey));
    const page = ok(await b.get(`/api/v1/deployments/${d}/reports?first=100`, adminKey));
    const listed = (page.items as Array<{ id: number; folderPath: Array<{ name: string }> }>).find((r) => r.id === reportId)!;
    return { listed: listed.folderPath.map((p) => p.name), single: (single.folderPath as Array<{ name: string }>).map((p) => p.name) };
  }

  it('rename, move, create and delete on A: B’s very next list shows the new path, the same as its single GET', async () => {
    const folder = async (name: string, parentId: number | null) =>
      ok(await a.post(`/api/v1/deployments/${d}/folders`, { name, parentId }, adminKey), 201).id as number;
    const top = await folder('Top', null);
    const middle = await folder('Middle', top);
    const other = await folder('Other', null);
    const report = ok(await a.put(`/api/v1/deployments/${d}/reports/by-public-id/paths`, { name: 'Paths', folderId: middle }, adminKey), 201).id as number;
    // B loads its tree in the background after its first list at a version (FOLDER_TREE_SETTLE_MS=0).
    for (let i = 0; i < 3; i++) expect((await pathsOnB(report)).listed).toEqual(['Top', 'Middle']);

    const expectOnB = async (path: string[]) => {
      const seen = await pathsOnB(report);
      expect(seen.listed).toEqual(path);
      expect(seen.single).toEqual(path);
      // And again, answered from the tree B has loaded at the new version by now.
      for (let i = 0; i < 2; i++) expect(await pathsOnB(report)).toEqual({ listed: path, single: path });
    };
    ok(await a.patch(`/api/v1/deployments/${d}/folders/${top}`, { name: 'Top renamed' }, adminKey));
    await expectOnB(['Top renamed', 'Middle']);
    ok(await a.post(`/api/v1/deployments/${d}/workspace/move`, { type: 'FOLDER', id: middle, folderId: other }, adminKey));
    await expectOnB(['Other', 'Middle']);
    const deeper = await folder('Deeper', middle);
    ok(await a.post(`/api/v1/deployments/${d}/workspace/move`, { type: 'REPORT', id: report, folderId: deeper }, adminKey));
    await expectOnB(['Other', 'Middle', 'Deeper']);
    const empty = await folder('Empty', deeper);
    await expectOnB(['Other', 'Middle', 'Deeper']);
    expect((await a.del(`/api/v1/deployments/${d}/folders/${empty}`, adminKey)).status).toBe(204);
    await expectOnB(['Other', 'Middle', 'Deeper']);
    ok(await a.patch(`/api/v1/deployments/${d}/folders/${deeper}`, { name: 'Deepest' }, adminKey));
    await expectOnB(['Other', 'Middle', 'Deepest']);
  });
});
