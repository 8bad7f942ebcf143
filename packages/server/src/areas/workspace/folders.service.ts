import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import { mapUniqueViolation } from '../../db/errors.js';
import type { Executor } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { afterId, legacyPage, pageRequest, toPage } from '../../shared/pagination.js';
import { ApiError } from '../../shared/problems.js';
import { timestamp, type Clock } from '../../time.js';
import { loadViewContext, toFolder, type Tolerate } from './item-view.js';
import { renderCommitted } from './committed.js';
import type { StoredItem } from './items.store.js';
import type { CreateFolderInput, ListFoldersInput, UpdateFolderInput } from './folders.schemas.js';
import { deleteOne } from './remove.js';
import {
  chainsOf,
  countFolders,
  findFolder,
  folderAndAncestors,
  insertFolder,
  listFolders,
  MAX_FOLDER_DEPTH,
  renameFolder,
  siblingNamed,
  type FolderChain,
  type WorkspaceScope,
} from './tree.store.js';
import { visibilityFor, visibleRows } from './visibility.js';
import {
  atLeast,
  haveText,
  itemNotFound,
  itemTarget,
  levelOn,
  openWorkspace,
  placeTarget,
  readAuthorized,
  requireItemAccess,
  requireLevel,
  requireListedFolder,
  viewOptionsOf,
  type WorkspaceContext,
} from './workspace-context.js';
import type { Folder } from './workspace.schemas.js';

type FolderItem = StoredItem & { type: 'FOLDER' };

function nameTaken(name: string, parentId: number | null): ApiError {
  const where = parentId === null ? 'at the workspace root' : `in folder ${parentId}`;
  return new ApiError('FOLDER_NAME_TAKEN', `A folder named "${name}" already exists ${where}; folder names are unique within their parent.`);
}

/**
 * Creating content needs a role above VIEWER and EDIT where it lands: the folder, or the
 * deployment at the root. Shared by folders, workbooks and reports.
 */
export async function requirePlacement(trx: Executor, context: WorkspaceContext, folderId: number | null, what: string): Promise<void> {
  if (context.caller.actor.role === 'VIEWER') throw new ApiError('FORBIDDEN', `Viewers cannot create ${what}s; ask an admin for the EXPLORER role.`);
  const chains = await chainsOf(trx, context.scope, folderId === null ? [] : [folderId]);
  if (folderId !== null && !chains.has(folderId)) throw itemNotFound(context, 'FOLDER', folderId);
  const level = levelOn(context, placeTarget(context, folderId, chains));
  if (!atLeast(level, 'EDIT')) {
    const where = folderId === null ? `deployment ${context.scope.deploymentId} (the workspace root)` : `folder ${folderId}`;
    throw new ApiError('FORBIDDEN', `You need EDIT access on ${where} to create a ${what} there; you have ${haveText(level)}.`);
  }
}

export function foldersService(store: Store, now: Clock) {
  const { db } = store;

  async function view(caller: Caller, scope: WorkspaceScope, rows: FolderItem[]): Promise<Folder[]> {
    const context = await loadViewContext(db, scope, caller, rows);
    return rows.map((item) => toFolder(item, context));
  }

  /** The folder a create or rename committed; never throws (committed.ts). */
  async function committed(caller: Caller, what: string, scope: WorkspaceScope, item: FolderItem): Promise<Folder> {
    const load = (tolerate: Tolerate) => loadViewContext(db, scope, caller, [item], { tolerate });
    const [folder] = await renderCommitted(caller, what, [item], load, (_, context) => toFolder(item, context));
    return folder!;
  }

  /** The folder (404), with the caller's access to it checked against `need` (403). */
  async function authorized(context: WorkspaceContext, trx: Executor, folderId: number, need: 'VIEW' | 'EDIT'): Promise<FolderItem> {
    const row = await findFolder(trx, context.scope, folderId);
    if (!row) throw itemNotFound(context, 'FOLDER', folderId);
    const item: FolderItem = { type: 'FOLDER', row };
    await requireItemAccess(trx, context, item, need, need === 'VIEW' ? 'view' : 'rename');
    return item;
  }

  return {
    async create(caller: Caller, deploymentId: number, input: CreateFolderInput): Promise<Folder> {
      const context = await openWorkspace(db, caller, deploymentId);
      const parentId = input.parentId ?? null;
      const row = await serialized(store, lockKey.deployment(deploymentId), async (trx) => {
        await requirePlacement(trx, context, parentId, 'folder');
        const depth = parentId === null ? 0 : ((await chainsOf(trx, context.scope, [parentId])).get(parentId)?.entries.length ?? 0);
        if (depth + 1 > MAX_FOLDER_DEPTH) {
          throw new ApiError('FOLDER_TOO_DEEP', `Folder ${parentId} is ${depth} levels deep; folders nest at most ${MAX_FOLDER_DEPTH} levels.`);
        }
        if (await siblingNamed(trx, context.scope, parentId, input.name)) throw nameTaken(input.name, parentId);
        const at = timestamp(now);
        return mapUniqueViolation({ folders_sibling_name: () => nameTaken(input.name, parentId) }, () =>
          insertFolder(trx, {
            tenant_id: caller.actor.tenantId,
            deployment_id: deploymentId,
            parent_id: parentId,
            name: input.name,
            created_by: caller.actor.userId,
            created_at: at,
            updated_at: at,
          }),
        );
      });
      return committed(caller, `folder create in deployment ${deploymentId}`, context.scope, { type: 'FOLDER', row });
    },

    async get(caller: Caller, deploymentId: number, folderId: number): Promise<Folder> {
      const context = await openWorkspace(db, caller, deploymentId);
      const read = await readAuthorized(db, store.dialect, context, 'FOLDER', folderId, 'VIEW', 'view');
      const item = read.item as FolderItem;
      return toFolder(item, await loadViewContext(db, context.scope, caller, [item], viewOptionsOf(read)));
    },

    /**
     * The folder's path as folders: from the top-level folder down to the folder itself, the path
     * an item in it names in `folderPath`. One recursive query reads every row; access is then
     * checked in memory. The folder needs VIEW as GET does (404 elsewhere, 403 without); a folder
     * above it the caller may not view is left out (its id and name stay in `folderPath`).
     */
    async ancestors(caller: Caller, deploymentId: number, folderId: number): Promise<Folder[]> {
      const context = await openWorkspace(db, caller, deploymentId);
      const rows = await folderAndAncestors(db, context.scope, folderId);
      if (rows.length === 0 || Number(rows.at(-1)!.id) !== folderId) throw itemNotFound(context, 'FOLDER', folderId);
      // A folder's chain is the path down to it: the one walk gives every folder's chain.
      const chains = new Map<number, FolderChain>();
      rows.forEach((row, i) => chains.set(row.id, { entries: rows.slice(0, i + 1).map((r) => ({ id: r.id, name: r.name, createdBy: r.created_by })) }));
      const items = rows.map((row): FolderItem => ({ type: 'FOLDER', row }));
      const levels = items.map((item) => levelOn(context, itemTarget(context, item, chains)));
      requireLevel(items.at(-1)!, levels.at(-1)!, 'VIEW', 'view');
      const visible = items.filter((_, i) => atLeast(levels[i]!, 'VIEW'));
      const viewContext = await loadViewContext(db, context.scope, caller, visible, { known: chains });
      return visible.map((item) => toFolder(item, viewContext));
    },

    async rename(caller: Caller, deploymentId: number, folderId: number, input: UpdateFolderInput): Promise<Folder> {
      const context = await openWorkspace(db, caller, deploymentId);
      const row = await serialized(store, lockKey.deployment(deploymentId), async (trx) => {
        const item = await authorized(context, trx, folderId, 'EDIT');
        if (item.row.name === input.name) return item.row;
        if (await siblingNamed(trx, context.scope, item.row.parent_id, input.name, folderId)) throw nameTaken(input.name, item.row.parent_id);
        return (await renameFolder(trx, context.scope, folderId, input.name, timestamp(now)))!;
      });
      return committed(caller, `folder rename in deployment ${deploymentId}`, context.scope, { type: 'FOLDER', row });
    },

    /** DESIGN.md, "Deleting folders": refused with subfolders; workbooks and reports go to the root. */
    async remove(caller: Caller, deploymentId: number, folderId: number): Promise<void> {
      const context = await openWorkspace(db, caller, deploymentId);
      await serialized(store, lockKey.deployment(deploymentId), (trx) => deleteOne(trx, context, 'FOLDER', folderId, timestamp(now)));
    },

    /** The folders the caller may see, by id, optionally only those directly in one folder. */
    async list(caller: Caller, deploymentId: number, input: ListFoldersInput) {
      const context = await openWorkspace(db, caller, deploymentId);
      const page = pageRequest(input);
      const parentId = input.parentId === undefined ? undefined : input.parentId === 'root' ? null : Number(input.parentId);
      const filter = { parentId, visible: visibleRows(await visibilityFor(context), 'folders') };
      const rows = await listFolders(db, context.scope, { ...filter, afterId: afterId(page), limit: page.first + 1 });
      const { items: pageRows, pageInfo } = toPage(rows, page, (r) => [r.id]);
      await requireListedFolder(db, context, parentId, pageRows.length === 0);
      const total = await countFolders(db, context.scope, filter);
      const items = await view(
        caller,
        context.scope,
        pageRows.map((row) => ({ type: 'FOLDER', row })),
      );
      return legacyPage({ items, pageInfo }, total);
    },
  };
}
export type FoldersService = ReturnType<typeof foldersService>;
