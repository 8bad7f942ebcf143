import { Type, type Static } from 'typebox';
import { Id, Nullable, ref, Timestamp } from '../../shared/schemas.js';
import { Dashboard, DashboardConfig, DashboardConfigDraft } from './content.schemas.js';

/** The three kinds of workspace item. */
export const ItemTypeSchema = Type.Enum(['FOLDER', 'WORKBOOK', 'REPORT'], { description: 'Kind of workspace item.' });

/** A folder or item name: 1 to 255 characters, not only blanks. */
export const ItemName = Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' });

export const ResourceOwnerSchema = Type.Object(
  { id: Id, email: Type.String(), firstName: Type.Optional(Nullable(Type.String())), picture: Type.Optional(Nullable(Type.String())) },
  { $id: 'ResourceOwner', description: 'The user who created the item.' },
);
export type ResourceOwner = Static<typeof ResourceOwnerSchema>;

export const FolderPathEntrySchema = Type.Object({ id: Id, name: Type.String() }, { $id: 'WorkspaceFolderPathEntry' });

const FolderPath = Type.Array(ref(FolderPathEntrySchema), {
  description: 'The containing folder and its ancestors, from the top-level folder down; empty at the root.',
});

/**
 * The spec's `Workbook`: what a move returns for any item type (`type` tells which). Fields a
 * folder or report does not have are empty objects or null.
 */
export const WorkbookSchema = Type.Object(
  {
    id: Id,
    deploymentId: Id,
    name: Type.String(),
    type: ItemTypeSchema,
    meta: Type.Record(Type.String(), Type.Unknown()),
    calculatedFields: Type.Record(Type.String(), Type.Unknown()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    createdBy: Type.Optional(Id),
    userId: Type.Optional(Nullable(Type.Number())),
    user: Type.Optional(Nullable(ref(ResourceOwnerSchema))),
    folderId: Type.Optional(Nullable(Type.Number({ description: 'Containing folder; null at the root.' }))),
    folderPath: Type.Optional(FolderPath),
    slug: Type.Optional(Nullable(Type.String())),
    isFavorite: Type.Optional(Nullable(Type.Boolean({ description: 'Whether the calling user marked this item as a favorite.' }))),
    dashboardDraft: Type.Optional(Nullable(ref(DashboardConfigDraft))),
    dashboardPublished: Type.Optional(Nullable(ref(DashboardConfig))),
    publishedDashboard: Type.Optional(Nullable(ref(Dashboard))),
  },
  { $id: 'Workbook' },
);
export type Workbook = Static<typeof WorkbookSchema>;

export const FolderSchema = Type.Object(
  {
    id: Id,
    deploymentId: Id,
    name: Type.String(),
    type: Type.Literal('FOLDER'),
    parentId: Nullable(Id),
    folderId: Nullable(Id),
    folderPath: FolderPath,
    createdAt: Timestamp,
    updatedAt: Timestamp,
    createdBy: Nullable(Id),
    user: Nullable(ref(ResourceOwnerSchema)),
    isFavorite: Type.Boolean(),
  },
  { $id: 'Folder', description: 'A folder. `folderId` is the same as `parentId`: the containing folder.' },
);
export type Folder = Static<typeof FolderSchema>;

const ItemRef = Type.Object(
  { type: ItemTypeSchema, id: Id },
  { $id: 'WorkspaceItemRefInput', additionalProperties: false, description: 'A workspace item, by type and id.' },
);

export const FavoriteParams = Type.Object({ deploymentId: Id, itemType: ItemTypeSchema, itemId: Id });

export const DestinationFolder = Nullable(Id);

export const MoveBody = Type.Object(
  {
    type: ItemTypeSchema,
    id: Id,
    folderId: { ...DestinationFolder, description: 'Destination folder; null moves the item to the workspace root.' },
  },
  { additionalProperties: false },
);
export type MoveInput = Static<typeof MoveBody>;

const Items = Type.Array(ref(ItemRef), {
  minItems: 1,
  maxItems: 100,
  description: '1 to 100 items. Repeated references to the same (type, id) are collapsed.',
});

export const BulkMoveBody = Type.Object(
  {
    items: Items,
    folderId: Type.Optional({ ...DestinationFolder, description: 'Destination for the whole batch; null or absent moves to the workspace root.' }),
  },
  { $id: 'BulkMoveWorkspaceObjectsInput', additionalProperties: false },
);
export type BulkMoveInput = Static<typeof BulkMoveBody>;

const BulkActionError = Type.Object(
  { status: Type.Integer(), message: Type.String() },
  { $id: 'BulkActionError', description: 'What the single-item operation would have returned for this item.' },
);

const BulkFailure = Type.Object({ type: ItemTypeSchema, id: Id, error: ref(BulkActionError) }, { $id: 'WorkspaceBulkFailure' });
export type BulkFailure = Static<typeof BulkFailure>;

export const BulkMoveResponse = Type.Object(
  {
    moved: Type.Array(ref(WorkbookSchema), { description: 'Items moved, each as the single move returns it, in request order.' }),
    failed: Type.Array(ref(BulkFailure), { description: 'Items not moved, each with its own error. Empty when the whole batch applied.' }),
  },
  { $id: 'BulkMoveWorkspaceObjectsResponse' },
);

export const BulkDeleteBody = Type.Object({ items: Items }, { $id: 'BulkDeleteWorkspaceObjectsInput', additionalProperties: false });
export type BulkDeleteInput = Static<typeof BulkDeleteBody>;

export const BulkDeleteResponse = Type.Object(
  {
    deleted: Type.Array(Type.Object({ type: ItemTypeSchema, id: Id }), { description: 'Items deleted, in request order.' }),
    failed: Type.Array(ref(BulkFailure)),
  },
  { $id: 'BulkDeleteWorkspaceObjectsResponse' },
);

export const workspaceSchemas = [
  ResourceOwnerSchema,
  FolderPathEntrySchema,
  WorkbookSchema,
  FolderSchema,
  ItemRef,
  BulkMoveBody,
  BulkActionError,
  BulkFailure,
  BulkMoveResponse,
  BulkDeleteBody,
  BulkDeleteResponse,
];
