import { isUsageDataPath, USAGE_DATA_DIR } from './data-source-check.js';
import type { RuntimesChanged } from '../deployments/index.js';
import { dataSourceRefusal, type DataSourceRules, type DataSourceVariables } from './data-source-check.js';
import type { Caller } from '../../access/caller.js';
import type { Audit } from '../../audit/index.js';
import type { Store } from '../../db/database.js';
import type { Executor } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import type { Secrets } from '../../secrets/index.js';
import { decodeCursor, pageRequest, toPage, type PageRequest } from '../../shared/pagination.js';
import { isSecretName } from '../../secrets/secret-names.js';
import { ApiError, type FieldError } from '../../shared/problems.js';
import { timestamp, type Clock } from '../../time.js';
import { authorizeDeployment } from '../deployments/index.js';
import { MASK, type EnvVariableItem, type EnvVariablesListResponse, type SetEnvVariablesInput } from './env-vars.schemas.js';
import { deleteEnvVar, envVarContext, existingNames, listEnvVars, sealedValues, upsertEnvVars } from './env-vars.store.js';

/** Reference 1.12: what a new name must be. */
const POSIX_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Reference 1.11: a secret's value is hidden on reads (secrets/secret-names.ts says which names are). */
export function isMasked(name: string): boolean {
  return isSecretName(name);
}

function afterName(page: PageRequest): string | undefined {
  if (page.after === undefined) return undefined;
  const [name] = decodeCursor(page.after, 1);
  if (typeof name !== 'string')
    throw new ApiError('INVALID_CURSOR', 'The `after` cursor was not issued by this list; pass `pageInfo.endCursor` of the previous page.');
  return name;
}

/** Every refusal of a PUT body at once, each naming its variable (never its value). */
function bodyErrors(items: SetEnvVariablesInput['env_variables'], existing: Set<string>): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  items.forEach(({ name, value }, i) => {
    const at = `/body/env_variables/${i}`;
    if (seen.has(name)) errors.push({ pointer: `${at}/name`, message: `${JSON.stringify(name)} is listed more than once` });
    seen.add(name);
    if (value === MASK)
      errors.push({
        pointer: `${at}/value`,
        message: `the value of ${JSON.stringify(name)} is the ${MASK} placeholder reads return; send the real value, or leave the variable out to keep it`,
      });
    // The accounts' usage data sources (usage-analytics/) are the server's to name, each for its own account only.
    if (name === 'DB_URL' && isUsageDataPath(value))
      errors.push({ pointer: `${at}/value`, message: `DB_URL may not name a file under ${USAGE_DATA_DIR}/, where the server keeps the accounts' usage data` });
    if (!POSIX_NAME.test(name) && !existing.has(name))
      errors.push({ pointer: `${at}/name`, message: `${JSON.stringify(name)} is not a valid new name: use letters, digits and _, not starting with a digit` });
  });
  return errors;
}

const NO_DATA_SOURCE_RULES: DataSourceRules = { ownCluster: async () => null, allowSocketSources: false };
const DATA_SOURCE_NAMES = ['DB_TYPE', 'DB_URL', 'DB_PASSWORD'] as const;

export function envVarsService(
  store: Store,
  secrets: Secrets,
  now: Clock,
  runtimesChanged: RuntimesChanged = async () => undefined,
  dataSources: DataSourceRules = NO_DATA_SOURCE_RULES,
  audit?: Audit,
) {
  const { db } = store;

  async function page(executor: Executor, tenantId: number, deploymentId: number, request: PageRequest): Promise<EnvVariablesListResponse> {
    const rows = await listEnvVars(executor, store.dialect, tenantId, deploymentId, afterName(request), request.first + 1);
    const { items, pageInfo } = toPage(rows, request, (r) => [r.name]);
    // A masked value is never decrypted: what is not shown is not held in memory either.
    const shown: EnvVariableItem[] = items.map((r) => ({
      name: r.name,
      value: isMasked(r.name) ? MASK : secrets.open(r.value, envVarContext(deploymentId, r.name)),
    }));
    return { items: shown, data: shown, pageInfo };
  }

  /**
   * A write that makes or changes a PostgreSQL data source, checked as it will stand (stored values
   * for what the body leaves out): a 400 pointing at the item that made it, when it is refused
   * (data-source-check.ts). Outside the write's lock: it may wait on the network for seconds.
   */
  async function dataSourceErrors(tenantId: number, deploymentId: number, items: SetEnvVariablesInput['env_variables']): Promise<FieldError[]> {
    const sent = items.map((item, i) => ({ ...item, i })).filter((item) => (DATA_SOURCE_NAMES as readonly string[]).includes(item.name));
    if (sent.length === 0) return [];
    const vars: DataSourceVariables = {};
    for (const row of await sealedValues(db, tenantId, deploymentId, [...DATA_SOURCE_NAMES])) {
      try {
        vars[row.name as keyof DataSourceVariables] = secrets.open(row.value, envVarContext(deploymentId, row.name));
      } catch {
        // A value that does not decrypt here is one the runtime cannot use either: left out.
      }
    }
    for (const { name, value } of sent) vars[name as keyof DataSourceVariables] = value;
    const refusal = await dataSourceRefusal(vars, vars.DB_PASSWORD, dataSources);
    if (refusal === null) return [];
    const blamed = sent.find((item) => item.name === 'DB_URL') ?? sent[0]!;
    return [{ pointer: `/body/env_variables/${blamed.i}/value`, message: refusal }];
  }

  return {
    /** Reference 1.11: one page in name order, secret-looking values masked (SecretsManage). */
    async list(caller: Caller, deploymentId: number, query: { first?: number; after?: string }): Promise<EnvVariablesListResponse> {
      await authorizeDeployment(db, caller, deploymentId, 'SecretsManage');
      const result = await page(db, caller.actor.tenantId, deploymentId, pageRequest(query));
      // Reading secrets is an audit event of its own (names are counted, values never kept).
      await audit?.record(caller, { action: 'env-vars.read', target: { deploymentId }, details: { count: result.items.length } });
      return result;
    },

    /**
     * Reference 1.12: creates or overwrites each listed variable; the rest keep their values. All
     * or nothing: one refused item refuses the request. Answers the first page after the change.
     */
    async set(caller: Caller, deploymentId: number, input: SetEnvVariablesInput): Promise<EnvVariablesListResponse> {
      await authorizeDeployment(db, caller, deploymentId, 'SecretsManage');
      const tenantId = caller.actor.tenantId;
      const items = input.env_variables;
      const refused = await dataSourceErrors(tenantId, deploymentId, items);
      const answer = await serialized(store, lockKey.envVars(deploymentId), async (trx) => {
        const existing = await existingNames(
          trx,
          tenantId,
          deploymentId,
          items.filter((i) => !POSIX_NAME.test(i.name)).map((i) => i.name),
        );
        const errors = [...bodyErrors(items, existing), ...refused];
        if (errors.length > 0) {
          throw new ApiError('VALIDATION_FAILED', `Nothing was changed: ${errors.map((e) => e.message.replace(/\.$/, '')).join('; ')}.`, { errors });
        }
        const sealed = items.map(({ name, value }) => ({ name, value: secrets.seal(value, envVarContext(deploymentId, name)) }));
        await upsertEnvVars(trx, tenantId, deploymentId, sealed, timestamp(now));
        return page(trx, tenantId, deploymentId, pageRequest({}));
      });
      // The runtimes restart with the new values (their logs name the variables, never a value).
      void runtimesChanged();
      return answer;
    },

    /** Extension: removes one variable by name, legacy names included (SecretsManage). */
    async remove(caller: Caller, deploymentId: number, name: string): Promise<{ success: true }> {
      await authorizeDeployment(db, caller, deploymentId, 'SecretsManage');
      const removed = await serialized(store, lockKey.envVars(deploymentId), (trx) => deleteEnvVar(trx, caller.actor.tenantId, deploymentId, name));
      if (!removed) throw new ApiError('ENV_VAR_NOT_FOUND', `Deployment ${deploymentId} has no environment variable ${JSON.stringify(name)}.`);
      void runtimesChanged();
      return { success: true };
    },
  };
}
export type EnvVarsService = ReturnType<typeof envVarsService>;
