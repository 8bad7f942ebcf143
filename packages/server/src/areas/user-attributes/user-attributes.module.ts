import { defineArea } from '../../platform/index.js';
import { userAttributesRoutes } from './user-attributes.routes.js';
import { userAttributeSchemas } from './user-attributes.schemas.js';
import { userAttributesService } from './user-attributes.service.js';

/** User attributes and their values, read by row-level policies. */
export const userAttributesArea = defineArea('user-attributes', ({ platform: { store, now } }) => {
  const userAttributes = userAttributesService(store, now);
  return { services: { userAttributes }, schemas: userAttributeSchemas, routes: () => [userAttributesRoutes(userAttributes)] };
});
