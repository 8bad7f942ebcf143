import type { Executor } from '../../db/tables.js';
import { findByWorkbook, setAllowEmbed } from '../dashboards/published.js';

/**
 * The published dashboard's `allowEmbed` switch, as embed access reads and writes it (3.4, 3.5).
 * `read` answers null when the workbook has no published dashboard.
 */
export interface DashboardEmbedSwitch {
  read(db: Executor, scope: { tenantId: number; deploymentId: number }, workbookId: number): Promise<{ allowEmbed: boolean } | null>;
  write(trx: Executor, scope: { tenantId: number; deploymentId: number }, workbookId: number, allowEmbed: boolean): Promise<void>;
}

/** Over the dashboards area (its `dashboards` table, and the workbook's copy it keeps in step). */
export const publishedDashboardSwitch: DashboardEmbedSwitch = {
  async read(db, scope, workbookId) {
    const dashboard = await findByWorkbook(db, scope.tenantId, workbookId);
    return dashboard && dashboard.deploymentId === scope.deploymentId ? { allowEmbed: dashboard.allowEmbed } : null;
  },
  async write(trx, scope, workbookId, allowEmbed) {
    await setAllowEmbed(trx, scope.tenantId, workbookId, allowEmbed);
  },
};
