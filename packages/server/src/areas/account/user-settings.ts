import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { Executor } from '../../db/tables.js';
import { ApiError } from '../../shared/problems.js';
import { timestamp, type Clock } from '../../time.js';
import { authorizeDeployment } from '../deployments/index.js';
import type { UserSettings, UserSettingsInput } from './app-config.schemas.js';
import { findUserSettings, upsertUserSettings } from './account.store.js';

async function read(db: Executor, tenantId: number, userId: number): Promise<UserSettings> {
  const row = await findUserSettings(db, tenantId, userId);
  return { defaultDeploymentId: row?.default_deployment_id ?? null };
}

/** The caller's own preferences (spec 0.5.0: the user's default deployment). A deleted deployment clears it. */
export function userSettingsService(store: Store, now: Clock) {
  const { db } = store;
  return {
    async get(caller: Caller): Promise<UserSettings> {
      return read(db, caller.actor.tenantId, caller.actor.userId);
    },

    /** A merge; the default must be a deployment the caller can see (404 otherwise) and, for a scoped key, within its scope. */
    async update(caller: Caller, input: UserSettingsInput): Promise<UserSettings> {
      const { tenantId, userId, scope } = caller.actor;
      if (input.defaultDeploymentId === undefined) return read(db, tenantId, userId);
      const id = input.defaultDeploymentId;
      if (id !== null) {
        if (scope !== null && !scope.includes(id)) {
          throw new ApiError(
            'KEY_SCOPE_FORBIDDEN',
            `This API key is scoped to deployments ${scope.join(', ') || '(none)'} and cannot choose deployment ${id}.`,
          );
        }
        await authorizeDeployment(db, caller, id, 'DeploymentRead');
      }
      const at = timestamp(now);
      await upsertUserSettings(db, tenantId, userId, id, at);
      return read(db, tenantId, userId);
    },
  };
}
export type UserSettingsService = ReturnType<typeof userSettingsService>;
