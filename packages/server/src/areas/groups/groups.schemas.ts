import { Type, type Static } from 'typebox';
import { Id, Nullable, PageOf, PageQuery, Timestamp } from '../../shared/schemas.js';

const Name = Type.String({ minLength: 1, maxLength: 255, description: 'Unique in the tenant, ignoring case.' });
const Description = Nullable(Type.String({ maxLength: 2000 }));

export const GroupSchema = Type.Object(
  {
    id: Id,
    name: Type.String(),
    description: Description,
    memberCount: Type.Integer({ minimum: 0 }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Group' },
);
export type Group = Static<typeof GroupSchema>;

const GroupMemberSchema = Type.Object({ id: Id, email: Type.String(), firstName: Nullable(Type.String()) });

export const GroupDetailSchema = Type.Object(
  { ...GroupSchema.properties, members: Type.Array(GroupMemberSchema, { description: 'Every member, ordered by user id.' }) },
  { $id: 'GroupDetail' },
);
export type GroupDetail = Static<typeof GroupDetailSchema>;

export const GroupPageSchema = PageOf('Group');

export const CreateGroupBody = Type.Object({ name: Name, description: Type.Optional(Description) }, { additionalProperties: false });
export type CreateGroupInput = Static<typeof CreateGroupBody>;

export const UpdateGroupBody = Type.Object({ name: Type.Optional(Name), description: Type.Optional(Description) }, { additionalProperties: false });
export type UpdateGroupInput = Static<typeof UpdateGroupBody>;

export const ListGroupsQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
export type ListGroupsInput = Static<typeof ListGroupsQuery>;

export const GroupMembersBody = Type.Object(
  { userIds: Type.Array(Id, { minItems: 1, maxItems: 1000, description: 'Users of this tenant; repeats are ignored.' }) },
  { additionalProperties: false },
);
export type GroupMembersInput = Static<typeof GroupMembersBody>;

export const GroupParams = Type.Object({ groupId: Id });
export const GroupMemberParams = Type.Object({ groupId: Id, userId: Id });

/** Schemas other schemas refer to by `$id`; registered once by the app. */
export const groupSchemas = [GroupSchema, GroupDetailSchema, GroupPageSchema];
