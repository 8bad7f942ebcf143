import { defineArea } from '../../platform/index.js';
import { usersRoutes } from './users.routes.js';
import { userSchemas } from './users.schemas.js';
import { usersService } from './users.service.js';

/** The tenant's users and their roles. */
export const usersArea = defineArea('users', ({ platform: { store, now } }) => {
  const users = usersService(store, now);
  return { services: { users }, schemas: userSchemas, routes: () => [usersRoutes(users)] };
});
