/**
 * The oauth area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { isAccessTokenFormat } from './access-tokens.store.js';
export { oauthArea } from './oauth.module.js';
