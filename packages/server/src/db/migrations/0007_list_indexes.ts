import { sql, type Kysely, type Migration, type RawBuilder } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

type ItemTable = 'folders' | 'workbooks' | 'reports';

/** Where each table's rows sit: a folder's parent, an item's folder (null: the root). */
const CONTAINER: Record<ItemTable, string> = { folders: 'parent_id', workbooks: 'folder_id', reports: 'folder_id' };

/**
 * The key names sort by: lower-cased, and byte-wise on PostgreSQL ("C" collation) as on SQLite.
 * Queries must order and compare by this very expression for the indexes below to serve them.
 */
function nameKey(dialect: Dialect): RawBuilder<unknown> {
  return dialect === 'postgres' ? sql`(lower(name) collate "C")` : sql`lower(name)`;
}

/**
 * Indexes whose order is a list's order, so a page reads its rows in order and stops after them
 * instead of sorting every row the list holds.
 *
 * - The workspace listing (listing.store.ts) reads one folder: per table, by deployment and
 *   container, then by each sort key (name, createdAt, updatedAt), the id breaking ties. The
 *   reports list filtered by folder uses the same indexes. The name ones take the place of the
 *   (deployment, folder) indexes workbooks_folder and reports_folder of migration 0002.
 * - The lists of a whole deployment: the reports list (reports.store.ts) by each of its sort
 *   keys, the folders list (tree.store.ts) by id, and one folder's subfolders by id. On
 *   PostgreSQL they begin with the tenant too, which every list also filters on: without
 *   statistics, PostgreSQL guesses that each equality keeps 0.5% of the rows, and the more of them
 *   an index serves, the cheaper it finds reading a page in order. On SQLite they begin with the
 *   deployment only, so that a list of one folder (deployment and folder: two equalities) prefers
 *   the folder's index to these. PostgreSQL needs its statistics to tell a folder's index from
 *   the deployment's for a page of one folder: before a table's first ANALYZE (autovacuum runs
 *   one once a table has grown by 10%), it may read the deployment's index and drop the other
 *   folders' rows.
 */
async function orderIndexes(db: Kysely<any>, dialect: Dialect): Promise<void> {
  const index = (name: string, table: ItemTable, columns: RawBuilder<unknown>[]) =>
    sql`create index ${sql.id(name)} on ${sql.table(table)} (${sql.join(columns)})`.execute(db);
  const [tenant, deployment, id] = [sql`tenant_id`, sql`deployment_id`, sql`id`];
  for (const table of ['folders', 'workbooks', 'reports'] as const) {
    const container = sql.ref(CONTAINER[table]);
    await index(`${table}_listing_name`, table, [deployment, container, nameKey(dialect), id]);
    await index(`${table}_listing_created`, table, [deployment, container, sql`created_at`, id]);
    await index(`${table}_listing_updated`, table, [deployment, container, sql`updated_at`, id]);
  }
  for (const replaced of ['workbooks_folder', 'reports_folder']) await sql`drop index ${sql.id(replaced)}`.execute(db);
  const scoped = dialect === 'postgres' ? [tenant, deployment] : [deployment];
  await index('folders_list', 'folders', [...scoped, id]);
  await index('folders_children', 'folders', [deployment, sql`parent_id`, id]);
  await index('reports_list_name', 'reports', [...scoped, nameKey(dialect), id]);
  await index('reports_list_created', 'reports', [...scoped, sql`created_at`, id]);
  await index('reports_list_updated', 'reports', [...scoped, sql`updated_at`, id]);
  // Never viewed last in both directions. SQLite reads its index either way for that; a
  // PostgreSQL index holds one place for nulls, here the default direction's: most recent first.
  const viewed = dialect === 'postgres' ? [sql`last_viewed_at desc nulls last`, sql`id desc`] : [sql`last_viewed_at`, id];
  await index('reports_list_viewed', 'reports', [...scoped, ...viewed]);
}

/**
 * SQLite: an FTS5 table per item table (`<table>_name_search`, read by listing.store.ts) with the
 * `trigram` tokenizer over the name folded by the same lower() the queries use (case_sensitive 1:
 * the folding is done already, by the Unicode-aware lower() of openStore rather than FTS5's own),
 * the row's id as its rowid. A search is a phrase of the text's trigrams, which needs the token
 * positions (detail full, the default). Triggers keep it in step with every write, whoever makes
 * it; rows never move between deployments. Existing rows are indexed here.
 */
async function sqliteNameSearch(db: Kysely<any>): Promise<void> {
  for (const table of ['folders', 'workbooks', 'reports'] as const) {
    const fts = sql.table(`${table}_name_search`);
    const trigger = (event: string) => sql.id(`${table}_name_search_${event}`);
    await sql`create virtual table ${fts} using fts5(name, tokenize = 'trigram case_sensitive 1', columnsize = 0)`.execute(db);
    await sql`insert into ${fts} (rowid, name) select id, lower(name) from ${sql.table(table)}`.execute(db);
    await sql`create trigger ${trigger('insert')} after insert on ${sql.table(table)} begin
        insert into ${fts} (rowid, name) values (new.id, lower(new.name));
      end`.execute(db);
    await sql`create trigger ${trigger('rename')} after update of name on ${sql.table(table)} when new.name is not old.name begin
        update ${fts} set name = lower(new.name) where rowid = new.id;
      end`.execute(db);
    await sql`create trigger ${trigger('delete')} after delete on ${sql.table(table)} begin
        delete from ${fts} where rowid = old.id;
      end`.execute(db);
  }
}

/** SQLSTATEs of a concurrent `create extension` of the same extension. */
const CREATED_MEANWHILE = new Set(['23505', '42710']);

/**
 * PostgreSQL: pg_trgm's GIN index on lower(name), which serves `lower(name) like '%…%'`. An
 * extension belongs to the database, not to a schema's tables: it goes to `public` (a server whose
 * schemas come and go, like the tests', must not drop it with one of them) unless it is installed
 * already, wherever it is; the operator class is named with its schema. pg_trgm is a trusted
 * extension: a role allowed to create objects in the database may install it. Two servers
 * migrating two schemas at once may both try; the one that finds it created meanwhile goes on.
 */
async function postgresNameSearch(db: Kysely<any>): Promise<void> {
  await sql`savepoint create_pg_trgm`.execute(db);
  try {
    await sql`create extension if not exists pg_trgm with schema public`.execute(db);
    await sql`release savepoint create_pg_trgm`.execute(db);
  } catch (error) {
    if (!CREATED_MEANWHILE.has((error as { code?: string }).code ?? '')) throw error;
    await sql`rollback to savepoint create_pg_trgm`.execute(db);
  }
  const { rows } = await sql<{
    schema: string;
  }>`select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db);
  const schema = rows[0]?.schema;
  if (!schema) throw new Error('The pg_trgm extension is not installed, and could not be.');
  for (const table of ['folders', 'workbooks', 'reports'] as const) {
    await sql`create index ${sql.id(`${table}_name_trgm`)} on ${sql.table(table)} using gin (lower(name) ${sql.id(schema, 'gin_trgm_ops')})`.execute(db);
  }
}

/** The lists that span a whole deployment, whose totals are kept: the folders and the reports list. */
const TOTALLED: Array<{ table: ItemTable; type: string }> = [
  { table: 'folders', type: 'FOLDER' },
  { table: 'reports', type: 'REPORT' },
];

/**
 * `item_totals`: how many folders and reports each deployment holds, so that the total count a
 * list of a whole deployment answers with does not read every row (a million-item deployment took
 * longer to count than to page). Triggers keep it in step with every insert and delete, in the
 * writer's transaction, whoever writes; existing rows are counted here. Lists that filter (by
 * folder, kind, creator, name, or what a caller may see) still count their rows.
 *
 * PostgreSQL: statement-level triggers over the transition tables, so a multi-row insert or a
 * cascading delete updates each total once per statement, not once per row. Rows never move
 * between deployments; an update that moved one would move its count too (a row-level trigger
 * that fires only when those columns are written).
 */
async function itemTotals(db: Kysely<any>, dialect: Dialect): Promise<void> {
  const { ref } = columnsFor(dialect);
  await db.schema
    .createTable('item_totals')
    .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('deployment_id', ref, (c) => c.notNull().references('deployments.id').onDelete('cascade'))
    .addColumn('item_type', 'text', (c) => c.notNull())
    .addColumn('total', ref, (c) => c.notNull())
    .addPrimaryKeyConstraint('item_totals_pk', ['tenant_id', 'deployment_id', 'item_type'])
    .execute();
  for (const { table, type } of TOTALLED) {
    await sql`insert into item_totals (tenant_id, deployment_id, item_type, total)
      select tenant_id, deployment_id, ${sql.lit(type)}, count(*) from ${sql.table(table)} group by tenant_id, deployment_id`.execute(db);
  }
  // A total starts with its deployment's first row; removing a row never creates one (a
  // deployment's cascading delete may have removed its totals already).
  const added = (row: 'new' | 'old', type: string) =>
    `insert into item_totals (tenant_id, deployment_id, item_type, total) values (${row}.tenant_id, ${row}.deployment_id, ${type}, 1)
       on conflict (tenant_id, deployment_id, item_type) do update set total = item_totals.total + 1;`;
  const removed = (row: 'new' | 'old', type: string) =>
    `update item_totals set total = total - 1 where tenant_id = ${row}.tenant_id and deployment_id = ${row}.deployment_id and item_type = ${type};`;
  if (dialect === 'postgres') {
    await sql`create function item_totals_add() returns trigger language plpgsql as $$
      begin
        insert into item_totals (tenant_id, deployment_id, item_type, total)
          select tenant_id, deployment_id, tg_argv[0], count(*) from added group by tenant_id, deployment_id
          on conflict (tenant_id, deployment_id, item_type) do update set total = item_totals.total + excluded.total;
        return null;
      end $$`.execute(db);
    await sql`create function item_totals_remove() returns trigger language plpgsql as $$
      begin
        update item_totals t set total = t.total - r.n
          from (select tenant_id, deployment_id, count(*) as n from removed group by tenant_id, deployment_id) r
         where t.tenant_id = r.tenant_id and t.deployment_id = r.deployment_id and t.item_type = tg_argv[0];
        return null;
      end $$`.execute(db);
    await sql`create function item_totals_move() returns trigger language plpgsql as $$
      begin
        ${sql.raw(removed('old', 'tg_argv[0]'))}
        ${sql.raw(added('new', 'tg_argv[0]'))}
        return null;
      end $$`.execute(db);
    for (const { table, type } of TOTALLED) {
      const name = (event: string) => sql.id(`${table}_total_${event}`);
      await sql`create trigger ${name('insert')} after insert on ${sql.table(table)} referencing new table as added
        for each statement execute function item_totals_add(${sql.lit(type)})`.execute(db);
      await sql`create trigger ${name('delete')} after delete on ${sql.table(table)} referencing old table as removed
        for each statement execute function item_totals_remove(${sql.lit(type)})`.execute(db);
      await sql`create trigger ${name('move')} after update of tenant_id, deployment_id on ${sql.table(table)} for each row
        when (old.tenant_id is distinct from new.tenant_id or old.deployment_id is distinct from new.deployment_id)
        execute function item_totals_move(${sql.lit(type)})`.execute(db);
    }
    return;
  }
  for (const { table, type } of TOTALLED) {
    const name = (event: string) => sql.id(`${table}_total_${event}`);
    const literal = `'${type}'`;
    await sql`create trigger ${name('insert')} after insert on ${sql.table(table)} begin ${sql.raw(added('new', literal))} end`.execute(db);
    await sql`create trigger ${name('delete')} after delete on ${sql.table(table)} begin ${sql.raw(removed('old', literal))} end`.execute(db);
    await sql`create trigger ${name('move')} after update of tenant_id, deployment_id on ${sql.table(table)}
      when old.tenant_id is not new.tenant_id or old.deployment_id is not new.deployment_id
      begin ${sql.raw(removed('old', literal))} ${sql.raw(added('new', literal))} end`.execute(db);
  }
}

/**
 * Reads that scale with the page rather than the workspace: indexes in the orders the lists read,
 * kept totals for the lists of a whole deployment, and an index for the name search (a
 * case-insensitive substring): FTS5 trigrams on SQLite, pg_trgm on PostgreSQL. Built for the rows
 * already there too.
 */
export function listIndexes(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      await orderIndexes(db, dialect);
      await itemTotals(db, dialect);
      if (dialect === 'postgres') await postgresNameSearch(db);
      else await sqliteNameSearch(db);
    },
    async down() {
      // Forward only, like the other migrations.
    },
  };
}
