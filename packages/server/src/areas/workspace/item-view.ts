import type { Caller } from '../../access/caller.js';
import type { Executor, ItemType } from '../../db/tables.js';
import { normalizeDashboard, normalizeDashboardConfig } from './content.schemas.js';
import { containerOf, favoritesOf, ownersById, type StoredItem } from './items.store.js';
import { type FolderChain, type PathEntry, type WorkspaceScope } from './tree.store.js';
import type { Folder, ResourceOwner, Workbook } from './workspace.schemas.js';

/**
 * What turning stored items into API shapes needs beyond their rows: folder paths, owners and the
 * caller's favorites, each loaded for a whole page in one query rather than one per item.
 */
export interface ItemViewContext {
  paths: Map<number, FolderChain>;
  owners: Map<number, ResourceOwner>;
  favorites: Set<string>;
}

/** Reports a failure that left part of a view out; the view goes on without it. */
export type Tolerate = (error: unknown) => void;

/** What the view context needs to know of an item. */
export interface ViewSubject {
  type: ItemType;
  id: number;
  folderId: number | null;
  createdBy: number | null;
}

export function subjectOf(item: StoredItem): ViewSubject {
  return { type: item.type, id: item.row.id, folderId: containerOf(item), createdBy: item.row.created_by };
}

export interface ViewOptions {
  /** Chains already read (by a write in its own transaction, or with the item itself). */
  known?: Map<number, FolderChain>;
  /** The caller's favorites among the items, when already read with them. */
  favorites?: Set<string>;
  /** A read that fails leaves its part empty and is reported here instead of thrown (committed.ts). */
  tolerate?: Tolerate;
}

/**
 * Owners come from the tenant's cache (cache/tenant-cache.ts): users are among what bumps its
 * version, and a page shows the same few owners again and again.
 */
export async function loadViewContext(
  db: Executor,
  scope: WorkspaceScope,
  caller: Caller,
  items: Array<StoredItem | ViewSubject>,
  { known = new Map(), favorites: knownFavorites, tolerate }: ViewOptions = {},
): Promise<ItemViewContext> {
  const userId = caller.actor.userId;
  const read = async <T>(query: () => Promise<T>, empty: T): Promise<T> => {
    if (!tolerate) return query();
    try {
      return await query();
    } catch (error) {
      tolerate(error);
      return empty;
    }
  };
  const subjects = items.map((i) => ('row' in i ? subjectOf(i) : i));
  const missing = subjects.map((i) => i.folderId).filter((id): id is number => id !== null && !known.has(id));
  // From the deployment's folder tree in memory when it is valid (areas/workspace/folder-trees.ts), else from SQL.
  const paths = new Map([...known, ...(await read(() => caller.folderTrees.chains(db, scope, missing), new Map<number, FolderChain>()))]);
  const ownerIds = [...new Set(subjects.map((i) => i.createdBy).filter((id): id is number => id !== null))];
  const ownerRows = await read(
    () =>
      caller.snapshot.memoMany(
        ownerIds.map((id) => `owner:${id}`),
        async (missing) => {
          const rows = await ownersById(
            db,
            scope.tenantId,
            missing.map((key) => Number(key.slice('owner:'.length))),
          );
          return new Map([...rows].map(([id, r]) => [`owner:${id}`, r]));
        },
      ),
    new Map(),
  );
  const owners = new Map<number, ResourceOwner>();
  for (const r of ownerRows.values()) if (r) owners.set(r.id, { id: r.id, email: r.email, firstName: r.first_name, picture: null });
  const favorites = knownFavorites ?? (await read(() => favoritesOf(db, scope.tenantId, userId, subjects), new Set<string>()));
  return { paths, owners, favorites };
}

export function pathOf(paths: Map<number, FolderChain>, folderId: number | null): PathEntry[] {
  if (folderId === null) return [];
  return (paths.get(folderId)?.entries ?? []).map(({ id, name }) => ({ id, name }));
}

/** Where an item sits, who owns it and whether the caller marked it: the part every item view and listing returns. */
export interface Placement {
  folderPath: PathEntry[];
  user: ResourceOwner | null;
  isFavorite: boolean;
}

export function placementOf(context: ItemViewContext, subject: ViewSubject): Placement {
  return {
    folderPath: pathOf(context.paths, subject.folderId),
    user: subject.createdBy === null ? null : (context.owners.get(subject.createdBy) ?? null),
    isFavorite: context.favorites.has(favoriteKey(subject.type, subject.id)),
  };
}

/**
 * What a view knows without reading anything more: the folder paths it was given (those a write
 * read in its own transaction), no owners, no favorites. See committed.ts.
 */
export function bareViewContext(paths: Map<number, FolderChain> = new Map()): ItemViewContext {
  return { paths, owners: new Map(), favorites: new Set() };
}

export function parseJson(text: string | null): unknown {
  return text === null ? null : (JSON.parse(text) as unknown);
}

function parseObject(text: string | null): Record<string, unknown> {
  const value = parseJson(text);
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function favoriteKey(type: ItemType, id: number): string {
  return `${type}:${id}`;
}

/**
 * The spec's `Workbook` shape, which a move returns for every item type. Without `content`, the
 * stored JSON (meta, calculated fields, dashboards) is left out as empty: the form a committed
 * write answers with when reading it failed (committed.ts).
 */
export function toWorkbookShape(item: StoredItem, context: ItemViewContext, { content = true } = {}): Workbook {
  const { row } = item;
  const folderId = containerOf(item);
  const { folderPath, user, isFavorite } = placementOf(context, subjectOf(item));
  const shape: Workbook = {
    id: row.id,
    deploymentId: row.deployment_id,
    name: row.name,
    type: item.type,
    meta: {},
    calculatedFields: {},
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    userId: row.created_by,
    user,
    folderId,
    folderPath,
    slug: item.type === 'WORKBOOK' ? item.row.slug : null,
    isFavorite,
    dashboardDraft: null,
    dashboardPublished: null,
    publishedDashboard: null,
  };
  if (row.created_by !== null) shape.createdBy = row.created_by;
  if (!content) return shape;
  if (item.type === 'WORKBOOK') {
    const w = item.row;
    shape.meta = parseObject(w.meta);
    shape.calculatedFields = parseObject(w.calculated_fields);
    // Stored configs may predate the current widget types; they are converted as they are read.
    shape.dashboardDraft = normalizeDashboardConfig(parseJson(w.dashboard_draft));
    shape.dashboardPublished = normalizeDashboardConfig(parseJson(w.dashboard_published));
    shape.publishedDashboard = normalizeDashboard(parseJson(w.published_dashboard));
  } else if (item.type === 'REPORT') {
    shape.meta = parseObject(item.row.meta);
  }
  return shape;
}

export function toFolder(item: StoredItem & { type: 'FOLDER' }, context: ItemViewContext): Folder {
  const { row } = item;
  return {
    id: row.id,
    deploymentId: row.deployment_id,
    name: row.name,
    type: 'FOLDER',
    parentId: row.parent_id,
    folderId: row.parent_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    createdBy: row.created_by,
    ...placementOf(context, subjectOf(item)),
  };
}
