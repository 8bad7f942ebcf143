import { defineArea } from '../../platform/index.js';
import { groupsRoutes } from './groups.routes.js';
import { groupSchemas } from './groups.schemas.js';
import { groupsService } from './groups.service.js';

/** Groups of users and their members. */
export const groupsArea = defineArea('groups', ({ platform: { store, now } }) => {
  const groups = groupsService(store, now);
  return { services: { groups }, schemas: groupSchemas, routes: () => [groupsRoutes(groups)] };
});
