import { randomBytes } from 'node:crypto';
import type { Caller } from '../../access/caller.js';
import type { Audit } from '../../audit/index.js';
import type { Store } from '../../db/database.js';
import type { DeploymentRow, Executor } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import type { Secrets } from '../../secrets/index.js';
import { ApiError } from '../../shared/problems.js';
import type { Signing } from '../../signing/index.js';
import { timestamp, type Clock } from '../../time.js';
import { readStoredSettings, writeStoredSettings } from '../account/index.js';
import { SERVER_AUTHOR } from '../data-model/index.js';
import type { DeployBranchMoved } from '../data-model/index.js';
import type { DeploymentRepositories } from '../data-model/index.js';
import { deleteDeployment, findDeployment, findDeploymentByName, insertDeployment } from '../deployments/index.js';
import { deploymentPath, type DeploymentUrlOf, type RuntimesChanged } from '../deployments/index.js';
import { dataApiUrl } from '../deployments/index.js';
import { envVarContext, upsertEnvVars } from '../env-vars/index.js';
import { DEPLOYMENT_TOKEN_TYPE } from '../tokens/index.js';
import type { UsageAnalyticsSettings, UsageAnalyticsSettingsInput, UsageAnalyticsToken } from './usage-analytics.schemas.js';
import { syncUsageData, USAGE_DATA_DIR } from './usage-data.js';
import { USAGE_DEPLOYMENT_NAME, USAGE_MODEL, USAGE_MODEL_PATH } from './usage-model.js';

/** Reference 5.4: the token lives one hour. */
export const USAGE_TOKEN_SECONDS = 3600;

/** Where the extension keeps its state: a key of the tenant's stored settings object, outside the reference's fields. */
const STORED_KEY = 'usageAnalytics';

interface UsageState {
  enabled?: boolean;
  deploymentId?: number;
  /** The data source's name inside the data-sources directory; unguessable, so no other account's DB_URL can name it. */
  file?: string;
}

export interface UsageAnalyticsOptions {
  signing: Signing;
  secrets: Secrets;
  urlOf: DeploymentUrlOf;
  repositories: DeploymentRepositories;
  deployBranchMoved: DeployBranchMoved;
  runtimesChanged: RuntimesChanged;
  /** Where runtimes may open SQLite data sources (DATASOURCES_DIR); null: usage analytics cannot be served here. */
  dataSourcesDir: string | null;
  audit: Audit;
  now: Clock;
}

async function stateOf(db: Executor, tenantId: number): Promise<{ stored: Record<string, unknown>; state: UsageState }> {
  const stored = await readStoredSettings(db, tenantId, 'account_settings');
  const state = stored[STORED_KEY];
  return { stored, state: typeof state === 'object' && state !== null ? (state as UsageState) : {} };
}

/**
 * Usage analytics (reference 5.4): a system deployment per account whose data source is a SQLite
 * file holding that account's audit events (never the server's own database, which runtimes
 * refuse), kept up to date from the audit log each time a token is minted, with a one-cube model
 * over it; and one-hour data-API tokens for it.
 */
export function usageAnalyticsService(store: Store, options: UsageAnalyticsOptions) {
  const { db } = store;

  function settingsOf(state: UsageState): UsageAnalyticsSettings {
    return { enabled: state.enabled === true, deploymentId: state.deploymentId ?? null };
  }

  /**
   * The account's usage deployment, made on first use: its row, its variables naming the data
   * source, and (after the data source exists) its repository with the usage model, whose build
   * starts its runtime. A deployment deleted since is made again.
   */
  async function usageDeployment(caller: Caller, dir: string): Promise<{ row: DeploymentRow; file: string; made: boolean }> {
    const tenantId = caller.actor.tenantId;
    const existing = (await stateOf(db, tenantId)).state;
    if (existing.deploymentId !== undefined && existing.file !== undefined) {
      const row = await findDeployment(db, tenantId, existing.deploymentId);
      if (row) return { row, file: existing.file, made: false };
    }
    const made = await serialized(store, [lockKey.deploymentNames(tenantId), lockKey.accountSettings(tenantId)], async (trx) => {
      const { stored, state } = await stateOf(trx, tenantId);
      if (state.deploymentId !== undefined && state.file !== undefined) {
        const row = await findDeployment(trx, tenantId, state.deploymentId);
        if (row) return { row, file: state.file, made: false };
      }
      let name = USAGE_DEPLOYMENT_NAME;
      for (let n = 2; await findDeploymentByName(trx, tenantId, name); n++) name = `${USAGE_DEPLOYMENT_NAME} ${n}`;
      const at = timestamp(options.now);
      const row = await insertDeployment(trx, { tenant_id: tenantId, name, settings: '{}', created_by: caller.actor.userId, created_at: at, updated_at: at });
      const file = `${USAGE_DATA_DIR}/${tenantId}-${randomBytes(16).toString('hex')}.sqlite`;
      const variables = [
        { name: 'DB_TYPE', value: 'sqlite' },
        { name: 'DB_URL', value: file },
      ];
      await upsertEnvVars(
        trx,
        tenantId,
        row.id,
        variables.map(({ name: n, value }) => ({ name: n, value: options.secrets.seal(value, envVarContext(row.id, n)) })),
        at,
      );
      stored[STORED_KEY] = { ...state, deploymentId: row.id, file } satisfies UsageState;
      await writeStoredSettings(trx, tenantId, 'account_settings', stored);
      return { row, file, made: true };
    });
    if (!made.made) return made;
    try {
      // The file first: a runtime refuses to start on a data source that does not exist.
      await syncUsageData(db, tenantId, dir, made.file, options.now());
      const repo = await options.repositories.repositories.create(
        made.row.id,
        {
          branch: made.row.deploy_branch_name,
          files: new Map([[USAGE_MODEL_PATH, USAGE_MODEL]]),
          author: SERVER_AUTHOR,
          message: 'Usage analytics: the audit events cube',
        },
        made.row.deploy_branch_name,
      );
      const head = await repo.head(made.row.deploy_branch_name);
      if (head !== null) await options.deployBranchMoved(made.row, head, 'creation of the usage deployment');
    } catch (error) {
      // No deployment without its repository: the next token makes it again.
      await deleteDeployment(db, tenantId, made.row.id);
      throw error;
    }
    void options.runtimesChanged();
    return made;
  }

  return {
    /** Extension: the switch and the deployment (admin). */
    async settings(caller: Caller): Promise<UsageAnalyticsSettings> {
      caller.access.requireAdmin('read the usage-analytics settings');
      return settingsOf((await stateOf(db, caller.actor.tenantId)).state);
    },

    /** Extension: turns usage analytics on or off (admin, unscoped key); the deployment stays when it is switched off. */
    async update(caller: Caller, input: UsageAnalyticsSettingsInput): Promise<UsageAnalyticsSettings> {
      caller.access.requireAccountAdmin('change the usage-analytics settings');
      const tenantId = caller.actor.tenantId;
      return serialized(store, lockKey.accountSettings(tenantId), async (trx) => {
        const { stored, state } = await stateOf(trx, tenantId);
        const next: UsageState = { ...state };
        if (input.enabled === null) delete next.enabled;
        else next.enabled = input.enabled;
        stored[STORED_KEY] = next;
        await writeStoredSettings(trx, tenantId, 'account_settings', stored);
        return settingsOf(next);
      });
    },

    /** Reference 5.4. */
    async token(caller: Caller): Promise<UsageAnalyticsToken> {
      // Admin first: to anyone else the route says nothing about the account's settings.
      caller.access.requireAdmin('mint usage-analytics tokens');
      const tenantId = caller.actor.tenantId;
      if ((await stateOf(db, tenantId)).state.enabled !== true) {
        throw new ApiError(
          'USAGE_ANALYTICS_DISABLED',
          'Usage analytics is not enabled for this account; an admin turns it on with PUT /api/v1/tenant/usage-analytics {"enabled": true}.',
        );
      }
      const dir = options.dataSourcesDir;
      if (dir === null) throw new ApiError('UNAVAILABLE', 'This server has no data-sources directory (DATASOURCES_DIR), where the usage data source lives.');
      const { row, file, made } = await usageDeployment(caller, dir);
      if (!made) await syncUsageData(db, tenantId, dir, file, options.now());
      const apiUrl = dataApiUrl(deploymentPath(await options.urlOf(caller.tenant), row.id), null);
      const signed = await options.signing.sign(
        caller.tenant,
        {
          user_id: caller.actor.userId,
          email: caller.actor.email,
          deployment_id: row.id,
          environment_id: 'production',
          branch: row.deploy_branch_name,
          scopes: ['meta', 'sql-runner'],
          // Resolved here, never taken from the caller: the account whose usage this is.
          security_context: { tenant_id: tenantId },
        },
        { audience: apiUrl, expiresInSeconds: USAGE_TOKEN_SECONDS, subject: `user:${caller.actor.userId}`, type: DEPLOYMENT_TOKEN_TYPE },
      );
      await options.audit.record(caller, {
        action: 'token.issued',
        target: { deploymentId: row.id, environmentId: 'production' },
        details: { kind: 'usage-analytics', jti: signed.jti, expiresAt: signed.expiresAt.toISOString() },
      });
      return { token: signed.token, apiUrl, deploymentId: row.id, expiresAt: signed.expiresAt.toISOString() };
    },
  };
}
export type UsageAnalyticsService = ReturnType<typeof usageAnalyticsService>;
