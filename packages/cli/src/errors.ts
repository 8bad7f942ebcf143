import { ApiError } from '@mapi/client';
import { shellArg } from './shell.js';

/** Exit codes, documented in `mapi --help`. Scripts branch on them, so they never change meaning. */
export const EXIT = {
  OK: 0,
  /** A request-level error (the server refused the request, or could not be reached) or a usage error. */
  ERROR: 1,
  /** A bulk job ran, but some items failed; the rest were applied. */
  PARTIAL: 2,
  /** Interrupted with Ctrl-C; what was applied before the interruption is reported. */
  INTERRUPTED: 130,
  /** Stopped by SIGTERM, which a bulk job handles as it does Ctrl-C. */
  TERMINATED: 143,
} as const;

/** A mistake in the command line or the configuration: nothing was sent. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Where a setting came from, so a hint can point at the place to fix. */
export type Source = 'flag' | 'environment' | 'profile';

export interface ErrorContext {
  tokenSource?: Source;
  caSource?: Source;
  profileName?: string;
  url?: string;
  urlSource?: Source | 'prompt';
}

/** Certificate failures as Node and undici report them: the fix is always a CA to trust. */
const CERTIFICATE_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

export const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
]);

/** The first error code along the `cause` chain: fetch wraps the socket error ("fetch failed"). */
export function errorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 8; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'ApiError') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function innermostMessage(error: unknown): string {
  let message = error instanceof Error ? error.message : String(error);
  for (let current = (error as { cause?: unknown })?.cause, depth = 0; current && depth < 8; depth++) {
    if (current instanceof Error && current.message) message = current.message;
    current = (current as { cause?: unknown }).cause;
  }
  return message;
}

/** `mapi login`, for the profile in use: a plain `mapi login` would save the key to another one. */
function loginCommand(context: ErrorContext): string {
  return context.profileName && context.profileName !== 'default' ? `mapi login --profile ${shellArg(context.profileName)}` : 'mapi login';
}

function tokenHint(context: ErrorContext): string {
  const where =
    context.tokenSource === 'flag'
      ? 'The token given with --token was refused.'
      : context.tokenSource === 'environment'
        ? 'The token in MAPI_TOKEN was refused.'
        : context.tokenSource === 'profile'
          ? `The token saved in profile "${context.profileName}" was refused.`
          : 'The token was refused.';
  return `${where} Run \`${loginCommand(context)}\` to save a valid API key, or set MAPI_TOKEN (or pass --token). Keys can be revoked, expired or belong to a deactivated user.`;
}

/** The deployment a request was about, from its path, so a hint can name it instead of a placeholder. */
function deploymentOf(error: ApiError): number | undefined {
  const match = /\/deployments\/([1-9][0-9]*)(?:\/|$)/.exec(error.url ?? '');
  return match ? Number(match[1]) : undefined;
}

/** The export a request was about (its job id), from the path. */
function exportJobOf(error: ApiError): string | undefined {
  const match = /\/dashboard-exports\/([^/?]+)/.exec(error.url ?? '');
  return match ? decodeURIComponent(match[1] as string) : undefined;
}

/** An agent's answer (`mapi chat`): its problems point at the AI settings, not at the request. */
function isAnswer(error: ApiError): boolean {
  return /\/agents\/[0-9]+\/threads(\/[^/?]+\/messages)?\/?(\?|$)/.test(error.url ?? '');
}

/** What to do next, per status and problem code; the server's detail already says what went wrong. */
function apiHint(error: ApiError, context: ErrorContext): string | undefined {
  const deployment = deploymentOf(error);
  const dep = deployment === undefined ? '<deploymentId>' : String(deployment);
  switch (error.status) {
    case 400:
      return error.code === 'NO_DEV_MODE'
        ? 'This key has no active dev-mode branch: leave out --dev-mode to validate the deploy branch, or name a branch with --branch.'
        : undefined;
    case 401:
      return tokenHint(context);
    case 403:
      if (error.code === 'KEY_SCOPE_FORBIDDEN') {
        return deployment === undefined
          ? 'This API key is scoped to other deployments. Use a key whose scope includes this deployment, or an unscoped key.'
          : `This API key is scoped to other deployments. Use a key whose scope includes deployment ${deployment} (an admin creates one with \`mapi api-keys create --name ${shellArg(`deployment ${deployment}`)} --deployments ${deployment}\`), or an unscoped key.`;
      }
      if (isAnswer(error)) {
        return `This key cannot use AI here: an admin turns AI features on for the account with \`mapi ai settings set --enabled\`; the key's user needs VIEW on deployment ${dep}, and an embed session its allowAi.`;
      }
      if (error.code === 'DATA_DOWNLOAD_RESTRICTED') {
        return 'The account restricts data downloads, so no dashboard can be exported, by anyone. An admin can lift it with PUT /api/v1/tenant/app-config {"restrictDataDownload": false}; scheduled notifications still deliver meanwhile.';
      }
      return 'Your key lacks the access named above. Ask an admin to grant it (a policy on the item, a folder above it or the deployment), or use an admin key.';
    case 404:
      switch (error.code) {
        case 'DEPLOYMENT_NOT_FOUND':
          return '`mapi deployments list` shows the deployments you can see.';
        case 'FOLDER_NOT_FOUND':
        case 'DESTINATION_NOT_FOUND':
          return deployment === undefined
            ? '`mapi folders tree` shows the folders of a deployment and their ids.'
            : `\`mapi folders tree ${deployment}\` shows the folders and their ids.`;
        case 'WORKBOOK_NOT_FOUND':
        case 'REPORT_NOT_FOUND':
          return deployment === undefined
            ? '`mapi workspace ls` shows the items of a deployment and their ids.'
            : `\`mapi folders tree ${deployment} --items\` shows every item and its id.`;
        case 'BRANCH_NOT_FOUND':
          return 'Check the name given with --branch; without it, the deploy branch (or your active dev-mode branch) is used.';
        case 'BUILD_NOT_FOUND':
          return deployment === undefined ? undefined : `\`mapi model status ${deployment}\` shows the latest build of a branch.`;
        case 'UPLOAD_NOT_FOUND':
          return 'The upload expired or was finished by another request; run the push again (unchanged files are not sent twice).';
        case 'AGENT_NOT_FOUND':
          return `\`mapi agents list ${dep}\` shows the deployment's agents and their ids.`;
        case 'AGENT_THREAD_NOT_FOUND':
          return 'A thread is found only under its own deployment, and only by the user who started it (and admins); leave out --thread to start a new one.';
        case 'AGENT_TASK_NOT_FOUND':
          return `\`mapi tasks list ${dep}\` shows your scheduled tasks and their ids (an admin sees everyone's).`;
        case 'USER_NOT_FOUND':
          return '`mapi users list` shows users and their ids.';
        case 'API_KEY_NOT_FOUND':
          return '`mapi api-keys list` shows keys and their ids.';
        case 'ROUTE_NOT_FOUND':
          return 'Check that the URL is the server address, without an /api/v1 suffix.';
        case 'TENANT_NOT_FOUND':
          return 'No tenant answers on this host: check the URL (--url, MAPI_URL or the profile).';
        case 'DASHBOARD_NOT_FOUND':
          return `Give the id or the public id of a dashboard published in deployment ${dep}; a workbook's id is not its dashboard's id.`;
        case 'DASHBOARD_EXPORT_NOT_FOUND':
          return `Exports are kept 5 minutes after they start, and only the user who started one sees it: run \`mapi dashboards export ${dep} <dashboard> --out FILE\` again.`;
        case 'EMBED_TENANT_NOT_FOUND':
          return 'An embed tenant exists once a user is provisioned in it (`mapi embed users provision <tenant> <externalId>`) or a session names it; `mapi embed tenants list` shows them.';
        case 'GIT_HOST_NOT_CONFIGURED':
          return 'This account has no git-host app yet: an admin sets it with PUT /api/v1/tenant/git-host-app (see docs/api/git-host.md).';
        case 'GIT_HOST_NOT_FOUND':
          return 'Your linked account does not reach it: `mapi git-host installations` and `mapi git-host repositories <installationId>` show what it reaches.';
        default:
          return undefined;
      }
    case 409:
      switch (error.code) {
        case 'DASHBOARD_EXPORT_RENDERING':
          return `The export is still rendering: \`mapi dashboards download ${dep} ${shellArg(exportJobOf(error) ?? '<jobId>')} --wait --out FILE\` waits for it.`;
        case 'AGENT_NAME_TAKEN':
          return `Choose another name; \`mapi agents list ${dep}\` shows the names in use.`;
        case 'AGENT_TASK_LIMIT':
          return `Switch one of your active tasks off first (\`mapi tasks update ${dep} <taskId> --inactive\`), or create this one with --inactive.`;
        case 'GIT_HOST_NOT_LINKED':
          return 'Run `mapi git-host status` and open the link URL it prints to link your git-host account.';
        case 'GIT_HOST_REPO_EXISTS':
          return 'Leave out --new to connect the existing repository, or choose another name.';
        case 'UPSTREAM_DIVERGED':
          return deployment === undefined
            ? 'Pull the branch from the connected repository first, then send again.'
            : `Pull first (\`mapi git-host pull ${deployment} <branch>\`), then send again.`;
        default:
          return undefined;
      }
    case 422:
      return error.code === 'DASHBOARD_EXPORT_FAILED'
        ? `A failed render is final: start a new one with \`mapi dashboards export ${dep} <dashboard> --out FILE\`.`
        : undefined;
    case 502:
      if (error.code === 'AI_PROVIDER_UNAVAILABLE')
        return "The model provider failed (the detail above names its address and what went wrong). Check that it runs and answers there, and its model and key: `mapi ai settings` shows them, an admin changes them with `mapi ai settings set`. A provider on a private address also needs the operator's OUTBOUND_ALLOW_PRIVATE.";
      if (error.code === 'GIT_HOST_UNAVAILABLE' || error.code === 'UPSTREAM_UNAVAILABLE')
        return 'The git host could not be reached or refused the server; nothing was changed. Try again later, or ask an admin to check the git-host app.';
      return 'The server failed; the request id above helps its operator find the cause in its logs.';
    case 429:
      if (error.code === 'AI_BUDGET_EXCEEDED')
        return 'The budget renews on the first of next month (UTC). An admin sees what each user spent with `mapi ai usage` and raises the budget with `mapi ai settings set --tokens-per-user-per-month <n>` (or `none`).';
      if (error.code === 'DASHBOARD_EXPORT_LIMIT') {
        return 'As many exports as the server allows (DASHBOARD_EXPORTS_PER_IDENTITY, 3 by default) are already rendering for this identity (you, or the --render-as subject); run the command again once one has finished.';
      }
      return 'The server is rate limiting this key; wait a minute and run the command again.';
    case 503:
      if (isAnswer(error))
        return 'AI has nothing to call or is unavailable: an admin configures a model provider with `mapi ai settings set --provider-url <url> --model <name>` (or the operator sets AI_PROVIDER_URL), and checks `mapi ai settings`. If the detail names a wait, try again after it.';
      return 'The server failed; the request id above helps its operator find the cause in its logs.';
    default:
      return error.status >= 500 ? 'The server failed; the request id above helps its operator find the cause in its logs.' : undefined;
  }
}

/**
 * "title: detail", once: the server's details often open with the title already ("The request is
 * not valid: body/name ..."), and printing both doubled it.
 */
export function problemText(title: string | undefined, detail: string | undefined): string {
  if (!detail) return title ?? 'Request failed';
  if (!title || detail.startsWith(title)) return detail;
  return `${title}: ${detail}`;
}

/** "ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:8443", or the code alone when the message adds nothing. */
function codeAndMessage(code: string, error: unknown): string {
  const message = innermostMessage(error);
  return message && message !== 'fetch failed' && message !== code ? `${code}: ${message}` : code;
}

const URL_PLACES: Record<NonNullable<ErrorContext['urlSource']>, string> = {
  flag: 'given with --url',
  environment: 'from MAPI_URL',
  profile: 'saved in the profile',
  prompt: 'as typed',
};

function unreachableHint(context: ErrorContext): string {
  const place = context.urlSource ? ` (${URL_PLACES[context.urlSource]})` : ' (--url, MAPI_URL or the profile)';
  return `Check that the server is running and listening at that address, and that the URL${place} is right; a firewall or proxy may also be in the way.`;
}

/** The line printed while retries continue, so a long wait is not mistaken for a hang. */
export function unreachableNotice(url: string, error: unknown): string {
  const code = errorCode(error);
  return `warning: the server at ${url} cannot be reached${code ? ` (${code})` : ''}; retrying for a few seconds...`;
}

/**
 * An error answer that is not problem details: SCIM's error (RFC 7644 section 3.12: `detail` and
 * `scimType`), or a proxy's text; the exact body is left to --json-less debugging, cut to a line.
 */
function otherErrorText(body: unknown): string {
  if (typeof body === 'object' && body !== null) {
    const { detail, scimType } = body as { detail?: unknown; scimType?: unknown };
    if (typeof detail === 'string' && detail !== '') return typeof scimType === 'string' ? `${detail} (${scimType})` : detail;
    return JSON.stringify(body).slice(0, 200);
  }
  if (typeof body === 'string' && body.trim() !== '') return body.trim().slice(0, 200);
  return 'Request failed';
}

/** Lines for stderr that say what failed and what to do next. */
export function describeError(error: unknown, context: ErrorContext = {}): string[] {
  if (error instanceof UsageError) return [`error: ${error.message}`, ...(error.hint ? [`hint: ${error.hint}`] : [])];
  if (error instanceof ApiError) {
    const lines = [`error: ${error.status} ${error.title || error.detail ? problemText(error.title, error.detail) : otherErrorText(error.body)}`];
    for (const field of error.errors ?? []) lines.push(`  ${field.pointer || '(request)'}: ${field.message}`);
    if (error.requestId) lines.push(`  request id: ${error.requestId}`);
    const hint = apiHint(error, context);
    if (hint) lines.push(`hint: ${hint}`);
    return lines;
  }
  const code = errorCode(error);
  const where = context.url ? ` ${context.url}` : ' the server';
  if (code && CERTIFICATE_CODES.has(code)) {
    const ca =
      context.caSource === undefined
        ? "Pass --ca-cert with the PEM file of the CA that signed the server certificate, or set MAPI_CA_CERT to it. For a self-signed server that is its own certificate: `--ca-cert data/tls/localhost.crt` from the server's directory with the default DATA_DIR."
        : `The CA certificate given (${context.caSource === 'flag' ? '--ca-cert' : context.caSource === 'environment' ? 'MAPI_CA_CERT' : 'in the profile'}) did not verify the server certificate; pass the right one with --ca-cert or MAPI_CA_CERT.`;
    return [`error: the certificate of${where} is not trusted (${code}: ${innermostMessage(error)})`, `hint: ${ca}`];
  }
  if (code && UNREACHABLE_CODES.has(code)) {
    return [`error: cannot reach the server at ${context.url ?? 'the configured URL'} (${codeAndMessage(code, error)}).`, `hint: ${unreachableHint(context)}`];
  }
  if (code === 'EPROTO' || code === 'ERR_SSL_WRONG_VERSION_NUMBER') {
    return [`error: TLS handshake with${where} failed (${code})`, 'hint: the server only speaks HTTPS; check the URL and port.'];
  }
  const message = error instanceof Error ? innermostMessage(error) : String(error);
  return [`error: ${message}${code ? ` (${code})` : ''}`];
}
