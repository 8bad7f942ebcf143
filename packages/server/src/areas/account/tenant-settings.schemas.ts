import { Type, type Static } from 'typebox';

export const WEEKDAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'] as const;
/** `HH:MM`, 24-hour, UTC. */
export const TIME_OF_DAY = '^([01][0-9]|2[0-3]):[0-5][0-9]$';

const Weekday = Type.Enum([...WEEKDAYS], { description: 'The day of the maintenance window, in UTC: `MONDAY` … `SUNDAY`.' });
const TimeOfDay = Type.String({ pattern: TIME_OF_DAY, description: 'The start of the maintenance window: `HH:MM`, 24-hour, UTC.' });

/** The reference's TenantSettings (5.1): every field required. */
export const TenantSettingsSchema = Type.Object(
  {
    auditLogEnabled: Type.Boolean({ description: 'Whether the account’s audit log records (default false).' }),
    auditLogEnabledCurrent: Type.Boolean({
      description: 'Whether the audit log is recording right now. Changes take effect at once, so always equal to `auditLogEnabled`.',
    }),
    auditLogEnabledTimestamp: Type.Integer({
      description:
        'Since when the current state of the audit log holds: Unix time in milliseconds of the last change of `auditLogEnabled`, or of the account’s creation if it never changed.',
    }),
    hasSupportAccess: Type.Boolean({ description: 'Whether support staff may access the account (default false); stored, not acted on by this server.' }),
    useAIBIUserInterface: Type.Boolean({ description: 'Whether the account uses the AI-first user interface (default false); stored for the user interface.' }),
    maintenanceWindowEnabled: Type.Boolean({ description: 'Whether upgrades wait for the maintenance window (default false).' }),
    maintenanceWindowDay: Type.String({ description: 'The day of the window in UTC: `MONDAY` … `SUNDAY` (default `SUNDAY`).' }),
    maintenanceWindowTime: Type.String({ description: 'The start of the window: `HH:MM`, 24-hour, UTC (default `02:00`).' }),
    oidcEnabled: Type.Boolean({ description: 'The OIDC issuer switch for workload identity (reference 5.14; default false).' }),
  },
  { $id: 'TenantSettings' },
);
export type TenantSettings = Static<typeof TenantSettingsSchema>;

const nullable = <T extends Parameters<typeof Type.Optional>[0]>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));

/** The reference's TenantSettingsInput (5.2): only these keys; a merge, null puts a key back to its default. */
export const TenantSettingsInput = Type.Object(
  {
    auditLogEnabled: nullable(Type.Boolean()),
    hasSupportAccess: nullable(Type.Boolean()),
    maintenanceWindowEnabled: nullable(Type.Boolean()),
    maintenanceWindowDay: nullable(Weekday),
    maintenanceWindowTime: nullable(TimeOfDay),
    oidcEnabled: nullable(Type.Boolean()),
    useAIBIUserInterface: nullable(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type TenantSettingsInput = Static<typeof TenantSettingsInput>;

export const tenantSettingsSchemas = [TenantSettingsSchema];
