import { Type, type Static } from 'typebox';
import { LegacyPageOf } from '../../shared/pagination.js';
import { Id, Nullable, PageQuery, ref, Timestamp } from '../../shared/schemas.js';
import { FolderPathEntrySchema, ItemTypeSchema, ResourceOwnerSchema } from './workspace.schemas.js';

/** One row of a workspace listing: enough to show and pick an item; fetch the item for the rest. */
export const WorkspaceEntrySchema = Type.Object(
  {
    type: ItemTypeSchema,
    id: Id,
    deploymentId: Id,
    name: Type.String(),
    folderId: Nullable(Id),
    folderPath: Type.Array(ref(FolderPathEntrySchema)),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    createdBy: Nullable(Id),
    user: Nullable(ref(ResourceOwnerSchema)),
    isFavorite: Type.Boolean(),
    slug: Nullable(Type.String({ description: 'Workbooks only.' })),
    publicId: Nullable(Type.String({ description: 'Reports only.' })),
    kind: Nullable(Type.String({ description: 'Reports only.' })),
  },
  { $id: 'WorkspaceEntry' },
);
export type WorkspaceEntry = Static<typeof WorkspaceEntrySchema>;

/** The cursor page, plus the deprecated `data`, `count` and `totalCount`. */
export const WorkspacePageSchema = LegacyPageOf('WorkspaceEntry', { id: 'WorkspacePage' });

export const ListWorkspaceQuery = Type.Object(
  {
    ...PageQuery,
    folderId: Type.Optional(
      Type.String({ pattern: '^(root|[1-9][0-9]{0,15})$', description: 'The folder to list; `root` (the default) for the workspace root.' }),
    ),
    types: Type.Optional(
      Type.String({
        pattern: '^(FOLDER|WORKBOOK|REPORT)(,(FOLDER|WORKBOOK|REPORT))*$',
        description: 'Comma-separated item types to include, e.g. `WORKBOOK,REPORT`; all by default.',
      }),
    ),
    search: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: 'Case-insensitive substring of the name, searched across the whole workspace (folderId is ignored).',
      }),
    ),
    sortBy: Type.Optional(Type.Enum(['name', 'createdAt', 'updatedAt'], { default: 'name' })),
    sortOrder: Type.Optional(Type.Enum(['asc', 'desc'], { default: 'asc' })),
  },
  { additionalProperties: false },
);
export type ListWorkspaceInput = Static<typeof ListWorkspaceQuery>;

export const listingSchemas = [WorkspaceEntrySchema, WorkspacePageSchema];
