import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import { mapUniqueViolation } from '../../db/errors.js';
import type { Access, Executor, WorkbookRow } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { ApiError } from '../../shared/problems.js';
import { timestamp, type Clock } from '../../time.js';
import { normalizeDashboardConfig } from '../workspace/index.js';
import { requirePlacement } from '../workspace/index.js';
import { renderCommitted } from '../workspace/index.js';
import { loadViewContext, toWorkbookShape, type Tolerate } from '../workspace/index.js';
import { findItem, type StoredItem } from '../workspace/index.js';
import { moveOne } from '../workspace/index.js';
import { chainsOf, type WorkspaceScope } from '../workspace/index.js';
import {
  atLeast,
  itemNotFound,
  levelOn,
  openWorkspace,
  placeTarget,
  readAuthorized,
  requireItemAccess,
  viewOptionsOf,
  type WorkspaceContext,
} from '../workspace/index.js';
import { copyDashboards, copySharedPublication, findByWorkbook } from '../dashboards/index.js';
import { embedShareOf, embedUserExists } from '../embed-tenants/index.js';
import { requireCreatorSession, type EmbedPrincipal } from '../embed-sessions/index.js';
import type { Workbook } from '../workspace/index.js';
import { SLUG_MAX_LENGTH, type DuplicateWorkbookInput, type UpsertWorkbookInput } from './workbooks.schemas.js';
import { findWorkbookBySlug, insertWorkbook, slugsStartingWith, updateWorkbook, type WorkbookChanges } from './workbooks.store.js';

type WorkbookItem = StoredItem & { type: 'WORKBOOK' };

const VERB: Record<Access, string> = { VIEW: 'view', EDIT: 'update', MANAGE: 'manage' };

function slugTaken(slug: string, deploymentId: number): ApiError {
  return new ApiError('WORKBOOK_SLUG_TAKEN', `A workbook with slug "${slug}" already exists in deployment ${deploymentId}; slugs are unique per deployment.`);
}

/** Stored form of a dashboard config: legacy widget types converted before they reach the table. */
function storedConfig(config: unknown): string | null {
  const normalized = normalizeDashboardConfig(config);
  return normalized === null ? null : JSON.stringify(normalized);
}

/** 403 unless the caller's access to the workbook reaches `need`. */
async function requireAccess(trx: Executor, context: WorkspaceContext, item: WorkbookItem, need: Access): Promise<void> {
  await requireItemAccess(trx, context, item, need, VERB[need]);
}

/** The workbook (404), with the caller's access to it checked against `need` (403). */
export async function authorized(trx: Executor, context: WorkspaceContext, workbookId: number, need: Access): Promise<WorkbookItem> {
  const item = (await findItem(trx, context.scope, 'WORKBOOK', workbookId)) as WorkbookItem | undefined;
  if (!item) throw itemNotFound(context, 'WORKBOOK', workbookId);
  await requireAccess(trx, context, item, need);
  return item;
}

/** `<slug>-copy`, or `<slug>-copy-2`, `-3`... : the first one no workbook of the deployment has. */
async function freshSlug(trx: Executor, scope: WorkspaceScope, source: string): Promise<string> {
  const base = `${source.slice(0, SLUG_MAX_LENGTH - '-copy-9999999999'.length)}-copy`;
  const taken = await slugsStartingWith(trx, scope, base);
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

/** "Copy of <name>" (reference 8.G.1), cut to the 255 characters a name may have. */
function copyName(name: string): string {
  return `Copy of ${name}`.slice(0, 255);
}

/**
 * Where a copy goes when the request does not say (reference 8.G.1): beside the source when the
 * caller has EDIT on its folder, otherwise the workspace root.
 */
async function besideOrRoot(trx: Executor, context: WorkspaceContext, folderId: number | null): Promise<number | null> {
  if (folderId === null) return null;
  const chains = await chainsOf(trx, context.scope, [folderId]);
  return atLeast(levelOn(context, placeTarget(context, folderId, chains)), 'EDIT') ? folderId : null;
}

/**
 * Workbooks: upsert by slug, read, duplicate. Every write holds the deployment's tree lock, so a
 * workbook never lands in a folder that a concurrent delete is removing (DESIGN.md, "Trees").
 */
export function workbooksService(store: Store, now: Clock) {
  const { db } = store;

  /** The workbook a write committed; never throws (committed.ts). */
  async function committed(caller: Caller, what: string, scope: WorkspaceScope, row: WorkbookRow): Promise<Workbook> {
    const item: WorkbookItem = { type: 'WORKBOOK', row };
    const load = (tolerate: Tolerate) => loadViewContext(db, scope, caller, [item], { tolerate });
    const [workbook] = await renderCommitted(caller, what, [item], load, (_, context, options) => toWorkbookShape(item, context, options));
    return workbook!;
  }

  async function insert(
    trx: Executor,
    context: WorkspaceContext,
    values: Omit<WorkbookRow, 'id' | 'tenant_id' | 'deployment_id' | 'created_by' | 'embed_owner_id' | 'created_at' | 'updated_at'>,
  ) {
    const { scope, caller } = context;
    const at = timestamp(now);
    return mapUniqueViolation({ workbooks_slug: () => slugTaken(values.slug, scope.deploymentId) }, () =>
      insertWorkbook(trx, {
        ...values,
        tenant_id: scope.tenantId,
        deployment_id: scope.deploymentId,
        created_by: caller.actor.userId,
        created_at: at,
        updated_at: at,
      }),
    );
  }

  /** EDIT on the workbook; a different `folderId` is a move, checked exactly as the single move. */
  async function update(trx: Executor, context: WorkspaceContext, existing: WorkbookRow, input: UpsertWorkbookInput): Promise<WorkbookRow> {
    let row = existing;
    if (input.folderId !== undefined && input.folderId !== row.folder_id) {
      // The move's own checks, in its order; the access it needs includes EDIT.
      row = (await moveOne(trx, context, 'WORKBOOK', row.id, input.folderId, timestamp(now))).item.row as WorkbookRow;
    } else {
      await requireAccess(trx, context, { type: 'WORKBOOK', row: existing }, 'EDIT');
    }
    const wanted: Omit<WorkbookChanges, 'updated_at'> = { name: input.name };
    if (input.meta !== undefined) wanted.meta = JSON.stringify(input.meta);
    if (input.calculatedFields !== undefined) wanted.calculated_fields = JSON.stringify(input.calculatedFields);
    if (input.dashboardDraft !== undefined) wanted.dashboard_draft = storedConfig(input.dashboardDraft);
    const changed = Object.entries(wanted).some(([column, value]) => row[column as keyof WorkbookRow] !== value);
    return changed ? updateWorkbook(trx, context.scope, row.id, { ...wanted, updated_at: timestamp(now) }) : row;
  }

  return {
    /** Creates the workbook with `slug` (EXPLORER or above, EDIT where it lands) or updates it (EDIT on it). */
    async upsert(caller: Caller, deploymentId: number, slug: string, input: UpsertWorkbookInput): Promise<{ created: boolean; workbook: Workbook }> {
      const context = await openWorkspace(db, caller, deploymentId);
      const { created, row } = await serialized(store, lockKey.deployment(deploymentId), async (trx) => {
        const existing = await findWorkbookBySlug(trx, context.scope, slug);
        if (existing) return { created: false, row: await update(trx, context, existing, input) };
        const folderId = input.folderId ?? null;
        await requirePlacement(trx, context, folderId, 'workbook');
        const inserted = await insert(trx, context, {
          folder_id: folderId,
          name: input.name,
          slug,
          meta: JSON.stringify(input.meta ?? {}),
          calculated_fields: JSON.stringify(input.calculatedFields ?? {}),
          dashboard_draft: storedConfig(input.dashboardDraft),
          dashboard_published: null,
          published_dashboard: null,
        });
        return { created: true, row: inserted };
      });
      return { created, workbook: await committed(caller, `workbook upsert in deployment ${deploymentId}`, context.scope, row) };
    },

    async get(caller: Caller, deploymentId: number, workbookId: number): Promise<Workbook> {
      const context = await openWorkspace(db, caller, deploymentId);
      const read = await readAuthorized(db, store.dialect, context, 'WORKBOOK', workbookId, 'VIEW', VERB.VIEW);
      return toWorkbookShape(read.item, await loadViewContext(db, context.scope, caller, [read.item], viewOptionsOf(read)));
    },

    /**
     * A copy of the workbook (reference 8.G.1) under a fresh slug, owned by the caller: "Copy of
     * <name>", its meta, calculated fields and draft, copies of the reports its dashboards show and
     * of its published dashboard, re-pointed at those copies (dashboards/copy.ts), with
     * `allowEmbed` off; no sharing, no favorites. Needs VIEW on the source, the EXPLORER role or
     * above, and the rights to create where the copy lands. `shared: true` with an API key is 403: only a
     * creator-mode embed session copies from the shared workspace (`duplicateShared`).
     */
    async duplicate(caller: Caller, deploymentId: number, workbookId: number, input: DuplicateWorkbookInput): Promise<Workbook> {
      const context = await openWorkspace(db, caller, deploymentId);
      if (input.shared === true) {
        throw new ApiError(
          'FORBIDDEN',
          'Copying from the shared workspace (`shared: true`) takes the embed token of a creator-mode session; leave `shared` out to copy the workbook itself.',
        );
      }
      const row = await serialized(store, lockKey.deployment(deploymentId), async (trx) => {
        const source = (await authorized(trx, context, workbookId, 'VIEW')).row;
        const folderId = input.folderId === undefined ? await besideOrRoot(trx, context, source.folder_id) : input.folderId;
        try {
          await requirePlacement(trx, context, folderId, 'workbook');
        } catch (error) {
          // Fell back to the root and may not create there either: say both places it could have gone.
          if (
            input.folderId !== undefined ||
            source.folder_id === null ||
            caller.actor.role === 'VIEWER' ||
            !(error instanceof ApiError) ||
            error.code !== 'FORBIDDEN'
          )
            throw error;
          throw new ApiError(
            'FORBIDDEN',
            `The copy goes beside the source with EDIT on folder ${source.folder_id}, otherwise to the workspace root with EDIT on deployment ${deploymentId}; you have neither. Pass the \`folderId\` of a folder where you have EDIT.`,
          );
        }
        const copy = await insert(trx, context, {
          folder_id: folderId,
          name: input.name ?? copyName(source.name),
          slug: await freshSlug(trx, context.scope, source.slug),
          meta: source.meta,
          calculated_fields: source.calculated_fields,
          dashboard_draft: source.dashboard_draft === null ? null : storedConfig(JSON.parse(source.dashboard_draft)),
          dashboard_published: null,
          published_dashboard: null,
        });
        return copyDashboards(trx, context, source, copy, timestamp(now));
      });
      return committed(caller, `workbook duplicate in deployment ${deploymentId}`, context.scope, row);
    },

    /**
     * Reference 8.G.1 with `shared: true`, for a creator-mode embed session: a copy of a workbook
     * of the shared workspace (404 for one not shared with the session, as for one that does not
     * exist), built from its published dashboard (400 without one) and owned by the embed user,
     * at the root. Anything else than `shared: true` is 403: an embed session copies only from
     * the shared workspace.
     */
    async duplicateShared(embed: EmbedPrincipal | null, deploymentId: number, workbookId: number, input: DuplicateWorkbookInput): Promise<Workbook> {
      const principal = requireCreatorSession(embed, deploymentId, 'Copying with an embed token');
      if (input.shared !== true) throw new ApiError('FORBIDDEN', 'An embed session copies only from the shared workspace: send `"shared": true`.');
      if (input.folderId !== undefined && input.folderId !== null)
        throw new ApiError('VALIDATION_FAILED', 'A copy from the shared workspace always lands at the root: leave `folderId` out.', {
          errors: [{ pointer: '/body/folderId', message: 'must be left out with shared: true' }],
        });
      const embedUserId = principal.claims.embed_user.id;
      const scope = { tenantId: principal.tenantId, deploymentId };
      const notFound = () => new ApiError('WORKBOOK_NOT_FOUND', `No workbook ${workbookId} in deployment ${deploymentId} is shared with this embed session.`);
      const row = await serialized(store, lockKey.deployment(deploymentId), async (trx) => {
        if (embedUserId === null || !(await embedUserExists(trx, principal.tenantId, embedUserId)))
          throw new ApiError('FORBIDDEN', 'The embed user of this session no longer exists (their embed tenant was deleted); generate a new session.');
        const source = (await findItem(trx, scope, 'WORKBOOK', workbookId)) as WorkbookItem | undefined;
        if (!source || (await embedShareOf(trx, scope, workbookId, principal.claims.embed_tenant)) === null) throw notFound();
        if (!(await findByWorkbook(trx, scope.tenantId, workbookId)))
          throw new ApiError(
            'INVALID_OPERATION',
            `Workbook ${workbookId} has no published dashboard: a copy from the shared workspace is built from the published dashboard.`,
          );
        const at = timestamp(now);
        const copy = await mapUniqueViolation({ workbooks_slug: () => slugTaken(source.row.slug, deploymentId) }, async () =>
          insertWorkbook(trx, {
            tenant_id: scope.tenantId,
            deployment_id: deploymentId,
            folder_id: null,
            name: input.name ?? copyName(source.row.name),
            slug: await freshSlug(trx, scope, source.row.slug),
            meta: source.row.meta,
            calculated_fields: source.row.calculated_fields,
            dashboard_draft: null,
            dashboard_published: null,
            published_dashboard: null,
            created_by: null,
            embed_owner_id: embedUserId,
            created_at: at,
            updated_at: at,
          }),
        );
        return copySharedPublication(trx, scope, source.row, copy, embedUserId, at);
      });
      // Nobody's user: no favorites, no owner to show; the copy is at the root.
      return toWorkbookShape({ type: 'WORKBOOK', row }, { paths: new Map(), owners: new Map(), favorites: new Set() });
    },
  };
}
export type WorkbooksService = ReturnType<typeof workbooksService>;
