import { defineArea } from '../../platform/index.js';
import { dataModelArea } from '../data-model/index.js';
import { usageAnalyticsRoutes } from './usage-analytics.routes.js';
import { usageAnalyticsSchemas } from './usage-analytics.schemas.js';
import { usageAnalyticsService } from './usage-analytics.service.js';

/** Usage analytics: the account's own usage, served as a deployment of its own. */
export const usageAnalyticsArea = defineArea('usage-analytics', ({ platform: { store, signing, secrets, originOf, runtime, audit, now }, use }) => {
  const { repositories, deployBranchMoved } = use(dataModelArea);
  const usageAnalytics = usageAnalyticsService(store, {
    signing,
    secrets,
    urlOf: originOf,
    repositories,
    deployBranchMoved,
    runtimesChanged: () => runtime.reconcile(),
    dataSourcesDir: runtime.options.dataSourcesDir,
    audit,
    now,
  });
  return { services: { usageAnalytics }, schemas: usageAnalyticsSchemas, routes: () => [usageAnalyticsRoutes(usageAnalytics)] };
});
