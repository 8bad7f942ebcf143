import fs from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_FILE } from '../scripts/write-openapi.js';
import { envVarContext } from '../src/areas/env-vars/env-vars.store.js';
import { sealedAs } from '../src/areas/oauth-integrations/oauth-integrations.store.js';
import { WorkspaceFixtures } from './workspace-fixtures.js';
import { provisionEmbedUser } from '../src/areas/embed-tenants/provision.js';
import { serialized } from '../src/db/transactions.js';
import { DIALECTS, TestApp, problem } from './harness.js';
import { scimError } from './scim-harness.js';
import { deviceTokens, oauthPost, CLI_CLIENT } from './oauth-harness.js';
import { hashOf } from '../src/areas/oauth/oauth.adapter.js';

/**
 * The shared security suite: every operation in the OpenAPI document, whatever its area, is tried
 * without a credential, with a forged one, with another tenant's, with a deactivated user's, with
 * a key scoped elsewhere, against another tenant's ids, and by a caller without permission: a
 * VIEWER without grants, or one whose only access is a custom role reading another deployment.
 * None of these may succeed or change anything. A VIEWER whose custom role reads the deployment
 * must still be refused every write there and everything account-wide.
 *
 * It runs twice: with API keys, and with OAuth access tokens (reference 5.0: both credential
 * kinds are treated alike), which add expired and revoked tokens to the refused credentials.
 * SCIM takes API keys only: every SCIM operation refuses any access token with 401.
 */
export type Kind = 'API keys' | 'access tokens';
interface Operation {
  method: string;
  path: string;
  operationId: string;
}

const doc = JSON.parse(fs.readFileSync(OPENAPI_FILE, 'utf8')) as { paths: Record<string, Record<string, { operationId: string }>> };
const operations: Operation[] = Object.entries(doc.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, op]) => ({ method: method.toUpperCase(), path, operationId: op.operationId })),
);
// The health probes and the key set are the public operations (security: []); every other one needs a credential.
// The OAuth callback takes no credential either: its single-use `state` names the user (tested in oauth-integrations.test.ts).
const PUBLIC_PATHS = new Set([
  '/healthz',
  '/readyz',
  '/.well-known/jwks.json',
  '/.well-known/openid-configuration',
  '/api/v1/data-api/jwks.json',
  '/api/v1/oauth-integrations/callback',
  '/api/v1/git-host/callback',
  '/api/v1/embed/jwks.json',
  '/api/v1/embed/session/token',
]);
const guarded = operations.filter((op) => !PUBLIC_PATHS.has(op.path));

interface Ids {
  deploymentId: number;
  /** Another deployment of the tenant: where a workbook is promoted to. */
  targetDeploymentId: number;
  /** A machine OAuth client of the tenant. */
  oauthClientId: number;
  attributeId: number;
  userId: number;
  groupId: number;
  apiKeyId: number;
  policyId: number;
  workbookId: number;
  reportId: number;
  slug: string;
  publicId: string;
  folderId: number;
  itemType: 'WORKBOOK';
  itemId: number;
  buildId: number;
  /** An environment variable of the deployment. */
  name: string;
  /** An environment of the deployment. */
  environmentId: string;
  /** An OIDC token config of the tenant. */
  configId: number;
  /** An embed tenant of the account. */
  embedTenantName: string;
  /** A group of that embed tenant (its routes name it `{id}`, as the reference does). */
  embedGroupId: number;
  /** An OAuth integration of the tenant (`{id}` of its routes, and `{integrationId}`). */
  integrationId: number;
  /** A published dashboard of the deployment, and a notification of it (`{id}` of the notification routes). */
  dashboardId: number;
  notificationId: number;
  /** A dashboard export's job id (none exists: exports are the submitter's own, so every other caller gets 404). */
  jobId: string;
  /** A git-host installation and repository (the tenant has no git-host app, so every caller gets 404). */
  installationId: number;
  owner: string;
  repo: string;
  /** An agent of the deployment, a chat thread of the admin with it, and a scheduled task of the admin's. */
  agentId: number;
  threadId: string;
  taskId: number;
  /** A report delivery of the deployment's report. */
  deliveryId: number;
  /** A comment of the embed tenant on the published dashboard. */
  commentId: number;
  /** An external spreadsheet document (placements name it; none is placed there). */
  externalWorkbookId: string;
  /** A custom role of the tenant, held by the group's member. */
  roleId: number;
}

/**
 * The refusal each interface gives: problem details for the REST API, SCIM's own error schema
 * (RFC 7644 section 3.12) under /api/scim/v2. Both carry the same status.
 */
function refused(op: Operation, res: Parameters<typeof problem>[0], status: number, code?: string): void {
  if (op.path.startsWith('/api/scim/v2')) scimError(res, status);
  else problem(res, status, code);
}

/** Required query parameters, so a request is refused for who sends it, never for its shape. */
const QUERIES: Record<string, string> = { deleteBranch: '?branchName=security-suite', listGitHostBranches: '?installationId=1' };

/** What `{id}` names: the reference calls several kinds of id so. */
function idOf(path: string, ids: Ids): number {
  if (path.includes('/notifications/')) return ids.notificationId;
  return path.startsWith('/api/v1/oauth-integrations/') ? ids.integrationId : ids.embedGroupId;
}

function urlFor(op: Operation, ids: Ids): string {
  return (
    op.path.replace(/\{(\w+)\}/g, (_m, name: string) => String(name === 'id' ? idOf(op.path, ids) : ids[name as keyof Ids])) + (QUERIES[op.operationId] ?? '')
  );
}

/** A body the operation would accept from someone allowed to call it. */
function bodyFor(op: Operation, ids: Ids): unknown {
  const bodies: Record<string, unknown> = {
    createApiKey: { name: 'security' },
    createUser: { email: 'security-suite@example.com' },
    bulkCreateUsers: { users: [{ email: 'security-bulk@example.com' }] },
    updateUser: { firstName: 'Renamed' },
    createGroup: { name: 'security-suite' },
    updateGroup: { name: 'renamed-by-suite' },
    addGroupMembers: { userIds: [ids.userId] },
    removeGroupMembers: { userIds: [ids.userId] },
    createDeployment: { name: 'security-suite' },
    updateDeployment: { name: 'renamed-by-suite' },
    createUserAttribute: { name: 'securitySuite', type: 'string' },
    updateUserAttribute: { name: 'renamedBySuite' },
    setUserAttributeValues: { userAttributes: [{ name: 'securityAttribute', value: 'x' }] },
    createScimUser: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'security-scim@example.com' },
    replaceScimUser: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'security-scim@example.com', active: false },
    patchScimUser: { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', value: { active: false } }] },
    createScimGroup: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'security-scim' },
    replaceScimGroup: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'security-scim', members: [] },
    patchScimGroup: { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'remove', path: 'members' }] },
    upsertWorkbookBySlug: { name: 'security-suite', meta: { by: 'suite' } },
    duplicateWorkbook: {},
    previewWorkbookPromotion: { targetDeploymentId: ids.targetDeploymentId },
    promoteWorkbook: { targetDeploymentId: ids.targetDeploymentId },
    saveDashboardDraft: { dashboardDraft: { widgets: [] } },
    publishDashboard: { config: { widgets: [] } },
    setDashboardAllowEmbed: { allowEmbed: true },
    upsertReportByPublicId: { name: 'security-suite', title: 'by the suite' },
    connectReportToWorkbook: { placementId: 'security-suite', externalWorkbookId: 'security-doc', resultLocation: 'Sheet1!A1' },
    disconnectReportFromWorkbook: { placementId: 'security-suite' },
    refreshReport: { placementId: 'security-suite' },
    createFolder: { name: 'security-suite', parentId: ids.folderId },
    renameFolder: { name: 'renamed-by-suite' },
    moveWorkspaceObject: { type: 'WORKBOOK', id: ids.workbookId, folderId: ids.folderId },
    bulkMoveWorkspaceObjects: {
      items: [
        { type: 'WORKBOOK', id: ids.workbookId },
        { type: 'REPORT', id: ids.reportId },
      ],
      folderId: ids.folderId,
    },
    bulkDeleteWorkspaceObjects: {
      items: [
        { type: 'WORKBOOK', id: ids.workbookId },
        { type: 'FOLDER', id: ids.folderId },
      ],
    },
    createRole: { name: 'security-suite', description: null, policies: [{ resourceType: 'Deployment', actions: ['All'], resources: ['All'] }] },
    updateRole: { name: 'renamed-by-suite', policies: [] },
    createPolicy: { principal: { type: 'USER', id: ids.userId }, resource: { type: 'DEPLOYMENT', id: ids.deploymentId }, access: 'MANAGE' },
    updateDataModelFiles: { files: [{ path: 'security.yml', content: 'cubes: []' }] },
    deleteDataModelFiles: { files: [{ path: 'security.yml' }] },
    renameDataModelFiles: { files: [{ path: 'security.yml', newPath: 'renamed.yml' }] },
    provisionEmbedUser: { externalId: 'security-suite' },
    createEmbedGroup: { name: 'security-suite-new' },
    updateEmbedGroup: { description: 'by the suite' },
    addEmbedGroupMembers: { members: [{ externalId: 'seeded' }, { externalId: 'new-by-suite' }] },
    removeEmbedGroupMembers: { members: [{ externalId: 'seeded' }] },
    updateWorkbookEmbedAccess: { embedTenantName: ids.embedTenantName, action: 'read' },
    runEmbedPythonAnalysis: { reportId: ids.reportId, reportVersionId: 1, sqlQuery: 'SELECT 1' },
    updateFolderEmbedAccess: { allEmbedUsers: true, action: 'read' },
    provisionEmbedUsers: { users: [{ externalId: 'security-suite' }] },
    createBranch: { name: 'security-suite' },
    setBranchStagingEnvironment: { enabled: true, branchName: 'security-suite' },
    pullBranch: { branchName: 'main' },
    connectGitHost: { installationId: 1, name: 'security-suite' },
    mergeToDeployBranch: { message: 'by the suite', branchName: 'security-suite' },
    finishUpload: { transaction: { id: 'security-suite' }, files: {} },
    advanceCreationStep: { creationStep: 'upload' },
    setEnvVariables: { env_variables: [{ name: 'SECURITY', value: 'x' }] },
    createDeploymentToken: { expiresIn: 60 },
    createEnvironmentToken: { security_context: { tenant: 'suite' }, scopes: ['meta', 'sql-runner'] },
    createEnvironmentMetaSyncToken: { security_context: {}, scopes: ['meta-private'] },
    putDbtSyncSettings: { manifestPath: 'security/manifest.json' },
    generateEmbedSession: { deploymentId: ids.deploymentId, externalId: 'security-suite' },
    revokeEmbedSession: { sessionId: '0'.repeat(32) },
    createOidcTokenConfig: { audienceType: 'Custom', customAudience: 'https://security.example.com' },
    updateOidcTokenConfig: { isEnabled: false },
    updateTenantEmbedSettings: { allowAi: true },
    updateAiSettings: { enabled: true, provider: { baseUrl: 'https://llm.example.com/v1', model: 'security-suite', apiKey: 'sk-security-suite' } },
    updateTenantUsageAnalytics: { enabled: true },
    createOAuthIntegration: oauthIntegrationBody('security-suite'),
    updateOAuthIntegration: oauthIntegrationBody('renamed-by-suite'),
    updateTenantSettings: { hasSupportAccess: true },
    updateMySettings: { defaultDeploymentId: ids.deploymentId },
    approveDeviceSignIn: { userCode: 'BCDF-GHJK' },
    createOAuthClient: { name: 'security-suite' },
    createNotification: { scheduleType: 'DAILY', minute: 0, hour: 9, dashboardId: ids.dashboardId },
    updateNotification: { minute: 30, filters: [{ member: 'orders.status', operator: 'equals', value: 'x' }] },
    addNotificationRecipients: { recipients: [{ type: 'EMBED_USER', embedTenantName: 'suite-new', externalId: 'new@suite.example' }] },
    removeNotificationRecipients: { recipients: [{ type: 'USER', id: ids.userId }] },
    putIdentityProvider: {
      issuer: 'https://idp.example.com',
      clientId: 'security-suite',
      clientSecret: 'security-suite-secret',
      allowedEmailDomains: ['example.com'],
    },
    putGitHostApp: {
      apiBaseUrl: 'https://api.git.example.com',
      webBaseUrl: 'https://git.example.com',
      appId: '1',
      appSlug: 'security-suite',
      clientId: 'security-suite',
      clientSecret: 'security-suite-secret',
      privateKey: 'security-suite-key',
    },
    startDashboardExport: { format: 'png', dashboardPublicId: 'security-suite' },
    updateAppConfig: { restrictDataDownload: true },
    createAgent: { name: 'security-suite' },
    updateAgent: { name: 'renamed-by-suite' },
    createScheduledTask: { agentId: ids.agentId, prompt: 'security suite', cron: '0 9 * * *' },
    updateScheduledTask: { prompt: 'changed by the suite' },
    createReportDelivery: { reportId: ids.reportId, cron: '0 9 * * *', recipients: [{ type: 'USER', userId: ids.userId }] },
    updateReportDelivery: { name: 'changed by the suite' },
    setDashboardAiWidgetThread: { widgetId: 'suite-ai', threadId: 'suite-thread', checksum: null },
    askAgent: { question: 'security suite' },
    continueAgentThread: { question: 'security suite' },
    createDashboardComment: { body: 'security suite' },
    updateDashboardComment: { body: 'changed by the suite' },
    resolveDashboardThread: { resolved: true },
    summarizeDashboardAiWidget: {},
    summarizeEmbedDashboardAiWidget: {},
    editReportFile: { hash: '0'.repeat(64), edits: [{ oldText: 'security', newText: 'suite' }] },
    editDashboardDraftFile: { hash: '0'.repeat(64), edits: [{ oldText: 'null', newText: '{}' }] },
    compileChart: { spec: { data: { name: 'rows' }, mark: 'bar', encoding: { x: { field: 'a', type: 'nominal' } } } },
  };
  return bodies[op.operationId];
}

/** Every table a request could change: the fingerprint compares their rows before and after. */
const TABLES = [
  'tenants',
  'tenant_hosts',
  'users',
  'groups',
  'group_members',
  'deployments',
  'api_keys',
  'policies',
  'scim_users',
  'scim_groups',
  'user_attributes',
  'user_attribute_values',
  'folders',
  'workbooks',
  'reports',
  'favorites',
  'branches',
  'dev_sessions',
  'builds',
  'uploads',
  'jobs',
  'env_vars',
  'signing_keys',
  'environment_tokens',
  'runtimes',
  'runtime_logs',
  'oidc_token_configs',
  'user_settings',
  'audit_events',
  'embed_sessions',
  'dashboards',
  'dashboard_versions',
  'dashboard_report_snapshots',
  'embed_tenants',
  'embed_users',
  'embed_groups',
  'embed_group_members',
  'embed_user_groups',
  'embed_user_attribute_values',
  'embed_shares',
  'dbt_sync_settings',
  'dbt_sync_runs',
  'dbt_sync_logs',
  'oauth_integrations',
  'user_oauth_tokens',
  'oauth_states',
  'oauth_models',
  'notifications',
  'notification_recipients',
  'notification_deliveries',
  'notification_delivery_recipients',
  'identity_providers',
  'idp_sign_ins',
  'git_host_apps',
  'git_host_links',
  'git_host_link_states',
  'deployment_upstreams',
  'dashboard_exports',
  'agents',
  'agent_threads',
  'agent_messages',
  'agent_tasks',
  'agent_task_runs',
  'report_deliveries',
  'report_delivery_runs',
  'ai_usage',
  'dashboard_comments',
  'workbook_promotions',
  'workbook_promotion_links',
  'roles',
  'role_users',
  'role_groups',
] as const;
function oauthIntegrationBody(name: string) {
  return {
    name,
    type: 'generic',
    authUrl: 'https://idp.example.com/auth',
    tokenUrl: 'https://idp.example.com/token',
    clientId: 'client',
    clientSecret: 'secret',
    redirectUri: 'https://mapi.example.com/api/v1/oauth-integrations/callback',
  };
}

/**
 * Defines the suite for one credential kind on every store. Each kind is a test file of its own
 * (security-api-keys.test.ts, security-access-tokens.test.ts), so the two run in parallel.
 */
export function securitySuite(kind: Kind): void {
  describe.each(DIALECTS)(`security suite over every operation (%s, ${kind})`, (dialect) => {
    const tokens = kind === 'access tokens';
    let t: TestApp;
    /** The tenant admin's credential of this run's kind. */
    let adminCredential: string;
    let expiredToken: string;
    let revokedToken: string;
    let own: Ids;
    let foreign: Ids;
    let otherTenantKey: string;
    let deactivatedKey: string;
    let viewer: { key: string; userId: number };
    /** VIEWERs without grants whose one custom role gives DeploymentRead on another deployment, or on the seeded one. */
    let readsElsewhere: { key: string; userId: number };
    let readsSeeded: { key: string; userId: number };
    let scopedKey: string;
    /** The deployment the scoped key and one custom role name: not the seeded one. */
    let elsewhereId: number;

    /**
     * Whether a request changed anything is told in one query: a count of the store's writes
     * (SQLite's total_changes() on the app's one connection; on PostgreSQL a sequence that a
     * statement trigger on every table advances). Only when it moved are the tables read, and
     * compared with what they held when the count last stood still, to name what changed: a write
     * that changed no row (a rolled-back attempt, a batch of lastUsedAt values) passes.
     */
    async function writes(): Promise<number> {
      if (dialect === 'sqlite') return Number((await sql<{ n: number }>`select total_changes() as n`.execute(t.store.db)).rows[0]?.n);
      return Number((await sql<{ n: string }>`select last_value as n from mapi_test_writes`.execute(t.store.db)).rows[0]?.n);
    }

    /** Every table's rows, sorted (PostgreSQL returns rows in storage order, which an update elsewhere in the row changes), lastUsedAt aside. */
    async function contents(): Promise<Map<string, string>> {
      const tables = new Map<string, string>();
      for (const table of TABLES) {
        const rows = await t.store.db.selectFrom(table).selectAll().execute();
        tables.set(
          table,
          rows
            .map((r) => JSON.stringify({ ...r, last_used_at: undefined }))
            .sort()
            .join(','),
        );
      }
      return tables;
    }

    let known: { writes: number; contents: Map<string, string> } | null = null;
    /** The write count before a request; the contents at that count are read only when not known yet. */
    async function fingerprint(): Promise<number> {
      const count = await writes();
      if (known?.writes !== count) {
        // Read after the count: a write in between only makes the next comparison read again.
        known = { writes: count, contents: await contents() };
      }
      return count;
    }

    /** The tables whose rows differ from those at `before` (none when nothing was written since). */
    async function changedSince(before: number): Promise<string[]> {
      const count = await writes();
      if (count === before) return [];
      const then = known?.writes === before ? known.contents : new Map<string, string>();
      const now = await contents();
      known = { writes: count, contents: now };
      return TABLES.filter((table) => then.get(table) !== now.get(table));
    }

    /** Counts this schema's writes for `writes()` on PostgreSQL: a sequence advanced by a statement trigger on every table. */
    async function countWrites(): Promise<void> {
      if (dialect !== 'postgres') return;
      await sql`create sequence mapi_test_writes`.execute(t.store.db);
      await sql`create function mapi_test_count_write() returns trigger language plpgsql as $$ begin perform nextval('mapi_test_writes'); return null; end $$`.execute(
        t.store.db,
      );
      for (const table of TABLES) {
        await sql`create trigger mapi_test_count_write after insert or update or delete or truncate on ${sql.table(table)} for each statement execute function mapi_test_count_write()`.execute(
          t.store.db,
        );
      }
      await sql`select nextval('mapi_test_writes')`.execute(t.store.db);
    }

    async function seed(tenantId: number, adminId: number, label: string): Promise<Ids> {
      const ids = await seedItems(tenantId, adminId, label);
      return {
        ...ids,
        commentId: await commentOf(tenantId, ids.dashboardId, ids.embedTenantName),
        externalWorkbookId: `${label}-document`,
        roleId: await roleOf(tenantId, ids.userId, adminId, label),
      };
    }

    /** A custom role held by the seeded member, so {roleId} names a real one and assignments have something to change. */
    async function roleOf(tenantId: number, userId: number, adminId: number, label: string): Promise<number> {
      const at = new Date().toISOString();
      const role = await t.store.db
        .insertInto('roles')
        .values({
          tenant_id: tenantId,
          name: `${label}-role`,
          description: null,
          policies: JSON.stringify([{ resourceType: 'Deployment', actions: ['DeploymentRead'], resources: ['All'] }]),
          created_by: adminId,
          created_at: at,
          updated_at: at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await t.store.db.insertInto('role_users').values({ tenant_id: tenantId, role_id: role.id, user_id: userId, created_at: at }).execute();
      return role.id;
    }

    /** A VIEWER with no grants, policies or groups whose only access is one custom role reading `deploymentId`. */
    async function roleReader(deploymentId: number, name: string): Promise<{ key: string; userId: number }> {
      const reader = await t.user('VIEWER');
      const at = new Date().toISOString();
      const role = await t.store.db
        .insertInto('roles')
        .values({
          tenant_id: t.tenantId,
          name,
          description: null,
          policies: JSON.stringify([{ resourceType: 'Deployment', actions: ['DeploymentRead'], resources: [String(deploymentId)] }]),
          created_by: t.admin.userId,
          created_at: at,
          updated_at: at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await t.store.db.insertInto('role_users').values({ tenant_id: t.tenantId, role_id: role.id, user_id: reader.userId, created_at: at }).execute();
      return reader;
    }

    /** A comment of the embed tenant's seeded user on the dashboard, so {commentId} names a real one. */
    async function commentOf(tenantId: number, dashboardId: number, embedTenantName: string): Promise<number> {
      const at = new Date().toISOString();
      const user = await t.store.db
        .selectFrom('embed_users as u')
        .innerJoin('embed_tenants as e', 'e.id', 'u.embed_tenant_id')
        .select(['u.id', 'u.embed_tenant_id'])
        .where('e.tenant_id', '=', tenantId)
        .where('e.name', '=', embedTenantName)
        .executeTakeFirstOrThrow();
      const row = await t.store.db
        .insertInto('dashboard_comments')
        .values({
          tenant_id: tenantId,
          dashboard_id: dashboardId,
          embed_tenant_id: user.embed_tenant_id,
          parent_id: null,
          author_id: user.id,
          body: 'seeded',
          mentions: '[]',
          created_at: at,
          edited_at: null,
          removed_at: null,
          resolved_at: null,
          resolved_by: null,
          last_activity_at: at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    }

    async function seedItems(tenantId: number, adminId: number, label: string): Promise<Omit<Ids, 'commentId' | 'externalWorkbookId' | 'roleId'>> {
      const deploymentId = await t.deployment(`${label}-deployment`, { tenantId });
      const targetDeploymentId = await t.deployment(`${label}-promotion-target`, { tenantId });
      const member = await t.user('EXPLORER', { tenantId });
      const groupId = await t.group(`${label}-group`, [member.userId], { tenantId });
      const apiKeyRow = await t.store.db.selectFrom('api_keys').select('id').where('user_id', '=', adminId).executeTakeFirstOrThrow();
      const policy = await t.store.db
        .insertInto('policies')
        .values({
          tenant_id: tenantId,
          principal_type: 'GROUP',
          principal_id: groupId,
          resource_type: 'DEPLOYMENT',
          resource_id: deploymentId,
          access: 'VIEW',
          created_by: adminId,
          created_at: new Date().toISOString(),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      // SCIM sees the users and groups it provisioned; the member and the group are, so SCIM ids resolve.
      const at = new Date().toISOString();
      await t.store.db.insertInto('scim_users').values({ user_id: member.userId, tenant_id: tenantId, document: '{}', created_at: at }).execute();
      await t.store.db.insertInto('scim_groups').values({ group_id: groupId, tenant_id: tenantId, document: '{}', created_at: at }).execute();
      const attribute = await t.store.db
        .insertInto('user_attributes')
        .values({ tenant_id: tenantId, name: 'securityAttribute', type: 'string', default_value: null, created_at: at, updated_at: at })
        .returning('id')
        .executeTakeFirstOrThrow();
      // A folder, a workbook and a report, so {folderId}, {workbookId}, {slug}, {reportId} and {publicId} name real items.
      const items = new WorkspaceFixtures({ store: t.store, tenantId }, deploymentId);
      const folder = { id: await items.folder(`${label}-folder`, null, adminId) };
      const workbook = { id: await items.workbook(`${label}-item`, null, adminId, { slug: `${label}-workbook` }) };
      const report = { id: await items.report(`${label}-item`, null, adminId, { publicId: `${label}-report` }) };
      const client = await t.store.db
        .insertInto('oauth_models')
        .values({
          tenant_id: tenantId,
          model: 'Client',
          key_hash: hashOf(`${label}-client`),
          payload: JSON.stringify({
            client_id: `${label}-client`,
            client_name: label,
            grant_types: ['client_credentials'],
            mapi_user_id: adminId,
            mapi_deployment_ids: null,
            mapi_created_at: at,
          }),
          secret: null,
          created_at: at,
          expires_at: null,
          grant_hash: null,
          user_code_hash: null,
          uid: null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return {
        deploymentId,
        targetDeploymentId,
        oauthClientId: client.id,
        attributeId: attribute.id,
        userId: member.userId,
        groupId,
        apiKeyId: apiKeyRow.id,
        policyId: policy.id,
        workbookId: workbook.id,
        reportId: report.id,
        slug: `${label}-workbook`,
        publicId: `${label}-report`,
        folderId: folder.id,
        itemType: 'WORKBOOK',
        itemId: workbook.id,
        buildId: await buildOf(tenantId, deploymentId),
        name: await envVarOf(tenantId, deploymentId),
        environmentId: 'production',
        configId: await oidcConfigOf(tenantId),
        ...(await embedTenantOf(tenantId, `${label}-embed`)),
        ...(await oauthOf(tenantId, adminId)),
        ...(await notificationOf(tenantId, deploymentId, workbook.id, member.userId, label)),
        deliveryId: await deliveryOf(tenantId, deploymentId, report.id, member.userId, adminId),
        jobId: `${label}-export`,
        installationId: 1,
        owner: 'security-suite',
        repo: 'models',
        ...(await agentOf(tenantId, deploymentId, adminId, label)),
      };
    }

    /** A report delivery of the report to the member, so {deliveryId} names a real one. */
    async function deliveryOf(tenantId: number, deploymentId: number, reportId: number, userId: number, adminId: number): Promise<number> {
      const at = new Date().toISOString();
      const row = await t.store.db
        .insertInto('report_deliveries')
        .values({
          tenant_id: tenantId,
          deployment_id: deploymentId,
          report_id: reportId,
          name: 'security suite',
          format: 'csv',
          cron: '0 9 * * *',
          timezone: 'UTC',
          recipients: JSON.stringify([{ type: 'USER', userId, embedUserId: null, securityContext: null }]),
          paused: 0,
          next_run_at: '2999-01-01T09:00:00.000Z',
          created_by: adminId,
          created_at: at,
          updated_at: at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    }

    /** An agent with a thread and a scheduled task of the admin, so {agentId}, {threadId} and {taskId} name real ones. */
    async function agentOf(
      tenantId: number,
      deploymentId: number,
      adminId: number,
      label: string,
    ): Promise<{ agentId: number; threadId: string; taskId: number }> {
      const at = new Date().toISOString();
      const agent = await t.store.db
        .insertInto('agents')
        .values({
          tenant_id: tenantId,
          deployment_id: deploymentId,
          name: `${label}-agent`,
          description: null,
          instructions: '',
          members: null,
          starter_prompts: '["hello"]',
          created_by: adminId,
          created_at: at,
          updated_at: at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await t.store.db
        .insertInto('agent_threads')
        .values({
          public_id: `${label}-thread`,
          tenant_id: tenantId,
          deployment_id: deploymentId,
          agent_id: agent.id,
          user_id: adminId,
          embed_user_id: null,
          title: null,
          created_at: at,
          updated_at: at,
        })
        .execute();
      const task = await t.store.db
        .insertInto('agent_tasks')
        .values({
          tenant_id: tenantId,
          deployment_id: deploymentId,
          agent_id: agent.id,
          owner_id: adminId,
          prompt: 'security suite',
          cron: '0 9 * * *',
          timezone: 'UTC',
          active: 1,
          next_run_at: '2999-01-01T09:00:00.000Z',
          created_at: at,
          updated_at: at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return { agentId: agent.id, threadId: `${label}-thread`, taskId: task.id };
    }

    /** A published dashboard with a notification that has a recipient, so {id} of the notification routes names a real one. */
    async function notificationOf(
      tenantId: number,
      deploymentId: number,
      workbookId: number,
      userId: number,
      label: string,
    ): Promise<{ dashboardId: number; notificationId: number }> {
      const at = new Date().toISOString();
      const dashboard = await t.store.db
        .insertInto('dashboards')
        .values({
          tenant_id: tenantId,
          deployment_id: deploymentId,
          workbook_id: workbookId,
          public_id: `${label}-dashboard`,
          allow_embed: 0,
          created_by: null,
          created_at: at,
          updated_at: at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const notification = await t.store.db
        .insertInto('notifications')
        .values({
          tenant_id: tenantId,
          deployment_id: deploymentId,
          dashboard_id: dashboard.id,
          schedule_type: 'DAILY',
          minute: 0,
          hour: 9,
          day_of_week: null,
          day_of_month: null,
          cron_expression: '0 9 * * *',
          timezone: 'UTC',
          is_enabled: 1,
          notification_enabled: 1,
          notification_format: 'png',
          notification_ai_summary: 0,
          filters: null,
          time_grains: null,
          member_switchers: null,
          next_run_at: '2999-01-01T09:00:00.000Z',
          created_by: null,
          created_at: at,
          updated_at: at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await t.store.db
        .insertInto('notification_recipients')
        .values({
          tenant_id: tenantId,
          notification_id: notification.id,
          type: 'USER',
          recipient_key: `user:${userId}`,
          user_id: userId,
          embed_user_id: null,
          channel_id: null,
          channel_name: null,
          security_context: null,
          created_at: at,
          updated_at: at,
        })
        .execute();
      return { dashboardId: dashboard.id, notificationId: notification.id };
    }

    /** An OAuth integration with the admin's token for it, so {id} and {integrationId} name real ones. */
    async function oauthOf(tenantId: number, adminId: number): Promise<{ integrationId: number }> {
      const at = new Date().toISOString();
      const secrets = t.app.services.secrets;
      const integration = await t.store.db
        .insertInto('oauth_integrations')
        .values({
          tenant_id: tenantId,
          name: 'security',
          type: 'generic',
          auth_url: 'https://idp.example.com/auth',
          token_url: 'https://idp.example.com/token',
          client_id: 'c',
          client_secret: '',
          redirect_uri: 'https://mapi.example.com/cb',
          scopes: null,
          config: null,
          created_at: at,
          updated_at: at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await t.store.db
        .updateTable('oauth_integrations')
        .set({ client_secret: secrets.seal('s', sealedAs.clientSecret(integration.id)) })
        .where('id', '=', integration.id)
        .execute();
      await t.store.db
        .insertInto('user_oauth_tokens')
        .values({
          tenant_id: tenantId,
          user_id: adminId,
          integration_id: integration.id,
          status: 'ACTIVE',
          access_token: secrets.seal('a', sealedAs.accessToken(integration.id, adminId)),
          refresh_token: null,
          token_type: null,
          scope: null,
          access_token_expires_at: null,
          refresh_token_expires_at: null,
          last_error: null,
          created_at: at,
          updated_at: at,
        })
        .execute();
      return { integrationId: integration.id };
    }

    /** A finished build of the deployment, so {buildId} names a real one. */
    async function buildOf(tenantId: number, deploymentId: number): Promise<number> {
      const at = new Date().toISOString();
      const build = await t.store.db
        .insertInto('builds')
        .values({
          tenant_id: tenantId,
          deployment_id: deploymentId,
          branch_name: 'main',
          mode: 'production',
          commit_sha: '0'.repeat(40),
          status: 'success',
          cause: 'security suite',
          created_at: at,
          updated_at: at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return build.id;
    }

    /** An OIDC token config of the tenant, so {configId} names a real one. */
    async function oidcConfigOf(tenantId: number): Promise<number> {
      const at = new Date().toISOString();
      const row = await t.store.db
        .insertInto('oidc_token_configs')
        .values({
          tenant_id: tenantId,
          audience_type: 'AWS',
          audience: 'sts.amazonaws.com',
          name: 'aws',
          sub_format: null,
          custom_claims: null,
          target_env_var: null,
          is_enabled: 1,
          created_at: at,
          updated_at: at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    }

    /** An embed tenant with a user, so {embedTenantName} names a real one. */
    async function embedTenantOf(tenantId: number, embedTenantName: string): Promise<{ embedTenantName: string; embedGroupId: number }> {
      const made = await serialized(t.store, 'embed-people', (trx) =>
        provisionEmbedUser(trx, tenantId, { embedTenantName, externalId: 'seeded' }, { userLimit: 10, now: () => new Date() }),
      );
      const at = new Date().toISOString();
      const group = await t.store.db
        .insertInto('embed_groups')
        .values({
          tenant_id: tenantId,
          embed_tenant_id: made.embedTenant.id,
          kind: 'tenant-group',
          name: 'security-suite',
          description: null,
          created_at: at,
          updated_at: at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return { embedTenantName, embedGroupId: group.id };
    }

    /** An environment variable of the deployment, so {name} names a real one. */
    async function envVarOf(tenantId: number, deploymentId: number): Promise<string> {
      const at = new Date().toISOString();
      const value = t.app.services.secrets.seal('seeded', envVarContext(deploymentId, 'SECURITY'));
      await t.store.db
        .insertInto('env_vars')
        .values({ tenant_id: tenantId, deployment_id: deploymentId, name: 'SECURITY', value, created_at: at, updated_at: at })
        .execute();
      return 'SECURITY';
    }

    /** An access token acting as `userId` (the device flow, approved by the tenant's admin). */
    async function token(userId: number, options: { scope?: string; host?: string; approverKey?: string } = {}): Promise<string> {
      return (await deviceTokens(t, { userId, ...options })).access_token;
    }

    beforeAll(async () => {
      t = await TestApp.create(dialect);
      own = await seed(t.tenantId, t.admin.userId, 'own');
      const other = await t.tenant('security-other', ['security-other.example.com']);
      otherTenantKey = other.admin.key;
      foreign = await seed(other.tenantId, other.admin.userId, 'foreign');
      const gone = await t.user('ADMIN');
      deactivatedKey = tokens ? await token(gone.userId) : gone.key;
      await t.store.db.updateTable('users').set({ deactivated_at: new Date().toISOString() }).where('id', '=', gone.userId).execute();
      viewer = await t.user('VIEWER');
      elsewhereId = await t.deployment('elsewhere');
      scopedKey = await t.key(t.admin.userId, { deploymentIds: [elsewhereId] });
      readsElsewhere = await roleReader(elsewhereId, 'reads-elsewhere');
      readsSeeded = await roleReader(own.deploymentId, 'reads-seeded');
      adminCredential = t.admin.key;
      await countWrites();
      if (tokens) {
        adminCredential = await token(t.admin.userId);
        otherTenantKey = await token(other.admin.userId, { host: 'security-other.example.com', approverKey: other.admin.key });
        viewer = { ...viewer, key: await token(viewer.userId) };
        readsElsewhere = { ...readsElsewhere, key: await token(readsElsewhere.userId) };
        readsSeeded = { ...readsSeeded, key: await token(readsSeeded.userId) };
        scopedKey = await token(t.admin.userId, { scope: `deployments:${elsewhereId}` });
        expiredToken = await token(t.admin.userId);
        // The clock passes its expiry: a token an hour old, as the store sees it.
        await t.store.db
          .updateTable('oauth_models')
          .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
          .where('model', '=', 'AccessToken')
          .where('key_hash', '=', hashOf(expiredToken))
          .execute();
        revokedToken = await token(t.admin.userId);
        const revoked = await oauthPost(t, '/oauth/token/revocation', { token: revokedToken, client_id: CLI_CLIENT });
        expect(revoked.statusCode, revoked.body).toBe(200);
      }
    });
    afterAll(async () => t?.close());

    const credentials: Array<[string, () => Record<string, string>]> = tokens
      ? [
          ['a forged token', () => ({ authorization: `Bearer ${'Zz0_'.repeat(10)}abc` })],
          ["another tenant's token", () => ({ authorization: `Bearer ${otherTenantKey}` })],
          ["a deactivated user's token", () => ({ authorization: `Bearer ${deactivatedKey}` })],
          ['an expired token', () => ({ authorization: `Bearer ${expiredToken}` })],
          ['a revoked token', () => ({ authorization: `Bearer ${revokedToken}` })],
        ]
      : [
          ['no credential', () => ({})],
          ['a forged key', () => ({ authorization: `Bearer mapi_${'Z'.repeat(40)}` })],
          ["another tenant's key", () => ({ authorization: `Bearer ${otherTenantKey}` })],
          ["a deactivated user's key", () => ({ authorization: `Bearer ${deactivatedKey}` })],
        ];
    /** SCIM takes API keys only: with a token, every SCIM operation is refused as unauthenticated. */
    const isScim = (op: Operation) => op.path.startsWith('/api/scim/v2');
    const restOnly = (ops: Operation[]) => (tokens ? ops.filter((op) => !isScim(op)) : ops);

    it.each(guarded.flatMap((op) => credentials.map(([name, headers]) => [`${op.method} ${op.path}`, name, op, headers] as const)))(
      '%s with %s: 401, nothing changes',
      async (_label, _name, op, headers) => {
        const before = await fingerprint();
        const body = bodyFor(op, own);
        const res = await t.request({
          method: op.method as never,
          url: urlFor(op, own),
          key: null,
          headers: headers(),
          ...(body === undefined ? {} : { body }),
        });
        refused(op, res, 401, 'UNAUTHENTICATED');
        expect(await changedSince(before), 'tables changed').toEqual([]);
      },
    );

    if (tokens) {
      it.each(guarded.filter(isScim).map((op) => [`${op.method} ${op.path}`, op] as const))(
        "%s with the admin's valid access token: 401, nothing changes (SCIM takes API keys only)",
        async (_label, op) => {
          const before = await fingerprint();
          const body = bodyFor(op, own);
          const res = await t.request({ method: op.method as never, url: urlFor(op, own), key: adminCredential, ...(body === undefined ? {} : { body }) });
          refused(op, res, 401);
          expect(await changedSince(before), 'tables changed').toEqual([]);
        },
      );
    }

    const deploymentOps = restOnly(guarded).filter((op) => op.path.includes('{deploymentId}'));
    it.each(deploymentOps.map((op) => [`${op.method} ${op.path}`, op] as const))(
      '%s with a credential scoped to another deployment: 403, nothing changes (spec: Authentication 4)',
      async (_label, op) => {
        const before = await fingerprint();
        const body = bodyFor(op, own);
        const res = await t.request({ method: op.method as never, url: urlFor(op, own), key: scopedKey, ...(body === undefined ? {} : { body }) });
        problem(res, 403, 'KEY_SCOPE_FORBIDDEN');
        expect(await changedSince(before), 'tables changed').toEqual([]);
      },
    );

    // SCIM is account-wide: a key limited to some deployments must not provision anyone (spec: Authentication 4 and 7).
    const scimOps = restOnly(guarded).filter(isScim);
    it.each(scimOps.map((op) => [`${op.method} ${op.path}`, op] as const))(
      '%s with an admin key scoped to a deployment: 403, nothing changes (spec: Authentication 4)',
      async (_label, op) => {
        const before = await fingerprint();
        const body = bodyFor(op, own);
        const res = await t.request({ method: op.method as never, url: urlFor(op, own), key: scopedKey, ...(body === undefined ? {} : { body }) });
        refused(op, res, 403);
        expect(await changedSince(before), 'tables changed').toEqual([]);
      },
    );

    // An embed tenant name names a tenant of the caller's own account: provisioning creates one of
    // that name there on demand, and deleting one that does not exist there is a 204 (reference 4.2,
    // 4.4). Neither may reach the other account's tenant of the name, which the next test checks.
    const onDemand = new Set(['provisionEmbedUser', 'provisionEmbedUsers', 'deleteEmbedTenant']);
    const idOps = restOnly(guarded).filter(
      (op) =>
        !onDemand.has(op.operationId) &&
        /\{(deploymentId|attributeId|userId|groupId|apiKeyId|policyId|folderId|itemId|configId|id|embedTenantName|integrationId|oauthClientId|agentId|taskId|threadId|deliveryId)\}/.test(
          op.path,
        ),
    );
    it.each(guarded.filter((op) => onDemand.has(op.operationId)).map((op) => [`${op.method} ${op.path}`, op] as const))(
      "%s naming another tenant's embed tenant, as this tenant's admin: that tenant's embed people are untouched",
      async (_label, op) => {
        const theirs = async () => {
          const parts: string[] = [];
          for (const table of ['embed_tenants', 'embed_users', 'embed_groups', 'embed_group_members'] as const) {
            parts.push(JSON.stringify(await t.store.db.selectFrom(table).selectAll().where('tenant_id', '!=', t.tenantId).orderBy('id').execute()));
          }
          return parts.join('\n');
        };
        const before = await theirs();
        const body = bodyFor(op, own);
        const res = await t.request({ method: op.method as never, url: urlFor(op, foreign), ...(body === undefined ? {} : { body }) });
        expect(res.statusCode, res.body).toBeLessThan(300);
        expect(await theirs()).toBe(before);
        // What the call made in this tenant goes again, so later tests see the seeded state.
        await t.request({ method: 'DELETE', url: `/api/v1/embed-tenants/${foreign.embedTenantName}` });
      },
    );
    it.each(idOps.map((op) => [`${op.method} ${op.path}`, op] as const))(
      "%s on another tenant's ids, as this tenant's admin: 404, nothing changes",
      async (_label, op) => {
        const before = await fingerprint();
        const body = bodyFor(op, own);
        const res = await t.request({ method: op.method as never, url: urlFor(op, foreign), key: adminCredential, ...(body === undefined ? {} : { body }) });
        expect(res.statusCode, res.body).toBe(404);
        refused(op, res, 404);
        expect(await changedSince(before), 'tables changed').toEqual([]);
      },
    );

    // A viewer without grants may read what is theirs and manage their own keys, nothing else.
    // Workspace lists show only what the caller may see: an empty page here, never a refusal.
    const selfService = new Set([
      'getSpec',
      'createApiKey',
      'listApiKeys',
      'getCurrentUser',
      'listGroups',
      'getGroup',
      'listDeployments',
      'listPolicies',
      'listReports',
      'listFolders',
      'listWorkspace',
      // Reference 1.15: any key.
      'listRegions',
      // Reference 5.5-5.13: integrations are read by any key; each user's tokens are their own.
      'listOAuthIntegrations',
      'getOAuthIntegration',
      'listUserOAuthTokens',
      'initiateUserOAuthToken',
      // Reference 5.3: any authenticated caller; the caller's own settings.
      'getAppConfig',
      'getMySettings',
      // Reference 5.19: any key; whether the caller's own git-host account is linked.
      'getGitHostStatus',
      // Extension: a user unlinks their own git-host account (409 when none is linked).
      'unlinkGitHost',
      // Extension: any authenticated caller has a chart compiled; it reads and writes nothing.
      'compileChart',
      // Extension: tenant-wide; placements the caller cannot read are listed as DENIED, never refused.
      'listExternalDocumentPlacements',
    ]);
    // Bulk workspace operations answer 200 with a per-item refusal (spec: bulk move, rules 1, 5, 6).
    const perItem = new Set(['bulkMoveWorkspaceObjects', 'bulkDeleteWorkspaceObjects']);
    const privileged = restOnly(guarded).filter((op) => !selfService.has(op.operationId) && !perItem.has(op.operationId));
    // A custom role reading another deployment gives nothing on the seeded one (reference 8.D,
    // docs/decisions/custom-roles.md): such a VIEWER is refused whatever a VIEWER without grants is.
    // A role reading the seeded deployment is VIEW there, as a VIEW policy is: it reads, but every
    // write on the deployment is refused, and so is everything account-wide a VIEWER may not do.
    // These are what read access allows although they are not GETs: a read sent as POST, the
    // caller's own favorites, settings and spreadsheet placements, its data API tokens (reference
    // 1.16-1.20: DeploymentRead; what needs more is dropped from the token), and using an agent.
    const READER_ACTIONS = new Set([
      'runReport',
      'addFavorite',
      'removeFavorite',
      'updateMySettings',
      'connectReportToWorkbook',
      'disconnectReportFromWorkbook',
      'refreshReport',
      'createDeploymentToken',
      'createEnvironmentToken',
      'createEnvironmentMetaSyncToken',
      'askAgent',
      'continueAgentThread',
      'createScheduledTask',
    ]);
    const onDeployment = (op: Operation) => op.path.includes('{deploymentId}');
    const readerRefused = privileged.filter((op) => !READER_ACTIONS.has(op.operationId) && (!onDeployment(op) || op.method !== 'GET'));
    const refusedCallers = [
      ['a VIEWER without grants', () => viewer, privileged],
      ['a VIEWER whose custom role reads another deployment only', () => readsElsewhere, privileged],
      ['a VIEWER whose custom role reads this deployment only', () => readsSeeded, readerRefused],
    ] as const;
    it('the custom roles reach what they name: each reader reads its deployment, and only that one', async () => {
      const reads = async (caller: { key: string }, deploymentId: number) =>
        (await t.request({ method: 'GET', url: `/api/v1/deployments/${deploymentId}`, key: caller.key })).statusCode;
      expect(await reads(readsSeeded, own.deploymentId)).toBe(200);
      expect([403, 404]).toContain(await reads(readsElsewhere, own.deploymentId));
      expect(await reads(readsElsewhere, elsewhereId)).toBe(200);
    });
    it.each(
      refusedCallers.flatMap(([name, caller]) =>
        guarded.filter((op) => perItem.has(op.operationId)).map((op) => [`${op.method} ${op.path}`, name, caller, op] as const),
      ),
    )('%s by %s: 200, every item refused with 403, nothing changes', async (_label, _name, caller, op) => {
      const before = await fingerprint();
      const body = bodyFor(op, own) as { items: unknown[] };
      const res = await t.request({ method: op.method as never, url: urlFor(op, own), key: caller().key, body });
      expect(res.statusCode, res.body).toBe(200);
      const result = res.json() as { failed: Array<{ error: { status: number } }> };
      expect(result.failed.map((f) => f.error.status)).toEqual(body.items.map(() => 403));
      expect(await changedSince(before), 'tables changed').toEqual([]);
    });
    it.each(refusedCallers.flatMap(([name, caller, ops]) => ops.map((op) => [`${op.method} ${op.path}`, name, caller, op] as const)))(
      '%s by %s: refused, nothing changes',
      async (_label, _name, caller, op) => {
        const before = await fingerprint();
        const body = bodyFor(op, own);
        const res = await t.request({ method: op.method as never, url: urlFor(op, own), key: caller().key, ...(body === undefined ? {} : { body }) });
        expect([403, 404], `${res.statusCode} ${res.body}`).toContain(res.statusCode);
        refused(op, res, res.statusCode);
        expect(await changedSince(before), 'tables changed').toEqual([]);
      },
    );
  });
}
