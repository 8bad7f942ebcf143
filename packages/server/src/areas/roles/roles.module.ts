import { defineArea } from '../../platform/index.js';
import { rolesRoutes } from './roles.routes.js';
import { roleSchemas } from './roles.schemas.js';
import { rolesService } from './roles.service.js';

/** Custom roles (reference 8.D): named policies held by users and groups; access/custom-roles.ts gives them effect. */
export const rolesArea = defineArea('roles', ({ platform: { store, now, audit } }) => {
  const roles = rolesService(store, { now, audit });
  return { services: { roles }, schemas: roleSchemas, routes: () => [rolesRoutes(roles)] };
});
