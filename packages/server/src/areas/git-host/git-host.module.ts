import { defineArea } from '../../platform/index.js';
import { dataModelArea } from '../data-model/index.js';
import { gitHostRoutes } from './git-host.routes.js';
import { gitHostSchemas } from './git-host.schemas.js';
import { gitHostService } from './git-host.service.js';
import { upstreamsService } from './upstreams.service.js';

/** The git host: a deployment connected to one of its repositories pulls from it and pushes to it. */
export const gitHostArea = defineArea('git-host', ({ platform: { store, secrets, outbound, originOf, now }, use }) => {
  const { repositories, deployBranchMoved } = use(dataModelArea);
  const gitHost = gitHostService(store.db, secrets, outbound, originOf, now);
  const upstreams = upstreamsService({ db: store.db, secrets, outbound, repositories, deployBranchMoved, originOf, now, linked: gitHost.linked });
  return {
    services: { gitHost, upstreams },
    schemas: gitHostSchemas,
    routes: ({ resolveTenant, identifyOptional }) => [gitHostRoutes(gitHost, upstreams, { resolveTenant, identify: identifyOptional })],
  };
});
