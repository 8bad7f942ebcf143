import createFetchClient, { type Client } from 'openapi-fetch';
import { createAgents, type Agents, type Ai, type ScheduledTasks } from './agents.js';
import { createBuilds, type Builds, type Commits } from './builds.js';
import { bulkDelete, bulkMove, type BulkDeleteResult, type BulkMoveOptions, type BulkMoveResult, type BulkOptions } from './bulk.js';
import {
  listModelFiles,
  modelFileHashes,
  uploadModelFile,
  type ModelFile,
  type ModelFilesQuery,
  type ModelTarget,
  type RemoteModelFile,
  type UploadFileInput,
} from './data-model.js';
import { chat, type ChatEvent, type ChatOptions } from './chat.js';
import { createDashboardExports, type DashboardExports } from './dashboard-exports.js';
import { createDashboards, type Dashboards, type Workbooks } from './dashboards.js';
import { createEmbedTenants, type EmbedAccessApi, type EmbedTenants } from './embed-tenants.js';
import { recordOrigin } from './errors.js';
import type { paths } from './generated/api.js';
import type { ItemRef } from './items.js';
import { createLists, type Lists, type RawClient } from './pagination.js';
import { createOAuth, type OAuthIntegrations, type UserOAuthTokens } from './oauth.js';
import { createPods, type Logs, type Pods } from './pods.js';
import { createCanonicalText, type ExternalDocuments, type TextFiles } from './canonical-text.js';
import { createReportPlacements, type ReportPlacements } from './placements.js';
import { createRoles, type Roles } from './roles.js';
import { createDbtSync, type DbtSync } from './dbt-sync.js';
import { createEmbed, type Embed } from './embed.js';
import { createSharedWorkspace, type SharedWorkspace } from './shared-workspace.js';
import { createDashboardComments, type DashboardComments } from './dashboard-comments.js';
import { createGitHost, type GitHost } from './git-host.js';
import { createNotifications, type Notifications } from './notifications.js';
import { createReportDeliveries, type ReportDeliveries } from './report-deliveries.js';
import { pushModel, type PushOptions, type PushResult } from './push.js';
import { withRetries, type RetryOptions } from './retry.js';

export interface ClientOptions {
  /** The tenant host, e.g. "https://analytics.acme.com"; a trailing slash is fine; no /api/v1 suffix. */
  baseUrl: string;
  /** API key (or OAuth access token), sent as `Authorization: Bearer <token>`. */
  token: string;
  /** A fetch to send requests with (proxies, tests); the global fetch by default. */
  fetch?: typeof globalThis.fetch;
  /** false disables retries. */
  retry?: RetryOptions | false;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
}

type TypedCalls = Pick<Client<paths>, 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'request' | 'use' | 'eject'>;

/** The data-model files of a deployment's branches, and uploads (reference 2.1, 2.5-2.8). */
export interface DataModel {
  /** Every file of a branch, flattened from its tree; `withContent: true` adds each file's text. */
  files(deploymentId: number, query?: ModelFilesQuery, options?: { signal?: AbortSignal }): Promise<RemoteModelFile[]>;
  /** Path → git blob SHA-1 of every file where an upload would land. */
  hashes(deploymentId: number, target?: ModelTarget, options?: { signal?: AbortSignal }): Promise<Map<string, string>>;
  /** Sends one file into an open upload transaction (multipart); retried like a GET. */
  uploadFile(deploymentId: number, input: UploadFileInput, target?: ModelTarget, options?: { signal?: AbortSignal }): Promise<void>;
  /** Pushes a whole project: only changed files are sent; one commit, one build. See pushModel. */
  push(deploymentId: number, files: Iterable<ModelFile>, options?: PushOptions): Promise<PushResult>;
}

export interface MapiClient extends TypedCalls, Lists {
  dataModel: DataModel;
  builds: Builds;
  commits: Commits;
  /** The pods running a deployment's environments. */
  pods: Pods;
  /** A deployment's runtime logs: the tail, or followed as lines are written. */
  logs: Logs;
  /** Transformation-project syncs: start, follow, cancel, results and logs. */
  dbtSync: DbtSync;
  /** Signed embedding sessions: generate, exchange, revoke (reference 4.15-4.17), and a session with its embedded page's URL. */
  embed: Embed;
  /** A deployment's scheduled dashboard deliveries, their recipients and deliveries history (reference 6). */
  notifications: Notifications;
  /** Report deliveries (extension): a report's rows mailed as CSV on a schedule. */
  reportDeliveries: ReportDeliveries;
  /** The caller's linked git-host account, what it reaches, and deployments connected to its repositories (reference 2.16, 2.20, 5.19-5.22). */
  gitHost: GitHost;
  /** Workbooks' dashboards: drafts, publications (from a file too), versions, and duplicates (reference 8.G.1-8.G.3). */
  workbooks: Workbooks;
  /** Published dashboards by public id: the signed-embedding switch (reference 3.6). */
  dashboards: Dashboards;
  /** Renders of published dashboards to PNG or PDF: start, follow, download (reference 8.A.1-8.A.3). */
  dashboardExports: DashboardExports;
  /** Comments on embedded dashboards, for a client made with an embed token (reference 8.C). */
  dashboardComments: DashboardComments;
  /** The shared workspace and copies from it, for a client made with a creator-mode embed token (reference 8.F, 8.G.1). */
  sharedWorkspace: SharedWorkspace;
  /** Embed tenants, their users, groups and members (reference 4.1-4.13). */
  embedTenants: EmbedTenants;
  /** Embed access of workbooks and folders, sharing with a tenant, and what an embed tenant can reach (reference 3.4, 3.5, 4.14). */
  embedAccess: EmbedAccessApi;
  /** The tenant's third-party OAuth apps (reference 5.5-5.9). */
  oauthIntegrations: OAuthIntegrations;
  /** The caller's tokens for them (reference 5.10-5.13). */
  userOAuthTokens: UserOAuthTokens;
  /** Reports placed in external spreadsheets: connect, disconnect, refresh (reference 3.1-3.3). */
  reportPlacements: ReportPlacements;
  /** Reports as canonical text: read with the hash, edit exact text against it (extension). */
  reportFiles: TextFiles;
  /** Workbooks' dashboard drafts as canonical text, by workbook id (extension). */
  dashboardFiles: TextFiles;
  /** Report placements in one external spreadsheet document, across the tenant (extension). */
  externalDocuments: ExternalDocuments;
  /** A deployment's agents, their starter prompts and chat threads. */
  agents: Agents;
  /** Scheduled agent tasks and their runs (reference 9). */
  scheduledTasks: ScheduledTasks;
  /** The account's AI settings and usage (admin). */
  ai: Ai;
  /** Custom roles and their assignments to users and groups (reference 8.D; admin). */
  roles: Roles;
  /**
   * Asks an agent a question, in a new thread or `options.threadId`'s, and yields the answer's
   * events as they stream: `thread`, then `step` and `text`, then `done` or `error`.
   */
  chat(deploymentId: number, agentId: number, question: string, options?: ChatOptions): AsyncIterable<ChatEvent>;
  /** Moves items into `folderId` (null: the workspace root), at most 100 per request, in the given order. */
  bulkMove(deploymentId: number, items: Iterable<ItemRef>, folderId: number | null, options?: BulkMoveOptions): Promise<BulkMoveResult>;
  /** Deletes items, at most 100 per request, in the given order (list a folder's subfolders before it). */
  bulkDelete(deploymentId: number, items: Iterable<ItemRef>, options?: BulkOptions): Promise<BulkDeleteResult>;
}

export function createClient(options: ClientOptions): MapiClient {
  const baseUrl = checkBaseUrl(options.baseUrl);
  if (typeof options.token !== 'string' || options.token.trim() === '')
    throw new TypeError('token is required: an API key, sent as Authorization: Bearer <token>.');
  // Looked up per call, not captured: a page may replace fetch after the client is made.
  const transport = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const send = withRetries(async (request) => {
    const response = await transport(request);
    recordOrigin(response, request);
    return response;
  }, options.retry);
  const api = createFetchClient<paths>({
    baseUrl,
    fetch: send,
    headers: { ...options.headers, Authorization: `Bearer ${options.token.trim()}` },
  });
  const lists = createLists(api);
  return {
    dataModel: createDataModel(api),
    ...createBuilds(api),
    ...createPods(api),
    dbtSync: createDbtSync(api),
    embed: createEmbed(api, baseUrl),
    notifications: createNotifications(api),
    reportDeliveries: createReportDeliveries(api),
    gitHost: createGitHost(api),
    ...createDashboards(api),
    dashboardExports: createDashboardExports(api),
    dashboardComments: createDashboardComments(api),
    sharedWorkspace: createSharedWorkspace(api),
    ...createEmbedTenants(api),
    ...createOAuth(api),
    ...createReportPlacements(api),
    ...createCanonicalText(api),
    ...createAgents(api),
    roles: createRoles(api),
    chat: (deploymentId, agentId, question, chatOptions) => chat(api, deploymentId, agentId, question, chatOptions),
    GET: api.GET,
    POST: api.POST,
    PUT: api.PUT,
    PATCH: api.PATCH,
    DELETE: api.DELETE,
    request: api.request,
    use: api.use,
    eject: api.eject,
    ...lists,
    bulkMove: (deploymentId, items, folderId, bulkOptions) => bulkMove(api, lists, deploymentId, items, folderId, bulkOptions),
    bulkDelete: (deploymentId, items, bulkOptions) => bulkDelete(api, deploymentId, items, bulkOptions),
  };
}

function createDataModel(api: RawClient): DataModel {
  return {
    files: (deploymentId, query, { signal } = {}) => listModelFiles(api, deploymentId, query, signal),
    hashes: (deploymentId, target, { signal } = {}) => modelFileHashes(api, deploymentId, target, signal),
    uploadFile: (deploymentId, input, target, { signal } = {}) => uploadModelFile(api, deploymentId, input, target, signal),
    push: (deploymentId, files, options) => pushModel(api, deploymentId, files, options),
  };
}

/** Paths in the document start with /api/v1, so a base URL that already ends with it would double it. */
function checkBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TypeError(`baseUrl "${raw}" is not a URL; expected the tenant host, e.g. "https://analytics.acme.com".`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError(`baseUrl "${raw}" must be an https:// URL.`);
  if (url.search || url.hash) throw new TypeError(`baseUrl "${raw}" must not carry a query or fragment.`);
  const base = url.toString().replace(/\/+$/, '');
  if (/\/(build\/)?api\/v1$/.test(base))
    throw new TypeError(`baseUrl "${raw}" must be the tenant host without /api/v1, e.g. "${base.replace(/\/(build\/)?api\/v1$/, '')}".`);
  return base;
}
