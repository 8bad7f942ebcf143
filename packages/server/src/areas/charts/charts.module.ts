import { defineArea } from '../../platform/index.js';
import { chartsRoutes } from './charts.routes.js';
import { chartSchemas } from './charts.schemas.js';
import { chartsService } from './charts.service.js';

/** Charts compiled for pages that draw them with Vega alone (the embedded dashboard page): an extension. */
export const chartsArea = defineArea('charts', ({ platform: { jobs } }) => {
  const charts = chartsService(jobs.workers);
  return { services: { charts }, schemas: chartSchemas, routes: () => [chartsRoutes(charts)] };
});
