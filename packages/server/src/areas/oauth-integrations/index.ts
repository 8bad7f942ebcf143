/**
 * The oauth-integrations area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { claimState, newState } from './oauth-client.js';
export type { CallbackDeps } from './oauth-integrations.routes.js';
export { urlProblem } from './oauth-integrations.service.js';
export { oauthIntegrationsArea, type TokenRefreshConfig } from './oauth-integrations.module.js';
