import type { Caller } from '../../access/caller.js';
import type { TenantSnapshot } from '../../cache/tenant-cache.js';
import type { Store } from '../../db/database.js';
import type { Executor } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import type { FieldError } from '../../shared/problems.js';
import { readStoredSettings, writeStoredSettings } from './account.store.js';
import type { ReferenceEmbedSettings, TenantEmbedSettings, TenantEmbedSettingsInput } from './embed-settings.schemas.js';
import { canonicalLocale, invalid, isExactOrigin, isTimeZoneName } from './settings-values.js';

/** What a tenant that never set anything has: the reference's fields not set, embedding on, nothing else allowed. */
export const EMBED_DEFAULTS: Readonly<TenantEmbedSettings> = Object.freeze({
  allowAi: null,
  enableDashboardComments: null,
  showAiWidgets: null,
  showDashboardChat: null,
  showWorkbookChat: null,
  locale: null,
  timezone: null,
  enabled: true,
  allowedOrigins: [],
  pythonAnalysisEnabled: false,
  useCreatorMode: false,
});

const KEYS = Object.keys(EMBED_DEFAULTS) as Array<keyof TenantEmbedSettings>;

function withDefaults(stored: Record<string, unknown>): TenantEmbedSettings {
  const settings = { ...EMBED_DEFAULTS } as Record<string, unknown>;
  for (const key of KEYS) if (stored[key] !== undefined && stored[key] !== null) settings[key] = stored[key];
  return settings as unknown as TenantEmbedSettings;
}

/**
 * The tenant's embed settings with defaults applied: what other areas call per request (embed
 * sessions, origins, Python analysis). With the request's `snapshot` it costs nothing after the
 * first call at a version; a change is seen by every server process on its next request (the
 * write bumps the tenant's `auth_version`). The object is shared: read it, never change it.
 */
export function embedSettings(db: Executor, tenantId: number, snapshot?: TenantSnapshot): Promise<Readonly<TenantEmbedSettings>> {
  const load = async () => withDefaults(await readStoredSettings(db, tenantId, 'embed_settings'));
  return snapshot !== undefined && snapshot.tenantId === tenantId ? snapshot.memo('embed-settings', load) : load();
}

/** The reference's EmbedSettings (4.0) alone, as `app-config` returns it in `embedding`. */
export function referenceEmbedSettings(settings: TenantEmbedSettings): ReferenceEmbedSettings {
  const { allowAi, enableDashboardComments, showAiWidgets, showDashboardChat, showWorkbookChat, locale, timezone } = settings;
  return { allowAi, enableDashboardComments, showAiWidgets, showDashboardChat, showWorkbookChat, locale, timezone };
}

/** The values the schema cannot check, normalised (canonical locale, origins once each); 400 naming every bad one. */
function checked(input: TenantEmbedSettingsInput): TenantEmbedSettingsInput {
  const errors: FieldError[] = [];
  const out = { ...input };
  if (typeof input.locale === 'string') {
    const locale = canonicalLocale(input.locale);
    if (locale === undefined) errors.push({ pointer: '/body/locale', message: `"${input.locale}" is not a BCP 47 language tag such as "en-US"` });
    else out.locale = locale;
  }
  if (typeof input.timezone === 'string' && !isTimeZoneName(input.timezone)) {
    errors.push({ pointer: '/body/timezone', message: `"${input.timezone}" is not an IANA time zone such as "Europe/Berlin"` });
  }
  if (Array.isArray(input.allowedOrigins)) {
    input.allowedOrigins.forEach((origin, i) => {
      if (!isExactOrigin(origin))
        errors.push({
          pointer: `/body/allowedOrigins/${i}`,
          message: `"${origin}" is not an exact origin such as "https://app.example.com" or "http://localhost:8080" (scheme, lower-case host and port only)`,
        });
    });
    out.allowedOrigins = [...new Set(input.allowedOrigins)];
  }
  if (errors.length > 0) throw invalid(errors);
  return out;
}

/** The account's embed settings (extension, admin only): read, and merge-update. */
export function embedSettingsService(store: Store) {
  return {
    async get(caller: Caller): Promise<TenantEmbedSettings> {
      caller.access.requireAdmin('read the embed settings');
      return withDefaults(await readStoredSettings(store.db, caller.actor.tenantId, 'embed_settings'));
    },

    /** Only the keys given change; null puts a key back to its default. All or nothing. */
    async update(caller: Caller, input: TenantEmbedSettingsInput): Promise<TenantEmbedSettings> {
      caller.access.requireAccountAdmin('change the embed settings');
      const changes = checked(input);
      const tenantId = caller.actor.tenantId;
      return serialized(store, lockKey.accountSettings(tenantId), async (trx) => {
        const stored = await readStoredSettings(trx, tenantId, 'embed_settings');
        for (const [key, value] of Object.entries(changes)) {
          if (value === null) delete stored[key];
          else stored[key] = value;
        }
        await writeStoredSettings(trx, tenantId, 'embed_settings', stored);
        return withDefaults(stored);
      });
    },
  };
}
export type EmbedSettingsService = ReturnType<typeof embedSettingsService>;
