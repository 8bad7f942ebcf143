import type { DeploymentRow } from '../../db/tables.js';
import type { Signature } from '../../git/objects.js';
import type { Repositories } from '../../git/repositories.js';
import type { Repository } from '../../git/repository.js';
import { SERVER_AUTHOR } from './authors.js';
import { STARTER_MODEL, STARTER_MODEL_PATH } from './starter-model.js';

/**
 * Each deployment's git repository: created with the deployment, holding the starter model on
 * the deploy branch (nothing for `creationMethod: git-host`, whose first commit comes from the
 * connected repository).
 */
export class DeploymentRepositories {
  constructor(readonly repositories: Repositories) {}

  async create(row: DeploymentRow, author: Signature): Promise<Repository> {
    const scaffold = row.creation_method !== 'git-host';
    const initial = scaffold
      ? {
          branch: row.deploy_branch_name,
          files: new Map([[STARTER_MODEL_PATH, STARTER_MODEL]]),
          author,
          message: `Create deployment ${row.name} with the starter model`,
        }
      : null;
    return this.repositories.create(row.id, initial, row.deploy_branch_name);
  }

  /**
   * The deployment's repository. A deployment made before repositories existed gets its own on
   * first use, as a new deployment would.
   */
  async open(row: DeploymentRow): Promise<Repository> {
    if (await this.repositories.exists(row.id)) return this.repositories.open(row.id);
    return this.create(row, SERVER_AUTHOR);
  }

  /** Runs a write on the deployment's repository alone (git/repositories.ts). */
  async write<T>(row: DeploymentRow, fn: (repo: Repository) => Promise<T>): Promise<T> {
    await this.open(row);
    return this.repositories.write(row.id, fn);
  }

  remove(id: number): Promise<void> {
    return this.repositories.remove(id);
  }
}
