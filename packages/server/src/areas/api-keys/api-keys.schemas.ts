import { Type, type Static } from 'typebox';
import { Id, Nullable, PageOf, PageQuery, Timestamp } from '../../shared/schemas.js';

export const ApiKeySchema = Type.Object(
  {
    id: Id,
    name: Type.String(),
    prefix: Type.String({ description: 'The first characters of the key, to tell keys apart; the key itself is shown only once.' }),
    userId: Id,
    deploymentIds: Nullable(Type.Array(Id, { description: 'Deployments the key may target; null for every deployment.' })),
    expiresAt: Nullable(Timestamp),
    lastUsedAt: Nullable(Timestamp),
    revokedAt: Nullable(Timestamp),
    createdAt: Timestamp,
  },
  { $id: 'ApiKey' },
);
export type ApiKey = Static<typeof ApiKeySchema>;

export const CreatedApiKeySchema = Type.Object(
  { ...ApiKeySchema.properties, key: Type.String({ description: 'The secret. Shown only in this response: store it now.' }) },
  { $id: 'CreatedApiKey' },
);
export type CreatedApiKey = Static<typeof CreatedApiKeySchema>;

export const CreateApiKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    deploymentIds: Type.Optional(Nullable(Type.Array(Id, { maxItems: 1000, uniqueItems: true }))),
    expiresAt: Type.Optional(Nullable(Timestamp)),
    userId: Type.Optional(Id),
  },
  { additionalProperties: false },
);
export type CreateApiKeyInput = Static<typeof CreateApiKeyBody>;

export const ListApiKeysQuery = Type.Object(
  {
    ...PageQuery,
    userId: Type.Optional(Id),
    includeRevoked: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);
export type ListApiKeysInput = Static<typeof ListApiKeysQuery>;

export const ApiKeyParams = Type.Object({ apiKeyId: Id });

export const ApiKeyPageSchema = PageOf('ApiKey');

/** Schemas other schemas refer to by `$id`; registered once by the app. */
export const apiKeySchemas = [ApiKeySchema, CreatedApiKeySchema, ApiKeyPageSchema];
