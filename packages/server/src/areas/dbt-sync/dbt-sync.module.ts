import { defineArea } from '../../platform/index.js';
import { dataModelArea } from '../data-model/index.js';
import { dbtSyncRoutes } from './runs.routes.js';
import { dbtSyncRunSchemas } from './runs.schemas.js';
import { dbtSyncService } from './runs.service.js';
import { dbtSyncSettingsRoutes } from './settings.routes.js';
import { dbtSyncSettingsSchemas } from './settings.schemas.js';
import { dbtSyncSettingsService } from './settings.service.js';

/** dbt sync: a deployment's model generated from a dbt project, run as background jobs. */
export const dbtSyncArea = defineArea('dbt-sync', ({ platform: { store, secrets, jobs, outbound, now }, use }) => {
  const dbtSyncSettings = dbtSyncSettingsService(store, secrets, now);
  const dbtSync = dbtSyncService(store, use(dataModelArea).repositories, jobs, dbtSyncSettings, outbound, now);
  return {
    services: { dbtSyncSettings, dbtSync },
    schemas: [...dbtSyncSettingsSchemas, ...dbtSyncRunSchemas],
    routes: () => [dbtSyncSettingsRoutes(dbtSyncSettings), dbtSyncRoutes(dbtSync)],
  };
});
