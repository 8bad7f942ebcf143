/**
 * The data-api area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export type { DataApiEnvironment, DataApiGrant, DataApiService } from './data-api.service.js';
export { dataApiArea } from './data-api.module.js';
