/**
 * The generated commands: one row per operation that no hand-written command covers, naming the
 * command it gets. The names are curated here (plural kebab-case nouns, gh/kubectl verbs: list,
 * get, create, update, delete, and domain verbs where CRUD does not fit); everything else comes
 * from the OpenAPI document through src/generated/operations.ts. A row whose first words name an
 * existing group (deployments, reports, users, embed, ...) adds its command to that group.
 */
import type { Command } from 'commander';
import { OPERATIONS } from './generated/operations.js';
import type { OperationId } from './operations.js';
import { addOperationCommand, firstExample } from './resource/command.js';

export interface OperationCommand {
  operationId: OperationId;
  /** The command's words after `mapi`: the group(s), then the verb. */
  command: string[];
}

/** Descriptions of the groups the table makes; a group a hand-written module made keeps its own. */
const GROUPS: Record<string, string> = {
  server: 'The server itself: liveness and readiness (no credential needed)',
  'data-api': 'The data API: the public keys its tokens are signed with',
  'workload-identity': 'Workload identity: the issuer discovery document and its public keys',
  groups: 'Groups of users: members, and the access policies granted to them (admin key needed)',
  scim: 'SCIM 2.0 provisioning, as an identity provider calls it (admin key needed; answers in SCIM form)',
  'scim resource-types': 'The SCIM resource types this server serves',
  'scim schemas': 'The SCIM schemas this server serves',
  'scim users': 'Users as SCIM provisions them',
  'scim groups': 'Groups as SCIM provisions them',
  'user-attributes': 'User attributes: the names row-level rules and embed sessions read (admin key needed)',
  'user-attribute-values': "One user's attribute values (admin key needed)",
  'deployments environments': "A deployment's environments and their tokens",
  regions: 'Regions a deployment can run in',
  policies: 'Access policies: who (a user or group) has which access to what (admin key needed)',
  'folders embed-access': "Who among embed users reaches a folder's items",
  'workspace favorites': 'Your favourite workspace items',
  'workbooks embed-access': 'Who among embed users reaches a workbook',
  'dashboards ai-widgets': "AI widgets of a workbook's dashboard",
  charts: 'Charts: Vega-Lite specs compiled to Vega',
  'model files': 'Data model files edited one request at a time (see also `mapi model push`)',
  'model dev-mode': 'Your dev-mode branch of a deployment’s data model',
  branches: "A deployment's data model branches",
  builds: "Builds of a deployment's data model, and their logs",
  'dbt-sync settings': "A deployment's dbt project settings",
  'oidc-token-configs': 'Workload identity token configurations (admin key needed)',
  'embed sessions': 'Signed embed sessions: revoke one (`mapi embed session` starts one and prints its page URL)',
  'oauth-integrations': "The account's third-party OAuth apps (admin key needed)",
  'oauth-tokens': 'Your tokens for the OAuth integrations: authorize, show, forget',
  'oauth-clients': 'OAuth clients that sign users in to this server (admin key needed)',
  'device-sign-ins': 'Device sign-ins (mapi login --device) waiting for approval',
  tenant: "The account's settings (admin key needed)",
  'tenant app-config': 'The configuration the app reads (download restrictions and the like)',
  'tenant settings': "The account's settings",
  'tenant embed-settings': "The account's embedding settings",
  'tenant usage-analytics': 'Usage analytics of the account',
  'tenant identity-provider': "The account's identity provider (single sign-on)",
  'tenant git-host-app': "The account's git-host app (see `mapi git-host`)",
  'my-settings': 'Your own settings',
};

export const OPERATION_COMMANDS: OperationCommand[] = [
  { operationId: 'health', command: ['server', 'health'] },
  { operationId: 'ready', command: ['server', 'ready'] },
  { operationId: 'getDataApiJwks', command: ['data-api', 'jwks'] },
  { operationId: 'getWorkloadIssuerConfiguration', command: ['workload-identity', 'issuer'] },
  { operationId: 'getJwks', command: ['workload-identity', 'jwks'] },

  { operationId: 'getUser', command: ['users', 'get'] },
  { operationId: 'updateUser', command: ['users', 'update'] },
  { operationId: 'bulkCreateUsers', command: ['users', 'bulk-create'] },
  { operationId: 'getMySettings', command: ['my-settings', 'get'] },
  { operationId: 'updateMySettings', command: ['my-settings', 'set'] },

  { operationId: 'listGroups', command: ['groups', 'list'] },
  { operationId: 'createGroup', command: ['groups', 'create'] },
  { operationId: 'getGroup', command: ['groups', 'get'] },
  { operationId: 'updateGroup', command: ['groups', 'update'] },
  { operationId: 'deleteGroup', command: ['groups', 'delete'] },
  { operationId: 'addGroupMembers', command: ['groups', 'add-members'] },
  { operationId: 'removeGroupMembers', command: ['groups', 'remove-members'] },
  { operationId: 'removeGroupMember', command: ['groups', 'remove-member'] },

  { operationId: 'getScimServiceProviderConfig', command: ['scim', 'service-provider-config'] },
  { operationId: 'listScimResourceTypes', command: ['scim', 'resource-types', 'list'] },
  { operationId: 'listScimResourceTypesById', command: ['scim', 'resource-types', 'get'] },
  { operationId: 'listScimSchemas', command: ['scim', 'schemas', 'list'] },
  { operationId: 'listScimSchemasById', command: ['scim', 'schemas', 'get'] },
  { operationId: 'searchScim', command: ['scim', 'search'] },
  { operationId: 'listScimUsers', command: ['scim', 'users', 'list'] },
  { operationId: 'createScimUser', command: ['scim', 'users', 'create'] },
  { operationId: 'searchScimUsers', command: ['scim', 'users', 'search'] },
  { operationId: 'getScimUser', command: ['scim', 'users', 'get'] },
  { operationId: 'replaceScimUser', command: ['scim', 'users', 'replace'] },
  { operationId: 'patchScimUser', command: ['scim', 'users', 'patch'] },
  { operationId: 'deleteScimUser', command: ['scim', 'users', 'delete'] },
  { operationId: 'listScimGroups', command: ['scim', 'groups', 'list'] },
  { operationId: 'createScimGroup', command: ['scim', 'groups', 'create'] },
  { operationId: 'searchScimGroups', command: ['scim', 'groups', 'search'] },
  { operationId: 'getScimGroup', command: ['scim', 'groups', 'get'] },
  { operationId: 'replaceScimGroup', command: ['scim', 'groups', 'replace'] },
  { operationId: 'patchScimGroup', command: ['scim', 'groups', 'patch'] },
  { operationId: 'deleteScimGroup', command: ['scim', 'groups', 'delete'] },

  { operationId: 'listUserAttributes', command: ['user-attributes', 'list'] },
  { operationId: 'createUserAttribute', command: ['user-attributes', 'create'] },
  { operationId: 'getUserAttribute', command: ['user-attributes', 'get'] },
  { operationId: 'updateUserAttribute', command: ['user-attributes', 'update'] },
  { operationId: 'getUserAttributeValues', command: ['user-attribute-values', 'get'] },
  { operationId: 'setUserAttributeValues', command: ['user-attribute-values', 'set'] },

  { operationId: 'createPolicy', command: ['policies', 'create'] },
  { operationId: 'listPolicies', command: ['policies', 'list'] },
  { operationId: 'deletePolicy', command: ['policies', 'delete'] },

  { operationId: 'getDeployment', command: ['deployments', 'get'] },
  { operationId: 'updateDeployment', command: ['deployments', 'update'] },
  { operationId: 'deleteDeployment', command: ['deployments', 'delete'] },
  { operationId: 'getDeploymentSettings', command: ['deployments', 'settings'] },
  { operationId: 'listDeploymentVersions', command: ['deployments', 'versions'] },
  { operationId: 'advanceCreationStep', command: ['deployments', 'advance-step'] },
  { operationId: 'resetCreationStep', command: ['deployments', 'reset-step'] },
  { operationId: 'createDeploymentToken', command: ['deployments', 'create-token'] },
  { operationId: 'listEnvironments', command: ['deployments', 'environments', 'list'] },
  { operationId: 'listEnvironmentTokens', command: ['deployments', 'environments', 'tokens'] },
  { operationId: 'createEnvironmentToken', command: ['deployments', 'environments', 'create-token'] },
  { operationId: 'createEnvironmentMetaSyncToken', command: ['deployments', 'environments', 'create-meta-sync-token'] },
  { operationId: 'listRegions', command: ['regions', 'list'] },

  { operationId: 'getFolder', command: ['folders', 'get'] },
  { operationId: 'renameFolder', command: ['folders', 'rename'] },
  { operationId: 'deleteFolder', command: ['folders', 'delete'] },
  { operationId: 'getFolderEmbedAccess', command: ['folders', 'embed-access', 'get'] },
  { operationId: 'updateFolderEmbedAccess', command: ['folders', 'embed-access', 'set'] },
  { operationId: 'moveWorkspaceObject', command: ['workspace', 'move'] },
  { operationId: 'addFavorite', command: ['workspace', 'favorites', 'add'] },
  { operationId: 'removeFavorite', command: ['workspace', 'favorites', 'remove'] },

  { operationId: 'getWorkbook', command: ['workbooks', 'get'] },
  { operationId: 'getWorkbookPromotion', command: ['workbooks', 'promotion'] },
  { operationId: 'getWorkbookEmbedAccess', command: ['workbooks', 'embed-access', 'get'] },
  { operationId: 'updateWorkbookEmbedAccess', command: ['workbooks', 'embed-access', 'set'] },

  { operationId: 'listReports', command: ['reports', 'list'] },
  { operationId: 'getReport', command: ['reports', 'get'] },
  { operationId: 'upsertReportByPublicId', command: ['reports', 'put'] },
  { operationId: 'runReport', command: ['reports', 'run'] },
  { operationId: 'connectReportToWorkbook', command: ['reports', 'place'] },
  { operationId: 'refreshReport', command: ['reports', 'refresh'] },

  { operationId: 'saveDashboardDraft', command: ['dashboards', 'save-draft'] },
  { operationId: 'listDashboardVersions', command: ['dashboards', 'versions'] },
  { operationId: 'setDashboardAllowEmbed', command: ['dashboards', 'allow-embed'] },
  { operationId: 'setDashboardAiWidgetThread', command: ['dashboards', 'ai-widgets', 'set-thread'] },
  { operationId: 'summarizeDashboardAiWidget', command: ['dashboards', 'ai-widgets', 'summary'] },
  { operationId: 'compileChart', command: ['charts', 'compile'] },

  { operationId: 'listCommits', command: ['model', 'commits'] },
  { operationId: 'commitDataModel', command: ['model', 'commit'] },
  { operationId: 'updateDataModelFiles', command: ['model', 'files', 'update'] },
  { operationId: 'deleteDataModelFiles', command: ['model', 'files', 'delete'] },
  { operationId: 'renameDataModelFiles', command: ['model', 'files', 'rename'] },
  { operationId: 'enterDevMode', command: ['model', 'dev-mode', 'enter'] },
  { operationId: 'exitDevMode', command: ['model', 'dev-mode', 'exit'] },
  { operationId: 'mergeIntoParent', command: ['model', 'merge'] },
  { operationId: 'mergeToDeployBranch', command: ['model', 'merge-to-deploy'] },
  { operationId: 'listBranches', command: ['branches', 'list'] },
  { operationId: 'createBranch', command: ['branches', 'create'] },
  { operationId: 'deleteBranch', command: ['branches', 'delete'] },
  { operationId: 'setBranchStagingEnvironment', command: ['branches', 'set-staging-environment'] },
  { operationId: 'listBuilds', command: ['builds', 'list'] },
  { operationId: 'getBuild', command: ['builds', 'get'] },
  { operationId: 'getBuildLogs', command: ['builds', 'logs'] },

  { operationId: 'listDbtSyncs', command: ['dbt-sync', 'list'] },
  { operationId: 'getDbtSyncSettings', command: ['dbt-sync', 'settings', 'get'] },
  { operationId: 'putDbtSyncSettings', command: ['dbt-sync', 'settings', 'set'] },

  { operationId: 'listOidcTokenConfigs', command: ['oidc-token-configs', 'list'] },
  { operationId: 'createOidcTokenConfig', command: ['oidc-token-configs', 'create'] },
  { operationId: 'getOidcTokenConfig', command: ['oidc-token-configs', 'get'] },
  { operationId: 'updateOidcTokenConfig', command: ['oidc-token-configs', 'update'] },
  { operationId: 'deleteOidcTokenConfig', command: ['oidc-token-configs', 'delete'] },

  { operationId: 'revokeEmbedSession', command: ['embed', 'sessions', 'revoke'] },
  { operationId: 'getEmbedJwks', command: ['embed', 'jwks'] },
  { operationId: 'listEmbedTenantWorkbooks', command: ['embed', 'tenants', 'workbooks'] },

  { operationId: 'listOAuthIntegrations', command: ['oauth-integrations', 'list'] },
  { operationId: 'createOAuthIntegration', command: ['oauth-integrations', 'create'] },
  { operationId: 'getOAuthIntegration', command: ['oauth-integrations', 'get'] },
  { operationId: 'updateOAuthIntegration', command: ['oauth-integrations', 'update'] },
  { operationId: 'deleteOAuthIntegration', command: ['oauth-integrations', 'delete'] },
  { operationId: 'listUserOAuthTokens', command: ['oauth-tokens', 'list'] },
  { operationId: 'getUserOAuthToken', command: ['oauth-tokens', 'get'] },
  { operationId: 'deleteUserOAuthToken', command: ['oauth-tokens', 'delete'] },
  { operationId: 'initiateUserOAuthToken', command: ['oauth-tokens', 'authorize'] },
  { operationId: 'listOAuthClients', command: ['oauth-clients', 'list'] },
  { operationId: 'createOAuthClient', command: ['oauth-clients', 'create'] },
  { operationId: 'deleteOAuthClient', command: ['oauth-clients', 'delete'] },
  { operationId: 'approveDeviceSignIn', command: ['device-sign-ins', 'approve'] },

  { operationId: 'getAppConfig', command: ['tenant', 'app-config', 'get'] },
  { operationId: 'updateAppConfig', command: ['tenant', 'app-config', 'set'] },
  { operationId: 'getTenantSettings', command: ['tenant', 'settings', 'get'] },
  { operationId: 'updateTenantSettings', command: ['tenant', 'settings', 'set'] },
  { operationId: 'getTenantEmbedSettings', command: ['tenant', 'embed-settings', 'get'] },
  { operationId: 'updateTenantEmbedSettings', command: ['tenant', 'embed-settings', 'set'] },
  { operationId: 'getTenantUsageAnalytics', command: ['tenant', 'usage-analytics', 'get'] },
  { operationId: 'updateTenantUsageAnalytics', command: ['tenant', 'usage-analytics', 'set'] },
  { operationId: 'createUsageAnalyticsToken', command: ['tenant', 'usage-analytics', 'create-token'] },
  { operationId: 'getIdentityProvider', command: ['tenant', 'identity-provider', 'get'] },
  { operationId: 'putIdentityProvider', command: ['tenant', 'identity-provider', 'set'] },
  { operationId: 'deleteIdentityProvider', command: ['tenant', 'identity-provider', 'delete'] },
  { operationId: 'getGitHostApp', command: ['tenant', 'git-host-app', 'get'] },
  { operationId: 'putGitHostApp', command: ['tenant', 'git-host-app', 'set'] },

  { operationId: 'listAgentThreads', command: ['agents', 'threads'] },
];

/**
 * Operations no command calls, each with why a terminal is the wrong place for it. `mapi api`
 * still reaches them. An operation an API key can call does not belong here.
 */
export const NOT_IN_CLI: Partial<Record<OperationId, string>> = {
  oauthCallback: 'the browser lands here after an OAuth provider’s consent page; it carries that redirect’s code and state',
  gitHostCallback: 'the browser lands here after the git host’s authorization page; it carries that redirect’s code and state',
  exchangeEmbedSession: 'the embedded page trades its session id for an embed token; an API key plays no part',
  getEmbedDashboard: 'takes an embed token (API keys get 403): the embedded page reads the dashboard with it',
  runEmbedPythonAnalysis: 'takes an embed token (API keys get 403): the embedded page runs it for the session’s viewer',
  summarizeEmbedDashboardAiWidget: 'takes an embed token (API keys get 403): the embedded page asks it for the session’s viewer',
  listDashboardComments: 'dashboard comments take an embed token (API keys get 403): embed users comment in the embedded page',
  createDashboardComment: 'dashboard comments take an embed token (API keys get 403)',
  listMentionableUsers: 'dashboard comments take an embed token (API keys get 403)',
  updateDashboardComment: 'dashboard comments take an embed token (API keys get 403)',
  deleteDashboardComment: 'dashboard comments take an embed token (API keys get 403)',
  resolveDashboardThread: 'dashboard comments take an embed token (API keys get 403)',
};

/** The group at `path` under `program`: the one a module made, or a new one described in GROUPS. */
function groupAt(program: Command, path: string[], made: Command[]): Command {
  let parent = program;
  path.forEach((name, i) => {
    const existing = parent.commands.find((command) => command.name() === name);
    if (existing) {
      parent = existing;
      return;
    }
    const key = path.slice(0, i + 1).join(' ');
    const description = GROUPS[key];
    if (!description) throw new Error(`The generated group "${key}" has no description in GROUPS.`);
    parent = parent.command(name).description(description);
    made.push(parent);
  });
  return parent;
}

/** Adds every row's command; called last by buildProgram, so the hand-written groups exist. */
export function registerOperationCommands(program: Command): void {
  const made: Command[] = [];
  for (const row of OPERATION_COMMANDS) {
    const parent = groupAt(program, row.command.slice(0, -1), made);
    // A hand-written command of the same name wins (it does more than one request can); the
    // coverage test then checks that it covers the row's operation, and the row can go.
    if (parent.commands.some((command) => command.name() === row.command.at(-1))) continue;
    addOperationCommand(parent, row.command, row.operationId, OPERATIONS[row.operationId]);
  }
  // A group the table made shows how its commands are called, as every group's help does.
  for (const group of made) {
    const below = (command: Command): string[] => [...[firstExample(command) ?? []].flat(), ...command.commands.flatMap(below)];
    const examples = group.commands.flatMap(below).slice(0, 3);
    if (examples.length === 0) throw new Error(`The generated group "${group.name()}" has no generated command to show.`);
    group.addHelpText('after', `\nExamples:\n${examples.map((example) => `  $ ${example}`).join('\n')}\n`);
  }
}
