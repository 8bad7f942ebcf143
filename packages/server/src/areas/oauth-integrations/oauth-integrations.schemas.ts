import { Type, type Static } from 'typebox';
import { Id, Nullable, Timestamp } from '../../shared/schemas.js';

const Url = (description: string) =>
  Type.String({
    format: 'uri',
    minLength: 1,
    maxLength: 2048,
    description: `${description} An https URL; http only on localhost, 127.0.0.1 or [::1] (development).`,
  });

/** Settings of an integration beyond the reference's fields; keys this product reads are checked, others kept as given. */
const Config = Type.Object(
  {
    revocationUrl: Type.Optional(Url('The provider’s token revocation endpoint (RFC 7009): deleting a user’s token revokes it there.')),
    tokenEndpointAuthMethod: Type.Optional(
      Type.Union([Type.Literal('client_secret_basic'), Type.Literal('client_secret_post')], {
        description: 'How the client authenticates at `tokenUrl` and `revocationUrl`: HTTP Basic (default) or in the form body.',
      }),
    ),
    authorizationParams: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 64 }), Type.String({ maxLength: 512 }), {
        maxProperties: 20,
        description:
          'Extra query parameters of the authorization URL, e.g. `{"access_type": "offline", "prompt": "consent"}`; they never replace the ones the flow sets (state, PKCE, client_id, redirect_uri, scope).',
      }),
    ),
  },
  {
    additionalProperties: true,
    maxProperties: 50,
    description: 'Optional settings: `revocationUrl`, `tokenEndpointAuthMethod`, `authorizationParams`; other keys are stored as given.',
  },
);

const Scopes = Type.Array(Type.String({ minLength: 1, maxLength: 256, pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$' }), {
  maxItems: 100,
  description: 'Scopes requested at authorization (RFC 6749 scope tokens).',
});

export const OAuthIntegrationSchema = Type.Object(
  {
    id: Id,
    name: Type.String(),
    type: Type.String({ description: 'Free text naming the provider kind, e.g. `snowflake`, `databricks`, `bigquery`, `generic`.' }),
    authUrl: Type.String({ format: 'uri' }),
    tokenUrl: Type.String({ format: 'uri' }),
    clientId: Type.String(),
    redirectUri: Type.String({ format: 'uri' }),
    scopes: Nullable(Type.Array(Type.String())),
    config: Nullable(Type.Object({}, { additionalProperties: true })),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'OAuthIntegration', description: 'A third-party OAuth app. The client secret is never returned.' },
);
export type OAuthIntegration = Static<typeof OAuthIntegrationSchema>;

const fields = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  type: Type.String({
    minLength: 1,
    maxLength: 100,
    description: 'Free text naming the provider kind, e.g. `snowflake`, `databricks`, `bigquery`, `generic`.',
  }),
  authUrl: Url('The provider’s authorization endpoint.'),
  tokenUrl: Url('The provider’s token endpoint.'),
  clientId: Type.String({ minLength: 1, maxLength: 1024 }),
  redirectUri: Url('Registered with the provider; normally this server’s `/api/v1/oauth-integrations/callback`.'),
  scopes: Type.Optional(Nullable(Scopes)),
  config: Type.Optional(Nullable(Config)),
};

export const CreateOAuthIntegrationBody = Type.Object(
  { ...fields, clientSecret: Type.String({ minLength: 1, maxLength: 4096, description: 'Stored encrypted; never returned.' }) },
  { additionalProperties: false },
);
export type CreateOAuthIntegrationInput = Static<typeof CreateOAuthIntegrationBody>;

export const UpdateOAuthIntegrationBody = Type.Object(
  {
    ...fields,
    clientSecret: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 4096, description: 'Omitted or null: the stored secret is kept.' }))),
  },
  {
    additionalProperties: false,
    description: 'A full replace: `scopes` and `config` left out become null; `clientSecret` left out (or null) keeps the stored one.',
  },
);
export type UpdateOAuthIntegrationInput = Static<typeof UpdateOAuthIntegrationBody>;

export const OAuthIntegrationParams = Type.Object({ id: Id });
export const IntegrationIdParams = Type.Object({ integrationId: Id });

export const UserOAuthTokenSchema = Type.Object(
  {
    id: Id,
    userId: Id,
    integrationId: Id,
    status: Type.String({
      description:
        '`ACTIVE`, `REFRESH_FAILED` (the last refresh failed; the access token may still work until `accessTokenExpiresAt`) or `EXPIRED` (expired and nothing to refresh it with): re-authorize with `initiate`.',
    }),
    accessTokenExpiresAt: Nullable(Timestamp),
    refreshTokenExpiresAt: Nullable(Timestamp),
    lastError: Type.Unknown({ description: 'The last failure `{error, errorDescription, during, at}`, or null.' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'UserOAuthToken', description: 'The caller’s token for an integration. The token values are never returned.' },
);
export type UserOAuthToken = Static<typeof UserOAuthTokenSchema>;

export const InitiateResponseSchema = Type.Object(
  {
    authorizationUrl: Type.String({
      format: 'uri',
      description: 'Open it in the user’s browser; it carries a single-use `state` (10 minutes) and a PKCE S256 challenge.',
    }),
  },
  { $id: 'OAuthAuthorizationStart' },
);

export const CallbackQuery = Type.Object(
  {
    state: Type.Optional(Type.String({ maxLength: 512 })),
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    error: Type.Optional(Type.String({ maxLength: 256 })),
    error_description: Type.Optional(Type.String({ maxLength: 2048 })),
    error_uri: Type.Optional(Type.String({ maxLength: 2048 })),
    iss: Type.Optional(Type.String({ maxLength: 2048 })),
    scope: Type.Optional(Type.String({ maxLength: 4096 })),
    session_state: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: true },
);
export type CallbackInput = Static<typeof CallbackQuery>;

export const CallbackResponseSchema = Type.Object(
  { integrationId: Id, status: Type.String() },
  { $id: 'OAuthCallbackResult', description: 'The integration the caller is now connected to.' },
);

export const EmptyObjectSchema = Type.Object({}, { $id: 'OAuthDeleted', description: 'An empty object: the record is gone.', additionalProperties: false });

export const oauthIntegrationSchemas = [OAuthIntegrationSchema, UserOAuthTokenSchema, InitiateResponseSchema, CallbackResponseSchema, EmptyObjectSchema];
