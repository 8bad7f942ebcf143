/**
 * The sql-api area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { sqlApiListener, type SqlApiListener } from './sql-api.server.js';
export { sqlApiService } from './sql-api.service.js';
