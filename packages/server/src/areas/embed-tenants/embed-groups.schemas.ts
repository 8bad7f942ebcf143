import { Type, type Static } from 'typebox';
import { Id, Nullable, PageOf } from '../../shared/schemas.js';
import { EmbedTenantParams } from './embed-tenants.schemas.js';

/** Reference 4.6-4.13: an embed tenant's own groups (UserGroupDTO) and their members. */

export const EmbedGroupSchema = Type.Object(
  {
    id: Id,
    name: Type.String(),
    description: Nullable(Type.String()),
    userCount: Nullable(Type.Integer({ minimum: 0 })),
  },
  { $id: 'UserGroupDTO' },
);
export type EmbedGroup = Static<typeof EmbedGroupSchema>;

export const EmbedGroupPageSchema = PageOf('UserGroupDTO');

const Description = Nullable(Type.String({ maxLength: 500 }));

export const CreateEmbedGroupBody = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'Unique in the embed tenant, ignoring case; may not start with `system:`. Fixed once made.',
    }),
    description: Type.Optional(Description),
  },
  { additionalProperties: false },
);
export type CreateEmbedGroupInput = Static<typeof CreateEmbedGroupBody>;

export const UpdateEmbedGroupBody = Type.Object(
  { description: Type.Optional(Nullable(Type.String({ maxLength: 500, description: 'Left out: unchanged; an empty string or null clears it.' }))) },
  { additionalProperties: false },
);
export type UpdateEmbedGroupInput = Static<typeof UpdateEmbedGroupBody>;

export const EmbedGroupParams = Type.Object({ ...EmbedTenantParams.properties, id: Id });

const MemberInput = Type.Object(
  {
    externalId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
    embedUserId: Type.Optional(Nullable(Id)),
  },
  { additionalProperties: false, description: 'Exactly one of `externalId` and `embedUserId`.' },
);
export type EmbedGroupMemberInput = Static<typeof MemberInput>;

export const EmbedGroupMembersBody = Type.Object({ members: Type.Array(MemberInput, { minItems: 1, maxItems: 1000 }) }, { additionalProperties: false });
export type EmbedGroupMembersInput = Static<typeof EmbedGroupMembersBody>;

export const AddEmbedGroupMembersResponseSchema = Type.Object(
  {
    addedMembers: Type.Array(Type.Ref('EmbedUser'), { description: 'Members that were not in the group.' }),
    unchangedMembers: Type.Array(Type.Ref('EmbedUser'), { description: 'Members that already were.' }),
  },
  { $id: 'AddEmbedGroupMembersResponse' },
);

export const embedGroupSchemas = [EmbedGroupSchema, EmbedGroupPageSchema, AddEmbedGroupMembersResponseSchema];
