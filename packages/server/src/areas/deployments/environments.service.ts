import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import { positionalPage, positionalWindow } from '../../shared/pagination.js';
import type { DeploymentRow, Executor } from '../../db/tables.js';
import { authorizeDeployment } from './deployment-access.js';
import { deploymentPath, type DeploymentUrlOf } from './deployments.service.js';
import { findDevelopmentBranch, findStagingBranch, listDevelopmentBranches, listStagingBranches } from './environments.store.js';
import {
  developmentEnvironment,
  parseEnvironmentId,
  productionEnvironment,
  stagingEnvironment,
  type Environment,
  type EnvironmentKind,
} from '../../runtime/environments.js';

export type EnvironmentType = EnvironmentKind;

export interface DeploymentEnvironment {
  id: string;
  type: EnvironmentType;
  branch: string | null;
  user: string | null;
  api_credentials: Array<{ type: 'rest' | 'sql'; version: number; url?: string | null; host?: string; port?: number; database?: string }>;
}

/** The data API of an environment: production at the deployment's URL, a branch's below `dev-mode/<branch>` (reference 2.14). */
export function dataApiUrl(deploymentUrl: string, branch: string | null): string {
  return branch === null ? `${deploymentUrl}/data-api/v1` : `${deploymentUrl}/dev-mode/${encodeURIComponent(branch)}/data-api/v1`;
}

/** One environment of a deployment, by the id the list gives it. */
export interface EnvironmentRef {
  id: string;
  type: EnvironmentType;
  /** The branch it serves: the deploy branch for production. */
  branch: string;
  /** Its data API's base URL. */
  dataApiUrl: string;
}

/**
 * The environment `environmentId` names while it exists (ids as the list gives them:
 * `production`, `staging-<branch id>` while that branch's staging flag is on,
 * `development-<branch id>` while its credential is in dev mode on it); undefined otherwise.
 */
export async function findEnvironment(db: Executor, row: DeploymentRow, deploymentUrl: string, environmentId: string): Promise<EnvironmentRef | undefined> {
  const named = parseEnvironmentId(environmentId);
  if (named === undefined) return undefined;
  if (named.kind === 'production') return environmentRef(productionEnvironment(row.deploy_branch_name), dataApiUrl(deploymentUrl, null));
  const { kind, branchId } = named;
  const branch = kind === 'staging' ? await findStagingBranch(db, row.id, branchId) : await findDevelopmentBranch(db, row.id, branchId);
  if (branch === undefined) return undefined;
  const env = kind === 'staging' ? stagingEnvironment({ id: branchId, name: branch.name }) : developmentEnvironment({ id: branchId, name: branch.name });
  return environmentRef(env, dataApiUrl(deploymentUrl, branch.name));
}

const environmentRef = (env: Environment, url: string): EnvironmentRef => ({ id: env.id, type: env.kind, branch: env.branch, dataApiUrl: url });

/**
 * A deployment's environments (reference 1.17): one production; a staging environment per shared
 * branch whose staging flag is on (2.14); a development environment per credential in dev mode,
 * on its dev-… branch, named by its user's email. Each has the REST credentials of its data API;
 * with the SQL API on (SQL_API_PORT), its PostgreSQL credentials too: the host of the tenant's URL,
 * the SQL port, and the database naming the deployment and environment (docs/sql-api.md).
 */
export function environmentsService(store: Store, urlOf: DeploymentUrlOf, sqlApiPort: () => number | null = () => null) {
  const { db } = store;
  return {
    async list(caller: Caller, id: number, input: { type?: EnvironmentType; first?: number; after?: string; offset?: number; limit?: number }) {
      const { row } = await authorizeDeployment(db, caller, id, 'DeploymentRead');
      const origin = await urlOf(caller.tenant);
      const url = deploymentPath(origin, row.id);
      const port = sqlApiPort();
      const rest = (branch: string | null, environmentId: string): DeploymentEnvironment['api_credentials'] => [
        { type: 'rest' as const, version: 1, url: dataApiUrl(url, branch) },
        ...(port === null
          ? []
          : [
              {
                type: 'sql' as const,
                version: 1,
                host: new URL(origin).hostname,
                port,
                database: environmentId === 'production' ? String(row.id) : `${row.id}/${environmentId}`,
              },
            ]),
      ];
      const all: DeploymentEnvironment[] = [
        { id: 'production', type: 'production', branch: row.deploy_branch_name, user: null, api_credentials: rest(null, 'production') },
      ];
      const staging = await listStagingBranches(db, row.id);
      for (const branch of staging) {
        const { id } = stagingEnvironment(branch);
        all.push({ id, type: 'staging', branch: branch.name, user: null, api_credentials: rest(branch.name, id) });
      }
      const developing = await listDevelopmentBranches(db, row.id);
      for (const dev of developing) {
        const { id } = developmentEnvironment({ id: dev.branchId, name: dev.branch });
        all.push({ id, type: 'development', branch: dev.branch, user: dev.email, api_credentials: rest(dev.branch, id) });
      }
      const listed = input.type === undefined ? all : all.filter((e) => e.type === input.type);
      const window = positionalWindow(input);
      const { items, pageInfo } = positionalPage(listed, window);
      return { items, data: items, pageInfo, pagination: { total: listed.length, offset: window.start, limit: window.size } };
    },
  };
}
export type EnvironmentsService = ReturnType<typeof environmentsService>;
