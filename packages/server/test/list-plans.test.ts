import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CompiledQuery, Migrator, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Dialect, type Store } from '../src/db/database.js';
import { migrationProvider } from '../src/db/migrations/index.js';
import { DIALECTS, TestApp } from './harness.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';

/*
 * Issue: "indexes that serve the list orders without a temporary sort (check `EXPLAIN QUERY PLAN`
 * / `EXPLAIN` in a test)", and search "index-backed on both stores: FTS5 with the `trigram`
 * tokenizer on SQLite, `pg_trgm` on PostgreSQL, with a fallback for queries under 3 characters".
 *
 * The plans are those of the very statements the routes run (recorded through the store's query
 * log, with their parameters). SQLite plans without statistics, as a server's file has none, so
 * its plans here are its plans in production. PostgreSQL picks by statistics, and on a test's few
 * rows a sequential scan and a sort are cheapest; its plans are taken with sequential scans and
 * sorts priced out (enable_seqscan, enable_sort off), so that a sort left in the plan is one no
 * index can spare.
 */

interface Statement {
  sql: string;
  parameters: readonly unknown[];
}

/** A test app whose store records the statements run while `recorded` awaits its request. */
async function recordingApp(dialect: Dialect): Promise<{ t: TestApp; recorded<R>(run: () => Promise<R>): Promise<{ result: R; statements: Statement[] }> }> {
  let recording: Statement[] | null = null;
  const t = await TestApp.create(dialect, {
    log: (event) => {
      if (recording && event.level === 'query') recording.push({ sql: event.query.sql, parameters: event.query.parameters });
    },
  });
  return {
    t,
    async recorded(run) {
      const statements: Statement[] = [];
      recording = statements;
      try {
        return { result: await run(), statements };
      } finally {
        recording = null;
      }
    },
  };
}

/** One node of a plan: what it does, and what it reads from. */
interface PlanNode {
  detail: string;
  children: PlanNode[];
}

function lines(nodes: PlanNode[], depth = 0): string[] {
  return nodes.flatMap((n) => [`${'  '.repeat(depth)}${n.detail}`, ...lines(n.children, depth + 1)]);
}

/** The plan as a tree of SQLite's EXPLAIN QUERY PLAN rows, or of PostgreSQL's JSON plan nodes. */
async function planOf(t: TestApp, dialect: Dialect, statement: Statement, { sorts = false } = {}): Promise<PlanNode[]> {
  if (dialect === 'sqlite') {
    const { rows } = await t.store.db.executeQuery<{ id: number; parent: number; detail: string }>(
      CompiledQuery.raw(`explain query plan ${statement.sql}`, [...statement.parameters]),
    );
    const byId = new Map<number, PlanNode>();
    const roots: PlanNode[] = [];
    for (const row of rows) {
      const node = { detail: row.detail, children: [] };
      byId.set(row.id, node);
      (byId.get(row.parent)?.children ?? roots).push(node);
    }
    return roots;
  }
  return t.store.db.transaction().execute(async (trx) => {
    await sql`set local enable_seqscan = off`.execute(trx);
    if (!sorts) await sql`set local enable_sort = off`.execute(trx);
    const { rows } = await trx.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PgNode }> }>(
      CompiledQuery.raw(`explain (format json) ${statement.sql}`, [...statement.parameters]),
    );
    return [pgPlanNode(rows[0]!['QUERY PLAN'][0]!.Plan)];
  });
}

/** PostgreSQL: the plan of `statement` as a prepared statement on its generic plan (parameters unknown when planned). */
async function genericPlanOf(t: TestApp, statement: Statement): Promise<PlanNode[]> {
  const literal = (p: unknown) => (p === null ? 'null' : typeof p === 'number' ? String(p) : `'${String(p).replace(/'/g, "''")}'`);
  return t.store.db.transaction().execute(async (trx) => {
    await sql`set local plan_cache_mode = force_generic_plan`.execute(trx);
    await trx.executeQuery(CompiledQuery.raw(`prepare generic_plan_of as ${statement.sql}`));
    try {
      const { rows } = await trx.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PgNode }> }>(
        CompiledQuery.raw(`explain (format json) execute generic_plan_of(${statement.parameters.map(literal).join(', ')})`),
      );
      return [pgPlanNode(rows[0]!['QUERY PLAN'][0]!.Plan)];
    } finally {
      await trx.executeQuery(CompiledQuery.raw('deallocate generic_plan_of'));
    }
  });
}

function pgPlanNode(n: PgNode): PlanNode {
  return {
    detail: [
      n['Node Type'],
      n['Index Name'] ? `using ${n['Index Name']}` : '',
      n['Relation Name'] ? `on ${n['Relation Name']}` : '',
      n['Sort Key'] ? `by ${n['Sort Key'].join(', ')}` : '',
    ]
      .filter(Boolean)
      .join(' '),
    children: (n.Plans ?? []).map(pgPlanNode),
  };
}

interface PgNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Sort Key'?: string[];
  Plans?: PgNode[];
}

const all = (nodes: PlanNode[]): PlanNode[] => nodes.flatMap((n) => [n, ...all(n.children)]);
const isSort = (dialect: Dialect, n: PlanNode) => (dialect === 'sqlite' ? /USE TEMP B-TREE FOR/.test(n.detail) : /^(Incremental )?Sort\b/.test(n.detail));

describe.each(DIALECTS)('list plans (%s)', (dialect) => {
  let t: TestApp;
  let d: number;
  let folder: number;
  let recorded: Awaited<ReturnType<typeof recordingApp>>['recorded'];

  /** The statements one GET runs (its caches warm), with their parameters; asserts a 200. */
  async function statementsOf(url: string, key?: string): Promise<Statement[]> {
    expect((await t.request({ url, ...(key ? { key } : {}) })).statusCode).toBe(200);
    const { result: res, statements } = await recorded(() => t.request({ url, ...(key ? { key } : {}) }));
    expect(res.statusCode, res.body).toBe(200);
    return statements;
  }

  /** The plan of the one statement of `url` that `pattern` picks out. */
  async function planFor(url: string, pattern: RegExp, key?: string, options: { sorts?: boolean } = {}): Promise<{ plan: PlanNode[]; text: string }> {
    const chosen = (await statementsOf(url, key)).filter((s) => pattern.test(s.sql));
    expect(chosen.length, `statements matching ${pattern}`).toBe(1);
    const plan = await planOf(t, dialect, chosen[0]!, options);
    if (process.env.SHOW_PLANS) console.log(`${url}\n${chosen[0]!.sql.slice(0, 200)}\n${lines(plan).join('\n')}\n`);
    return { plan, text: lines(plan).join('\n') };
  }

  const index = (name: string) =>
    dialect === 'sqlite' ? new RegExp(`USING (COVERING )?INDEX ${name}\\b`) : new RegExp(`Index (Only )?Scan( Backward)? using ${name}\\b`);

  beforeAll(async () => {
    ({ t, recorded } = await recordingApp(dialect));
    d = await t.deployment('plans');
    // 1,000 folders (20 at the root, the others in them), 3,000 workbooks and 3,000 reports spread
    // over the folders and the root: a folder's content or a search's matches are a small part of
    // each table, as PostgreSQL's statistics then tell.
    const at = new Date().toISOString();
    const row = { tenant_id: t.tenantId, deployment_id: d, created_by: null, created_at: at, updated_at: at };
    const top = (
      await t.store.db
        .insertInto('folders')
        .values(Array.from({ length: 20 }, (_, i) => ({ ...row, parent_id: null, name: `Top ${i}` })))
        .returning('id')
        .execute()
    ).map((r) => r.id);
    const below = (
      await t.store.db
        .insertInto('folders')
        .values(Array.from({ length: 980 }, (_, i) => ({ ...row, parent_id: top[i % 20]!, name: `Folder ${i}` })))
        .returning('id')
        .execute()
    ).map((r) => r.id);
    const folders = [...top, ...below];
    folder = top[0]!;
    const place = (i: number) => (i % 25 === 0 ? null : folders[i % folders.length]!);
    const report = {
      kind: 'table',
      title: null,
      description: null,
      sql_query: null,
      python_code: null,
      spec: null,
      meta: null,
      preferences: null,
      period_comparisons: null,
      fill_missing_rows: null,
      last_viewed_at: null,
    };
    const item = { meta: '{}', calculated_fields: '{}', dashboard_draft: null, dashboard_published: null, published_dashboard: null };
    for (let from = 0; from < 3000; from += 200) {
      const ids = Array.from({ length: 200 }, (_, k) => from + k);
      await t.store.db
        .insertInto('workbooks')
        .values(ids.map((i) => ({ ...row, ...item, folder_id: place(i), name: `Workbook ${i}`, slug: `workbook-${i}` })))
        .execute();
      await t.store.db
        .insertInto('reports')
        .values(ids.map((i) => ({ ...row, ...report, folder_id: place(i + 1), name: `Report ${i}`, public_id: `report-${i}` })))
        .execute();
    }
    // Statistics, as autovacuum keeps them; VACUUM also gives the GIN indexes theirs.
    if (dialect === 'postgres') await sql`vacuum analyze folders, workbooks, reports, item_totals`.execute(t.store.db);
  });
  afterAll(async () => t?.close());

  const base = () => `/api/v1/deployments/${d}`;

  it('the folders list reads folders in id order from folders_list (deployment, id): no sort', async () => {
    for (const url of [`${base()}/folders?first=10`, `${base()}/folders?first=10&after=${Buffer.from(JSON.stringify([3])).toString('base64url')}`]) {
      const { plan, text } = await planFor(url, /^select \* from "folders" where/);
      expect(text).toMatch(dialect === 'sqlite' ? index('folders_list') : /Index Scan using (folders_list|folders_pkey)\b/);
      expect(
        all(plan).filter((n) => isSort(dialect, n)),
        text,
      ).toEqual([]);
    }
  });

  it('the folders list of one parent reads (deployment, parent, id) in order: no sort', async () => {
    for (const parentId of [String(folder), 'root']) {
      const { plan, text } = await planFor(`${base()}/folders?first=10&parentId=${parentId}`, /^select \* from "folders" where/);
      expect(text).toMatch(index('folders_children'));
      expect(
        all(plan).filter((n) => isSort(dialect, n)),
        text,
      ).toEqual([]);
    }
  });

  const reportIndexes: Record<string, string> = {
    name: 'reports_list_name',
    createdAt: 'reports_list_created',
    updatedAt: 'reports_list_updated',
    lastViewedAt: 'reports_list_viewed',
  };
  for (const [sortBy, name] of Object.entries(reportIndexes)) {
    for (const sortOrder of ['asc', 'desc']) {
      // PostgreSQL's index is in the default direction only: never viewed last, both ways, takes two.
      const sorted = dialect === 'postgres' && sortBy === 'lastViewedAt' && sortOrder === 'asc';
      it(`the reports list by ${sortBy} ${sortOrder} reads ${name} in the list's order${sorted ? ' (PostgreSQL sorts: its index runs the other way)' : ': no sort'}`, async () => {
        const { plan, text } = await planFor(`${base()}/reports?first=10&sortBy=${sortBy}&sortOrder=${sortOrder}`, /^select "reports"\.\*/);
        if (sorted) return;
        expect(text).toMatch(index(name));
        expect(
          all(plan).filter((n) => isSort(dialect, n)),
          text,
        ).toEqual([]);
      });
    }
  }

  it('the reports list of one folder reads reports_listing_* (folder, key, id) in order: no sort', async () => {
    for (const [sortBy, suffix] of [
      ['name', 'name'],
      ['createdAt', 'created'],
      ['updatedAt', 'updated'],
    ]) {
      const { plan, text } = await planFor(`${base()}/reports?first=10&folderId=${folder}&sortBy=${sortBy}`, /^select "reports"\.\*/);
      expect(text).toMatch(index(`reports_listing_${suffix}`));
      expect(
        all(plan).filter((n) => isSort(dialect, n)),
        text,
      ).toEqual([]);
    }
  });

  it('the reports list continues after a cursor by a range of its index: no sort', async () => {
    const first = (await t.request({ url: `${base()}/reports?first=5&sortBy=name` })).json() as { pageInfo: { endCursor: string } };
    const { plan, text } = await planFor(`${base()}/reports?first=5&sortBy=name&after=${first.pageInfo.endCursor}`, /^select "reports"\.\*/);
    expect(text).toMatch(dialect === 'sqlite' ? /USING INDEX reports_list_name \(deployment_id=\? AND <expr>>\?\)/ : index('reports_list_name'));
    expect(
      all(plan).filter((n) => isSort(dialect, n)),
      text,
    ).toEqual([]);
  });

  it('a list of every folder or report of the deployment takes its total from item_totals, not by counting rows', async () => {
    for (const [url, pattern] of [
      [`${base()}/reports?first=10&sortBy=name`, /item_totals/],
      [`${base()}/folders?first=10`, /item_totals/],
    ] as const) {
      const { text } = await planFor(url, pattern);
      expect(text).toMatch(/item_totals/);
      expect(text).not.toMatch(/\b(folders|reports)\b(?!_)/);
    }
  });

  const listingIndexes: Record<string, string> = { name: 'listing_name', createdAt: 'listing_created', updatedAt: 'listing_updated' };
  for (const [sortBy, suffix] of Object.entries(listingIndexes)) {
    for (const sortOrder of ['asc', 'desc']) {
      it(`the workspace listing by ${sortBy} ${sortOrder} reads each table from its *_${suffix} index in order, a page at most, and sorts only those pages`, async () => {
        for (const folderId of ['root', String(folder)]) {
          const { plan, text } = await planFor(
            `${base()}/workspace?first=10&folderId=${folderId}&sortBy=${sortBy}&sortOrder=${sortOrder}`,
            /^select \* from \(select \* from/,
          );
          for (const table of ['folders', 'workbooks', 'reports']) expect(text).toMatch(index(`${table}_${suffix}`));
          // The one sort is the merge of the three pages, at the top of the plan.
          const sorts = all(plan).filter((n) => isSort(dialect, n));
          expect(sorts.length, text).toBeLessThanOrEqual(1);
          for (const sort of sorts) expect(plan.includes(sort) || plan.some((top) => top.children.includes(sort)), text).toBe(true);
        }
      });
    }
  }

  it('a search of 3 characters or more finds its candidates in the trigram index of each table (FTS5 on SQLite, pg_trgm on PostgreSQL), for the page and for the count', async () => {
    // The matches are sorted, as no index of names holds only them: sorts are not priced out here.
    const url = `${base()}/workspace?first=10&search=170`;
    for (const pattern of [/^select \* from \(select \* from/, /^select count\(\*\)/]) {
      const { text } = await planFor(url, pattern, undefined, { sorts: true });
      for (const table of ['folders', 'workbooks', 'reports']) {
        if (dialect === 'sqlite') {
          expect(text).toMatch(new RegExp(`SCAN ${table}_name_search VIRTUAL TABLE INDEX \\d+:M`));
          expect(text).toMatch(new RegExp(`SEARCH ${table} USING INTEGER PRIMARY KEY \\(rowid=\\?\\)`));
        } else {
          expect(text).toMatch(new RegExp(`Bitmap Index Scan using ${table}_name_trgm`));
        }
      }
    }
    const { text } = await planFor(`${base()}/reports?first=10&search=${encodeURIComponent('rt 2999')}`, /^select "reports"\.\*/, undefined, { sorts: true });
    expect(text).toMatch(dialect === 'sqlite' ? /SCAN reports_name_search VIRTUAL TABLE INDEX \d+:M/ : /Bitmap Index Scan using reports_name_trgm/);
  });

  it('a search under 3 characters reads no trigram index: there is no trigram to look up, so the tables are scanned', async () => {
    const { text } = await planFor(`${base()}/workspace?first=10&search=r1`, /^select \* from \(select \* from/);
    expect(text).not.toMatch(/name_search|name_trgm/);
  });

  it('an explorer’s reports list reads the same index in order, what they may see being a filter on it', async () => {
    const explorer = await t.user('EXPLORER');
    await t.grant({ type: 'USER', id: explorer.userId }, { type: 'FOLDER', id: folder }, 'VIEW');
    const { plan, text } = await planFor(`${base()}/reports?first=10&sortBy=name`, /^select "reports"\.\*/, explorer.key);
    expect(text).toMatch(index('reports_list_name'));
    expect(
      all(plan).filter((n) => isSort(dialect, n) && !/SUBQUERY|subquery/.test(n.detail)),
      text,
    ).toEqual([]);
  });
});

describe.each(DIALECTS.filter((d) => d === 'postgres'))('search plans without statistics (%s)', (dialect) => {
  let t: TestApp;
  let d: number;
  let recorded: Awaited<ReturnType<typeof recordingApp>>['recorded'];
  beforeAll(async () => {
    ({ t, recorded } = await recordingApp(dialect));
    d = await t.deployment('unanalyzed');
    const at = new Date().toISOString();
    const row = { tenant_id: t.tenantId, deployment_id: d, created_by: null, created_at: at, updated_at: at, folder_id: null };
    const report = {
      kind: 'table',
      title: null,
      description: null,
      sql_query: null,
      python_code: null,
      spec: null,
      meta: null,
      preferences: null,
      period_comparisons: null,
      fill_missing_rows: null,
      last_viewed_at: null,
    };
    for (let from = 0; from < 3000; from += 500) {
      const ids = Array.from({ length: 500 }, (_, k) => from + k);
      await t.store.db
        .insertInto('reports')
        .values(ids.map((i) => ({ ...row, ...report, name: `Report ${i}`, public_id: `report-${i}` })))
        .execute();
    }
  });
  afterAll(async () => t?.close());

  // Without statistics (autovacuum off, or not yet run) PostgreSQL guesses that a deployment holds
  // a handful of rows, and would walk them all through an index of the deployment, testing each
  // name. The rows whose names match are found first instead, on their own: by the trigram index,
  // or on a table this small by a scan of the names, which PostgreSQL finds cheaper.
  it('a search finds the rows whose names match first: never a walk over the deployment’s rows', async () => {
    for (const url of [`/api/v1/deployments/${d}/reports?first=10&search=rt%202999`, `/api/v1/deployments/${d}/workspace?first=10&search=rt%202999`]) {
      expect((await t.request({ url })).statusCode).toBe(200);
      const { result: res, statements: ran } = await recorded(() => t.request({ url }));
      expect(res.statusCode).toBe(200);
      const statements = ran.filter((s) => /like/.test(s.sql));
      expect(statements.length).toBe(2);
      for (const statement of statements) {
        const { rows } = await t.store.db.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${statement.sql}`, [...statement.parameters]));
        const text = rows.map((r) => r['QUERY PLAN']).join('\n');
        expect(text, text).toMatch(/(Bitmap Index Scan on reports_name_trgm|Seq Scan on reports)[^\n]*\n[^\n]*lower\(name\) ~~/);
        expect(text, text).not.toMatch(/(Index|Bitmap Index) Scan (Backward )?(using|on) reports_(list|listing|folder|public_id)/);
      }
    }
  });
});

describe.each(DIALECTS)('list indexes kept in step (%s)', (dialect) => {
  let t: TestApp;
  let d: number;
  beforeAll(async () => {
    t = await TestApp.create(dialect);
    d = await t.deployment('kept');
  });
  afterAll(async () => t?.close());

  const search = async (text: string) => {
    const res = await t.request({ url: `/api/v1/deployments/${d}/workspace?first=100&search=${encodeURIComponent(text)}` });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { items: Array<{ type: string; name: string }>; totalCount: number };
    expect(body.totalCount).toBe(body.items.length);
    return body.items.map((i) => i.name).sort();
  };

  it('search finds what is created, renamed and deleted through the API at once, with any characters in the text', async () => {
    const names = ['Ünïcode ÉCOLE', 'quote "marks" here', '100% done_now', 'star*glob?[x]', 'Ⅻ ÆSIR'];
    const ids: number[] = [];
    for (const name of names) {
      const res = await t.request({ method: 'POST', url: `/api/v1/deployments/${d}/folders`, body: { name } });
      expect(res.statusCode, res.body).toBe(201);
      ids.push((res.json() as { id: number }).id);
    }
    expect(await search('école')).toEqual(['Ünïcode ÉCOLE']);
    expect(await search('ÜNÏ')).toEqual(['Ünïcode ÉCOLE']);
    expect(await search('"marks"')).toEqual(['quote "marks" here']);
    expect(await search('0% d')).toEqual(['100% done_now']);
    expect(await search('e_n')).toEqual(['100% done_now']);
    expect(await search('*glob?[')).toEqual(['star*glob?[x]']);
    expect(await search('ⅻ æs')).toEqual(['Ⅻ ÆSIR']);
    expect(await search('ⅻ')).toEqual(['Ⅻ ÆSIR']);

    const renamed = await t.request({ method: 'PATCH', url: `/api/v1/deployments/${d}/folders/${ids[0]}`, body: { name: 'Renamed lycée' } });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(await search('école')).toEqual([]);
    expect(await search('LYCÉE')).toEqual(['Renamed lycée']);

    const removed = await t.request({ method: 'DELETE', url: `/api/v1/deployments/${d}/folders/${ids[0]}` });
    expect(removed.statusCode, removed.body).toBe(204);
    expect(await search('lycée')).toEqual([]);
  });

  it('the kept totals equal the rows after creates, deletes, a folder delete that moves its content and a deployment delete', async () => {
    const other = await t.deployment('gone');
    const w = new WorkspaceFixtures(t, d);
    const gone = new WorkspaceFixtures(t, other);
    const parent = await w.folder('Totals');
    for (let i = 0; i < 5; i++) {
      await w.report(`Total ${i}`, parent);
      await gone.report(`Gone ${i}`);
      await gone.folder(`Gone ${i}`);
    }
    const up = await t.request({
      method: 'PUT',
      url: `/api/v1/deployments/${d}/reports/by-public-id/total-api`,
      body: { name: 'Total by API', folderId: parent },
    });
    expect(up.statusCode, up.body).toBe(201);
    const deleted = await t.request({ method: 'DELETE', url: `/api/v1/deployments/${d}/folders/${parent}` });
    expect(deleted.statusCode, deleted.body).toBe(204);
    await t.store.db.deleteFrom('deployments').where('id', '=', other).execute();

    const { rows } = await sql<{ deployment_id: number; item_type: string; total: number | string; counted: number | string }>`
      select k.deployment_id, k.item_type, k.total,
             case k.item_type when 'FOLDER' then (select count(*) from folders f where f.deployment_id = k.deployment_id)
                              else (select count(*) from reports r where r.deployment_id = k.deployment_id) end as counted
        from item_totals k`.execute(t.store.db);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(Number(row.total), `${row.item_type} of deployment ${row.deployment_id}`).toBe(Number(row.counted));
    expect(rows.some((r) => Number(r.deployment_id) === other)).toBe(false);

    const listed = (await t.request({ url: `/api/v1/deployments/${d}/reports?first=1` })).json() as { totalCount: number };
    const folders = (await t.request({ url: `/api/v1/deployments/${d}/folders?first=1` })).json() as { totalCount: number };
    const counted = async (table: 'reports' | 'folders') =>
      Number(
        (
          await t.store.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number | string>().as('n'))
            .where('deployment_id', '=', d)
            .executeTakeFirstOrThrow()
        ).n,
      );
    expect(listed.totalCount).toBe(await counted('reports'));
    expect(folders.totalCount).toBe(await counted('folders'));
  });
});

describe.each(DIALECTS)('the plan of a folder move’s read (%s)', (dialect) => {
  let t: TestApp;
  let d: number;
  let folders: number[];
  let recorded: Awaited<ReturnType<typeof recordingApp>>['recorded'];

  beforeAll(async () => {
    ({ t, recorded } = await recordingApp(dialect));
    // The benchmark's shape: one deployment of 10,000 folders, 100 at the top, the tenant's only one.
    d = await t.deployment('tree');
    const at = new Date().toISOString();
    const row = { tenant_id: t.tenantId, deployment_id: d, created_by: null, created_at: at, updated_at: at };
    const top = (
      await t.store.db
        .insertInto('folders')
        .values(Array.from({ length: 100 }, (_, i) => ({ ...row, parent_id: null, name: `Top ${i}` })))
        .returning('id')
        .execute()
    ).map((r) => r.id);
    folders = [...top];
    for (let from = 0; from < 9900; from += 900) {
      const batch = Array.from({ length: 900 }, (_, k) => ({ ...row, parent_id: top[(from + k) % 100]!, name: `Folder ${from + k}` }));
      folders.push(...(await t.store.db.insertInto('folders').values(batch).returning('id').execute()).map((r) => r.id));
    }
    // No ANALYZE: a deployment just loaded has no statistics yet (autovacuum's come later), and
    // the plan must not need them.
  });
  afterAll(async () => t?.close());

  it('looks for a sibling of the same name on folders_sibling_name, also in the generic plan PostgreSQL keeps for the named statement', async () => {
    const { result: res, statements: seen } = await recorded(() =>
      t.request({ method: 'POST', url: `/api/v1/deployments/${d}/workspace/move`, body: { type: 'FOLDER', id: folders.at(-1), folderId: folders[1] } }),
    );
    expect(res.statusCode, res.body).toBe(200);
    const read = seen.filter((s) => s.sql.includes('move_chains'));
    expect(read).toHaveLength(1);
    // A named statement runs on a generic plan from its sixth run on: the one that matters.
    const plan = dialect === 'sqlite' ? await planOf(t, dialect, read[0]!) : await genericPlanOf(t, read[0]!);
    const text = lines(plan).join('\n');
    expect(text).toMatch(dialect === 'sqlite' ? /USING (COVERING )?INDEX folders_sibling_name\b/ : /Index (Only )?Scan using folders_sibling_name\b/);
  });
});

/** A store migrated up to, not including, migration 0007; dropped by `destroy`. */
async function storeBefore0007(dialect: Dialect) {
  const schema = `test_${randomBytes(6).toString('hex')}`;
  const url = process.env.DATABASE_URL ?? '';
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(statement);
    await client.end();
  };
  let dir = '';
  let store: Store;
  if (dialect === 'sqlite') {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-test-'));
    store = openStore({ dialect: 'sqlite', file: path.join(dir, 'test.sqlite') });
  } else {
    await admin(`create schema ${schema}`);
    store = openStore({ dialect: 'postgres', url, schema, poolSize: 2 });
  }
  const migrator = new Migrator({ db: store.db, provider: migrationProvider(dialect), ...(dialect === 'postgres' ? { migrationTableSchema: schema } : {}) });
  const before = await migrator.migrateTo('0006_list_indexes');
  expect(before.error).toBeUndefined();
  return {
    store,
    migrator,
    async destroy() {
      await store.close();
      if (dialect === 'sqlite') fs.rmSync(dir, { recursive: true, force: true });
      else await admin(`drop schema ${schema} cascade`);
    },
  };
}

describe.each(DIALECTS)('migration 0007 on an existing store, the empty 0006 applied before it (%s)', (dialect) => {
  it('indexes the names and counts the rows already there', async () => {
    const { store, migrator, destroy } = await storeBefore0007(dialect);
    try {
      const at = new Date().toISOString();
      const tenant = await store.db.insertInto('tenants').values({ slug: 'old', name: 'Old', created_at: at }).returning('id').executeTakeFirstOrThrow();
      const deployment = await store.db
        .insertInto('deployments')
        .values({ tenant_id: tenant.id, name: 'old', settings: '{}', created_by: null, created_at: at, updated_at: at })
        .returning('id')
        .executeTakeFirstOrThrow();
      const w = new WorkspaceFixtures({ store, tenantId: tenant.id }, deployment.id);
      const f = await w.folder('Ancien DOSSIER');
      await w.report('Rapport Été', f);
      await w.report('Other', null);
      await w.workbook('Classeur ÉTÉ', f);

      const { error } = await migrator.migrateToLatest();
      expect(error).toBeUndefined();

      const { rows: totals } = await sql<{
        item_type: string;
        total: number | string;
      }>`select item_type, total from item_totals where deployment_id = ${deployment.id} order by item_type`.execute(store.db);
      expect(totals.map((r) => [r.item_type, Number(r.total)])).toEqual([
        ['FOLDER', 1],
        ['REPORT', 2],
      ]);
      if (dialect === 'sqlite') {
        const { rows } = await sql<{ id: number }>`select rowid as id from reports_name_search where reports_name_search match ${'"été"'}
          union all select rowid from workbooks_name_search where workbooks_name_search match ${'"été"'}
          union all select rowid from folders_name_search where folders_name_search match ${'"dossier"'}`.execute(store.db);
        expect(rows).toHaveLength(3);
      } else {
        const { rows } = await sql<{
          n: number;
        }>`select count(*)::int as n from pg_indexes where schemaname = current_schema() and indexname like '%_name_trgm'`.execute(store.db);
        expect(rows[0]!.n).toBe(3);
      }
    } finally {
      await destroy();
    }
  });
});
