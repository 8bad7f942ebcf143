import { defineArea } from '../../platform/index.js';
import { oauthIntegrationsRoutes } from './oauth-integrations.routes.js';
import { oauthIntegrationSchemas } from './oauth-integrations.schemas.js';
import { oauthIntegrationsService } from './oauth-integrations.service.js';
import { tokenRefresher } from './token-refresh.js';
import { userOAuthTokensRoutes } from './user-oauth-tokens.routes.js';
import { userOAuthTokensService } from './user-oauth-tokens.service.js';

/**
 * The background refresh of user OAuth tokens: how often each process scans (0: never; absent:
 * every minute), how long before expiry a token is refreshed, and the retry delay after a passing
 * failure (ms).
 */
export interface TokenRefreshConfig {
  scanMs?: number;
  leadMs?: number;
  retryMs?: number;
}

/** OAuth integrations with other services, and the tokens users hold with them, refreshed ahead of expiry. */
export const oauthIntegrationsArea = defineArea(
  'oauth-integrations',
  ({ platform: { store, secrets, outbound, jobs, log, now, onError } }, config: { tokenRefresh?: TokenRefreshConfig }) => {
    const refresh = config.tokenRefresh ?? {};
    const oauthIntegrations = oauthIntegrationsService(store, secrets, now);
    const userOAuthTokens = userOAuthTokensService(store, secrets, outbound, {
      now,
      log,
      ...(refresh.retryMs !== undefined ? { retryMs: refresh.retryMs } : {}),
    });
    // Every process scans for tokens to refresh (a schedule of the jobs service); the claims let one of them refresh each.
    const tokenRefresh = tokenRefresher(store, userOAuthTokens, jobs, {
      now,
      scanMs: refresh.scanMs ?? 60_000,
      ...(refresh.leadMs !== undefined ? { leadMs: refresh.leadMs } : {}),
      onError: (error, what) => onError(error, what),
    });
    return {
      services: { oauthIntegrations, userOAuthTokens, tokenRefresh },
      schemas: oauthIntegrationSchemas,
      routes: ({ resolveTenant, identifyOptional }) => [
        oauthIntegrationsRoutes(oauthIntegrations, userOAuthTokens, { resolveTenant, identify: identifyOptional }),
        userOAuthTokensRoutes(userOAuthTokens),
      ],
    };
  },
);
