import { defineArea } from '../../platform/index.js';
import { dataModelArea } from '../data-model/index.js';
import { embedSessionsArea } from '../embed-sessions/index.js';
import { dataApiProblemDialect } from './data-api.errors.js';
import { dataApiRoutes } from './data-api.routes.js';
import { dataApiService } from './data-api.service.js';

/** The data API: each deployment's Cube-compatible REST API, answered by its environments' runtimes. */
export const dataApiArea = defineArea('data-api', ({ platform: { store, signing, runtime, originOf, now }, use }) => {
  const { builds, repositories } = use(dataModelArea);
  const { verifyEmbed } = use(embedSessionsArea);
  const dataApi = dataApiService(store, signing, runtime, builds, repositories, originOf, { now });
  return { services: { dataApi }, problemDialects: [dataApiProblemDialect], routes: () => [dataApiRoutes(dataApi, verifyEmbed)] };
});
