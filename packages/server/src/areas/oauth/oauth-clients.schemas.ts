import { Type, type Static } from 'typebox';
import { Id, Nullable, Timestamp } from '../../shared/schemas.js';

export const OAuthClientSchema = Type.Object(
  {
    id: Id,
    clientId: Type.String({ description: 'The OAuth `client_id`.' }),
    name: Type.String(),
    type: Type.Union([Type.Literal('machine'), Type.Literal('app')], {
      description: '`machine`: client credentials, acting as `userId`; `app`: authorization code with PKCE, acting as the user who signs in.',
    }),
    public: Type.Boolean({ description: 'An app without a secret (a browser or native app); always false for machine clients.' }),
    redirectUris: Type.Array(Type.String(), { description: 'Where an app’s authorization responses may go (empty for machine clients).' }),
    userId: Nullable(Id),
    deploymentIds: Nullable(
      Type.Array(Id, {
        description:
          'Deployments a machine client’s tokens may target; null for every deployment (and for apps, whose tokens carry the deployments the user consented to).',
      }),
    ),
    grantTypes: Type.Array(Type.String()),
    createdAt: Timestamp,
  },
  { $id: 'OAuthClient', description: 'A machine client (client credentials grant): its tokens act as `userId` within `deploymentIds`.' },
);
export type OAuthClient = Static<typeof OAuthClientSchema>;

export const CreatedOAuthClientSchema = Type.Object(
  {
    ...OAuthClientSchema.properties,
    clientSecret: Type.Optional(Type.String({ description: 'The secret (not for public apps). Shown only in this response: store it now.' })),
  },
  { $id: 'CreatedOAuthClient' },
);
export type CreatedOAuthClient = Static<typeof CreatedOAuthClientSchema>;

export const OAuthClientListSchema = Type.Object({ items: Type.Array(Type.Ref('OAuthClient')) }, { $id: 'OAuthClientList' });

export const CreateOAuthClientBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    type: Type.Optional(Type.Union([Type.Literal('machine'), Type.Literal('app')], { description: 'Default `machine`.' })),
    redirectUris: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), {
        minItems: 1,
        maxItems: 20,
        uniqueItems: true,
        description: 'Apps only, required: https URLs (http only on localhost, 127.0.0.1 or [::1]), compared exactly.',
      }),
    ),
    public: Type.Optional(Type.Boolean({ description: 'Apps only: no secret; the app proves itself by PKCE alone (default false).' })),
    deploymentIds: Type.Optional(Nullable(Type.Array(Id, { maxItems: 1000, uniqueItems: true }))),
    userId: Type.Optional(Id),
  },
  { additionalProperties: false },
);
export type CreateOAuthClientInput = Static<typeof CreateOAuthClientBody>;

export const OAuthClientParams = Type.Object({ oauthClientId: Id }, { additionalProperties: false });

export const oauthClientSchemas = [OAuthClientSchema, CreatedOAuthClientSchema, OAuthClientListSchema];
