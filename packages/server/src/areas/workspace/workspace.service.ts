import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { ItemType } from '../../db/tables.js';
import { lockKey, lockWaitBudget, serialized } from '../../db/transactions.js';
import { ApiError } from '../../shared/problems.js';
import { decodeCursor, encodeCursor, legacyPage, pageRequest } from '../../shared/pagination.js';
import { loadViewContext, placementOf, toWorkbookShape } from './item-view.js';
import { renderCommitted, type ItemRef } from './committed.js';
import type { ListWorkspaceInput, WorkspaceEntry } from './listing.schemas.js';
import { countEntries, listEntries, type ListingKey, type ListingRow } from './listing.store.js';
import { visibilityFor } from './visibility.js';
import { moveOne, type Moved } from './move.js';
import { deleteOne } from './remove.js';
import type { FolderChain } from './tree.store.js';
import { findItem, setFavorite } from './items.store.js';
import { describeItem, itemNotFound, levelOfItem, openWorkspace, requireListedFolder } from './workspace-context.js';
import { timestamp, type Clock } from '../../time.js';
import type { BulkDeleteInput, BulkFailure, BulkMoveInput, MoveInput, Workbook } from './workspace.schemas.js';

export type { ItemRef };

/** Repeated references to the same (type, id) collapse to the first (spec: bulk move, rule 2). */
export function distinctItems(items: ItemRef[]): ItemRef[] {
  const seen = new Set<string>();
  return items.filter((ref) => {
    const key = `${ref.type}:${ref.id}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * A listing cursor: [group, sort key, type rank, id] of the previous page's last entry, and the
 * listing it came from (folder or search, types, order), so it cannot silently resume another one.
 */
export function listingKey(cursor: string, listing: string): ListingKey {
  const [grp, key, rank, id, issuedFor] = decodeCursor(cursor, 5);
  const valid =
    (grp === 0 || grp === 1) &&
    typeof key === 'string' &&
    (rank === 1 || rank === 2 || rank === 3) &&
    typeof id === 'number' &&
    Number.isSafeInteger(id) &&
    id > 0;
  if (!valid) throw new ApiError('INVALID_CURSOR', 'The `after` cursor was not issued by this list; pass `pageInfo.endCursor` of the previous page.');
  if (issuedFor !== listing) {
    throw new ApiError(
      'INVALID_CURSOR',
      'The `after` cursor belongs to a listing with another folder, search, types or order; keep those the same while paging.',
      {
        errors: [{ pointer: '/query/after', message: 'was issued for another listing' }],
      },
    );
  }
  return [grp, key, rank, id];
}

export function workspaceService(store: Store, now: Clock) {
  const { db } = store;

  /**
   * Runs `apply` for each distinct item in order, each in its own transaction holding the tree
   * lock, and records each outcome; an item that fails rolls back alone (spec: bulk move, rules 3
   * and 4). Its failure carries the status and message the single operation would have returned.
   */
  async function eachItem<T>(caller: Caller, what: string, items: ItemRef[], apply: (ref: ItemRef) => Promise<T>) {
    const done: Array<{ ref: ItemRef; result: T }> = [];
    const failed: BulkFailure[] = [];
    for (const ref of distinctItems(items)) {
      try {
        done.push({ ref, result: await apply(ref) });
      } catch (error) {
        if (error instanceof ApiError) {
          failed.push({ ...ref, error: { status: error.status, message: error.detail } });
        } else {
          // The batch goes on: the response must still record what earlier items applied.
          caller.log.error(
            { err: error, item: `${ref.type}:${ref.id}`, committed: done.map((d) => `${d.ref.type}:${d.ref.id}`) },
            `${what}: an item failed with an internal error and was rolled back; the batch went on`,
          );
          failed.push({ ...ref, error: { status: 500, message: `An internal error stopped ${ref.type.toLowerCase()} ${ref.id}; it was not changed.` } });
        }
      }
    }
    return { done, failed };
  }

  /** The moved items as the spec's `Workbook`; never throws, since the moves have committed (committed.ts). */
  async function shapes(caller: Caller, what: string, deploymentId: number, moved: Moved[]): Promise<Workbook[]> {
    const scope = { tenantId: caller.actor.tenantId, deploymentId };
    const known = new Map<number, FolderChain>(moved.flatMap((m) => [...m.chains]));
    const items = moved.map((m) => m.item);
    return renderCommitted(
      caller,
      what,
      items,
      (tolerate) => loadViewContext(db, scope, caller, items, { known, tolerate }),
      // Each item's path as it was read inside its own transaction.
      (item, view, options, index) => toWorkbookShape(item, { ...view, paths: moved[index]!.chains }, options),
    );
  }

  return {
    /** The single-item move: 200 with the item in the spec's `Workbook` shape, or the first failed check. */
    async move(caller: Caller, deploymentId: number, input: MoveInput): Promise<Workbook> {
      const context = await openWorkspace(db, caller, deploymentId);
      const moved = await serialized(store, lockKey.deployment(deploymentId), (trx, trailing) =>
        moveOne(trx, context, input.type, input.id, input.folderId, timestamp(now), trailing),
      );
      return (await shapes(caller, `move in deployment ${deploymentId}`, deploymentId, [moved]))[0]!;
    },

    /** Spec: bulk move, rules 1 to 8. Always a record of what applied, in request order. */
    async bulkMove(caller: Caller, deploymentId: number, input: BulkMoveInput): Promise<{ moved: Workbook[]; failed: BulkFailure[] }> {
      const context = await openWorkspace(db, caller, deploymentId);
      const folderId = input.folderId ?? null;
      const what = `bulk move in deployment ${deploymentId}`;
      // A busy deployment fails an item with 503 and the batch goes on, but the items wait for the
      // lock one timeout in all, not one each.
      const budget = lockWaitBudget(store);
      const { done, failed } = await eachItem(caller, what, input.items, (ref) =>
        serialized(
          store,
          lockKey.deployment(deploymentId),
          (trx, trailing) => moveOne(trx, context, ref.type, ref.id, folderId, timestamp(now), trailing),
          budget,
        ),
      );
      return {
        moved: await shapes(
          caller,
          what,
          deploymentId,
          done.map((d) => d.result),
        ),
        failed,
      };
    },

    /** One folder's content (or search results), folders first, only what the caller may see. */
    async list(caller: Caller, deploymentId: number, input: ListWorkspaceInput) {
      const context = await openWorkspace(db, caller, deploymentId);
      const page = pageRequest(input);
      const query = {
        folderId: input.folderId === undefined || input.folderId === 'root' ? null : Number(input.folderId),
        types: input.types ? ([...new Set(input.types.split(','))].sort() as ItemType[]) : (['FOLDER', 'REPORT', 'WORKBOOK'] as ItemType[]),
        search: input.search,
        sortBy: input.sortBy ?? 'name',
        descending: input.sortOrder === 'desc',
      };
      const listing = JSON.stringify([query.search === undefined ? query.folderId : null, query.search ?? null, query.types, query.sortBy, query.descending]);
      const after = page.after === undefined ? undefined : listingKey(page.after, listing);
      const visibility = await visibilityFor(context);
      const rows = await listEntries(db, store.dialect, context.scope, visibility, { ...query, after, limit: page.first + 1 });
      const pageRows = rows.slice(0, page.first);
      await requireListedFolder(db, context, query.search === undefined ? query.folderId : undefined, pageRows.length === 0);
      const total = await countEntries(db, context.scope, visibility, query);
      const subjects = pageRows.map((r) => ({ type: r.type, id: r.id, folderId: r.folder_id, createdBy: r.created_by }));
      const view = await loadViewContext(db, context.scope, caller, subjects);
      const items: WorkspaceEntry[] = pageRows.map((r, index) => ({
        type: r.type,
        id: r.id,
        deploymentId,
        name: r.name,
        folderId: r.folder_id,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
        createdBy: r.created_by,
        ...placementOf(view, subjects[index]!),
        slug: r.slug,
        publicId: r.public_id,
        kind: r.kind,
      }));
      const keyOf = (r: ListingRow) => encodeCursor([Number(r.grp), r.sort_key, Number(r.type_rank), r.id, listing]);
      const first = pageRows[0];
      const last = pageRows.at(-1);
      const pageInfo = {
        startCursor: first ? keyOf(first) : null,
        endCursor: last ? keyOf(last) : null,
        hasNextPage: rows.length > page.first,
        hasPreviousPage: page.after !== undefined,
      };
      return legacyPage({ items, pageInfo }, total);
    },

    /**
     * Marks or unmarks an item as the caller's favorite (`isFavorite` is per user). Needs VIEW;
     * under the tree lock so a favorite never outlives its item.
     */
    async favorite(caller: Caller, deploymentId: number, ref: ItemRef, on: boolean): Promise<void> {
      const context = await openWorkspace(db, caller, deploymentId);
      await serialized(store, lockKey.deployment(deploymentId), async (trx) => {
        const item = await findItem(trx, context.scope, ref.type, ref.id);
        if (!item) throw itemNotFound(context, ref.type, ref.id);
        const level = await levelOfItem(trx, context, item);
        if (level === null)
          throw new ApiError('FORBIDDEN', `You need VIEW access to ${describeItem(item, level)} to mark it as a favorite; you have no access.`);
        await setFavorite(trx, caller.actor.tenantId, caller.actor.userId, ref.type, ref.id, on, timestamp(now));
      });
    },

    /** Deletes items in order, each in its own transaction, with per-item failures like the bulk move's. */
    async bulkDelete(caller: Caller, deploymentId: number, input: BulkDeleteInput): Promise<{ deleted: ItemRef[]; failed: BulkFailure[] }> {
      const context = await openWorkspace(db, caller, deploymentId);
      const budget = lockWaitBudget(store);
      const { done, failed } = await eachItem(caller, `bulk delete in deployment ${deploymentId}`, input.items, (ref) =>
        serialized(store, lockKey.deployment(deploymentId), (trx) => deleteOne(trx, context, ref.type, ref.id, timestamp(now)), budget),
      );
      return { deleted: done.map((d) => ({ type: d.ref.type, id: d.ref.id })), failed };
    },
  };
}
export type WorkspaceService = ReturnType<typeof workspaceService>;
