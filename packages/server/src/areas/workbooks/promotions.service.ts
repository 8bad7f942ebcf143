import { createHash } from 'node:crypto';
import type { Caller } from '../../access/caller.js';
import { checkKeyScope } from '../../access/key-scope.js';
import type { Audit } from '../../audit/index.js';
import type { Store } from '../../db/database.js';
import { mapUniqueViolation } from '../../db/errors.js';
import type { Executor, WorkbookPromotionLinkRow, WorkbookPromotionRow, WorkbookRow } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import type { ModelArtifact } from '../../model/index.js';
import { afterId, toPage, type PageRequest } from '../../shared/pagination.js';
import { ApiError } from '../../shared/problems.js';
import type { PageInfo } from '../../shared/schemas.js';
import { timestamp, type Clock } from '../../time.js';
import { copyDashboardsInto, sourceReportsOf, type CopiedReport, type SourceReport } from '../dashboards/index.js';
import { latestSuccessfulBuild } from '../data-model/index.js';
import {
  findItem,
  normalizeDashboardConfig,
  openWorkspace,
  readAuthorized,
  requireItemAccess,
  requirePlacement,
  type WorkspaceContext,
} from '../workspace/index.js';
import { missingMembers, type MissingMember } from './promotion-members.js';
import type { Promotion, PromotionInput, PromotionLink, PromotionPreview } from './promotions.schemas.js';
import { findPromotionByKey, insertLink, insertPromotion, linksToTarget, listLinks, listPromotions, touchLink } from './promotions.store.js';
import { authorized } from './workbooks.service.js';
import { insertWorkbook, slugsStartingWith, updateWorkbook } from './workbooks.store.js';

type Outcome = 'CREATED' | 'UPDATED';

/** What a promotion would do now, worked out under the locks it writes under. */
interface Plan {
  source: WorkbookRow;
  target: WorkspaceContext;
  /** The copy an earlier promotion made (still there); undefined: a new copy. */
  copy: WorkbookRow | undefined;
  links: WorkbookPromotionLinkRow[];
  reports: SourceReport[];
  buildId: number | null;
  missing: MissingMember[];
}

const EMPTY_MODEL: ModelArtifact = { cubes: [], views: [] };

function toPromotion(row: WorkbookPromotionRow): Promotion {
  return {
    id: row.id,
    sourceDeploymentId: row.source_deployment_id,
    sourceWorkbookId: row.source_workbook_id,
    targetDeploymentId: row.target_deployment_id,
    targetWorkbookId: row.target_workbook_id,
    outcome: row.outcome as Outcome,
    reports: JSON.parse(row.reports) as Promotion['reports'],
    dashboardPublished: row.dashboard_published === 1,
    idempotencyKey: row.idempotency_key,
    createdBy: row.created_by,
    createdAt: row.created_at,
  };
}

function toLink(row: WorkbookPromotionLinkRow): PromotionLink {
  return {
    id: row.id,
    kind: row.kind as PromotionLink['kind'],
    sourceDeploymentId: row.source_deployment_id,
    sourceWorkbookId: row.source_workbook_id,
    sourceReportId: row.source_report_id,
    targetDeploymentId: row.target_deployment_id,
    targetWorkbookId: row.target_workbook_id,
    targetReportId: row.target_report_id,
    lastPromotionId: row.last_promotion_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** What the idempotency key is bound to: the body, with what was left out spelled as its default. */
function requestHash(input: PromotionInput): string {
  return createHash('sha256')
    .update(JSON.stringify([input.targetDeploymentId, input.folderId ?? null]))
    .digest('hex');
}

/** The source's slug if the target deployment has no workbook with it, else `<slug>-2`, `-3`... */
async function targetSlug(trx: Executor, target: WorkspaceContext, slug: string): Promise<string> {
  const taken = await slugsStartingWith(trx, target.scope, slug);
  if (!taken.has(slug)) return slug;
  const base = slug.slice(0, 100 - '-9999999999'.length);
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

function describeMissing(missing: MissingMember[], targetDeploymentId: number): string {
  const shown = missing.slice(0, 10).map((m) => `${m.member} (${m.use}, reports ${m.reportIds.join(', ')})`);
  const more = missing.length > shown.length ? ` and ${missing.length - shown.length} more` : '';
  return `Deployment ${targetDeploymentId}'s model lacks ${missing.length} member${missing.length === 1 ? '' : 's'} the workbook's reports use: ${shown.join('; ')}${more}. Add them to its model and deploy it, or change the reports; nothing was promoted.`;
}

/**
 * Workbook promotion across deployments: a workbook, the reports its dashboards show and its
 * draft and published dashboard copied to another deployment whose model has the members those
 * reports use. Links from each source item to its copy make a later promotion update the copy.
 * Writes hold both deployments' locks (taken in one order, so two promotions in opposite
 * directions cannot wait on each other).
 */
export function promotionsService(store: Store, now: Clock, audit: Audit) {
  const { db } = store;

  async function open(caller: Caller, deploymentId: number, input: PromotionInput): Promise<{ source: WorkspaceContext; target: WorkspaceContext }> {
    const source = await openWorkspace(db, caller, deploymentId);
    if (input.targetDeploymentId === deploymentId) {
      throw new ApiError('INVALID_OPERATION', `A workbook is promoted to another deployment; to copy it within deployment ${deploymentId}, duplicate it.`, {
        errors: [{ pointer: '/body/targetDeploymentId', message: 'is the workbook’s own deployment' }],
      });
    }
    // A key scoped to some deployments may write only there, the body's target included.
    checkKeyScope(caller.actor.scope, { deploymentId: String(input.targetDeploymentId) });
    return { source, target: await openWorkspace(db, caller, input.targetDeploymentId) };
  }

  async function plan(trx: Executor, source: WorkspaceContext, target: WorkspaceContext, workbookId: number, input: PromotionInput): Promise<Plan> {
    const row = (await authorized(trx, source, workbookId, 'VIEW')).row;
    const { reports } = await sourceReportsOf(trx, source, row);
    const links = await linksToTarget(trx, source.scope.tenantId, row.id, target.scope.deploymentId);
    const own = links.find((l) => l.kind === 'WORKBOOK');
    const copyItem = own ? await findItem(trx, target.scope, 'WORKBOOK', own.target_workbook_id) : undefined;
    // Updating the earlier copy is an update of it (EDIT); a new copy is a create where it lands.
    if (copyItem) await requireItemAccess(trx, target, copyItem, 'EDIT', 'update');
    else await requirePlacement(trx, target, input.folderId ?? null, 'workbook');
    const build = await latestSuccessfulBuild(trx, target.scope.deploymentId, target.deployment.deploy_branch_name);
    const artifact = build?.artifact ? (JSON.parse(build.artifact) as ModelArtifact) : EMPTY_MODEL;
    return {
      source: row,
      target,
      copy: copyItem?.row as WorkbookRow | undefined,
      links,
      reports,
      buildId: build?.id ?? null,
      missing: missingMembers(
        artifact,
        reports.map((r) => ({ id: r.id, spec: r.content.spec })),
      ),
    };
  }

  /** The copy's workbook row, written: the earlier copy updated, or a new one inserted. */
  async function writeCopy(trx: Executor, caller: Caller, planned: Plan, input: PromotionInput, at: string): Promise<WorkbookRow> {
    const { source, target, copy } = planned;
    const draft = normalizeDashboardConfig(source.dashboard_draft === null ? null : JSON.parse(source.dashboard_draft));
    const fields = {
      name: source.name,
      meta: source.meta,
      calculated_fields: source.calculated_fields,
      dashboard_draft: draft === null ? null : JSON.stringify(draft),
    };
    if (copy) return updateWorkbook(trx, target.scope, copy.id, { ...fields, updated_at: at });
    const slug = await targetSlug(trx, target, source.slug);
    return mapUniqueViolation(
      {
        workbooks_slug: () =>
          new ApiError(
            'WORKBOOK_SLUG_TAKEN',
            `A workbook with slug "${slug}" was created in deployment ${target.scope.deploymentId} meanwhile; promote again.`,
          ),
      },
      () =>
        insertWorkbook(trx, {
          ...fields,
          tenant_id: target.scope.tenantId,
          deployment_id: target.scope.deploymentId,
          folder_id: input.folderId ?? null,
          slug,
          dashboard_published: null,
          published_dashboard: null,
          created_by: caller.actor.userId,
          created_at: at,
          updated_at: at,
        }),
    );
  }

  async function writeLinks(trx: Executor, planned: Plan, promotion: WorkbookPromotionRow, at: string): Promise<void> {
    const base = {
      tenant_id: promotion.tenant_id,
      source_deployment_id: promotion.source_deployment_id,
      source_workbook_id: promotion.source_workbook_id,
      target_deployment_id: promotion.target_deployment_id,
      target_workbook_id: promotion.target_workbook_id,
      last_promotion_id: promotion.id,
      created_at: at,
      updated_at: at,
    };
    const existing = (kind: string, sourceReportId: number | null, targetReportId: number | null) =>
      planned.links.find(
        (l) =>
          l.kind === kind &&
          l.target_workbook_id === promotion.target_workbook_id &&
          l.source_report_id === sourceReportId &&
          l.target_report_id === targetReportId,
      );
    const own = existing('WORKBOOK', null, null);
    if (own) await touchLink(trx, promotion.tenant_id, own.id, promotion.id, at);
    else await insertLink(trx, { ...base, kind: 'WORKBOOK', source_report_id: null, target_report_id: null });
    for (const r of JSON.parse(promotion.reports) as CopiedReport[]) {
      const link = existing('REPORT', r.sourceReportId, r.targetReportId);
      if (link) await touchLink(trx, promotion.tenant_id, link.id, promotion.id, at);
      else await insertLink(trx, { ...base, kind: 'REPORT', source_report_id: r.sourceReportId, target_report_id: r.targetReportId });
    }
  }

  async function readable(caller: Caller, deploymentId: number, workbookId: number): Promise<WorkspaceContext> {
    const context = await openWorkspace(db, caller, deploymentId);
    await readAuthorized(db, store.dialect, context, 'WORKBOOK', workbookId, 'VIEW', 'view');
    return context;
  }

  return {
    /** What a promotion would do, with the members the target's model lacks; writes nothing. */
    async preview(caller: Caller, deploymentId: number, workbookId: number, input: PromotionInput): Promise<PromotionPreview> {
      const { source, target } = await open(caller, deploymentId, input);
      // A read: no lock and no transaction (it writes nothing); a promotion plans again under its locks.
      const planned = await plan(db, source, target, workbookId, input);
      return {
        sourceDeploymentId: deploymentId,
        sourceWorkbookId: workbookId,
        targetDeploymentId: input.targetDeploymentId,
        targetWorkbookId: planned.copy?.id ?? null,
        outcome: planned.copy ? 'UPDATED' : 'CREATED',
        reportIds: planned.reports.map((r) => r.id),
        targetBuildId: planned.buildId,
        missingMembers: planned.missing,
        ready: planned.missing.length === 0,
      };
    },

    /**
     * Promotes the workbook; `key`: an idempotency key, which answers the promotion it made when
     * sent again with the same body (`replayed`) and is refused with another.
     */
    async promote(
      caller: Caller,
      deploymentId: number,
      workbookId: number,
      input: PromotionInput,
      key: string | undefined,
    ): Promise<{ promotion: Promotion; replayed: boolean }> {
      const { source, target } = await open(caller, deploymentId, input);
      const hash = requestHash(input);
      const result = await serialized(store, [lockKey.deployment(deploymentId), lockKey.deployment(input.targetDeploymentId)], async (trx) => {
        if (key !== undefined) {
          await authorized(trx, source, workbookId, 'VIEW');
          const earlier = await findPromotionByKey(trx, source.scope.tenantId, workbookId, key);
          if (earlier && earlier.request_hash === hash) return { row: earlier, replayed: true };
          if (earlier) {
            throw new ApiError(
              'IDEMPOTENCY_KEY_REUSED',
              `Idempotency key "${key}" made promotion ${earlier.id} of workbook ${workbookId} with another request body; send a new key for a new promotion.`,
            );
          }
        }
        const planned = await plan(trx, source, target, workbookId, input);
        if (planned.missing.length > 0) {
          throw new ApiError('PROMOTION_MEMBERS_MISSING', describeMissing(planned.missing, input.targetDeploymentId), { missingMembers: planned.missing });
        }
        const at = timestamp(now);
        const copy = await writeCopy(trx, caller, planned, input, at);
        const existing = new Map(
          planned.links.filter((l) => l.kind === 'REPORT' && l.target_workbook_id === copy.id).map((l) => [l.source_report_id!, l.target_report_id!]),
        );
        const copied = await copyDashboardsInto(trx, source, planned.source, copy, at, { target, existing, allowEmbed: null });
        const row = await insertPromotion(trx, {
          tenant_id: source.scope.tenantId,
          source_deployment_id: deploymentId,
          source_workbook_id: workbookId,
          target_deployment_id: input.targetDeploymentId,
          target_workbook_id: copy.id,
          outcome: planned.copy ? 'UPDATED' : 'CREATED',
          reports: JSON.stringify(copied.reports),
          dashboard_published: copied.published ? 1 : 0,
          idempotency_key: key ?? null,
          request_hash: hash,
          created_by: caller.actor.userId,
          created_at: at,
        });
        await writeLinks(trx, planned, row, at);
        return { row, replayed: false };
      });
      const promotion = toPromotion(result.row);
      if (!result.replayed) {
        // After the commit: the audit log's switch is read on the store, which the transaction holds on SQLite.
        await audit.record(caller, {
          action: 'workbook.promoted',
          target: {
            deploymentId,
            workbookId,
            targetDeploymentId: promotion.targetDeploymentId,
            targetWorkbookId: promotion.targetWorkbookId,
            promotionId: promotion.id,
          },
          details: { outcome: promotion.outcome, reports: promotion.reports.length, dashboardPublished: promotion.dashboardPublished },
        });
      }
      return { promotion, replayed: result.replayed };
    },

    /** The newest promotion the workbook took part in, as source or as copy. */
    async current(caller: Caller, deploymentId: number, workbookId: number): Promise<Promotion> {
      const context = await readable(caller, deploymentId, workbookId);
      const [row] = await listPromotions(db, context.scope.tenantId, deploymentId, workbookId, { limit: 1 });
      if (!row) throw new ApiError('PROMOTION_NOT_FOUND', `Workbook ${workbookId} has not been promoted, nor is it a promoted copy.`);
      return toPromotion(row);
    },

    /** Its promotions, newest first. */
    async list(caller: Caller, deploymentId: number, workbookId: number, page: PageRequest): Promise<{ items: Promotion[]; pageInfo: PageInfo }> {
      const context = await readable(caller, deploymentId, workbookId);
      const rows = await listPromotions(db, context.scope.tenantId, deploymentId, workbookId, { beforeId: afterId(page), limit: page.first + 1 });
      const result = toPage(rows, page, (r) => [r.id]);
      return { items: result.items.map(toPromotion), pageInfo: result.pageInfo };
    },

    /** The links it is either end of: to its copies in other deployments, or from the workbook it is a copy of. */
    async links(caller: Caller, deploymentId: number, workbookId: number, page: PageRequest): Promise<{ items: PromotionLink[]; pageInfo: PageInfo }> {
      const context = await readable(caller, deploymentId, workbookId);
      const rows = await listLinks(db, context.scope.tenantId, deploymentId, workbookId, { afterId: afterId(page), limit: page.first + 1 });
      const result = toPage(rows, page, (r) => [r.id]);
      return { items: result.items.map(toLink), pageInfo: result.pageInfo };
    },
  };
}
export type PromotionsService = ReturnType<typeof promotionsService>;
