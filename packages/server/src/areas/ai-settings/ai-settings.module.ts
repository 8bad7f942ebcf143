import type { ServerProviderConfig } from '../../ai/index.js';
import { Outbound, type OutboundOptions } from '../../outbound/index.js';
import { defineArea } from '../../platform/index.js';
import { aiSettingsRoutes } from './ai-settings.routes.js';
import { aiSettingsSchemas } from './ai-settings.schemas.js';
import { aiSettingsService } from './ai-settings.service.js';

export interface AiSettingsConfig {
  /** The operator's default provider (AI_PROVIDER_*); absent or null: none, each account sets its own. */
  serverProvider?: ServerProviderConfig | null;
  /** The outbound settings the server's provider is called with (OUTBOUND_*), its host added to those allowed when private. */
  outbound?: OutboundOptions;
  /** The model client's deadline per answer and its retries (tests shorten them). */
  client?: { deadlineMs?: number; retries?: number; retryBaseMs?: number };
}

/**
 * The account's AI settings: the switch, the provider (the account's own, else the server's), the
 * limits and the monthly usage; and `ai`, what every AI feature calls a model through.
 */
export const aiSettingsArea = defineArea('ai-settings', ({ platform: { store, secrets, audit, now, outbound, log } }, config: AiSettingsConfig = {}) => {
  const provider = config.serverProvider ?? null;
  // The operator's provider may be private (a local llama.cpp is their own choice), so its host is
  // allowed as the notification summariser's is; an account's provider gets the usual guard.
  const serverOutbound =
    provider === null
      ? null
      : new Outbound({
          ...config.outbound,
          log,
          allowPrivate: [...(config.outbound?.allowPrivate ?? []), new URL(provider.baseUrl).hostname.replace(/^\[|\]$/g, '')],
        });
  const { settings, ai } = aiSettingsService({
    store,
    secrets,
    audit,
    now,
    outbound,
    server: provider === null || serverOutbound === null ? null : { provider, outbound: serverOutbound },
    ...(config.client ? { client: config.client } : {}),
  });
  return {
    services: { aiSettings: settings, ai },
    schemas: aiSettingsSchemas,
    routes: () => [aiSettingsRoutes(settings)],
    close: async () => {
      await serverOutbound?.close();
    },
  };
});
