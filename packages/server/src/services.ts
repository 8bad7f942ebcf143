import type { Store } from './db/database.js';
import { apiKeysService } from './areas/api-keys/api-keys.service.js';
import { deploymentsService } from './areas/deployments/deployments.service.js';
import { groupsService } from './areas/groups/groups.service.js';
import { policiesService } from './areas/policies/policies.service.js';
import { usersService } from './areas/users/users.service.js';
import { scimService } from './areas/scim/scim.service.js';
import { userAttributesService } from './areas/user-attributes/user-attributes.service.js';
import { foldersService } from './areas/workspace/folders.service.js';
import { workspaceService } from './areas/workspace/workspace.service.js';
import { workbooksService } from './areas/workbooks/workbooks.service.js';
import { reportsService } from './areas/reports/reports.service.js';

/** Every service, built once per app over one store. Routes, the bootstrap and the admin command share them. */
export function createServices(store: Store) {
  return {
    apiKeys: apiKeysService(store),
    users: usersService(store),
    scim: scimService(store),
    userAttributes: userAttributesService(store),
    groups: groupsService(store),
    deployments: deploymentsService(store),
    policies: policiesService(store),
    folders: foldersService(store),
    workspace: workspaceService(store),
    workbooks: workbooksService(store),
    reports: reportsService(store),
  };
}
export type Services = ReturnType<typeof createServices>;
