import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { Access, Executor, ItemType } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { afterId, toPage } from '../../shared/pagination.js';
import { ApiError } from '../../shared/problems.js';
import { timestamp, type Clock } from '../../time.js';
import { loadViewContext, toWorkbookShape } from '../workspace/index.js';
import { findItem, type StoredItem } from '../workspace/index.js';
import { itemNotFound, openWorkspace, requireItemAccess, type WorkspaceContext } from '../workspace/index.js';
import type { DashboardEmbedSwitch } from './dashboard-embed.js';
import type { EmbedAccessResponse, FolderEmbedAccess, TenantWorkbooksInput, UpdateFolderEmbedAccessInput } from './embed-access.schemas.js';
import {
  addShare,
  ensureAllEmbedUsersGroup,
  findAllEmbedUsersGroup,
  reachableWorkbooks,
  removeShare,
  sharesOf,
  tenantSystemGroup,
  type AccessSource,
  type ShareTarget,
} from './embed-access.store.js';
import { nullablePage, requireEmbedTenant } from './embed-tenants.service.js';
import { canonicalEmbedTenantName } from './provision.js';

const VERB: Record<Access, string> = { VIEW: 'view the embed access of', EDIT: 'edit', MANAGE: 'change the embed access of' };
const ALL_SOURCES: ReadonlySet<AccessSource> = new Set(['tenant', 'allEmbedUsers', 'folder']);

type Change = { kind: 'tenant'; name: string; share: boolean } | { kind: 'all'; share: boolean };

function invalid(pointer: string, message: string, detail: string): ApiError {
  return new ApiError('VALIDATION_FAILED', detail, { errors: [{ pointer: `/body${pointer}`, message }] });
}

/** Reference 3.5: exactly one target, together with `action`; or none, to change only `allowEmbed`. */
function changeOf(input: UpdateFolderEmbedAccessInput, changesAllowEmbed: boolean): Change | null {
  const tenant = input.embedTenantName ?? null;
  const all = input.allEmbedUsers === true;
  const action = input.action ?? null;
  if (tenant !== null && all)
    throw invalid('/allEmbedUsers', 'cannot be combined with embedTenantName', 'Give one target: either embedTenantName or allEmbedUsers: true, not both.');
  if (tenant === null && !all) {
    if (action !== null) throw invalid('/action', 'needs a target', 'An action needs a target: embedTenantName, or allEmbedUsers: true.');
    if (!changesAllowEmbed)
      throw invalid(
        '',
        'changes nothing',
        'The request changes nothing: give a target (embedTenantName or allEmbedUsers: true) with an action, or allowEmbed.',
      );
    return null;
  }
  if (action === null) throw invalid('/action', 'is required with a target', 'Give an action with the target: read (share) or none (remove the share).');
  // The name is checked here, so a malformed one is refused before anything is read or locked.
  return tenant !== null
    ? { kind: 'tenant', name: canonicalEmbedTenantName(tenant, '/body/embedTenantName'), share: action === 'read' }
    : { kind: 'all', share: action === 'read' };
}

/**
 * Embed access (reference 3.4, 3.5, 4.14): read-only shares of workbooks and folders with the
 * system groups of embedding, one per embed tenant plus the account's all-embed-users group.
 * A folder's share reaches every workbook below it, at any depth, computed when read, so moves
 * never rewrite shares.
 */
export function embedAccessService(store: Store, dashboards: DashboardEmbedSwitch, now: Clock) {
  const { db } = store;

  async function item(trx: Executor, context: WorkspaceContext, type: ItemType, id: number, need: Access): Promise<StoredItem> {
    const found = await findItem(trx, context.scope, type, id);
    if (!found) throw itemNotFound(context, type, id);
    await requireItemAccess(trx, context, found, need, VERB[need]);
    return found;
  }

  async function view(trx: Executor, tenantId: number, target: ShareTarget): Promise<FolderEmbedAccess> {
    const shares = await sharesOf(trx, tenantId, target);
    const all = await findAllEmbedUsersGroup(trx, tenantId);
    const sharedWithAll = shares.some((s) => s.kind === 'all');
    return {
      allEmbedUsers: { enabled: sharedWithAll, action: sharedWithAll ? 'read' : 'none', groupId: all?.id ?? null },
      tenants: shares.flatMap((s) =>
        s.kind === 'tenant' && s.embed_tenant_name !== null
          ? [{ embedTenantName: s.embed_tenant_name, groupId: s.embed_group_id, action: 'read' as const }]
          : [],
      ),
    };
  }

  async function apply(trx: Executor, context: WorkspaceContext, target: ShareTarget, change: Change): Promise<void> {
    const { tenantId, deploymentId } = context.scope;
    let groupId: number | undefined;
    if (change.kind === 'tenant') {
      const embedTenant = await requireEmbedTenant(trx, tenantId, change.name);
      groupId = (await tenantSystemGroup(trx, tenantId, embedTenant.id))?.id;
    } else {
      groupId = change.share ? (await ensureAllEmbedUsersGroup(trx, tenantId, timestamp(now))).id : (await findAllEmbedUsersGroup(trx, tenantId))?.id;
    }
    if (groupId === undefined) return;
    if (change.share) await addShare(trx, tenantId, deploymentId, groupId, target, timestamp(now));
    else await removeShare(trx, tenantId, groupId, target);
  }

  /** Shares change under the deployment's tree lock (items are not deleted meanwhile) and the embed-people lock (tenants are not). */
  const locked = <T>(context: WorkspaceContext, fn: (trx: Executor) => Promise<T>) =>
    serialized(store, [lockKey.deployment(context.scope.deploymentId), lockKey.embedPeople(context.scope.tenantId)], fn);

  return {
    async getWorkbook(caller: Caller, deploymentId: number, workbookId: number): Promise<EmbedAccessResponse> {
      const context = await openWorkspace(db, caller, deploymentId);
      await item(db, context, 'WORKBOOK', workbookId, 'VIEW');
      const dashboard = await dashboards.read(db, context.scope, workbookId);
      return { allowEmbed: dashboard?.allowEmbed ?? false, ...(await view(db, caller.actor.tenantId, { workbookId })) };
    },

    async updateWorkbook(
      caller: Caller,
      deploymentId: number,
      workbookId: number,
      input: UpdateFolderEmbedAccessInput & { allowEmbed?: boolean | null },
    ): Promise<EmbedAccessResponse> {
      const allowEmbed = input.allowEmbed ?? null;
      const change = changeOf(input, allowEmbed !== null);
      const context = await openWorkspace(db, caller, deploymentId);
      return locked(context, async (trx) => {
        await item(trx, context, 'WORKBOOK', workbookId, 'MANAGE');
        const dashboard = await dashboards.read(trx, context.scope, workbookId);
        if (allowEmbed !== null && dashboard === null) {
          throw new ApiError(
            'INVALID_OPERATION',
            `Workbook ${workbookId} has no published dashboard, so there is no allowEmbed to set; publish its dashboard first.`,
          );
        }
        if (change) await apply(trx, context, { workbookId }, change);
        if (allowEmbed !== null && allowEmbed !== dashboard?.allowEmbed) await dashboards.write(trx, context.scope, workbookId, allowEmbed, timestamp(now));
        return { allowEmbed: allowEmbed ?? dashboard?.allowEmbed ?? false, ...(await view(trx, caller.actor.tenantId, { workbookId })) };
      });
    },

    async getFolder(caller: Caller, deploymentId: number, folderId: number): Promise<FolderEmbedAccess> {
      const context = await openWorkspace(db, caller, deploymentId);
      await item(db, context, 'FOLDER', folderId, 'VIEW');
      return view(db, caller.actor.tenantId, { folderId });
    },

    async updateFolder(caller: Caller, deploymentId: number, folderId: number, input: UpdateFolderEmbedAccessInput): Promise<FolderEmbedAccess> {
      const change = changeOf(input, false) as Change;
      const context = await openWorkspace(db, caller, deploymentId);
      return locked(context, async (trx) => {
        await item(trx, context, 'FOLDER', folderId, 'MANAGE');
        await apply(trx, context, { folderId }, change);
        return view(trx, caller.actor.tenantId, { folderId });
      });
    },

    /** Reference 4.14: the tenant's effective access in the deployment, by workbook id. */
    async tenantWorkbooks(caller: Caller, deploymentId: number, embedTenantName: string, input: TenantWorkbooksInput) {
      caller.access.requireAdmin('list the workbooks an embed tenant can reach');
      const context = await openWorkspace(db, caller, deploymentId);
      const embedTenant = await requireEmbedTenant(db, caller.actor.tenantId, embedTenantName);
      const tenantGroup = await tenantSystemGroup(db, caller.actor.tenantId, embedTenant.id);
      const all = await findAllEmbedUsersGroup(db, caller.actor.tenantId);
      const page = nullablePage(input);
      const sources = input.accessSource == null ? ALL_SOURCES : new Set<AccessSource>([input.accessSource]);
      const rows = tenantGroup
        ? await reachableWorkbooks(db, context.scope, { tenant: tenantGroup.id, all: all?.id ?? null }, sources, afterId(page), page.first + 1)
        : [];
      const { items, pageInfo } = toPage(rows, page, (r) => [r.id]);
      const stored = items.map((row) => ({ type: 'WORKBOOK' as const, row }));
      const viewContext = await loadViewContext(db, context.scope, caller, stored);
      return { items: stored.map((s) => toWorkbookShape(s, viewContext)), pageInfo };
    },
  };
}
export type EmbedAccessService = ReturnType<typeof embedAccessService>;
