import { Type, type Static } from 'typebox';

/** At most this many allowed origins; an embedding site is a handful of hosts, not a crawl list. */
export const ALLOWED_ORIGINS_MAX = 100;
/** An origin `scheme://host[:port]` (URLs are at most this long in practice). */
const ORIGIN_MAX = 2_048;
/** BCP 47 tags are short; 35 is the reference's own bound for a locale (5.3, CreatorMode). */
export const LOCALE_MAX = 35;
const TIMEZONE_MAX = 64;

const Flag = (description: string) => Type.Union([Type.Boolean(), Type.Null()], { description });

const REFERENCE_FIELDS = {
  allowAi: Flag('Whether embedded dashboards offer AI. Null: not set (the embed decides).'),
  enableDashboardComments: Flag('Whether embedded dashboards offer comments. Null: not set.'),
  showAiWidgets: Flag('Whether AI widgets are shown in embeds. Null: not set.'),
  showDashboardChat: Flag('Whether the dashboard chat is shown in embeds. Null: not set.'),
  showWorkbookChat: Flag('Whether the workbook chat is shown in embeds. Null: not set.'),
  locale: Type.Union([Type.String({ maxLength: LOCALE_MAX }), Type.Null()], {
    description: 'A BCP 47 language tag such as `en-US`, stored in canonical case. Null: not set.',
  }),
  timezone: Type.Union([Type.String({ maxLength: TIMEZONE_MAX }), Type.Null()], {
    description: 'An IANA time zone such as `Europe/Berlin`, or `UTC`. Null: not set.',
  }),
};

/** The reference's EmbedSettings (4.0), as `GET /api/v1/app-config` returns it in `embedding` (5.3). */
export const EmbedSettingsSchema = Type.Object(REFERENCE_FIELDS, { $id: 'EmbedSettings', description: 'Account-wide embed defaults (reference 4.0).' });
export type ReferenceEmbedSettings = Static<typeof EmbedSettingsSchema>;

const EXTENSION_FIELDS = {
  enabled: Type.Boolean({
    description: 'Whether signed embedding is on for the account (default true). Off: generating and revoking embed sessions answer 403.',
  }),
  allowedOrigins: Type.Array(Type.String({ maxLength: ORIGIN_MAX }), {
    maxItems: ALLOWED_ORIGINS_MAX,
    description: 'The exact origins (`scheme://host[:port]`, http or https, no path) that may frame embeds. Default: none listed.',
  }),
  pythonAnalysisEnabled: Type.Boolean({ description: 'Whether embeds may run a report’s Python analysis (reference 3.7; default false).' }),
  useCreatorMode: Type.Boolean({
    description:
      'The feature flag of creator mode (reference 4.15 `useCreatorMode`; default false). Off: a session asking for `creatorMode: true` answers 403; sessions already issued keep their mode until they expire.',
  }),
};

/** Every embed setting with defaults applied (extension: the reference's fields plus this product's). */
export const TenantEmbedSettingsSchema = Type.Object({ ...REFERENCE_FIELDS, ...EXTENSION_FIELDS }, { $id: 'TenantEmbedSettings' });
export type TenantEmbedSettings = Static<typeof TenantEmbedSettingsSchema>;

/** A merge: the keys given replace their values, the others keep theirs; null puts a key back to its default. */
export const TenantEmbedSettingsInput = Type.Object(
  {
    allowAi: Type.Optional(REFERENCE_FIELDS.allowAi),
    enableDashboardComments: Type.Optional(REFERENCE_FIELDS.enableDashboardComments),
    showAiWidgets: Type.Optional(REFERENCE_FIELDS.showAiWidgets),
    showDashboardChat: Type.Optional(REFERENCE_FIELDS.showDashboardChat),
    showWorkbookChat: Type.Optional(REFERENCE_FIELDS.showWorkbookChat),
    locale: Type.Optional(REFERENCE_FIELDS.locale),
    timezone: Type.Optional(REFERENCE_FIELDS.timezone),
    enabled: Type.Optional(Type.Union([EXTENSION_FIELDS.enabled, Type.Null()])),
    allowedOrigins: Type.Optional(Type.Union([EXTENSION_FIELDS.allowedOrigins, Type.Null()])),
    pythonAnalysisEnabled: Type.Optional(Type.Union([EXTENSION_FIELDS.pythonAnalysisEnabled, Type.Null()])),
    useCreatorMode: Type.Optional(Type.Union([EXTENSION_FIELDS.useCreatorMode, Type.Null()])),
  },
  { additionalProperties: false },
);
export type TenantEmbedSettingsInput = Partial<{ [K in keyof TenantEmbedSettings]: TenantEmbedSettings[K] | null }>;

export const embedSettingsSchemas = [EmbedSettingsSchema, TenantEmbedSettingsSchema];
