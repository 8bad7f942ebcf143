import type { DeploymentRow } from '../../db/tables.js';
import { ApiError } from '../../shared/problems.js';
import { newestIn, imageOf, plainVersion, type Catalog } from './catalog.js';
import type { DeploymentSettings, UpdateDeploymentInput } from './deployments.schemas.js';
import { mergePatch, parseSettings, withoutSecrets, type JsonObject } from './settings.js';

/** The launchpad and pre-aggregation storage settings, kept together as JSON (migration 0012). */
interface Options {
  templateVariables?: JsonObject;
  defaultLaunchpadViewGroup?: string;
  launchpadTabs?: string[];
  cspsConfig?: JsonObject;
}

function optionsOf(row: DeploymentRow): Options {
  return parseSettings(row.options) as Options;
}

/** The version a deployment runs: the one it holds, else its channel's newest. */
export function currentVersion(row: DeploymentRow, catalog: Catalog): string {
  return row.release_channel_version ?? newestIn(catalog, row.release_channel);
}

/** Reference 1.0 `DeploymentSettings` of a row; secrets never included. */
export function settingsOf(row: DeploymentRow, deploymentUrl: string, catalog: Catalog): DeploymentSettings {
  const options = optionsOf(row);
  const version = currentVersion(row, catalog);
  return {
    id: row.id,
    name: row.name,
    template: row.template,
    cloudProvider: row.cloud_provider,
    creationStep: row.creation_step,
    deploymentUrl,
    releaseChannel: row.release_channel,
    deployBranchName: row.deploy_branch_name,
    deployBranchReadOnly: row.deploy_branch_read_only === 1,
    deployBranchMergeAllowed: row.deploy_branch_merge_allowed === 1,
    deployProjectRoot: row.deploy_project_root,
    isPlatformSqlEnabled: true,
    isSupportPreAggregations: true,
    autoDomain: null,
    customDomain: row.custom_domain,
    region: row.region,
    targetPlatform: row.target_platform,
    platformImageCloud: 'process',
    platformImageVersion: imageOf(version),
    creationMethod: row.creation_method,
    deployMode: row.deploy_mode,
    repoType: 'git',
    isCold: false,
    isManaged: row.is_managed === 1,
    releaseChannelVersion: version,
    releaseChannelVersionHold: row.release_channel_version_hold === 1,
    defaultLaunchpadViewGroup: options.defaultLaunchpadViewGroup ?? null,
    launchpadTabs: options.launchpadTabs ?? null,
    templateVariables: withoutSecrets(options.templateVariables ?? {}) as JsonObject,
    cspsConfig: (options.cspsConfig as DeploymentSettings['cspsConfig']) ?? null,
    settings: withoutSecrets(parseSettings(row.settings)) as JsonObject,
  };
}

/** The columns a PUT changes (reference 1.4), computed from the row as it is; throws on a bad version. */
export type SettingsChanges = Partial<
  Pick<
    DeploymentRow,
    | 'name'
    | 'cloud_provider'
    | 'creation_method'
    | 'deploy_mode'
    | 'region'
    | 'custom_domain'
    | 'template'
    | 'release_channel'
    | 'release_channel_version'
    | 'release_channel_version_hold'
    | 'options'
    | 'settings'
  >
>;

function versionProblem(detail: string): ApiError {
  return new ApiError('VALIDATION_FAILED', detail, { errors: [{ pointer: '/body/releaseChannelVersion', message: 'is not offered for this channel' }] });
}

/**
 * The merge of reference 1.4. A version must be one `GET …/versions` lists for the target channel;
 * a version other than the channel's newest holds (releaseChannelVersionHold) unless the body
 * says otherwise; changing the channel alone moves to its newest version.
 */
export function applySettings(row: DeploymentRow, input: UpdateDeploymentInput, catalog: Catalog, offered: (channel: string) => string[]): SettingsChanges {
  const changes: SettingsChanges = {};
  if (input.name != null) changes.name = input.name;
  if (input.cloudProvider != null) changes.cloud_provider = input.cloudProvider;
  if (input.creationMethod != null) changes.creation_method = input.creationMethod;
  if (input.deployMode != null) changes.deploy_mode = input.deployMode;
  if (input.customDomain != null) changes.custom_domain = input.customDomain === '' ? null : input.customDomain.toLowerCase();
  if (input.template != null) changes.template = input.template;
  // The service has checked the region against the tenant's regions (a subset of the catalog's).
  if (input.region != null) changes.region = input.region;
  const channel = input.releaseChannel ?? row.release_channel;
  if (input.releaseChannelVersion != null) {
    const version = plainVersion(input.releaseChannelVersion);
    if (version === null || !offered(channel).includes(version)) {
      throw versionProblem(
        `Version ${JSON.stringify(input.releaseChannelVersion)} is not one GET …/versions lists for the ${channel} channel; choose one of ${offered(channel).join(', ')}.`,
      );
    }
    const newest = newestIn(catalog, channel);
    changes.release_channel = channel;
    changes.release_channel_version = version === newest && input.releaseChannelVersionHold !== true ? null : version;
    changes.release_channel_version_hold = (input.releaseChannelVersionHold ?? version !== newest) ? 1 : 0;
  } else if (input.releaseChannel != null && input.releaseChannel !== row.release_channel) {
    changes.release_channel = input.releaseChannel;
    changes.release_channel_version = null;
    changes.release_channel_version_hold = input.releaseChannelVersionHold ? 1 : 0;
  } else if (input.releaseChannelVersionHold != null) {
    changes.release_channel_version_hold = input.releaseChannelVersionHold ? 1 : 0;
    // Holding pins the version it runs now; releasing lets it follow the channel again.
    changes.release_channel_version = input.releaseChannelVersionHold ? currentVersion(row, catalog) : null;
  }
  const options = optionsOf(row);
  let optionsChanged = false;
  if (input.templateVariables != null) {
    options.templateVariables = mergePatch(options.templateVariables ?? {}, input.templateVariables) as JsonObject;
    optionsChanged = true;
  }
  if (input.defaultLaunchpadViewGroup != null) {
    options.defaultLaunchpadViewGroup = input.defaultLaunchpadViewGroup;
    optionsChanged = true;
  }
  if (input.launchpadTabs != null) {
    options.launchpadTabs = input.launchpadTabs;
    optionsChanged = true;
  }
  if (input.cspsConfig != null) {
    options.cspsConfig = input.cspsConfig as JsonObject;
    optionsChanged = true;
  }
  if (optionsChanged) changes.options = JSON.stringify(options);
  if (input.settings !== undefined) changes.settings = JSON.stringify(mergePatch(parseSettings(row.settings), input.settings) as JsonObject);
  return changes;
}
