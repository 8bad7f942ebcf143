/**
 * The embed-sessions area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { EMBED_TOKEN_TYPE } from './embed-claims.js';
export type { EmbedDashboards } from './embed-dashboards.js';
export type { EmbedPrincipal } from './embed-sessions.service.js';
export { embedSessionsArea } from './embed-sessions.module.js';
export { requireCreatorSession } from './shared-workspace.js';
