/**
 * The roles area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { rolesArea } from './roles.module.js';
