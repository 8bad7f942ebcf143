import type { Store } from './db/database.js';
import { apiKeysService } from './areas/api-keys/api-keys.service.js';
import { deploymentsService } from './areas/deployments/deployments.service.js';
import { groupsService } from './areas/groups/groups.service.js';
import { policiesService } from './areas/policies/policies.service.js';
import { usersService } from './areas/users/users.service.js';

/** Every service, built once per app over one store. Routes, the bootstrap and the admin command share them. */
export function createServices(store: Store) {
  return {
    apiKeys: apiKeysService(store),
    users: usersService(store),
    groups: groupsService(store),
    deployments: deploymentsService(store),
    policies: policiesService(store),
  };
}
export type Services = ReturnType<typeof createServices>;
