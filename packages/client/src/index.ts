/*
 * The universal entry: standard fetch only, nothing from node: or undici, so bundlers can take it
 * into a browser. Node callers that need a private CA get ./node.ts instead, through the package's
 * `node` export condition.
 */
export { createClient, type ClientOptions, type DataModel, type MapiClient } from './client.js';
export { ApiError, unwrap } from './errors.js';
export {
  DEVICE_CLIENT_ID,
  OAuthError,
  refreshTokens,
  revokeToken,
  startDeviceSignIn,
  type DeviceFlowOptions,
  type DeviceSignIn,
  type OAuthTokens,
} from './device-flow.js';
export {
  BulkInterruptedError,
  MAX_CHUNK_SIZE,
  type BulkDeleteResult,
  type BulkMoveOptions,
  type BulkMoveResult,
  type BulkOptions,
  type BulkProgress,
  type SkippedItem,
} from './bulk.js';
export {
  createNotifications,
  DeliveryWaitTimeoutError,
  RECIPIENTS_PER_REQUEST,
  type NotificationListQuery,
  type Notifications,
  type WaitForDeliveryOptions,
} from './notifications.js';
export { createGitHost, type GitHost } from './git-host.js';
export { createDbtSync, isSyncFinished, SyncWaitTimeoutError, type DbtSync, type DbtSyncHistoryQuery, type FollowSyncOptions } from './dbt-sync.js';
export { BuildWaitTimeoutError, isFinished, type BuildListQuery, type Builds, type CommitListQuery, type Commits, type WaitForBuildOptions } from './builds.js';
export {
  blobHash,
  MAX_MODEL_FILE_BYTES,
  modelPathProblem,
  type ModelFile,
  type ModelFilesQuery,
  type ModelTarget,
  type RemoteModelFile,
  type UploadFileInput,
} from './data-model.js';
export {
  createDashboardExports,
  dispositionFilename,
  ExportWaitTimeoutError,
  isExportFinished,
  type DashboardExportFile,
  type DashboardExports,
  type DownloadExportOptions,
  type ExportDashboardOptions,
  type WaitForExportOptions,
} from './dashboard-exports.js';
export {
  type Dashboards,
  type DashboardDraftResult,
  type DuplicateWorkbookOptions,
  type PublishFromFileOptions,
  type PublishFromFileResult,
  type WorkbookBySlug,
  type Workbooks,
} from './dashboards.js';
export { type PromoteWorkbookOptions, type WorkbookPromotions } from './promotions.js';
export { type DashboardComments, type DashboardThreadsQuery } from './dashboard-comments.js';
export type { CreateRoleInput, Role, RolePolicy, Roles, UpdateRoleInput } from './roles.js';
export { type SharedWorkspace, type SharedWorkspaceQuery } from './shared-workspace.js';
export type {
  EmbedAccess,
  EmbedAccessApi,
  EmbedAccessSource,
  EmbedBulkOptions,
  EmbedGroup,
  EmbedMember,
  EmbedMembersResult,
  EmbedShareTarget,
  EmbedTenant,
  EmbedTenants,
  EmbedUser,
  FolderEmbedAccess,
  ProvisionEmbedUserInput,
  ProvisionEmbedUsersResult,
  ProvisionFailure,
  ShareWorkbookOptions,
  ShareWorkbookResult,
  UpdateEmbedAccessInput,
  UpdateFolderEmbedAccessInput,
} from './embed-tenants.js';
export { DEFAULT_FOLLOW_INTERVAL_MS, type FollowOptions, type LogFilter, type Logs, type LogSource, type Pods, type TailOptions } from './pods.js';
export { embedDashboardUrl, exchangeEmbedSession, type Embed, type EmbedDashboardSession, type EmbedPageOptions } from './embed.js';
export { type OAuthIntegrations, type UserOAuthTokens } from './oauth.js';
export { type ReportPlacements } from './placements.js';
export { replaceAll, type ExternalDocuments, type TextFiles, type TextTransform, type TransformOptions } from './canonical-text.js';
export { type PushOptions, type PushProgress, type PushResult } from './push.js';
export { type Agents, type Ai, type ScheduledTasks } from './agents.js';
export { createReportDeliveries, type ReportDeliveries } from './report-deliveries.js';
export { ChatInterruptedError, type ChatEvent, type ChatMember, type ChatOptions, type ChatStep, type ChatUsage } from './chat.js';
export { readServerSentEvents, SseParser, type ServerSentEvent } from './sse.js';
export { distinctRefs, formatItemRef, parseItemRef, type ItemRef, type ItemType } from './items.js';
export {
  DEFAULT_PAGE_SIZE,
  type ApiKeyListQuery,
  type AuditEventListQuery,
  type DeploymentListQuery,
  type FolderFilter,
  type FolderListQuery,
  type GroupListQuery,
  type ListOptions,
  type PolicyListQuery,
  type ReportListQuery,
  type UserListQuery,
  type WorkspaceListQuery,
} from './pagination.js';
export type { RetryEvent, RetryOptions } from './retry.js';
export type * from './types.js';
export type { components, operations, paths } from './generated/api.js';
