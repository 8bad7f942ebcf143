import { Type, type Static } from 'typebox';
import { Nullable } from '../../shared/schemas.js';

/** Reference 4.0: the embed tenant name pattern of the generate-session schema. */
export const EMBED_TENANT_NAME = '^[a-z][a-z0-9-]{0,34}[a-z0-9]$';
/** Reference 4.17: session ids are 32 lowercase hex characters. */
export const SESSION_ID = '^[0-9a-f]{32}$';
/** Bytes of a security context as JSON: it travels in the token and in every data-API request. */
export const SECURITY_CONTEXT_MAX_BYTES = 16_384;

const JsonObject = (description: string) => Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, description });
const Switch = (description: string) => Type.Optional(Nullable(Type.Boolean({ description })));

const EmbedUserProfile = Type.Object(
  {
    displayName: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    picture: Type.Optional(
      Nullable(Type.String({ maxLength: 2048, pattern: '^https?://', description: 'An absolute http:// or https:// URL, loaded by the viewer’s browser.' })),
    ),
  },
  { additionalProperties: false },
);

const GroupDefinition = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100 }), description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))) },
  { additionalProperties: false },
);

const AttributeValue = Nullable(
  Type.Union([
    Type.String({ maxLength: 1000 }),
    Type.Number(),
    Type.Boolean(),
    Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 100 }),
    Type.Array(Type.Number(), { maxItems: 100 }),
  ]),
);

const AttributeDefinition = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    type: Type.Enum(['string', 'number', 'boolean', 'string_array', 'number_array'], { description: 'Never changed once the attribute exists.' }),
    displayName: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    defaultValue: Type.Optional(AttributeValue),
    description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  },
  { additionalProperties: false },
);

/** Reference 4.15 EmbedSessionSettings: each switch is three-state (left out or null: inherit). */
export const EmbedSessionSettingsSchema = Type.Object(
  {
    allowAi: Switch('Master switch for every AI surface; false overrides every show* key.'),
    showDashboardChat: Switch('AI entry points on published dashboards.'),
    showWorkbookChat: Switch('AI entry points in the creator workbook.'),
    showAiWidgets: Switch('Authoring and regeneration of AI summary widgets.'),
    allowChatWorkspaceAuthoring: Switch('false: AI chat may not create or change saved content.'),
    showWorkbookShare: Switch('Share entry points in creator mode.'),
    showDashboardSettings: Switch('The dashboard settings panel.'),
    showMemberNames: Switch('false hides the option and pins the data pane to titles.'),
    showGroupByCube: Switch('false hides the option and pins the pane to its default grouping.'),
    locale: Type.Optional(Nullable(Type.String({ maxLength: 35, description: 'A BCP-47 code; an unknown one falls back to the account default.' }))),
    timezone: Type.Optional(Nullable(Type.String({ maxLength: 64, description: 'An IANA name; an unknown one falls back to the default.' }))),
  },
  { $id: 'EmbedSessionSettings', additionalProperties: false },
);
export type EmbedSessionSettings = Static<typeof EmbedSessionSettingsSchema>;

const ThemeString = Type.Optional(Nullable(Type.String({ maxLength: 200 })));
const EmbedTheme = Type.Object(
  {
    font: ThemeString,
    primaryColor: ThemeString,
    chat: Type.Optional(Nullable(Type.Object({ inputColor: ThemeString }, { additionalProperties: false }))),
    analyticsChat: Type.Optional(
      Nullable(
        Type.Object(
          {
            backgroundColor: ThemeString,
            chatInput: Type.Optional(Nullable(Type.Object({ backgroundColor: ThemeString, borderColor: ThemeString }, { additionalProperties: false }))),
          },
          { additionalProperties: false },
        ),
      ),
    ),
  },
  { additionalProperties: false },
);

export const GenerateSessionInputSchema = Type.Object(
  {
    deploymentId: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }),
    externalId: Type.Optional(
      Nullable(Type.String({ minLength: 1, maxLength: 255, description: 'The stable id of an external user: lowercase and trimmed.' })),
    ),
    internalId: Type.Optional(
      Nullable(Type.String({ minLength: 1, maxLength: 320, description: 'The username (email) of an existing user, whose own permissions apply.' })),
    ),
    email: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: 320 }))),
    userProfile: Type.Optional(Nullable(EmbedUserProfile)),
    embedTenantName: Type.Optional(Nullable(Type.String({ pattern: EMBED_TENANT_NAME }))),
    embedTenantProfile: Type.Optional(
      Nullable(Type.Object({ displayName: Type.Optional(Nullable(Type.String({ maxLength: 200 }))) }, { additionalProperties: false })),
    ),
    creatorMode: Type.Optional(
      Nullable(
        Type.Boolean({
          description:
            'A creator-mode session: tenant groups and attribute definitions may be written, `userAttributes` resolve against the embed tenant’s own catalog, and the token opens the shared workspace and copies from it. Needs the account’s `useCreatorMode` embed setting (403 CREATOR_MODE_DISABLED otherwise) and an `externalId`.',
        }),
      ),
    ),
    groups: Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 1000 }))),
    tenantGroups: Type.Optional(
      Nullable(
        Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
          maxItems: 1000,
          description: 'The embed tenant’s groups the user is in, replaced exactly. Needs `creatorMode: true` and `embedTenantName` (400 otherwise).',
        }),
      ),
    ),
    tenantGroupDefinitions: Type.Optional(
      Nullable(
        Type.Array(GroupDefinition, {
          maxItems: 1000,
          description:
            'Tenant groups created, or their description updated, before `tenantGroups` is applied. Needs `creatorMode: true` and `embedTenantName` (400 otherwise).',
        }),
      ),
    ),
    groupDefinitions: Type.Optional(
      Nullable(Type.Array(GroupDefinition, { maxItems: 1000, description: 'Deprecated and ignored: global groups are never created here.' })),
    ),
    userAttributes: Type.Optional(
      Nullable(
        Type.Array(Type.Object({ name: Type.String({ minLength: 1, maxLength: 255 }), value: AttributeValue }, { additionalProperties: false }), {
          maxItems: 1000,
        }),
      ),
    ),
    userAttributeDefinitions: Type.Optional(
      Nullable(
        Type.Array(AttributeDefinition, {
          maxItems: 1000,
          description:
            'The embed tenant’s attribute catalog, upserted by name before `userAttributes` is applied. A name the catalog holds with another type fails the whole request (400, `cannot change type`) and writes nothing. Needs `creatorMode: true` (400 otherwise).',
        }),
      ),
    ),
    securityContext: Type.Optional(Nullable(JsonObject('Passed to the data model as the query security context (at most 16 KiB as JSON).'))),
    settings: Type.Optional(Nullable(Type.Ref('EmbedSessionSettings'))),
    branchName: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
    embedTheme: Type.Optional(Nullable(EmbedTheme)),
    roles: Type.Optional(
      Nullable(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100, description: 'Accepted and ignored (its meaning is not stated).' })),
    ),
    isEphemeral: Type.Optional(Nullable(Type.Boolean({ description: 'Accepted and ignored (its meaning is not stated).' }))),
    publicDashboardId: Type.Optional(Nullable(Type.String({ maxLength: 255, description: 'Accepted and ignored (its meaning is not stated).' }))),
  },
  { $id: 'GenerateSession', additionalProperties: false },
);
export type GenerateSessionInput = Static<typeof GenerateSessionInputSchema>;

export const EmbedSessionSchema = Type.Object(
  { sessionId: Type.String({ pattern: SESSION_ID, description: 'Single use, exchangeable for 5 minutes.' }) },
  { $id: 'EmbedSession' },
);
export const ExchangeSessionInputSchema = Type.Object(
  { sessionId: Type.String({ maxLength: 256 }) },
  { $id: 'ExchangeSessionInput', additionalProperties: false },
);
export const RevokeSessionInputSchema = Type.Object(
  { sessionId: Type.String({ pattern: SESSION_ID }) },
  { $id: 'RevokeSessionInput', additionalProperties: false },
);
export const EmbedTokenSchema = Type.Object(
  { token: Type.String({ description: 'A JWT (ES256, `typ` embed+jwt) valid 24 hours; verify it with /api/v1/embed/jwks.json.' }) },
  { $id: 'EmbedToken' },
);

export const embedSessionSchemas = [
  EmbedSessionSettingsSchema,
  GenerateSessionInputSchema,
  EmbedSessionSchema,
  ExchangeSessionInputSchema,
  RevokeSessionInputSchema,
  EmbedTokenSchema,
];
