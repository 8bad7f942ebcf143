import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertKey } from '../src/areas/api-keys/api-keys.store.js';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { storeFor, type Store } from '../src/db/database.js';
import type { ItemType } from '../src/db/tables.js';
import { DIALECTS } from './harness.js';
import { serverEnv, type ServerEnv } from './server-env.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';
import { startServerProcess, type HttpAnswer, type ServerProcess } from './server-process.js';

/*
 * Issue: "Correct under concurrency". Two real server processes share one store and receive many
 * concurrent random moves and deletes; afterwards the whole tree is read back from the database
 * and checked. The tree's safety rests on each move transaction serialising the deployment's tree
 * (DESIGN.md, "Trees"); these tests are what would catch a check made outside that lock.
 */

const REQUESTS = 320;
const CONCURRENCY = 16;
const MAX_DEPTH = 10;

interface Ref {
  type: ItemType;
  id: number;
}
const keyOf = (ref: Ref) => `${ref.type}:${ref.id}`;

/** Rows written straight to the shared store, so the servers start from a known tree. */
class Seeder {
  private serial = 0;
  constructor(
    readonly store: Store,
    readonly tenantId: number,
  ) {}

  private at() {
    return new Date().toISOString();
  }

  async deployment(name: string): Promise<number> {
    const at = this.at();
    const row = await this.store.db
      .insertInto('deployments')
      .values({ tenant_id: this.tenantId, name, settings: '{}', created_by: null, created_at: at, updated_at: at })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async folder(deploymentId: number, name: string, parentId: number | null): Promise<number> {
    return new WorkspaceFixtures(this, deploymentId).folder(name, parentId);
  }

  async item(deploymentId: number, type: 'WORKBOOK' | 'REPORT', folderId: number | null): Promise<number> {
    const fixtures = new WorkspaceFixtures(this, deploymentId);
    const name = `${type === 'WORKBOOK' ? 'wb' : 'rp'}-${++this.serial}`;
    return type === 'WORKBOOK' ? fixtures.workbook(name, folderId) : fixtures.report(name, folderId);
  }

  /**
   * `count` folders in a few levels. Names come from a small pool (unique among siblings), so
   * random moves also meet the sibling-name rule.
   */
  async tree(deploymentId: number, count: number): Promise<number[]> {
    const ids: number[] = [];
    const childNames = new Map<number | null, Set<string>>();
    for (let i = 0; i < count; i++) {
      // The first few are top-level; each later one hangs under an earlier folder, giving 3-5 levels.
      const parent = i < 5 ? null : ids[Math.floor(Math.random() * Math.min(ids.length, 5 + Math.floor(i / 2)))]!;
      const taken = childNames.get(parent) ?? new Set<string>();
      const free = NAMES.filter((n) => !taken.has(n));
      const name = free.length > 0 ? pick(free) : `f-${i}`;
      taken.add(name);
      childNames.set(parent, taken);
      ids.push(await this.folder(deploymentId, name, parent));
    }
    return ids;
  }
}

const NAMES = ['red', 'green', 'blue', 'amber', 'teal', 'plum', 'sand', 'rose', 'jade', 'onyx', 'gold', 'sky', 'mint', 'rust', 'iris', 'lime'];
const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;

/** The problem-details statuses a single move may answer with (DESIGN.md, "Moves"). */
function expectMoveAnswer(answer: HttpAnswer, label: string): void {
  if (answer.status === 200) return;
  expect([400, 403, 404], `${label}: ${answer.status} ${answer.text}`).toContain(answer.status);
  expect(answer.contentType, label).toMatch(/^application\/problem\+json/);
  expect(answer.body, label).toMatchObject({ status: answer.status, code: expect.any(String), message: expect.any(String) });
}

/** A bulk answer is 200, with exactly one entry per distinct item and no item failing with a 5xx. */
function expectBulkAnswer(answer: HttpAnswer, sent: Ref[], done: 'moved' | 'deleted', label: string): Ref[] {
  expect(answer.status, `${label}: ${answer.text}`).toBe(200);
  const body = answer.body as { failed: Array<Ref & { error: { status: number; message: string } }> } & Record<string, Ref[]>;
  const applied = body[done]!.map((r) => ({ type: r.type, id: r.id }));
  for (const f of body.failed) expect([400, 403, 404], `${label}: ${JSON.stringify(f)}`).toContain(f.error.status);
  const distinct = [...new Set(sent.map(keyOf))].sort();
  expect([...applied, ...body.failed].map(keyOf).sort(), label).toEqual(distinct);
  return applied;
}

describe.each(DIALECTS)('workspace under concurrency: two server processes, one store (%s)', (dialect) => {
  const adminKey = generateApiKey();
  let env: ServerEnv;
  let servers: ServerProcess[] = [];
  let store: Store;
  let seed: Seeder;

  beforeAll(async () => {
    env = await serverEnv(dialect);
    // Both start at once: migrations and the bootstrap are themselves serialised across processes.
    const extra = { ...env.env, ADMIN_API_KEY: adminKey, RATE_LIMIT_PER_MINUTE: '0' };
    const started = await Promise.allSettled([startServerProcess(extra, env.dataDir), startServerProcess(extra, env.dataDir)]);
    servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failure = started.find((s) => s.status === 'rejected');
    if (failure) throw failure.reason;
    store = storeFor({ databaseUrl: env.env.DATABASE_URL ?? null, dataDir: env.dataDir });
    const tenant = await store.db.selectFrom('tenants').select('id').orderBy('id').executeTakeFirstOrThrow();
    seed = new Seeder(store, tenant.id);
  });

  afterAll(async () => {
    await Promise.allSettled(servers.map((s) => s.stop()));
    await store?.close();
    await env?.destroy();
  });

  const serverErrors = () => servers.flatMap((s) => s.errors());

  it('many concurrent random moves and deletes at both processes leave a sound tree and lose no item', { timeout: 60_000 }, async () => {
    const d = await seed.deployment('concurrency');
    const folders = await seed.tree(d, 30);
    const items: Ref[] = [];
    for (let i = 0; i < 90; i++) {
      const type = i % 2 === 0 ? 'WORKBOOK' : 'REPORT';
      items.push({ type, id: await seed.item(d, type, Math.random() < 0.2 ? null : pick(folders)) });
    }
    // Another deployment's rows, offered as items and destinations: always 404, never touched.
    const other = await seed.deployment('bystander');
    const otherFolders = await seed.tree(other, 5);
    const otherItems: Ref[] = [
      { type: 'WORKBOOK', id: await seed.item(other, 'WORKBOOK', otherFolders[0]!) },
      { type: 'REPORT', id: await seed.item(other, 'REPORT', null) },
    ];
    const otherBefore = await snapshot(other);

    const folderRefs: Ref[] = folders.map((id) => ({ type: 'FOLDER', id }));
    const anyItem = (): Ref =>
      Math.random() < 0.05 ? pick([...otherItems, { type: 'FOLDER', id: pick(otherFolders) }]) : Math.random() < 0.45 ? pick(folderRefs) : pick(items);
    const destination = (): number | null => (Math.random() < 0.15 ? null : Math.random() < 0.04 ? pick(otherFolders) : pick(folders));
    const reportedDeleted = new Set<string>();
    const base = `/api/v1/deployments/${d}/workspace`;
    let applied = 0;

    async function operation(n: number): Promise<void> {
      const server = servers[n % 2]!;
      const roll = Math.random();
      if (roll < 0.4) {
        const ref = anyItem();
        const folderId = destination();
        const answer = await server.post(`${base}/move`, { ...ref, folderId }, adminKey);
        expectMoveAnswer(answer, `move ${keyOf(ref)} -> ${folderId}`);
        if (answer.status === 200) applied++;
      } else if (roll < 0.9) {
        // Mixed batches with repeats; folders are often sent into their own descendants.
        const sent = Array.from({ length: 1 + Math.floor(Math.random() * 12) }, anyItem);
        if (sent.length > 1 && Math.random() < 0.5) sent.push(sent[0]!);
        const folderId = destination();
        const answer = await server.post(`${base}/bulk-move`, { items: sent, folderId }, adminKey);
        applied += expectBulkAnswer(answer, sent, 'moved', `bulk move -> ${folderId}`).length;
        // Each moved item is returned where it was put, as read inside its own transaction.
        for (const m of (answer.body as { moved: Array<{ folderId: number | null }> }).moved) expect(m.folderId).toBe(folderId);
      } else {
        // Mostly workbooks and reports; now and then a folder, which only goes once it is a leaf.
        const sent = Array.from({ length: 1 + Math.floor(Math.random() * 2) }, () => pick(items));
        if (Math.random() < 0.3) sent.unshift(pick(folderRefs));
        const deleted = expectBulkAnswer(await server.post(`${base}/bulk-delete`, { items: sent }, adminKey), sent, 'deleted', 'bulk delete');
        for (const ref of deleted) reportedDeleted.add(keyOf(ref));
      }
    }

    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < REQUESTS) await operation(next++);
      }),
    );
    expect(serverErrors()).toEqual([]);
    // The run is only a proof if it did change the tree.
    expect(applied).toBeGreaterThan(50);
    expect(reportedDeleted.size).toBeGreaterThan(5);

    const after = await snapshot(d);
    expectSoundTree(after);
    // Nothing lost: whatever no bulk delete reported is still there, and what one reported is gone.
    const seeded = [...folderRefs, ...items].map(keyOf);
    const present = new Set([...after.folders.map((f) => `FOLDER:${f.id}`), ...after.items.map(keyOf)]);
    const missing = seeded.filter((k) => !reportedDeleted.has(k) && !present.has(k));
    const lingering = [...reportedDeleted].filter((k) => present.has(k));
    expect({ missing, lingering }).toEqual({ missing: [], lingering: [] });
    expect(after.folders.length + after.items.length).toBe(seeded.length - reportedDeleted.size);
    expect(await snapshot(other)).toEqual(otherBefore);
  });

  it('the case to beat: A into B and B into A at once, on two processes; exactly one succeeds, the other is 400 INVALID_MOVE', async () => {
    const d = await seed.deployment('crossed moves');
    const move = (server: ServerProcess, id: number, folderId: number) =>
      server.post(`/api/v1/deployments/${d}/workspace/move`, { type: 'FOLDER', id, folderId }, adminKey);
    for (let round = 0; round < 20; round++) {
      const a = await seed.folder(d, `a-${round}`, null);
      const b = await seed.folder(d, `b-${round}`, null);
      // Each process takes one direction, alternating, so neither always wins the race.
      const [first, second] = round % 2 === 0 ? servers : [...servers].reverse();
      const answers = await Promise.all([move(first!, a, b), move(second!, b, a)]);
      const label = `round ${round}: ${answers.map((x) => `${x.status} ${x.text}`).join(' | ')}`;
      expect(answers.map((x) => x.status).sort(), label).toEqual([200, 400]);
      const refused = answers.find((x) => x.status === 400)!;
      expect(refused.contentType, label).toMatch(/^application\/problem\+json/);
      expect(refused.body, label).toMatchObject({ status: 400, code: 'INVALID_MOVE' });

      const rows = await store.db.selectFrom('folders').select(['id', 'parent_id']).where('id', 'in', [a, b]).orderBy('id').execute();
      const parents = rows.map((r) => r.parent_id);
      const winnerMovedA = answers[0]!.status === 200;
      expect(parents, label).toEqual(winnerMovedA ? [b, null] : [null, a]);
    }
    expect(serverErrors()).toEqual([]);
  });

  it('creates racing folder deletes, by a non-admin on both processes: nothing lands in a deleted folder, nothing is lost', { timeout: 60_000 }, async () => {
    const d = await seed.deployment('creates and deletes');
    // An explorer whose access is MANAGE on the deployment, through a group: per-item access is real.
    const tenant = await store.db.selectFrom('tenants').select('id').orderBy('id').executeTakeFirstOrThrow();
    const explorerKey = await explorerWithManage(tenant.id, d);
    const folders = await seed.tree(d, 12);
    const alive = new Set(folders);
    const made = new Set<string>();
    const deleted = new Set<string>();
    let next = 0;
    async function operation(n: number): Promise<void> {
      const server = servers[n % 2]!;
      const roll = Math.random();
      const target = pick([...alive, null]);
      if (roll < 0.35) {
        const answer = await server.put(`/api/v1/deployments/${d}/workbooks/by-slug/race-${n}`, { name: `race ${n}`, folderId: target }, explorerKey);
        expect([201, 404], `${answer.status} ${answer.text}`).toContain(answer.status);
        if (answer.status === 201) made.add(`WORKBOOK:${(answer.body as { id: number }).id}`);
      } else if (roll < 0.6) {
        const answer = await server.post(`/api/v1/deployments/${d}/folders`, { name: `new ${n}`, parentId: target }, explorerKey);
        expect([201, 404, 400], `${answer.status} ${answer.text}`).toContain(answer.status);
        if (answer.status === 201) {
          const id = (answer.body as { id: number }).id;
          alive.add(id);
          made.add(`FOLDER:${id}`);
        }
      } else if (alive.size > 0) {
        // Deepest first is not guaranteed: a folder with subfolders is refused, its items go to the root.
        const victims = Array.from({ length: 1 + Math.floor(Math.random() * 3) }, () => pick([...alive]));
        const sent: Ref[] = victims.map((id) => ({ type: 'FOLDER', id }));
        const gone = expectBulkAnswer(
          await server.post(`/api/v1/deployments/${d}/workspace/bulk-delete`, { items: sent }, explorerKey),
          sent,
          'deleted',
          'bulk delete',
        );
        for (const ref of gone) {
          alive.delete(ref.id);
          deleted.add(keyOf(ref));
        }
      }
    }
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < 240) await operation(next++);
      }),
    );
    expect(serverErrors()).toEqual([]);
    expect(deleted.size).toBeGreaterThan(3);
    const after = await snapshot(d);
    expectSoundTree(after);
    const present = new Set([...after.folders.map((f) => `FOLDER:${f.id}`), ...after.items.map(keyOf)]);
    const expected = [...folders.map((id) => `FOLDER:${id}`), ...made].filter((k) => !deleted.has(k));
    expect(expected.filter((k) => !present.has(k))).toEqual([]);
    expect(present.size).toBe(expected.length);
  });

  /** An EXPLORER in a group holding MANAGE on the deployment; returns their key. */
  async function explorerWithManage(tenantId: number, deploymentId: number): Promise<string> {
    const at = new Date().toISOString();
    const user = await store.db
      .insertInto('users')
      .values({
        tenant_id: tenantId,
        email: `explorer-${deploymentId}@example.com`,
        first_name: null,
        role: 'EXPLORER',
        deactivated_at: null,
        created_at: at,
        updated_at: at,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const group = await store.db
      .insertInto('groups')
      .values({ tenant_id: tenantId, name: `racers-${deploymentId}`, description: null, created_at: at, updated_at: at })
      .returning('id')
      .executeTakeFirstOrThrow();
    await store.db.insertInto('group_members').values({ tenant_id: tenantId, group_id: group.id, user_id: user.id, created_at: at }).execute();
    await store.db
      .insertInto('policies')
      .values({
        tenant_id: tenantId,
        principal_type: 'GROUP',
        principal_id: group.id,
        resource_type: 'DEPLOYMENT',
        resource_id: deploymentId,
        access: 'MANAGE',
        created_by: null,
        created_at: at,
      })
      .execute();
    const key = generateApiKey();
    await insertKey(store.db, { tenantId, userId: user.id, name: 'racer', key, source: 'api', deploymentIds: null, expiresAt: null, createdAt: at });
    return key;
  }

  interface Snapshot {
    folders: Array<{ id: number; parent_id: number | null; name: string; deployment_id: number }>;
    items: Array<Ref & { folder_id: number | null; deployment_id: number }>;
  }

  /** Every folder, workbook and report of a deployment, as stored. */
  async function snapshot(deploymentId: number): Promise<Snapshot> {
    const folderRows = await store.db
      .selectFrom('folders')
      .select(['id', 'parent_id', 'name', 'deployment_id'])
      .where('deployment_id', '=', deploymentId)
      .orderBy('id')
      .execute();
    const itemRows: Snapshot['items'] = [];
    for (const [type, table] of [
      ['WORKBOOK', 'workbooks'],
      ['REPORT', 'reports'],
    ] as const) {
      const rows = await store.db
        .selectFrom(table)
        .select(['id', 'folder_id', 'deployment_id'])
        .where('deployment_id', '=', deploymentId)
        .orderBy('id')
        .execute();
      itemRows.push(...rows.map((r) => ({ type, ...r })));
    }
    return { folders: folderRows, items: itemRows };
  }

  /**
   * The tree's invariants, checked on the stored rows: every parent and container is a folder of
   * the same deployment, no folder is its own ancestor, nothing nests deeper than 10 levels, and
   * sibling folder names are unique.
   */
  function expectSoundTree({ folders, items }: Snapshot): void {
    const byId = new Map(folders.map((f) => [f.id, f]));
    const problems: string[] = [];
    for (const f of folders) {
      const seen = new Set<number>([f.id]);
      let level = 1;
      for (let parent = f.parent_id; parent !== null;) {
        const up = byId.get(parent);
        if (!up) {
          problems.push(`folder ${f.id} hangs under ${parent}, which is not a folder of its deployment`);
          break;
        }
        if (seen.has(up.id)) {
          problems.push(`folder ${f.id} is in a cycle through ${[...seen].join(' -> ')}`);
          break;
        }
        seen.add(up.id);
        level++;
        parent = up.parent_id;
      }
      if (level > MAX_DEPTH) problems.push(`folder ${f.id} is at level ${level}`);
    }
    const siblings = new Set<string>();
    for (const f of folders) {
      const key = `${f.parent_id ?? 'root'}/${f.name}`;
      if (siblings.has(key)) problems.push(`two folders named "${f.name}" in ${f.parent_id ?? 'the root'}`);
      siblings.add(key);
    }
    for (const item of items) {
      if (item.folder_id !== null && !byId.has(item.folder_id))
        problems.push(`${keyOf(item)} is in ${item.folder_id}, which is not a folder of its deployment`);
    }
    expect(problems).toEqual([]);
  }
});
