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
import { commitsService } from './areas/data-model/commits.service.js';
import { gitHttpService } from './areas/data-model/git-http.service.js';
import { DeploymentRepositories } from './areas/data-model/deployment-repositories.js';
import { Repositories } from './git/repositories.js';
import { exclusive, lockKey } from './db/transactions.js';

/** Every service, built once per app over one store and the deployments' repositories. Routes share them. */
export function createServices(store: Store, options: { repositoriesDir: string }) {
  const repositories = new DeploymentRepositories(new Repositories(options.repositoriesDir, (id, fn) => exclusive(store, lockKey.repository(id), fn)));
  return {
    repositories,
    commits: commitsService(store, repositories),
    // Builds after a push come with the builds of the data-model area.
    gitHttp: gitHttpService(store, repositories, async () => undefined),
    apiKeys: apiKeysService(store),
    users: usersService(store),
    scim: scimService(store),
    userAttributes: userAttributesService(store),
    groups: groupsService(store),
    deployments: deploymentsService(store, repositories),
    policies: policiesService(store),
    folders: foldersService(store),
    workspace: workspaceService(store),
    workbooks: workbooksService(store),
    reports: reportsService(store),
  };
}
export type Services = ReturnType<typeof createServices>;
