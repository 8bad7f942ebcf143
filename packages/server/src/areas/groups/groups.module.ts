import { defineArea } from '../../platform/index.js';
import { groupsRoutes } from './groups.routes.js';
import { groupSchemas } from './groups.schemas.js';
import { groupsService } from './groups.service.js';

/** Groups of users and their members. */
export const groupsArea = defineArea('groups', ({ platform: { store } }) => {
  const groups = groupsService(store);
  return { services: { groups }, schemas: groupSchemas, routes: () => [groupsRoutes(groups)] };
});
