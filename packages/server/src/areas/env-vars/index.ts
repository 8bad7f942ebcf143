/**
 * The env-vars area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { USAGE_DATA_DIR } from './data-source-check.js';
export { envVarContext, upsertEnvVars } from './env-vars.store.js';
export { runtimePlanner } from './runtime-plan.js';
export { envVarsArea } from './env-vars.module.js';
