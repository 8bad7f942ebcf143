/**
 * The policies area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { deletePoliciesOn } from './policies.store.js';
export { policiesArea } from './policies.module.js';
