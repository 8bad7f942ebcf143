/**
 * The tokens area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { DEPLOYMENT_TOKEN_TYPE, ENVIRONMENT_TOKEN_TYPE } from './tokens.service.js';
export { tokensArea } from './tokens.module.js';
