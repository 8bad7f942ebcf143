import type { Caller } from '../../access/caller.js';
import { atLeast, effectiveAccess, type AccessTarget, type GrantIndex, type ResourceRef } from '../../access/levels.js';
import type { Access, Db, DeploymentRow, Executor, ItemType } from '../../db/tables.js';
import { ApiError, notFound } from '../../shared/problems.js';
import { findDeployment } from '../deployments/index.js';
import type { Dialect } from '../../db/dialect.js';
import { walk } from './folder-trees.js';
import { readItem, type ItemRead } from './item-read.store.js';
import { favoriteKey, type ViewOptions } from './item-view.js';
import { containerOf, type StoredItem } from './items.store.js';
import { chainsOf, findFolder, type FolderChain, type WorkspaceScope } from './tree.store.js';

/** One request's view of a deployment's workspace: where it is, and who is asking. */
export interface WorkspaceContext {
  scope: WorkspaceScope;
  deployment: DeploymentRow;
  caller: Caller;
  /** The caller's grants, loaded once: every access check of the request is then evaluated in memory. */
  grants: GrantIndex;
}

/**
 * 404 when the deployment is not the caller's tenant's. The caller's grants are loaded here,
 * before any transaction opens: SQLite has one connection, which a transaction holds, and every
 * access check after this is evaluated in memory.
 */
export async function openWorkspace(db: Db, caller: Caller, deploymentId: number): Promise<WorkspaceContext> {
  // Cached with the caller's key and grants: a deployment changes as rarely and bumps the same version.
  const deployment = await caller.snapshot.memo(`deployment:${deploymentId}`, () => findDeployment(db, caller.actor.tenantId, deploymentId));
  if (!deployment) throw notFound('DEPLOYMENT_NOT_FOUND', 'Deployment', deploymentId);
  const grants = await caller.access.grants();
  return { scope: { tenantId: caller.actor.tenantId, deploymentId }, deployment, caller, grants };
}

const LABEL: Record<ItemType, string> = { FOLDER: 'folder', WORKBOOK: 'workbook', REPORT: 'report' };
const TITLE: Record<ItemType, string> = { FOLDER: 'Folder', WORKBOOK: 'Workbook', REPORT: 'Report' };
const NOT_FOUND = { FOLDER: 'FOLDER_NOT_FOUND', WORKBOOK: 'WORKBOOK_NOT_FOUND', REPORT: 'REPORT_NOT_FOUND' } as const;

export function itemNotFound(context: WorkspaceContext, type: ItemType, id: number): ApiError {
  return new ApiError(NOT_FOUND[type], `${TITLE[type]} ${id} does not exist in deployment ${context.scope.deploymentId}.`);
}

/**
 * A list of one folder's contents (`folderId`, `parentId`) is 404 FOLDER_NOT_FOUND when the folder
 * does not exist in this deployment, never an empty page. Only an empty page needs the lookup:
 * a row listed in the folder proves it exists. A folder the caller may not see is listed like any
 * other, with only what they may see inside it (items granted to them): the item routes reveal
 * its existence as well (403, not 404), and the folderPath of an item granted inside it names it.
 */
export async function requireListedFolder(db: Executor, context: WorkspaceContext, folderId: number | null | undefined, listedNothing: boolean): Promise<void> {
  if (folderId === null || folderId === undefined || !listedNothing) return;
  if (!(await findFolder(db, context.scope, folderId))) throw itemNotFound(context, 'FOLDER', folderId);
}

/** Names an item in a message; its name only for a caller who may see it. */
export function describeItem(item: StoredItem, level: Access | null): string {
  const label = `${LABEL[item.type]} ${item.row.id}`;
  return level === null ? label : `${label} "${item.row.name}"`;
}

/** The folders above `folderId`, nearest first, as access-check references. */
function ancestry(folderId: number | null, chains: Map<number, FolderChain>): ResourceRef[] {
  if (folderId === null) return [];
  const entries = chains.get(folderId)?.entries ?? [];
  return entries.map((e) => ({ type: 'FOLDER' as const, id: e.id })).reverse();
}

/** What an access check on `item` looks at: the item, then the folders above it. */
export function itemTarget(context: WorkspaceContext, item: StoredItem, chains: Map<number, FolderChain>): AccessTarget {
  return {
    deploymentId: context.scope.deploymentId,
    chain: [{ type: item.type, id: item.row.id }, ...ancestry(containerOf(item), chains)],
    createdBy: item.row.created_by,
    deploymentCreatedBy: context.deployment.created_by,
  };
}

/** What placing something into `folderId` is checked on: that folder, or the deployment at the root. */
export function placeTarget(context: WorkspaceContext, folderId: number | null, chains: Map<number, FolderChain>): AccessTarget {
  if (folderId === null) return { deploymentId: context.scope.deploymentId, chain: [], createdBy: context.deployment.created_by };
  const own = chains.get(folderId)?.entries.at(-1);
  return {
    deploymentId: context.scope.deploymentId,
    chain: ancestry(folderId, chains),
    createdBy: own?.createdBy ?? null,
    deploymentCreatedBy: context.deployment.created_by,
  };
}

/** The caller's access to `target`, without a query (see `grants`). */
export function levelOn(context: WorkspaceContext, target: AccessTarget): Access | null {
  return effectiveAccess(context.caller.access.subject, context.grants, target);
}

export function haveText(level: Access | null): string {
  return level === null ? 'no access' : `${level} access`;
}

export { atLeast };

/** The caller's access to `item`, from one walk up its folders (read in the caller's transaction). */
export async function levelOfItem(trx: Executor, context: WorkspaceContext, item: StoredItem): Promise<Access | null> {
  const from = containerOf(item);
  const chains = await chainsOf(trx, context.scope, from === null ? [] : [from]);
  return levelOn(context, itemTarget(context, item, chains));
}

/**
 * The item a GET returns (404), with the caller's access checked against `need` (403; `action` is
 * the verb of the message). One statement reads the item, its folders and the caller's favorite
 * mark; the access check and the view both use what it read.
 */
export async function readAuthorized(
  db: Executor,
  dialect: Dialect,
  context: WorkspaceContext,
  type: ItemType,
  id: number,
  need: Access,
  action: string,
): Promise<ItemRead> {
  const trees = context.caller.folderTrees;
  const tree = trees.held(db, context.scope);
  const read = await readItem(db, dialect, context.scope, type, id, context.caller.actor.userId, tree?.version ?? -1);
  if (!read) throw itemNotFound(context, type, id);
  // At the held tree's version the statement skipped its walk: the tree gives the chain.
  const from = containerOf(read.item);
  if (tree && read.treeVersion === tree.version) read.chains = from === null ? new Map() : walk(tree, [from]);
  else trees.sawVersion(db, context.scope, read.treeVersion);
  requireLevel(read.item, levelOn(context, itemTarget(context, read.item, read.chains)), need, action);
  return read;
}

/** What the view of an item read by `readAuthorized` needs no further query for. */
export function viewOptionsOf(read: ItemRead): ViewOptions {
  return { known: read.chains, favorites: new Set(read.favorite ? [favoriteKey(read.item.type, read.item.row.id)] : []) };
}

/**
 * 403 unless the caller's access to `item` reaches `need`; `action` is the verb of the message
 * ("view", "delete"). Returns the caller's level, for messages that follow.
 */
export async function requireItemAccess(trx: Executor, context: WorkspaceContext, item: StoredItem, need: Access, action: string): Promise<Access> {
  return requireLevel(item, await levelOfItem(trx, context, item), need, action);
}

/** 403 naming what was needed and what the caller has, unless `level` reaches `need`. */
export function requireLevel(item: StoredItem, level: Access | null, need: Access, action: string): Access {
  if (!atLeast(level, need)) {
    throw new ApiError('FORBIDDEN', `You need ${need} access to ${action} ${describeItem(item, level)}; you have ${haveText(level)}.`);
  }
  return level as Access;
}
