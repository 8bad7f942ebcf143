import { Type, type Static } from 'typebox';
import { Id, Nullable, Timestamp } from '../../shared/schemas.js';

/** The documented audience types (reference 5.15); the reference's schema is a free string, this one lists them. */
export const AUDIENCE_TYPES = ['AWS', 'GCP', 'Azure', 'Custom'] as const;
export type AudienceType = (typeof AUDIENCE_TYPES)[number];

const NAME_PATTERN = '^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$';
const SUB_FORMAT_PATTERN = '^(?:[A-Za-z0-9:_-]|\\{(?:deployment_id|component|region)\\})+$';
const ENV_VAR_PATTERN = '^[A-Z_][A-Z0-9_]*$';

const ClaimValue = Type.Union([Type.String({ maxLength: 1000 }), Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 50 })]);
const CustomClaims = Type.Record(Type.String({ minLength: 1, maxLength: 100 }), ClaimValue, {
  maxProperties: 50,
  description: 'Extra claims: strings or lists of strings. They never override `iss`, `sub`, `aud`, `exp`, `iat`, `nbf`, `jti` nor any `mapi:` claim.',
});

export const OidcTokenConfigSchema = Type.Object(
  {
    id: Id,
    audienceType: Type.String({ description: 'AWS, GCP, Azure or Custom; fixed after creation.' }),
    audience: Type.String({
      description:
        '`sts.amazonaws.com` for AWS, `api://AzureADTokenExchange` for Azure, the workload-identity provider for GCP, the custom audience for Custom.',
    }),
    name: Type.String({ description: 'The token file name in the runtime (`<name>.jwt`).' }),
    isEnabled: Type.Boolean(),
    customClaims: Type.Optional(Nullable(Type.Record(Type.String(), ClaimValue))),
    subFormat: Type.Optional(Nullable(Type.String())),
    targetEnvVar: Type.Optional(Nullable(Type.String())),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'OidcTokenConfig' },
);
export type OidcTokenConfig = Static<typeof OidcTokenConfigSchema>;

const updatable = {
  customAudience: Type.Optional(
    Nullable(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description: 'The audience of a Custom config; the workload-identity provider resource of a GCP one. AWS and Azure take none.',
      }),
    ),
  ),
  name: Type.Optional(
    Nullable(
      Type.String({
        pattern: NAME_PATTERN,
        maxLength: 63,
        description: 'A slug, unique in the tenant; default the type in lower case (`aws`, `gcp`, `azure`) or `custom-<id>`.',
      }),
    ),
  ),
  subFormat: Type.Optional(
    Nullable(
      Type.String({
        pattern: SUB_FORMAT_PATTERN,
        maxLength: 200,
        description: 'The `sub` claim, with `{deployment_id}`, `{component}` and `{region}`; default `mapi:deployment:{deployment_id}`.',
      }),
    ),
  ),
  customClaims: Type.Optional(Nullable(CustomClaims)),
  targetEnvVar: Type.Optional(
    Nullable(Type.String({ pattern: ENV_VAR_PATTERN, maxLength: 128, description: 'Custom only: the variable the runtime sets to the token file’s path.' })),
  ),
  isEnabled: Type.Optional(Nullable(Type.Boolean({ description: 'Default true.' }))),
};

export const CreateOidcTokenConfigBody = Type.Object(
  { audienceType: Type.String({ minLength: 1, maxLength: 20, description: 'AWS, GCP, Azure or Custom.' }), ...updatable },
  { additionalProperties: false, $id: 'CreateOidcTokenConfigInput' },
);
export type CreateOidcTokenConfigInput = Static<typeof CreateOidcTokenConfigBody>;

export const UpdateOidcTokenConfigBody = Type.Object(updatable, { additionalProperties: false, $id: 'UpdateOidcTokenConfigInput' });
export type UpdateOidcTokenConfigInput = Static<typeof UpdateOidcTokenConfigBody>;

export const OidcTokenConfigParams = Type.Object({ configId: Id });

export const oidcTokenConfigSchemas = [OidcTokenConfigSchema, CreateOidcTokenConfigBody, UpdateOidcTokenConfigBody];
