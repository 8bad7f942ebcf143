import { Type, type Static } from 'typebox';
import { Id, Nullable, Timestamp } from '../../shared/schemas.js';

export const OAuthClientSchema = Type.Object(
  {
    id: Id,
    clientId: Type.String({ description: 'The OAuth `client_id`.' }),
    name: Type.String(),
    userId: Id,
    deploymentIds: Nullable(Type.Array(Id, { description: 'Deployments its tokens may target; null for every deployment.' })),
    grantTypes: Type.Array(Type.String()),
    createdAt: Timestamp,
  },
  { $id: 'OAuthClient', description: 'A machine client (client credentials grant): its tokens act as `userId` within `deploymentIds`.' },
);
export type OAuthClient = Static<typeof OAuthClientSchema>;

export const CreatedOAuthClientSchema = Type.Object(
  { ...OAuthClientSchema.properties, clientSecret: Type.String({ description: 'The secret. Shown only in this response: store it now.' }) },
  { $id: 'CreatedOAuthClient' },
);
export type CreatedOAuthClient = Static<typeof CreatedOAuthClientSchema>;

export const OAuthClientListSchema = Type.Object({ items: Type.Array(Type.Ref('OAuthClient')) }, { $id: 'OAuthClientList' });

export const CreateOAuthClientBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    deploymentIds: Type.Optional(Nullable(Type.Array(Id, { maxItems: 1000, uniqueItems: true }))),
    userId: Type.Optional(Id),
  },
  { additionalProperties: false },
);
export type CreateOAuthClientInput = Static<typeof CreateOAuthClientBody>;

export const OAuthClientParams = Type.Object({ oauthClientId: Id }, { additionalProperties: false });

export const oauthClientSchemas = [OAuthClientSchema, CreatedOAuthClientSchema, OAuthClientListSchema];
