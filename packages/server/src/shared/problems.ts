/**
 * Every request-level error the API can return, by stable code. The code travels in the
 * problem-details body as `code`; its status and title come only from this table.
 */
export const PROBLEMS = {
  VALIDATION_FAILED: { status: 400, title: 'The request is not valid' },
  MALFORMED_JSON: { status: 400, title: 'The request body is not valid JSON' },
  INVALID_CURSOR: { status: 400, title: 'The pagination cursor is not valid' },
  INVALID_OPERATION: { status: 400, title: 'The operation is not allowed on this resource' },
  NOT_A_DEV_BRANCH: { status: 400, title: 'File writes need a dev-mode branch' },
  NO_DEV_MODE: { status: 400, title: 'The credential has no active dev-mode branch' },
  INVALID_BRANCH: { status: 400, title: 'The branch cannot be used this way' },
  INVALID_MOVE: { status: 400, title: 'An item cannot be moved into itself or below itself' },
  FOLDER_TOO_DEEP: { status: 400, title: 'Folders nest at most 10 levels deep' },
  FOLDER_NAME_CONFLICT: { status: 400, title: 'The destination already holds a folder of this name' },
  FOLDER_HAS_SUBFOLDERS: { status: 400, title: 'A folder with subfolders cannot be deleted' },
  CURSOR_UNAVAILABLE: { status: 400, title: 'Cursor pagination is not available for this ordering' },
  BRANCH_NOT_SERVED: { status: 400, title: 'Nothing serves this branch now' },
  CREATOR_MODE_REQUIRED: { status: 400, title: 'This field needs a creator-mode session' },
  OAUTH_STATE_INVALID: { status: 400, title: "The OAuth state is unknown, used, expired or not the caller's" },
  OAUTH_AUTHORIZATION_FAILED: { status: 400, title: 'The OAuth provider refused the authorization' },
  UNAUTHENTICATED: { status: 401, title: 'Authentication required' },
  FORBIDDEN: { status: 403, title: 'Not allowed' },
  KEY_SCOPE_FORBIDDEN: { status: 403, title: 'The API key is not scoped to this deployment' },
  EMBEDDING_DISABLED: { status: 403, title: 'Embedding is turned off for this account' },
  CREATOR_MODE_DISABLED: { status: 403, title: 'Creator mode is turned off for this account' },
  PYTHON_ANALYSIS_DISABLED: { status: 403, title: 'Python analysis is turned off for this account' },
  DASHBOARD_COMMENTS_DISABLED: { status: 403, title: 'Dashboard comments are turned off for this account' },
  ROUTE_NOT_FOUND: { status: 404, title: 'No such route' },
  USAGE_ANALYTICS_DISABLED: { status: 404, title: 'Usage analytics is not enabled for this account' },
  TENANT_NOT_FOUND: { status: 404, title: 'No tenant answers on this host' },
  USER_NOT_FOUND: { status: 404, title: 'User not found' },
  GROUP_NOT_FOUND: { status: 404, title: 'Group not found' },
  DEPLOYMENT_NOT_FOUND: { status: 404, title: 'Deployment not found' },
  API_KEY_NOT_FOUND: { status: 404, title: 'API key not found' },
  POLICY_NOT_FOUND: { status: 404, title: 'Policy not found' },
  ROLE_NOT_FOUND: { status: 404, title: 'Custom role not found' },
  USER_ATTRIBUTE_NOT_FOUND: { status: 404, title: 'User attribute not found' },
  OIDC_TOKEN_CONFIG_NOT_FOUND: { status: 404, title: 'OIDC token config not found' },
  FOLDER_NOT_FOUND: { status: 404, title: 'Folder not found' },
  WORKBOOK_NOT_FOUND: { status: 404, title: 'Workbook not found' },
  REPORT_NOT_FOUND: { status: 404, title: 'Report not found' },
  PLACEMENT_NOT_FOUND: { status: 404, title: 'The report has no such placement' },
  DASHBOARD_NOT_FOUND: { status: 404, title: 'Dashboard not found' },
  NOTIFICATION_NOT_FOUND: { status: 404, title: 'The deployment has no notification with this id' },
  NOTIFICATION_SENDING_OFF: { status: 409, title: 'The notification has sending switched off, so sending it now would mail nobody' },
  NOTIFICATION_NO_RECIPIENTS: { status: 409, title: 'The notification has no recipients to send to' },
  BRANCH_NOT_FOUND: { status: 404, title: 'Branch not found' },
  BUILD_NOT_FOUND: { status: 404, title: 'Build not found' },
  UPLOAD_NOT_FOUND: { status: 404, title: 'No open upload with this transaction id' },
  FILE_NOT_FOUND: { status: 404, title: 'No such file on the branch' },
  ENVIRONMENT_NOT_FOUND: { status: 404, title: 'The deployment has no environment with this id' },
  DBT_SYNC_NOT_FOUND: { status: 404, title: 'The deployment has no sync with this id' },
  DBT_SYNC_FILES_NOT_FOUND: { status: 404, title: 'The sync has no generated files to read' },
  ENV_VAR_NOT_FOUND: { status: 404, title: 'The deployment has no environment variable of this name' },
  OAUTH_INTEGRATION_NOT_FOUND: { status: 404, title: 'OAuth integration not found' },
  USER_OAUTH_TOKEN_NOT_FOUND: { status: 404, title: 'The caller holds no token for this OAuth integration' },
  DEVICE_CODE_NOT_FOUND: { status: 404, title: 'No device sign-in waits under this user code' },
  OAUTH_CLIENT_NOT_FOUND: { status: 404, title: 'OAuth client not found' },
  IDENTITY_PROVIDER_NOT_FOUND: { status: 404, title: 'The tenant has no identity provider' },
  DESTINATION_NOT_FOUND: { status: 404, title: 'Destination folder not found' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed on this route' },
  REQUEST_TIMEOUT: { status: 408, title: 'The request did not arrive in time' },
  EMAIL_TAKEN: { status: 409, title: 'A user with this email already exists' },
  GROUP_NAME_TAKEN: { status: 409, title: 'A group with this name already exists' },
  ROLE_NAME_TAKEN: { status: 409, title: 'A role with this name already exists' },
  ROLE_NAME_RESERVED: { status: 400, title: 'Built-in role names cannot be taken by a custom role' },
  USER_ATTRIBUTE_NAME_TAKEN: { status: 409, title: 'A user attribute with this name already exists' },
  OIDC_TOKEN_CONFIG_EXISTS: { status: 409, title: 'An OIDC token config of this type or name already exists' },
  FOLDER_NAME_TAKEN: { status: 409, title: 'A folder of this name already exists here' },
  WORKBOOK_SLUG_TAKEN: { status: 409, title: 'A workbook with this slug already exists in the deployment' },
  REPORT_PUBLIC_ID_TAKEN: { status: 409, title: 'A report with this public id already exists in the deployment' },
  POLICY_EXISTS: { status: 409, title: 'This principal already has a policy on this resource' },
  LAST_ADMIN: { status: 409, title: 'The last active admin cannot lose admin rights' },
  DEPLOYMENT_NAME_TAKEN: { status: 409, title: 'A deployment with this name already exists' },
  BRANCH_EXISTS: { status: 409, title: 'A branch of this name already exists' },
  FILE_EXISTS: { status: 409, title: 'A file already exists at the new path' },
  MERGE_CONFLICT: { status: 409, title: 'The branches changed the same files; nothing was merged' },
  DBT_SYNC_RUNNING: { status: 409, title: 'A sync is already running on this deployment' },
  DBT_SYNC_NOT_RUNNING: { status: 409, title: 'The sync is not running' },
  DBT_SYNC_NOT_COMPLETED: { status: 409, title: 'The sync has not completed' },
  BRANCH_MOVED: { status: 409, title: 'The branch moved while the change was written; nothing was changed' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'The request body is too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'The request body must be JSON' },
  RATE_LIMITED: { status: 429, title: 'Too many requests' },
  HEADERS_TOO_LARGE: { status: 431, title: 'The request headers are too large' },
  INTERNAL: { status: 500, title: 'Internal server error' },
  OAUTH_PROVIDER_UNAVAILABLE: { status: 502, title: 'The OAuth provider could not be reached or answered nonsense' },
  UNAVAILABLE: { status: 503, title: 'Service unavailable' },
  QUERY_REFUSED: { status: 400, title: "The deployment's runtime refused the query" },
  RUNTIME_UNAVAILABLE: { status: 503, title: "The environment's runtime is not running; retry after the time in Retry-After" },
  PYTHON_BUSY: { status: 503, title: 'Too many Python runs are waiting; retry after the time in Retry-After' },
  DEPLOYMENT_BUSY: { status: 503, title: 'The deployment is busy with other changes; retry after the time in Retry-After' },
  EMBED_TENANT_NOT_FOUND: { status: 404, title: 'Embed tenant not found' },
  EMBED_GROUP_NOT_FOUND: { status: 404, title: 'Embed group not found in this embed tenant' },
  EMBED_USER_NOT_FOUND: { status: 404, title: 'Embed user not found in this embed tenant' },
  EMBED_GROUP_NAME_TAKEN: { status: 400, title: 'The embed tenant already has a group of this name' },
  EMBED_GROUP_NAME_RESERVED: { status: 400, title: 'Group names starting with system: are reserved' },
  EMBED_GROUP_HAS_MEMBERS: { status: 400, title: 'An embed group with members cannot be deleted' },
  GROUPS_NOT_FOUND: { status: 400, title: 'Some named groups do not exist' },
  USER_ATTRIBUTES_NOT_FOUND: { status: 400, title: 'Some named user attributes do not exist' },
  EMBED_USER_LIMIT: { status: 429, title: 'The account holds as many embed users as it may' },
  PLACEMENT_LIMIT_REACHED: { status: 409, title: 'The report holds as many placements as it may' },
  DATA_DOWNLOAD_RESTRICTED: { status: 403, title: 'Data downloads are restricted for this account' },
  DASHBOARD_EXPORT_NOT_FOUND: { status: 404, title: 'No dashboard export of yours has this job id (it may have expired)' },
  DASHBOARD_EXPORT_RENDERING: { status: 409, title: 'The export is still rendering' },
  DASHBOARD_EXPORT_FAILED: { status: 422, title: 'The export failed; submit a new one' },
  DASHBOARD_EXPORT_LIMIT: { status: 429, title: 'Too many exports are rendering for this identity' },
  GIT_HOST_NOT_CONFIGURED: { status: 404, title: 'No git-host app is configured for this account' },
  GIT_HOST_NOT_LINKED: { status: 409, title: 'The caller has not linked a git-host account' },
  GIT_HOST_NOT_FOUND: { status: 404, title: 'The linked git-host account cannot reach this installation or repository' },
  GIT_HOST_LINK_FAILED: { status: 400, title: 'The git host refused the authorization' },
  GIT_HOST_UNAVAILABLE: { status: 502, title: 'The git host could not be reached or answered nonsense' },
  GIT_HOST_REPO_EXISTS: { status: 409, title: 'The git host already has a repository of that name' },
  GIT_HOST_APP_INVALID: { status: 409, title: 'The git host does not accept the account’s app' },
  UPSTREAM_DIVERGED: { status: 409, title: 'The connected repository has commits this deployment does not have; nothing was changed' },
  UPSTREAM_BRANCH_NOT_FOUND: { status: 404, title: 'The connected repository has no such branch' },
  UPSTREAM_UNAVAILABLE: { status: 502, title: 'The connected repository could not be reached; nothing was changed' },
  AI_PROVIDER_UNAVAILABLE: { status: 502, title: 'The model provider could not be reached, refused the request or answered nonsense' },
  AI_BUDGET_EXCEEDED: { status: 429, title: 'The monthly AI token budget is used up' },
  AI_NOT_CONFIGURED: { status: 503, title: 'No model provider is configured for this account' },
  AGENT_NOT_FOUND: { status: 404, title: 'The deployment has no agent with this id' },
  AGENT_NAME_TAKEN: { status: 409, title: 'The deployment already has an agent of this name' },
  AGENT_THREAD_NOT_FOUND: { status: 404, title: 'No chat thread of yours has this id' },
  AGENT_TASK_NOT_FOUND: { status: 404, title: 'The deployment has no scheduled task of yours with this id' },
  AGENT_TASK_LIMIT: { status: 409, title: 'The user has as many active scheduled tasks as they may' },
  REPORT_DELIVERY_NOT_FOUND: { status: 404, title: 'The deployment has no report delivery with this id' },
  COMMENT_NOT_FOUND: { status: 404, title: 'The dashboard has no comment with this id' },
  WIDGET_NOT_FOUND: { status: 404, title: 'The published dashboard has no widget with this id' },
  REPORT_VERSION_MISMATCH: { status: 409, title: 'The report changed since the version the update was made from; nothing was written' },
  FILE_HASH_MISMATCH: { status: 409, title: 'The text changed since the hash was read; nothing was written' },
  PLACEMENTS_TOO_MANY: { status: 422, title: 'The document holds more placements than one answer lists' },
  PROMOTION_NOT_FOUND: { status: 404, title: 'The workbook has not been promoted' },
  PROMOTION_MEMBERS_MISSING: { status: 422, title: "The target deployment's model lacks members the workbook's reports use; nothing was promoted" },
  IDEMPOTENCY_KEY_REUSED: { status: 422, title: 'The idempotency key was sent before with another request body' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemCode = keyof typeof PROBLEMS;

export interface FieldError {
  /** RFC 6901 JSON pointer into the request: `/body/items/3/id`, `/query/first`. */
  pointer: string;
  message: string;
}

/** With PROMOTION_MEMBERS_MISSING: a member the reports use that the target's model lacks. */
export interface MissingMemberDetail {
  member: string;
  use: string;
  reportIds: number[];
}

/** A domain error: thrown by services and mapped to problem details in one place (error-handler.ts). */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string>; conflicts?: string[]; missingMembers?: MissingMemberDetail[] } = {},
  ) {
    super(detail);
    this.name = 'ApiError';
    this.status = PROBLEMS[code].status;
  }
}

export function problemType(code: ProblemCode): string {
  return `urn:problem-type:mapi:${code.toLowerCase().replaceAll('_', '-')}`;
}

export function notFound(code: ProblemCode & `${string}_NOT_FOUND`, what: string, id: number | string): ApiError {
  return new ApiError(code, `${what} ${id} does not exist.`);
}
