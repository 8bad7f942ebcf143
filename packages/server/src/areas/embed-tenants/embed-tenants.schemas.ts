import { Type, type Static } from 'typebox';
import { Email, Id, Nullable, NullablePageQuery, PageOf } from '../../shared/schemas.js';
import { EMBED_TENANT_NAME_PATTERN } from './names.js';

/*
 * Reference 4.0-4.5 shapes. Where the reference lets a query or body member be null, null means
 * the same as leaving it out, except where a rule says otherwise (`groups: null` keeps, `[]` clears).
 */

const Timestamp = Nullable(Type.String({ format: 'date-time' }));

export const EmbedTenantSchema = Type.Object(
  {
    id: Id,
    name: Type.String(),
    userCount: Type.Integer({ minimum: 0 }),
    displayName: Nullable(Type.String()),
    createdAt: Timestamp,
  },
  { $id: 'EmbedTenant' },
);
export type EmbedTenant = Static<typeof EmbedTenantSchema>;

export const EmbedUserSchema = Type.Object(
  {
    id: Id,
    username: Type.String({ description: 'The external id: unique in the embed tenant.' }),
    email: Nullable(Type.String({ description: 'Lowercased; `{externalId}@{embedTenantName}.embed.invalid` when none was given.' })),
    externalId: Nullable(Type.String()),
    firstName: Nullable(Type.String({ description: "The profile's displayName." })),
    createdAt: Timestamp,
    lastLogin: Timestamp,
  },
  { $id: 'EmbedUser' },
);
export type EmbedUser = Static<typeof EmbedUserSchema>;

export const EmbedTenantPageSchema = PageOf('EmbedTenant');
export const EmbedUserPageSchema = PageOf('EmbedUser');

/** The embed tenant of a path: lowercased before lookup (except by delete, see the route). */
export const EmbedTenantParams = Type.Object({
  embedTenantName: Type.String({ minLength: 1, maxLength: 64, description: `The embed tenant, ${EMBED_TENANT_NAME_PATTERN} once lowercased.` }),
});

const PageFields = NullablePageQuery;
export const EmbedPageQuery = Type.Object({ ...PageFields }, { additionalProperties: false });
export type EmbedPageInput = Static<typeof EmbedPageQuery>;

export const EmbedSearchQuery = Type.Object(
  { ...PageFields, search: Type.Optional(Nullable(Type.String({ maxLength: 320 }))) },
  { additionalProperties: false },
);
export type EmbedSearchInput = Static<typeof EmbedSearchQuery>;

export const EmbedUserProfileSchema = Type.Object(
  {
    displayName: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    picture: Type.Optional(
      Nullable(
        Type.String({
          format: 'uri',
          pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
          maxLength: 2048,
          description: "An absolute http(s) URL, loaded by the viewer's browser (not proxied); only its syntax is checked.",
        }),
      ),
    ),
  },
  { additionalProperties: false },
);
export type EmbedUserProfile = Static<typeof EmbedUserProfileSchema>;

const GroupNames = (description: string) => Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 1000, description })));

export const ProvisionEmbedUserBody = Type.Object(
  {
    externalId: Type.String({ minLength: 1, maxLength: 255, description: 'Trimmed and lowercased before it is stored or compared.' }),
    email: Type.Optional(Nullable(Email)),
    groups: GroupNames('Global groups (they must exist). A list replaces them, `[]` clears them, left out or null keeps them.'),
    tenantGroups: GroupNames('Groups of this embed tenant (create them first). A list replaces them, `[]` clears them, left out or null keeps them.'),
    userProfile: Type.Optional(Nullable(EmbedUserProfileSchema)),
  },
  { additionalProperties: false },
);
export type ProvisionEmbedUserInput = Static<typeof ProvisionEmbedUserBody>;

export const ProvisionEmbedUsersBody = Type.Object(
  { users: Type.Array(ProvisionEmbedUserBody, { minItems: 1, maxItems: 100, description: 'Applied one at a time, in order.' }) },
  { additionalProperties: false },
);
export type ProvisionEmbedUsersInput = Static<typeof ProvisionEmbedUsersBody>;

export const ProvisionEmbedUsersResponseSchema = Type.Object(
  {
    succeeded: Type.Array(Type.Ref('EmbedUser'), { description: 'In request order.' }),
    failed: Type.Array(
      Type.Object({
        externalId: Type.String({ description: 'Normalised (trimmed, lowercased).' }),
        error: Type.Object({ status: Type.Integer(), message: Type.String() }),
      }),
    ),
  },
  { $id: 'ProvisionEmbedUsersResponse' },
);

export const embedTenantSchemas = [EmbedTenantSchema, EmbedUserSchema, EmbedTenantPageSchema, EmbedUserPageSchema, ProvisionEmbedUsersResponseSchema];
