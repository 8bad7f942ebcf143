/**
 * The account area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { readStoredSettings, writeStoredSettings } from './account.store.js';
export { restrictDataDownload } from './app-config.js';
export { embedSettings } from './embed-settings.js';
export { tenantSettingsFromColumn } from './tenant-settings.js';
export { tenantSettings } from './tenant-settings.js';
export { accountArea } from './account.module.js';
