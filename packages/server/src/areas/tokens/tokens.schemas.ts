import { Type, type Static } from 'typebox';
import { Id, LegacyPageQuery, Nullable, PageQuery } from '../../shared/schemas.js';

/** Reference 1.16: a data-API token lives 60 s to a day, a day by default. */
export const DEPLOYMENT_TOKEN_MIN_SECONDS = 60;
export const DEPLOYMENT_TOKEN_MAX_SECONDS = 86_400;
/** Reference 1.19: an environment token lives 1 s to an hour, an hour by default. */
export const ENVIRONMENT_TOKEN_MAX_SECONDS = 3_600;
/** Bytes of a security context as JSON: it travels in every request to the data API. */
export const SECURITY_CONTEXT_MAX_BYTES = 16_384;

const JsonObject = (description: string) => Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, description });

export const CreateDeploymentTokenInputSchema = Type.Object(
  {
    expiresIn: Type.Optional(
      Nullable(
        Type.Integer({
          minimum: DEPLOYMENT_TOKEN_MIN_SECONDS,
          maximum: DEPLOYMENT_TOKEN_MAX_SECONDS,
          description: 'Seconds the token lives; null or left out: 86400 (24 h).',
        }),
      ),
    ),
  },
  { $id: 'CreateDeploymentTokenInput', additionalProperties: false },
);
export type CreateDeploymentTokenInput = Static<typeof CreateDeploymentTokenInputSchema>;

export const DeploymentTokenResponseSchema = Type.Object(
  { platformApiToken: Type.String({ description: 'A JWT for the production data API, sent as the raw `Authorization` value.' }) },
  { $id: 'DeploymentTokenResponse' },
);

export const DeploymentEnvironmentTokenSchema = Type.Object(
  {
    token: Type.String({ description: 'A JWT for the environment’s data API.' }),
    security_context: JsonObject('The security context signed into the token (keys the caller may not set are dropped).'),
    created_at: Type.String({ format: 'date-time' }),
    expires_at: Type.String({ format: 'date-time' }),
    scopes: Type.Optional(Type.Array(Type.String(), { description: 'The scopes signed into the token.' })),
  },
  { $id: 'DeploymentEnvironmentToken' },
);
export type DeploymentEnvironmentToken = Static<typeof DeploymentEnvironmentTokenSchema>;

export const CreateDeploymentEnvironmentTokenInputSchema = Type.Object(
  {
    security_context: JsonObject(
      'The query security context. Dropped whole for a caller without EDIT access on the deployment; a `scope` key is never signed.',
    ),
    expires_in: Type.Optional(
      Nullable(Type.Integer({ minimum: 1, maximum: ENVIRONMENT_TOKEN_MAX_SECONDS, description: 'Seconds the token lives; null or left out: 3600.' })),
    ),
    scopes: Type.Optional(Nullable(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 32 }))),
  },
  { $id: 'CreateDeploymentEnvironmentTokenInput', additionalProperties: false },
);
export type CreateDeploymentEnvironmentTokenInput = Static<typeof CreateDeploymentEnvironmentTokenInputSchema>;

export const DeploymentEnvironmentTokenResponseSchema = Type.Object(
  { data: Type.Ref('DeploymentEnvironmentToken') },
  { $id: 'DeploymentEnvironmentTokenResponse' },
);

export const DeploymentEnvironmentTokensListSchema = Type.Object(
  {
    items: Type.Array(Type.Ref('DeploymentEnvironmentToken')),
    data: Type.Array(Type.Ref('DeploymentEnvironmentToken'), { deprecated: true, description: 'Deprecated: the same array as `items`.' }),
    pageInfo: Type.Ref('PageInfo'),
    pagination: Type.Union([Type.Object({ total: Type.Integer(), offset: Type.Integer(), limit: Type.Integer() }), Type.Null()], { deprecated: true }),
  },
  { $id: 'DeploymentEnvironmentTokensListResponse', description: 'The caller’s own live tokens among the environment’s newest 1,000, newest first.' },
);

export const EnvironmentParams = Type.Object({ deploymentId: Id, environmentId: Type.String({ minLength: 1, maxLength: 64 }) });

export const EnvironmentTokensQuery = Type.Object(
  {
    ...PageQuery,
    ...LegacyPageQuery,
  },
  { additionalProperties: false },
);

export const tokenSchemas = [
  CreateDeploymentTokenInputSchema,
  DeploymentTokenResponseSchema,
  DeploymentEnvironmentTokenSchema,
  CreateDeploymentEnvironmentTokenInputSchema,
  DeploymentEnvironmentTokenResponseSchema,
  DeploymentEnvironmentTokensListSchema,
];
