/**
 * The dashboard-exports area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { DEFAULT_EXPORTS_PER_IDENTITY, dashboardExportsArea } from './dashboard-exports.module.js';
