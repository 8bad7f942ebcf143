/**
 * The reports area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { insertReport, updateReport } from './reports.store.js';
export { reportsArea } from './reports.module.js';
