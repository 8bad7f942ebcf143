import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { DbtSyncSettingsRow } from '../../db/tables.js';
import { isValidBranchName } from '../../git/refs.js';
import { ApiError } from '../../shared/problems.js';
import type { Secrets } from '../../secrets/index.js';
import { timestamp, type Clock } from '../../time.js';
import { normalizeModelPath } from '../../shared/model-paths.js';
import { authorizeDeployment } from '../deployments/index.js';
import type { DbtSyncSelector, DbtSyncSettings, PutDbtSyncSettingsInput } from './settings.schemas.js';
import { findSettings, saveSettings, tokenSealedAs, type SettingsValues } from './settings.store.js';

export const DEFAULT_MANIFEST_PATH = 'target/manifest.json';
export const DEFAULT_OUTPUT_PATH = 'model/cubes/dbt';

/** What a run reads: the saved settings, or the defaults. */
export interface SyncSettings {
  repository: 'deployment' | 'url';
  /** For `url`: the repository's https URL. */
  repositoryUrl: string | null;
  hasToken: boolean;
  ref: string | null;
  manifestPath: string;
  outputPath: string;
  selector: DbtSyncSelector;
  updatedAt: string | null;
}

export function settingsOf(row: DbtSyncSettingsRow | undefined): SyncSettings {
  if (!row)
    return {
      repository: 'deployment',
      repositoryUrl: null,
      hasToken: false,
      ref: null,
      manifestPath: DEFAULT_MANIFEST_PATH,
      outputPath: DEFAULT_OUTPUT_PATH,
      selector: { paths: [], tags: [], names: [] },
      updatedAt: null,
    };
  return {
    repository: row.repository === 'url' ? 'url' : 'deployment',
    repositoryUrl: row.repository_url,
    hasToken: row.repository_token !== null,
    ref: row.ref,
    manifestPath: row.manifest_path,
    outputPath: row.output_path,
    selector: JSON.parse(row.selector) as DbtSyncSelector,
    updatedAt: row.updated_at,
  };
}

/** Why `raw` is not a repository URL a sync reads, or null: https, with a host, and no user, password, query or fragment. */
export function repositoryUrlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:') return 'must be an https URL (the token is sent with every request)';
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password: save the token in `token`';
  if (url.search !== '' || url.hash !== '') return 'must not have a query or fragment';
  return null;
}

/** A folder or file path from a root, without leading `./` or trailing `/`. */
function cleanPath(raw: string, pointer: string): string {
  return normalizeModelPath(raw.replace(/^(\.\/)+/, '').replace(/\/+$/, ''), pointer);
}

/**
 * The deployment's transformation-project settings (extension: `dbt-sync-settings`): where the
 * project's compiled manifest is, where generated cubes go, which models are synced.
 */
export function dbtSyncSettingsService(store: Store, secrets: Secrets, now: Clock) {
  const { db } = store;
  const view = (deploymentId: number, s: SyncSettings): DbtSyncSettings => ({
    deploymentId,
    repository: s.repository === 'url' ? { type: 'url', url: s.repositoryUrl ?? '', hasToken: s.hasToken } : { type: 'deployment' },
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

    /** The opened access token of a run's repository: only while the settings still name that URL (a token goes to no other). */
    async token(deploymentId: number, url: string): Promise<string | null> {
      const row = await findSettings(db, deploymentId);
      if (!row || row.repository !== 'url' || row.repository_url !== url || row.repository_token === null) return null;
      return secrets.open(row.repository_token, tokenSealedAs(deploymentId));
    },

    async get(caller: Caller, deploymentId: number): Promise<DbtSyncSettings> {
      const { row } = await authorizeDeployment(db, caller, deploymentId, 'SchemaRead');
      return view(row.id, settingsOf(await findSettings(db, row.id)));
    },

    /** Merges the given keys into the settings; bad input (every problem at once) changes nothing. */
    async put(caller: Caller, deploymentId: number, input: PutDbtSyncSettingsInput): Promise<DbtSyncSettings> {
      const { row } = await authorizeDeployment(db, caller, deploymentId, 'DeploymentUpdate');
      const saved = await findSettings(db, row.id);
      const current = settingsOf(saved);
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
      const manifestPath =
        input.manifestPath === undefined ? current.manifestPath : attempt(() => cleanPath(input.manifestPath ?? '', '/body/manifestPath'), '');
      const outputPath = input.outputPath === undefined ? current.outputPath : attempt(() => cleanPath(input.outputPath ?? '', '/body/outputPath'), '');
      const ref = input.ref === undefined ? current.ref : input.ref;
      if (ref !== null && !(await isValidBranchName(ref)))
        errors.push({ pointer: '/body/ref', message: `${JSON.stringify(ref)} is not a branch or tag name git accepts` });
      let repository: Pick<SettingsValues, 'repository' | 'repository_url' | 'repository_token'> = {
        repository: current.repository,
        repository_url: saved?.repository_url ?? null,
        repository_token: saved?.repository_token ?? null,
      };
      const given = input.repository;
      if (given?.type === 'deployment') {
        if (given.url !== undefined || given.token !== undefined)
          errors.push({ pointer: '/body/repository', message: 'takes no url or token for type deployment' });
        repository = { repository: 'deployment', repository_url: null, repository_token: null };
      } else if (given?.type === 'url') {
        const problem = given.url === undefined ? 'is required for type url' : repositoryUrlProblem(given.url);
        if (problem !== null) errors.push({ pointer: '/body/repository/url', message: `url ${problem}` });
        else {
          const url = new URL(given.url as string).href;
          // A saved token stays only while it would go to the same origin; null removes it.
          const sameOrigin = repository.repository_url !== null && new URL(repository.repository_url).origin === new URL(url).origin;
          const token =
            given.token === undefined
              ? sameOrigin
                ? repository.repository_token
                : null
              : given.token === null
                ? null
                : secrets.seal(given.token, tokenSealedAs(row.id));
          repository = { repository: 'url', repository_url: url, repository_token: token };
        }
      }
      if (errors.length > 0)
        throw new ApiError('VALIDATION_FAILED', `The settings were not changed: ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}.`, { errors });
      const selector: DbtSyncSelector = {
        paths: (input.selector?.paths ?? current.selector.paths).map((p) => p.replace(/^(\.\/)+/, '').replace(/\/+$/, '')),
        tags: input.selector?.tags ?? current.selector.tags,
        names: input.selector?.names ?? current.selector.names,
      };
      await saveSettings(
        db,
        row.tenant_id,
        row.id,
        { ...repository, ref, manifest_path: manifestPath, output_path: outputPath, selector: JSON.stringify(selector) },
        timestamp(now),
      );
      return view(row.id, settingsOf(await findSettings(db, row.id)));
    },
  };
}
export type DbtSyncSettingsService = ReturnType<typeof dbtSyncSettingsService>;
