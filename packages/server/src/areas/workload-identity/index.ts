/**
 * The workload-identity area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { workloadFiles } from './workload-files.js';
export { workloadIdentityArea } from './workload-identity.module.js';
