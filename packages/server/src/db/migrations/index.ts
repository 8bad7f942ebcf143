import type { Migration, MigrationProvider } from 'kysely';
import type { Dialect } from '../dialect.js';
import { spine } from './0001_spine.js';
import { workspace } from './0002_workspace.js';
import { provisioning } from './0003_provisioning.js';
import { unicodeLower } from './0004_unicode_lower.js';
import { cacheVersions } from './0005_cache_versions.js';
import { reserved } from './0006_reserved.js';
import { listIndexes } from './0007_list_indexes.js';
import { folderTreeVersions } from './0008_folder_tree_versions.js';
import { jobs } from './0009_jobs.js';
import { dataModel } from './0010_data_model.js';
import { envVars } from './0011_env_vars.js';
import { deploymentSettings } from './0012_deployment_settings.js';
import { tenantRegions } from './0014_tenant_regions.js';
import { signingKeys } from './0013_signing_keys.js';
import { runtimes } from './0015_runtimes.js';
import { dbtSync } from './0021_dbt_sync.js';
import { dbtSyncRemote } from './0024_dbt_sync_remote.js';
import { embedSessions } from './0018_embed_sessions.js';
import { workloadIdentity } from './0023_workload_identity.js';
import { account } from './0019_account.js';
import { dashboards } from './0016_dashboards.js';
import { embedPeople } from './0017_embed_people.js';
import { oauthIntegrations } from './0020_oauth_integrations.js';
import { oauth } from './0022_oauth.js';
import { placementsAndRefreshClaims } from './0026_placements_and_refresh_claims.js';
import { notifications } from './0027_notifications.js';
import { identityProviders } from './0029_identity_providers.js';
import { deploymentUpstreams } from './0032_deployment_upstreams.js';
import { reportVersions } from './0041_report_versions.js';
import { gitHost } from './0031_git_host.js';
import { dashboardExports } from './0028_dashboard_exports.js';
import { deliveryRenderData } from './0030_delivery_render_data.js';
import { userAttributeVersions } from './0033_user_attribute_versions.js';
import { aiSettings } from './0034_ai_settings.js';
import { agents } from './0035_agents.js';
import { dashboardComments } from './0036_dashboard_comments.js';
import { reportDeliveries } from './0039_report_deliveries.js';
import { workbookPromotions } from './0040_workbook_promotions.js';
import { notificationDeliveryTriggers } from './0042_notification_delivery_triggers.js';
import { customRoles } from './0037_custom_roles.js';
import { creatorMode } from './0038_creator_mode.js';

/**
 * Migrations live in code rather than in a folder scanned at run time, so the same list runs
 * from TypeScript sources (tests) and from the compiled build (npm start). Names sort in order.
 */
export function migrationProvider(dialect: Dialect): MigrationProvider {
  return {
    async getMigrations(): Promise<Record<string, Migration>> {
      return {
        '0001_spine': spine(dialect),
        '0002_workspace': workspace(dialect),
        '0003_provisioning': provisioning(dialect),
        '0004_unicode_lower': unicodeLower(dialect),
        '0005_cache_versions': cacheVersions(dialect),
        '0006_list_indexes': reserved(dialect),
        '0007_list_indexes': listIndexes(dialect),
        '0008_folder_tree_versions': folderTreeVersions(dialect),
        '0009_jobs': jobs(dialect),
        '0010_data_model': dataModel(dialect),
        '0011_env_vars': envVars(dialect),
        '0012_deployment_settings': deploymentSettings(dialect),
        '0013_signing_keys': signingKeys(dialect),
        '0014_tenant_regions': tenantRegions(dialect),
        '0015_runtimes': runtimes(dialect),
        '0021_dbt_sync': dbtSync(dialect),
        '0018_embed_sessions': embedSessions(dialect),
        '0023_workload_identity': workloadIdentity(dialect),
        '0019_account': account(dialect),
        '0016_dashboards': dashboards(dialect),
        '0017_embed_people': embedPeople(dialect),
        '0020_oauth_integrations': oauthIntegrations(dialect),
        '0022_oauth': oauth(dialect),
        '0026_placements_and_refresh_claims': placementsAndRefreshClaims(dialect),
        '0027_notifications': notifications(dialect),
        '0029_identity_providers': identityProviders(dialect),
        '0028_dashboard_exports': dashboardExports(dialect),
        '0024_dbt_sync_remote': dbtSyncRemote(dialect),
        '0030_delivery_render_data': deliveryRenderData(dialect),
        '0031_git_host': gitHost(dialect),
        '0032_deployment_upstreams': deploymentUpstreams(dialect),
        '0033_user_attribute_versions': userAttributeVersions(dialect),
        '0034_ai_settings': aiSettings(dialect),
        '0035_agents': agents(dialect),
        '0036_dashboard_comments': dashboardComments(dialect),
        '0039_report_deliveries': reportDeliveries(dialect),
        '0041_report_versions': reportVersions(dialect),
        '0040_workbook_promotions': workbookPromotions(dialect),
        '0042_notification_delivery_triggers': notificationDeliveryTriggers(dialect),
        '0037_custom_roles': customRoles(dialect),
        '0038_creator_mode': creatorMode(dialect),
      };
    },
  };
}
