import { Type, type Static } from 'typebox';
import { ref } from '../../shared/schemas.js';
import { AppThemeInput, AppThemeSchema, appThemeSchemas } from './app-theme.schemas.js';

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T, description?: string) =>
  Type.Union([schema, Type.Null()], description === undefined ? {} : { description });

const CREATOR_MODE_FIELDS = {
  localizedTitles: nullable(
    Type.Array(
      Type.Object({ locale: Type.String({ minLength: 1, maxLength: 35 }), value: Type.String({ maxLength: 1000 }) }, { additionalProperties: false }),
      {
        maxItems: 50,
      },
    ),
  ),
  showGeneratedSql: nullable(Type.Boolean()),
  showSemanticSql: nullable(Type.Boolean()),
  showWorkspaceTitle: nullable(Type.Boolean()),
  workspaceTitle: nullable(Type.String({ maxLength: 1000 })),
};

/** The reference's CreatorMode (5.3): what a creator-mode embed session's workspace shows; answered to such sessions only. */
const CreatorMode = Type.Object(CREATOR_MODE_FIELDS);
export type CreatorModeConfig = Static<typeof CreatorMode>;

/** What an admin sets (extension): the same members, each optional. */
const CreatorModeInput = Type.Object(
  Object.fromEntries(Object.entries(CREATOR_MODE_FIELDS).map(([name, schema]) => [name, Type.Optional(schema)])) as {
    [K in keyof typeof CREATOR_MODE_FIELDS]: ReturnType<typeof Type.Optional<(typeof CREATOR_MODE_FIELDS)[K]>>;
  },
  { additionalProperties: false },
);

/** The reference's AppConfigResponse (5.3). */
export const AppConfigResponseSchema = Type.Object(
  {
    applyThemeGlobally: Type.Boolean({ description: 'Whether the app theme applies everywhere (default false).' }),
    restrictDataDownload: Type.Boolean({ description: 'The tenant-wide lock on data downloads (default false).' }),
    sheetsAgentChatEnabled: Type.Boolean({ description: 'Whether the spreadsheet add-in’s chat may act on the sheet (default false).' }),
    appTheme: nullable(ref(AppThemeSchema), 'The account’s theme (set with PUT /api/v1/tenant/app-config); null: none set, the default theme.'),
    creatorMode: nullable(
      CreatorMode,
      'Answered to a creator-mode embed session (reference 4.15) as an admin set it (PUT /api/v1/tenant/app-config; members not set are null); null for every other caller.',
    ),
    embedding: nullable(Type.Ref('EmbedSettings'), 'The account’s embed defaults (reference 4.0; set with PUT /api/v1/tenant/embed-settings).'),
    sheetsUi: nullable(Type.Object({ showAppliedFilters: nullable(Type.Boolean()) }), 'Null: the add-in’s defaults.'),
    timezoneSettings: nullable(
      Type.Object({ enabled: nullable(Type.Boolean()), allowUserOverride: nullable(Type.Boolean()), timezone: nullable(Type.String()) }),
      'Null: no account time zone is set; otherwise taken from the embed settings’ `timezone`.',
    ),
  },
  { $id: 'AppConfigResponse' },
);
export type AppConfigResponse = Static<typeof AppConfigResponseSchema>;

export const UserSettingsSchema = Type.Object(
  { defaultDeploymentId: Type.Union([Type.Integer(), Type.Null()], { description: 'The deployment the user’s clients open by default; null: none chosen.' }) },
  { $id: 'UserSettings' },
);
export type UserSettings = Static<typeof UserSettingsSchema>;

export const UserSettingsInput = Type.Object(
  {
    defaultDeploymentId: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'A deployment the caller can see; null clears it.' }),
    ),
  },
  { additionalProperties: false },
);
export type UserSettingsInput = Static<typeof UserSettingsInput>;

export const appConfigSchemas = [...appThemeSchemas, AppConfigResponseSchema, UserSettingsSchema];

/** The app-config switches an admin sets (extension; reference 5.3 has no write): a merge, null puts one back to its default. */
export const AppConfigInput = Type.Object(
  {
    restrictDataDownload: Type.Optional(
      Type.Union([Type.Boolean(), Type.Null()], {
        description: 'The tenant-wide lock on data downloads: while on, dashboard exports answer 403 (scheduled notifications still render). Default false.',
      }),
    ),
    sheetsAgentChatEnabled: Type.Optional(
      Type.Union([Type.Boolean(), Type.Null()], {
        description:
          'Whether a spreadsheet add-in’s chat may act on the sheet (reference 5.3), answered as set to the add-ins that read the app configuration. Default false.',
      }),
    ),
    creatorMode: Type.Optional(
      Type.Union([CreatorModeInput, Type.Null()], {
        description:
          'What creator-mode embed sessions are shown (reference 5.3 CreatorMode), replaced whole; null clears it. Only creator-mode sessions read it back from GET /api/v1/app-config.',
      }),
    ),
    appTheme: Type.Optional(
      Type.Union([AppThemeInput, Type.Null()], {
        description:
          'The account’s theme (reference 5.3 AppTheme), replaced whole; null clears it. Colours, numbers in range and URLs (https:// or a path on this host) are checked: anything else is 400 and changes nothing.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type AppConfigInput = Static<typeof AppConfigInput>;
