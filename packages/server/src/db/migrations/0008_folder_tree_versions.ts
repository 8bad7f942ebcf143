import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * `folder_tree_versions`: a counter per deployment that every change to its folder tree bumps (a
 * folder created, deleted, moved, renamed, or given another owner: what a folder path shows), in
 * the writer's own transaction. The in-memory folder trees (areas/workspace/folder-trees.ts) are valid for
 * exactly one value of it, on every server process.
 *
 * Triggers rather than calls in the services, as for `auth_version` (migration 0005): no write
 * path can forget. Moving a workbook or a report changes no folder and bumps nothing. A deployment
 * without a row has had no folder since this migration, which gives every deployment one.
 *
 * PostgreSQL: deferred constraint triggers, so the counter's row is locked only at commit, after
 * every other lock the transaction takes. A deleted deployment's folders go with it by cascade;
 * their triggers then find no row to bump, and need none.
 */
export function folderTreeVersions(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref } = columnsFor(dialect);
      await db.schema
        .createTable('folder_tree_versions')
        .addColumn('deployment_id', ref, (c) => c.primaryKey().references('deployments.id').onDelete('cascade'))
        .addColumn('version', ref, (c) => c.notNull())
        .execute();
      await sql`insert into folder_tree_versions (deployment_id, version) select id, 1 from deployments`.execute(db);
      const bump = (row: 'new' | 'old') =>
        `insert into folder_tree_versions (deployment_id, version) select ${row}.deployment_id, 1 where exists (select 1 from deployments where id = ${row}.deployment_id)
           on conflict (deployment_id) do update set version = folder_tree_versions.version + 1;`;
      const watched = 'parent_id, name, created_by, deployment_id, tenant_id';
      if (dialect === 'postgres') {
        await sql`create function bump_folder_tree_version() returns trigger language plpgsql as $$
          begin
            if tg_op <> 'INSERT' then ${sql.raw(bump('old'))} end if;
            if tg_op <> 'DELETE' and (tg_op = 'INSERT' or old.deployment_id is distinct from new.deployment_id) then ${sql.raw(bump('new'))} end if;
            return null;
          end $$`.execute(db);
        await sql`create constraint trigger folders_tree_version
          after insert or update of ${sql.raw(watched)} or delete on folders
          deferrable initially deferred for each row execute function bump_folder_tree_version()`.execute(db);
        return;
      }
      // SQLite reads `on conflict` after a SELECT as part of it unless the SELECT has a WHERE: it has one.
      await sql`create trigger folders_tree_version_insert after insert on folders begin ${sql.raw(bump('new'))} end`.execute(db);
      await sql`create trigger folders_tree_version_update after update of ${sql.raw(watched)} on folders begin
          ${sql.raw(bump('old'))}
          ${sql.raw(bump('new').replace('where exists', 'where old.deployment_id is not new.deployment_id and exists'))}
        end`.execute(db);
      await sql`create trigger folders_tree_version_delete after delete on folders begin ${sql.raw(bump('old'))} end`.execute(db);
    },
    async down() {
      // Forward only, like the other migrations.
    },
  };
}
