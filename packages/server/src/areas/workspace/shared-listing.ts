import { sql } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Executor, ItemType } from '../../db/tables.js';
import { encodeCursor } from '../../shared/pagination.js';
import type { PageInfo } from '../../shared/schemas.js';
import { ApiError } from '../../shared/problems.js';
import { pathOf } from './item-view.js';
import type { WorkspaceEntry } from './listing.schemas.js';
import { listEntries, type ListingRow, type SortBy } from './listing.store.js';
import { chainsOf, type WorkspaceScope } from './tree.store.js';
import { visibleRows, type Visibility } from './visibility.js';
import { listingKey } from './workspace.service.js';

export interface AnonymousListingInput {
  /** null: the root. Ignored when searching. */
  folderId: number | null;
  types: ItemType[];
  search: string | undefined;
  sortBy: SortBy;
  descending: boolean;
  first: number;
  after: string | undefined;
}

/**
 * A workspace listing for a caller who is nobody's user (an embed session's shared workspace,
 * reference 8.F): the rows `visibility` lets through (its `rows`), ordered and paged as the
 * workspace list is, with owners blanked and no favorites. A folder that is not visible is 404.
 */
export async function listAnonymously(
  db: Executor,
  dialect: Dialect,
  scope: WorkspaceScope,
  visibility: Visibility,
  input: AnonymousListingInput,
): Promise<{ items: WorkspaceEntry[]; pageInfo: PageInfo }> {
  const folderId = input.search === undefined ? input.folderId : null;
  if (input.search === undefined && folderId !== null) {
    const visible = await sql<{ id: number }>`select folders.id from folders
      where folders.tenant_id = ${scope.tenantId} and folders.deployment_id = ${scope.deploymentId} and folders.id = ${folderId}
        and ${visibleRows(visibility, 'folders')}`.execute(db);
    if (visible.rows.length === 0)
      throw new ApiError('FOLDER_NOT_FOUND', `No folder ${folderId} in deployment ${scope.deploymentId} is shared with this embed session.`);
  }
  const listing = JSON.stringify(['shared', folderId, input.search ?? null, input.types, input.sortBy, input.descending]);
  const after = input.after === undefined ? undefined : listingKey(input.after, listing);
  const rows = await listEntries(db, dialect, scope, visibility, {
    folderId: input.folderId,
    types: input.types,
    search: input.search,
    sortBy: input.sortBy,
    descending: input.descending,
    after,
    limit: input.first + 1,
  });
  const pageRows = rows.slice(0, input.first);
  const chains = await chainsOf(
    db,
    scope,
    pageRows.flatMap((r) => (r.folder_id === null ? [] : [r.folder_id])),
  );
  const items: WorkspaceEntry[] = pageRows.map((r) => ({
    type: r.type,
    id: r.id,
    deploymentId: scope.deploymentId,
    name: r.name,
    folderId: r.folder_id,
    folderPath: pathOf(chains, r.folder_id),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    // The list is the same for every embed user of the tenant: whose an item is stays unsaid.
    createdBy: null,
    user: null,
    isFavorite: false,
    slug: r.slug,
    publicId: r.public_id,
    kind: r.kind,
  }));
  const keyOf = (r: ListingRow) => encodeCursor([Number(r.grp), r.sort_key, Number(r.type_rank), r.id, listing]);
  const first = pageRows[0];
  const last = pageRows.at(-1);
  return {
    items,
    pageInfo: {
      startCursor: first ? keyOf(first) : null,
      endCursor: last ? keyOf(last) : null,
      hasNextPage: rows.length > input.first,
      hasPreviousPage: input.after !== undefined,
    },
  };
}
