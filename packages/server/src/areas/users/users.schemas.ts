import { Type, type Static } from 'typebox';
import { Email, Id, Nullable, PageOf, PageQuery, Timestamp } from '../../shared/schemas.js';

const ROLES = ['ADMIN', 'DEVELOPER', 'EXPLORER', 'VIEWER'] as const;

export const RoleSchema = Type.Enum(ROLES, {
  description: 'Account role: ADMIN (everything), DEVELOPER (deployments and data model), EXPLORER (creates content), VIEWER (sees content).',
});

const FirstName = Nullable(Type.String({ maxLength: 255 }));

export const UserSchema = Type.Object(
  {
    id: Id,
    email: Type.String(),
    firstName: FirstName,
    role: RoleSchema,
    active: Type.Boolean({ description: 'False once the user is deactivated; their API keys then stop working.' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'User' },
);
export type User = Static<typeof UserSchema>;

export const UserPageSchema = PageOf('User');

export const CreateUserBody = Type.Object(
  {
    email: Email,
    firstName: Type.Optional(FirstName),
    role: Type.Optional(Type.Enum(ROLES, { default: 'EXPLORER', description: 'Defaults to EXPLORER.' })),
  },
  { additionalProperties: false },
);
export type CreateUserInput = Static<typeof CreateUserBody>;

export const UpdateUserBody = Type.Object(
  {
    email: Type.Optional(Email),
    firstName: Type.Optional(FirstName),
    role: Type.Optional(RoleSchema),
    active: Type.Optional(Type.Boolean({ description: '`true` reactivates a deactivated user; `false` deactivates.' })),
  },
  { additionalProperties: false },
);
export type UpdateUserInput = Static<typeof UpdateUserBody>;

export const ListUsersQuery = Type.Object(
  {
    ...PageQuery,
    role: Type.Optional(RoleSchema),
    active: Type.Optional(Type.Boolean({ description: 'Only active (true) or only deactivated (false) users.' })),
  },
  { additionalProperties: false },
);
export type ListUsersInput = Static<typeof ListUsersQuery>;

export const UserParams = Type.Object({ userId: Id });

export const BulkCreateUsersBody = Type.Object(
  { users: Type.Array(CreateUserBody, { minItems: 1, maxItems: 100, description: 'Created one at a time, in this order.' }) },
  { additionalProperties: false },
);
export type BulkCreateUsersInput = Static<typeof BulkCreateUsersBody>;

const BulkUserFailureSchema = Type.Object({
  index: Type.Integer({ minimum: 0, description: 'Position of the item in `users`.' }),
  email: Type.String(),
  error: Type.Object({
    status: Type.Integer({ description: 'The status the single create would have answered.' }),
    message: Type.String(),
  }),
});

export const BulkCreateUsersResultSchema = Type.Object(
  {
    created: Type.Array(Type.Ref('User')),
    failed: Type.Array(BulkUserFailureSchema, { description: 'Items not created, with the error the single create would give.' }),
  },
  { $id: 'BulkCreateUsersResult' },
);
export type BulkUserFailure = Static<typeof BulkUserFailureSchema>;
/** `created` is a `$ref`, whose static type is unknown; it is narrowed to User here. */
export type BulkCreateUsersResult = Omit<Static<typeof BulkCreateUsersResultSchema>, 'created'> & { created: User[] };

/** Schemas other schemas refer to by `$id`; registered once by the app. */
export const userSchemas = [UserSchema, UserPageSchema, BulkCreateUsersResultSchema];
