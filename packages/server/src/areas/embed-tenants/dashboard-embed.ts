import type { Executor } from '../../db/tables.js';

/**
 * The published dashboard's `allowEmbed` switch, as embed access reads and writes it (3.4, 3.5).
 * `read` answers null when the workbook has no published dashboard.
 */
export interface DashboardEmbedSwitch {
  read(db: Executor, scope: { tenantId: number; deploymentId: number }, workbookId: number): Promise<{ allowEmbed: boolean } | null>;
  write(trx: Executor, scope: { tenantId: number; deploymentId: number }, workbookId: number, allowEmbed: boolean): Promise<void>;
}

/** Over the workbook's stored published dashboard (the `published_dashboard` JSON, with its `allowEmbed`). */
export const storedDashboardSwitch: DashboardEmbedSwitch = {
  async read(db, scope, workbookId) {
    const row = await db
      .selectFrom('workbooks')
      .select('published_dashboard')
      .where('tenant_id', '=', scope.tenantId)
      .where('deployment_id', '=', scope.deploymentId)
      .where('id', '=', workbookId)
      .executeTakeFirst();
    if (!row?.published_dashboard) return null;
    const dashboard = JSON.parse(row.published_dashboard) as { allowEmbed?: unknown } | null;
    if (dashboard === null || typeof dashboard !== 'object') return null;
    return { allowEmbed: dashboard.allowEmbed === true };
  },
  async write(trx, scope, workbookId, allowEmbed) {
    const row = await trx
      .selectFrom('workbooks')
      .select('published_dashboard')
      .where('tenant_id', '=', scope.tenantId)
      .where('deployment_id', '=', scope.deploymentId)
      .where('id', '=', workbookId)
      .executeTakeFirst();
    if (!row?.published_dashboard) return;
    const dashboard = { ...(JSON.parse(row.published_dashboard) as Record<string, unknown>), allowEmbed };
    await trx
      .updateTable('workbooks')
      .set({ published_dashboard: JSON.stringify(dashboard) })
      .where('tenant_id', '=', scope.tenantId)
      .where('deployment_id', '=', scope.deploymentId)
      .where('id', '=', workbookId)
      .execute();
  },
};
