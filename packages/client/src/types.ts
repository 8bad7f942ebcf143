import type { components, operations } from './generated/api.js';

/*
 * Named aliases of the generated schemas, so callers write `Folder` rather than
 * `components['schemas']['Folder']`. They follow the document: regenerate, and they follow.
 */
type Schemas = components['schemas'];

export type ProblemDetails = Schemas['ProblemDetails'];
/** Every problem code the server can answer (the `code` of problem details), as a union. */
export type ProblemCode = ProblemDetails['code'];
export type FieldError = Schemas['FieldError'];
export type PageInfo = Schemas['PageInfo'];

export type Deployment = Schemas['Deployment'];
export type DeploymentSettings = Schemas['DeploymentSettings'];
export type Folder = Schemas['Folder'];
export type Workbook = Schemas['Workbook'];
export type Report = Schemas['Report'];
export type ReportKind = Schemas['ReportKind'];
export type ReportPlacement = Schemas['ReportPlacement'];
export type ResultChecksum = Schemas['ResultChecksum'];
export type ConnectReportToWorkbookInput = NonNullable<operations['connectReportToWorkbook']['requestBody']>['content']['application/json'];
export type DisconnectReportFromWorkbookInput = NonNullable<operations['disconnectReportFromWorkbook']['requestBody']>['content']['application/json'];
export type RefreshReportInput = NonNullable<operations['refreshReport']['requestBody']>['content']['application/json'];
/** A report or a dashboard draft as canonical text, with the SHA-256 hash an edit names. */
export type TextFile = operations['getReportFile']['responses'][200]['content']['application/json'];
/** Exact-text edits made against the text of `hash`. */
export type TextEditInput = NonNullable<operations['editReportFile']['requestBody']>['content']['application/json'];
export type ExternalDocumentPlacements = Schemas['ExternalDocumentPlacements'];
export type ExternalDocumentPlacement = Schemas['ExternalDocumentPlacement'];
export type Dashboard = Schemas['Dashboard'];
export type DashboardConfig = Schemas['DashboardConfig'];
/** A saved dashboard draft: widgets may also be `FIELD` (reference 8.G.3). */
export type DashboardConfigDraft = Schemas['DashboardConfigDraft'];
/** A draft or a config to publish as sent: widget ids may be left out in a draft. */
export type DashboardConfigDraftInput = Schemas['DashboardConfigDraftInput'];
/** The body of a publish (reference 8.G.2). */
export type PublishDashboardInput = NonNullable<operations['publishDashboard']['requestBody']>['content']['application/json'];
/** A workbook's promotion to another deployment, its preview, its reports and its links (extensions). */
export type WorkbookPromotion = Schemas['WorkbookPromotion'];
export type WorkbookPromotionPreview = Schemas['WorkbookPromotionPreview'];
export type WorkbookPromotionLink = Schemas['WorkbookPromotionLink'];
export type PromotedReport = Schemas['PromotedReport'];
export type PromotionMissingMember = Schemas['PromotionMissingMember'];
export type PromoteWorkbookInput = NonNullable<operations['promoteWorkbook']['requestBody']>['content']['application/json'];
export type WorkspaceEntry = Schemas['WorkspaceEntry'];
export type WorkspaceFolderPathEntry = Schemas['WorkspaceFolderPathEntry'];
export type ResourceOwner = Schemas['ResourceOwner'];

export type User = Schemas['User'];
export type Group = Schemas['Group'];
export type GroupDetail = Schemas['GroupDetail'];
export type ApiKey = Schemas['ApiKey'];
export type CreatedApiKey = Schemas['CreatedApiKey'];
export type Policy = Schemas['Policy'];
export type UserAttribute = Schemas['UserAttribute'];

/** Transformation-project syncs (reference 7.0-7.7). */
export type DbtSyncRun = Schemas['DbtSyncRun'];
export type DbtSyncStatus = Schemas['DbtSyncStatusResponse'];
export type DbtSyncResult = Schemas['DbtSyncResultResponse'];
export type DbtSyncLogEntry = Schemas['DbtSyncLogEntry'];
export type DbtSyncSettings = Schemas['DbtSyncSettings'];
export type StartDbtSyncResponse = Schemas['StartDbtSyncResponse'];
export type StartDbtSyncInput = NonNullable<operations['startDbtSync']['requestBody']>['content']['application/json'];

/** Scheduled dashboard deliveries (reference 6). */
export type Notification = Schemas['NotificationDto'];
export type NotificationRecipient = Schemas['NotificationRecipient'];
export type NotificationDelivery = Schemas['NotificationDelivery'];
export type CreateNotificationInput = NonNullable<operations['createNotification']['requestBody']>['content']['application/json'];
export type UpdateNotificationInput = NonNullable<operations['updateNotification']['requestBody']>['content']['application/json'];
export type NotificationRecipientInput = NonNullable<
  operations['addNotificationRecipients']['requestBody']
>['content']['application/json']['recipients'][number];
export type NotificationRecipientRef = NonNullable<
  operations['removeNotificationRecipients']['requestBody']
>['content']['application/json']['recipients'][number];
export type AddNotificationRecipientsResult = Schemas['AddNotificationRecipientsResponse'];

/** Renders of published dashboards to PNG or PDF (reference 8.A). */
export type StartDashboardExportInput = NonNullable<operations['startDashboardExport']['requestBody']>['content']['application/json'];
export type StartDashboardExportResponse = Schemas['StartDashboardExportResponse'];
export type DashboardExportStatus = Schemas['DashboardExportStatus'];
export type ExportSubjectInput = Schemas['ExportSubjectInput'];
export type DashboardFilterInput = Schemas['DashboardFilterInput'];
export type DashboardTimeGrainInput = Schemas['DashboardTimeGrainInput'];
export type DashboardMemberSwitcherInput = Schemas['DashboardMemberSwitcherInput'];

/** The caller's linked git-host account and what it reaches (reference 5.19-5.22). */
export type GitHostStatus = Schemas['GitHostStatus'];
export type GitHostInstallation = Schemas['GitHostInstallation'];
export type GitHostRepository = Schemas['GitHostRepository'];
export type GitHostBranch = Schemas['GitHostBranch'];
/** The body of a connect (reference 2.20). */
export type ConnectGitHostInput = NonNullable<operations['connectGitHost']['requestBody']>['content']['application/json'];
/** The answer of a pull (reference 2.16). */
export type PullResult = operations['pullBranch']['responses'][200]['content']['application/json'];

export type Commit = Schemas['Commit'];
export type Build = Schemas['Build'];
export type BuildLogLine = Schemas['BuildLogLine'];
/** The latest build of a branch, as `GET …/build-status` reports it (reference 1.8). */
export type BuildStatus = Schemas['BuildStatusResponse'];
/** A pod running one of a deployment's environments (reference 1.10). */
export type DeploymentPod = Schemas['DeploymentPod'];
/** One line of a deployment's runtime logs (reference 1.9). */
export type DeploymentLogLine = Schemas['DeploymentLogLine'];
export type DataModelValidation = Schemas['DataModelValidationResponse'];
/** A third-party OAuth app (reference 5.5-5.9); its client secret is never returned. */
export type OAuthIntegration = Schemas['OAuthIntegration'];
/** The caller's token for an integration (reference 5.10-5.13); the token values are never returned. */
export type UserOAuthToken = Schemas['UserOAuthToken'];
export type CreateOAuthIntegrationInput = NonNullable<operations['createOAuthIntegration']['requestBody']>['content']['application/json'];
export type UpdateOAuthIntegrationInput = NonNullable<operations['updateOAuthIntegration']['requestBody']>['content']['application/json'];
export type DataModelValidationError = DataModelValidation['errors'][number];

export type WorkspaceItemRefInput = Schemas['WorkspaceItemRefInput'];
export type BulkMoveWorkspaceObjectsInput = Schemas['BulkMoveWorkspaceObjectsInput'];
export type BulkMoveWorkspaceObjectsResponse = Schemas['BulkMoveWorkspaceObjectsResponse'];
export type BulkDeleteWorkspaceObjectsInput = Schemas['BulkDeleteWorkspaceObjectsInput'];
export type BulkDeleteWorkspaceObjectsResponse = Schemas['BulkDeleteWorkspaceObjectsResponse'];
export type WorkspaceBulkFailure = Schemas['WorkspaceBulkFailure'];
export type BulkActionError = Schemas['BulkActionError'];
/** One entry of a bulk delete's `deleted`. */
export type DeletedItem = BulkDeleteWorkspaceObjectsResponse['deleted'][number];

/** The query parameters of a list operation, as the document declares them. */
export type QueryOf<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>;

type ProblemCodeIn<Body> = Body extends { code: infer Code } ? Code : never;
type ErrorBodyOf<Response> = Response extends { content: { 'application/problem+json': infer Body } } ? Body : never;
/**
 * The problem codes operation `Op` documents, from its error responses:
 * `ProblemCodeOf<'createFolder'>` is `'VALIDATION_FAILED' | 'FOLDER_NAME_TAKEN' | ...`.
 */
export type ProblemCodeOf<Op extends keyof operations> = ProblemCodeIn<ErrorBodyOf<operations[Op]['responses'][keyof operations[Op]['responses']]>>;

/** Reference 4.15: the body of POST /api/v1/embed/generate-session. */
export type GenerateEmbedSessionInput = Schemas['GenerateSession'];
/** Reference 4.15: the per-session settings (three-state switches). */
export type EmbedSessionSettings = Schemas['EmbedSessionSettings'];
/** One event of the account's audit log: a mutating request, or an explicit event such as `env-vars.read`. */
export type AuditEvent = Schemas['AuditEvent'];
export type TenantSettings = Schemas['TenantSettings'];
export type TenantEmbedSettings = Schemas['TenantEmbedSettings'];
export type AppConfig = Schemas['AppConfigResponse'];
/** Reference 5.3: the account's theme, as `app-config` answers it and admins set it on PUT /api/v1/tenant/app-config. */
export type AppTheme = Schemas['AppTheme'];

/** Agents, their chat threads and scheduled agent tasks (reference 9 and extensions). */
export type Agent = Schemas['Agent'];
export type AgentSuggestion = Schemas['AgentSuggestions']['items'][number];
export type AgentThread = Schemas['AgentThread'];
export type AgentThreadWithMessages = Schemas['AgentThreadWithMessages'];
export type AgentMessage = Schemas['AgentMessage'];
export type CreateAgentInput = NonNullable<operations['createAgent']['requestBody']>['content']['application/json'];
export type UpdateAgentInput = NonNullable<operations['updateAgent']['requestBody']>['content']['application/json'];
export type ScheduledTask = Schemas['ScheduledTask'];
export type ScheduledTaskRun = Schemas['ScheduledTaskRun'];
export type CreateScheduledTaskInput = NonNullable<operations['createScheduledTask']['requestBody']>['content']['application/json'];
export type UpdateScheduledTaskInput = NonNullable<operations['updateScheduledTask']['requestBody']>['content']['application/json'];
export type ReportDelivery = Schemas['ReportDelivery'];
export type ReportDeliveryRecipient = Schemas['ReportDeliveryRecipient'];
export type ReportDeliveryRun = Schemas['ReportDeliveryRun'];
/** The attachment a delivery mails: `csv` or `xlsx`. */
export type ReportDeliveryFormat = ReportDelivery['format'];
export type CreateReportDeliveryInput = NonNullable<operations['createReportDelivery']['requestBody']>['content']['application/json'];
export type UpdateReportDeliveryInput = NonNullable<operations['updateReportDelivery']['requestBody']>['content']['application/json'];

/** The account's AI settings and what users spent (extensions; admin). */
export type AiSettings = Schemas['AiSettings'];
export type AiProvider = Schemas['AiProvider'];
export type AiLimits = Schemas['AiLimits'];
export type UpdateAiSettingsInput = NonNullable<operations['updateAiSettings']['requestBody']>['content']['application/json'];
export type AiUsage = Schemas['AiUsage'];
export type AiUsageRow = Schemas['AiUsageRow'];
export type AgentAnswer = Schemas['AgentAnswer'];

/** Comments on embedded dashboards (reference 8.C). */
export type DashboardComment = Schemas['CommentDto'];
export type DashboardThread = Schemas['ThreadDto'];
export type MentionableUser = Schemas['MentionableUser'];
