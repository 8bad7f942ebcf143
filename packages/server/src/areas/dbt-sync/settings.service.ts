import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { DbtSyncSettingsRow } from '../../db/tables.js';
import { isValidBranchName } from '../../git/refs.js';
import { ApiError } from '../../shared/problems.js';
import { now } from '../../time.js';
import { normalizeModelPath } from '../data-model/paths.js';
import { authorizeDeployment } from '../deployments/deployment-access.js';
import type { DbtSyncSelector, DbtSyncSettings, PutDbtSyncSettingsInput } from './settings.schemas.js';
import { findSettings, saveSettings } from './settings.store.js';

export const DEFAULT_MANIFEST_PATH = 'target/manifest.json';
export const DEFAULT_OUTPUT_PATH = 'model/cubes/dbt';

/** What a run reads: the saved settings, or the defaults. */
export interface SyncSettings {
  repository: 'deployment';
  ref: string | null;
  manifestPath: string;
  outputPath: string;
  selector: DbtSyncSelector;
  updatedAt: string | null;
}

export function settingsOf(row: DbtSyncSettingsRow | undefined): SyncSettings {
  if (!row) return { repository: 'deployment', ref: null, manifestPath: DEFAULT_MANIFEST_PATH, outputPath: DEFAULT_OUTPUT_PATH, selector: { paths: [], tags: [], names: [] }, updatedAt: null };
  return {
    repository: 'deployment',
    ref: row.ref,
    manifestPath: row.manifest_path,
    outputPath: row.output_path,
    selector: JSON.parse(row.selector) as DbtSyncSelector,
    updatedAt: row.updated_at,
  };
}

/** A folder or file path from a root, without leading `./` or trailing `/`. */
function cleanPath(raw: string, pointer: string): string {
  return normalizeModelPath(raw.replace(/^(\.\/)+/, '').replace(/\/+$/, ''), pointer);
}

/**
 * The deployment's transformation-project settings (extension: `dbt-sync-settings`): where the
 * project's compiled manifest is, where generated cubes go, which models are synced.
 */
export function dbtSyncSettingsService(store: Store) {
  const { db } = store;
  const view = (deploymentId: number, s: SyncSettings): DbtSyncSettings => ({
    deploymentId,
    repository: { type: s.repository },
    ref: s.ref,
    manifestPath: s.manifestPath,
    outputPath: s.outputPath,
    selector: s.selector,
    updatedAt: s.updatedAt,
  });

  return {
    /** The settings a run of this deployment uses (no access check: the run's caller was checked). */
    async current(deploymentId: number): Promise<SyncSettings> {
      return settingsOf(await findSettings(db, deploymentId));
    },

    async get(caller: Caller, deploymentId: number): Promise<DbtSyncSettings> {
      const { row } = await authorizeDeployment(db, caller, deploymentId, 'SchemaRead');
      return view(row.id, settingsOf(await findSettings(db, row.id)));
    },

    /** Merges the given keys into the settings; bad input (every problem at once) changes nothing. */
    async put(caller: Caller, deploymentId: number, input: PutDbtSyncSettingsInput): Promise<DbtSyncSettings> {
      const { row } = await authorizeDeployment(db, caller, deploymentId, 'DeploymentUpdate');
      const current = settingsOf(await findSettings(db, row.id));
      const errors: Array<{ pointer: string; message: string }> = [];
      const attempt = <T>(fn: () => T, fallback: T): T => {
        try {
          return fn();
        } catch (error) {
          if (error instanceof ApiError && error.extra.errors) errors.push(...error.extra.errors);
          else throw error;
          return fallback;
        }
      };
      const manifestPath = input.manifestPath === undefined ? current.manifestPath : attempt(() => cleanPath(input.manifestPath ?? '', '/body/manifestPath'), '');
      const outputPath = input.outputPath === undefined ? current.outputPath : attempt(() => cleanPath(input.outputPath ?? '', '/body/outputPath'), '');
      const ref = input.ref === undefined ? current.ref : input.ref;
      if (ref !== null && !(await isValidBranchName(ref))) errors.push({ pointer: '/body/ref', message: `${JSON.stringify(ref)} is not a branch or tag name git accepts` });
      if (errors.length > 0) throw new ApiError('VALIDATION_FAILED', `The settings were not changed: ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}.`, { errors });
      const selector: DbtSyncSelector = {
        paths: (input.selector?.paths ?? current.selector.paths).map((p) => p.replace(/^(\.\/)+/, '').replace(/\/+$/, '')),
        tags: input.selector?.tags ?? current.selector.tags,
        names: input.selector?.names ?? current.selector.names,
      };
      await saveSettings(db, row.tenant_id, row.id, { repository: 'deployment', ref, manifest_path: manifestPath, output_path: outputPath, selector: JSON.stringify(selector) }, now());
      return view(row.id, settingsOf(await findSettings(db, row.id)));
    },
  };
}
export type DbtSyncSettingsService = ReturnType<typeof dbtSyncSettingsService>;
