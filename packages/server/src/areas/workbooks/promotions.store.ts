import type { Executor, WorkbookPromotionLinkRow, WorkbookPromotionRow } from '../../db/tables.js';

export type NewPromotion = Omit<WorkbookPromotionRow, 'id'>;

export async function insertPromotion(db: Executor, values: NewPromotion): Promise<WorkbookPromotionRow> {
  return db.insertInto('workbook_promotions').values(values).returningAll().executeTakeFirstOrThrow();
}

/** The promotion a key made of this source workbook. */
export async function findPromotionByKey(db: Executor, tenantId: number, sourceWorkbookId: number, key: string): Promise<WorkbookPromotionRow | undefined> {
  return db
    .selectFrom('workbook_promotions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('source_workbook_id', '=', sourceWorkbookId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
}

/**
 * Promotions the workbook took part in, as source (of this deployment) or as target, newest
 * first; `beforeId` continues a page.
 */
export async function listPromotions(
  db: Executor,
  tenantId: number,
  deploymentId: number,
  workbookId: number,
  page: { beforeId?: number | undefined; limit: number },
): Promise<WorkbookPromotionRow[]> {
  let query = db
    .selectFrom('workbook_promotions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where((eb) =>
      eb.or([
        eb.and([eb('source_deployment_id', '=', deploymentId), eb('source_workbook_id', '=', workbookId)]),
        eb.and([eb('target_deployment_id', '=', deploymentId), eb('target_workbook_id', '=', workbookId)]),
      ]),
    );
  if (page.beforeId !== undefined) query = query.where('id', '<', page.beforeId);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}

/** The links from the source workbook to its copy in the target deployment: the workbook's own, then its reports'. */
export async function linksToTarget(db: Executor, tenantId: number, sourceWorkbookId: number, targetDeploymentId: number): Promise<WorkbookPromotionLinkRow[]> {
  return db
    .selectFrom('workbook_promotion_links')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('source_workbook_id', '=', sourceWorkbookId)
    .where('target_deployment_id', '=', targetDeploymentId)
    .orderBy('id')
    .execute();
}

/** Links the workbook is either end of, oldest first; `afterId` continues a page. */
export async function listLinks(
  db: Executor,
  tenantId: number,
  deploymentId: number,
  workbookId: number,
  page: { afterId?: number | undefined; limit: number },
): Promise<WorkbookPromotionLinkRow[]> {
  let query = db
    .selectFrom('workbook_promotion_links')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where((eb) =>
      eb.or([
        eb.and([eb('source_deployment_id', '=', deploymentId), eb('source_workbook_id', '=', workbookId)]),
        eb.and([eb('target_deployment_id', '=', deploymentId), eb('target_workbook_id', '=', workbookId)]),
      ]),
    );
  if (page.afterId !== undefined) query = query.where('id', '>', page.afterId);
  return query.orderBy('id').limit(page.limit).execute();
}

export async function insertLink(db: Executor, values: Omit<WorkbookPromotionLinkRow, 'id'>): Promise<void> {
  await db.insertInto('workbook_promotion_links').values(values).execute();
}

export async function touchLink(db: Executor, tenantId: number, id: number, promotionId: number, at: string): Promise<void> {
  await db
    .updateTable('workbook_promotion_links')
    .set({ last_promotion_id: promotionId, updated_at: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .execute();
}
