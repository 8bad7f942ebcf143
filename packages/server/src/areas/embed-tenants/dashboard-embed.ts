import type { Executor } from '../../db/tables.js';
import { findByWorkbook, setAllowEmbed } from '../dashboards/index.js';
import { findAllEmbedUsersGroup, reachableWorkbooks, tenantSystemGroup } from './embed-access.store.js';
import { findEmbedTenant } from './embed-tenants.store.js';

/**
 * The published dashboard's `allowEmbed` switch, as embed access reads and writes it (3.4, 3.5).
 * `read` answers null when the workbook has no published dashboard.
 */
export interface DashboardEmbedSwitch {
  read(db: Executor, scope: { tenantId: number; deploymentId: number }, workbookId: number): Promise<{ allowEmbed: boolean } | null>;
  write(trx: Executor, scope: { tenantId: number; deploymentId: number }, workbookId: number, allowEmbed: boolean, at: string): Promise<void>;
}

/** Over the dashboards area (its `dashboards` table, and the workbook's copy it keeps in step). */
export const publishedDashboardSwitch: DashboardEmbedSwitch = {
  async read(db, scope, workbookId) {
    const dashboard = await findByWorkbook(db, scope.tenantId, workbookId);
    return dashboard && dashboard.deploymentId === scope.deploymentId ? { allowEmbed: dashboard.allowEmbed } : null;
  },
  async write(trx, scope, workbookId, allowEmbed, at) {
    await setAllowEmbed(trx, scope.tenantId, workbookId, allowEmbed, at);
  },
};

/**
 * How an embed session's user reaches a workbook by sharing (reference 4.18 with 3.4-3.6, 4.14):
 * `allEmbedUsers` when it, or a folder above it, is shared with every embed user (such dashboards
 * open whatever their `allowEmbed` says, 3.6); `tenant` when shared so with the session's embed
 * tenant; null otherwise.
 */
export async function embedShareOf(
  db: Executor,
  scope: { tenantId: number; deploymentId: number },
  workbookId: number,
  embedTenantName: string | null,
): Promise<'tenant' | 'allEmbedUsers' | null> {
  const reaches = async (groupId: number) => {
    const [first] = await reachableWorkbooks(db, scope, { tenant: groupId, all: null }, new Set(['tenant', 'folder']), workbookId - 1, 1);
    return first?.id === workbookId;
  };
  const all = await findAllEmbedUsersGroup(db, scope.tenantId);
  if (all && (await reaches(all.id))) return 'allEmbedUsers';
  if (embedTenantName === null) return null;
  const embedTenant = await findEmbedTenant(db, scope.tenantId, embedTenantName);
  const group = embedTenant && (await tenantSystemGroup(db, scope.tenantId, embedTenant.id));
  return group && (await reaches(group.id)) ? 'tenant' : null;
}
