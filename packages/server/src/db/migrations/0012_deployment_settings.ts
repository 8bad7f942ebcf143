import { type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../dialect.js';
import { columnsFor } from './columns.js';

/**
 * The reference's deployment settings (1.0, 1.4): the wizard's step, where and how the deployment
 * runs, its release channel and version, and the launchpad and pre-aggregation storage settings
 * that nothing queries by (kept as one JSON object). Deployments made before this migration were
 * in use, so they start at the step `ready`; new ones start where their creation says.
 * `deployment_versions` remembers which runtime versions each tenant ran (reference 1.7).
 */
export function deploymentSettings(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      const { ref } = columnsFor(dialect);
      const add = (name: string, type: 'text' | 'integer', build: (c: any) => any = (c) => c) =>
        db.schema.alterTable('deployments').addColumn(name, type, build).execute();
      await add('creation_step', 'text', (c) => c.notNull().defaultTo('ready'));
      await add('cloud_provider', 'text', (c) => c.notNull().defaultTo('platform'));
      await add('is_managed', 'integer', (c) => c.notNull().defaultTo(1));
      await add('region', 'text', (c) => c.notNull().defaultTo('local'));
      await add('target_platform', 'text', (c) => c.notNull().defaultTo('process'));
      await add('template', 'text', (c) => c.notNull().defaultTo('single'));
      await add('release_channel', 'text', (c) => c.notNull().defaultTo('release'));
      // Null: the newest version of the channel, whatever it is at the time.
      await add('release_channel_version', 'text');
      await add('release_channel_version_hold', 'integer', (c) => c.notNull().defaultTo(0));
      await add('custom_domain', 'text');
      // JSON: templateVariables, defaultLaunchpadViewGroup, launchpadTabs, cspsConfig.
      await add('options', 'text', (c) => c.notNull().defaultTo('{}'));
      await db.schema.createIndex('deployments_by_step').on('deployments').columns(['tenant_id', 'creation_step', 'id']).execute();

      await db.schema
        .createTable('deployment_versions')
        .addColumn('tenant_id', ref, (c) => c.notNull().references('tenants.id').onDelete('cascade'))
        .addColumn('version', 'text', (c) => c.notNull())
        .addColumn('release_channel', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('deployment_versions_pk', ['tenant_id', 'version'])
        .execute();
    },
  };
}
