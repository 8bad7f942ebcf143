import { defineArea } from '../../platform/index.js';
import { userAttributesRoutes } from './user-attributes.routes.js';
import { userAttributeSchemas } from './user-attributes.schemas.js';
import { userAttributesService } from './user-attributes.service.js';

/** User attributes and their values, read by row-level policies. */
export const userAttributesArea = defineArea('user-attributes', ({ platform: { store } }) => {
  const userAttributes = userAttributesService(store);
  return { services: { userAttributes }, schemas: userAttributeSchemas, routes: () => [userAttributesRoutes(userAttributes)] };
});
