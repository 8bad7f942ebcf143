import { Type, type Static } from 'typebox';
import { LegacyPageOf } from '../../shared/pagination.js';
import { DeploymentParams, Id, Nullable, PageQuery } from '../../shared/schemas.js';
import { ItemName } from './workspace.schemas.js';

export const CreateFolderBody = Type.Object(
  { name: ItemName, parentId: Type.Optional({ ...Nullable(Id), description: 'Parent folder; null or absent for a top-level folder.' }) },
  { additionalProperties: false },
);
export type CreateFolderInput = Static<typeof CreateFolderBody>;

export const UpdateFolderBody = Type.Object(
  { name: ItemName },
  { additionalProperties: false, description: 'Rename only; moving is the move endpoints’ job.' },
);
export type UpdateFolderInput = Static<typeof UpdateFolderBody>;

export const FolderParams = Type.Object({ ...DeploymentParams.properties, folderId: Id });

export const ListFoldersQuery = Type.Object(
  {
    ...PageQuery,
    parentId: Type.Optional(
      Type.String({ pattern: '^(root|[1-9][0-9]{0,15})$', description: 'Only the folders directly in this folder; `root` for top-level folders.' }),
    ),
  },
  { additionalProperties: false },
);
export type ListFoldersInput = Static<typeof ListFoldersQuery>;

/** The cursor page, plus the deprecated `data`, `count` and `totalCount` (spec: Other operations). */
export const FolderPageSchema = LegacyPageOf('Folder');

export const folderSchemas = [FolderPageSchema];
