import { Type, type Static } from 'typebox';
import { DeploymentParams, Id, Nullable, NullablePageQuery, PageOf } from '../../shared/schemas.js';
import { EmbedTenantParams } from './embed-tenants.schemas.js';

/** Reference 3.4, 3.5, 4.14: embed access to workbooks (and, as an extension, folders). */

const Action = Type.Enum(['read', 'none']);

const AllEmbedUsersAccess = Type.Object({
  enabled: Type.Boolean({ description: 'Whether the item itself is shared with every embed user.' }),
  action: Action,
  groupId: Nullable(Type.Integer({ description: "The account's all-embed-users group; null until something was first shared with it." })),
});
const TenantAccess = Type.Object({ embedTenantName: Type.String(), groupId: Id, action: Action });

export const EmbedAccessResponseSchema = Type.Object(
  {
    allowEmbed: Type.Boolean({ description: "The signed-embedding switch of the workbook's published dashboard (false when none is published)." }),
    allEmbedUsers: AllEmbedUsersAccess,
    tenants: Type.Array(TenantAccess, { description: 'The embed tenants the workbook itself is shared with, by name.' }),
  },
  { $id: 'EmbedAccessResponse' },
);
export type EmbedAccessResponse = Static<typeof EmbedAccessResponseSchema>;

export const FolderEmbedAccessSchema = Type.Object(
  { allEmbedUsers: AllEmbedUsersAccess, tenants: Type.Array(TenantAccess) },
  { $id: 'FolderEmbedAccess', description: 'Extension: embed access of a folder, inherited by everything below it.' },
);
export type FolderEmbedAccess = Static<typeof FolderEmbedAccessSchema>;

const Target = {
  embedTenantName: Type.Optional(
    Nullable(Type.String({ minLength: 1, maxLength: 64, description: 'The embed tenant to share with or unshare from (lowercased).' })),
  ),
  allEmbedUsers: Type.Optional(Nullable(Type.Boolean({ description: 'true: the target is every embed user.' }))),
  action: Type.Optional(Nullable(Type.Enum(['read', 'none'], { description: '`read` shares, `none` removes the share.' }))),
};

export const UpdateEmbedAccessBody = Type.Object(
  { ...Target, allowEmbed: Type.Optional(Nullable(Type.Boolean({ description: "The published dashboard's signed-embedding switch." }))) },
  { additionalProperties: false },
);
export type UpdateEmbedAccessInput = Static<typeof UpdateEmbedAccessBody>;

export const UpdateFolderEmbedAccessBody = Type.Object({ ...Target }, { additionalProperties: false });
export type UpdateFolderEmbedAccessInput = Static<typeof UpdateFolderEmbedAccessBody>;

export const WorkbookEmbedAccessParams = Type.Object({ ...DeploymentParams.properties, workbookId: Id });
export const FolderEmbedAccessParams = Type.Object({ ...DeploymentParams.properties, folderId: Id });
export const TenantWorkbooksParams = Type.Object({ ...DeploymentParams.properties, ...EmbedTenantParams.properties });

export const TenantWorkbooksQuery = Type.Object(
  {
    accessSource: Type.Optional(Nullable(Type.Enum(['tenant', 'allEmbedUsers', 'folder'], { description: 'How access was granted; left out: any.' }))),
    ...NullablePageQuery,
  },
  { additionalProperties: false },
);
export type TenantWorkbooksInput = Static<typeof TenantWorkbooksQuery>;

export const EmbedTenantWorkbookPageSchema = { ...PageOf('Workbook'), $id: 'EmbedTenantWorkbookPage' };

export const embedAccessSchemas = [EmbedAccessResponseSchema, FolderEmbedAccessSchema, EmbedTenantWorkbookPageSchema];
