import { Type, type Static } from 'typebox';

/** Reference 5.4, `UsageAnalyticsTokenResponse`. */
export const UsageAnalyticsTokenSchema = Type.Object(
  {
    token: Type.String({ description: 'A JWT for `Authorization: Bearer` on `apiUrl`, valid 1 hour.' }),
    apiUrl: Type.String({ description: 'The usage deployment’s data API, ending in `/v1`.' }),
    deploymentId: Type.Integer(),
    expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'UsageAnalyticsToken' },
);
export type UsageAnalyticsToken = Static<typeof UsageAnalyticsTokenSchema>;

/** Extension: the account's usage-analytics switch, and the system deployment once made. */
export const UsageAnalyticsSettingsSchema = Type.Object(
  {
    enabled: Type.Boolean({ description: 'Whether `POST /api/v1/usage-analytics/token` answers (404 while off). Default false.' }),
    deploymentId: Type.Union([Type.Integer(), Type.Null()], { description: 'The system usage deployment, made by the first token; null before.' }),
  },
  { $id: 'UsageAnalyticsSettings' },
);
export type UsageAnalyticsSettings = Static<typeof UsageAnalyticsSettingsSchema>;

export const UsageAnalyticsSettingsInput = Type.Object(
  { enabled: Type.Union([Type.Boolean(), Type.Null()], { description: 'null: back to the default (off).' }) },
  { additionalProperties: false },
);
export type UsageAnalyticsSettingsInput = Static<typeof UsageAnalyticsSettingsInput>;

export const usageAnalyticsSchemas = [UsageAnalyticsTokenSchema, UsageAnalyticsSettingsSchema];
