import { unwrap } from './errors.js';
import type { RawClient } from './pagination.js';
import type { GenerateEmbedSessionInput } from './types.js';

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});

/** Query parameters of the embedded dashboard page besides the session (docs/api/embedded-dashboard-page.md). */
export interface EmbedPageOptions {
  /** A BCP 47 tag; outranks the session's and the account's. */
  locale?: string;
  /** An IANA time zone; outranks the session's and the account's. */
  timezone?: string;
  /** The embedding page's origin, for token renewal; one of the account's embed `allowedOrigins`. */
  parentOrigin?: string;
  /** The agent the page's chat entry asks. */
  agentId?: number;
}

/** What `embed.startSession` answers. */
export interface EmbedDashboardSession {
  /** The one-time session id: the page exchanges it once, within 5 minutes, for a 24-hour token. */
  sessionId: string;
  /** The embedded dashboard page for this session, for an iframe's `src` (or a browser, once). */
  url: string;
  publicId: string;
  deploymentId: number;
}

/**
 * The URL of the server's embedded dashboard page for one session: `<baseUrl>/embed/dashboard/
 * {publicId}?session=<id>` and the page options given.
 */
export function embedDashboardUrl(baseUrl: string, publicId: string, sessionId: string, page: EmbedPageOptions = {}): string {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}/embed/dashboard/${encodeURIComponent(publicId)}`);
  url.searchParams.set('session', sessionId);
  if (page.locale !== undefined) url.searchParams.set('locale', page.locale);
  if (page.timezone !== undefined) url.searchParams.set('timezone', page.timezone);
  if (page.parentOrigin !== undefined) url.searchParams.set('parentOrigin', page.parentOrigin);
  if (page.agentId !== undefined) url.searchParams.set('agentId', String(page.agentId));
  return url.toString();
}

/**
 * Signed embedding sessions (reference 4.15-4.17), for a customer's backend holding an admin's key:
 * generate a session for a user, hand its id to the embedding page, which exchanges it (once,
 * within 5 minutes) for a 24-hour token; revoke to cut either off.
 */
export interface Embed {
  /** A one-time session id (32 lowercase hex characters) for `input.deploymentId` and one identity. */
  generateSession(input: GenerateEmbedSessionInput, options?: { signal?: AbortSignal }): Promise<string>;
  /**
   * The embed token for a session id: a JWT (ES256, `typ` embed+jwt) valid 24 hours, verifiable with
   * `<baseUrl>/api/v1/embed/jwks.json`. Single use: a second exchange is an ApiError 401. Browsers
   * without a key call `exchangeEmbedSession` instead. Never retried: a lost answer would consume the id.
   */
  exchange(sessionId: string, options?: { signal?: AbortSignal }): Promise<string>;
  /** Revokes a session, exchanged or not; resolves whatever its state was. */
  revoke(sessionId: string, options?: { signal?: AbortSignal }): Promise<void>;
  /**
   * Generates a session for one viewer of the published dashboard `publicId` (in
   * `input.deploymentId`) and answers it with the URL of the server's embedded dashboard page for
   * it. The viewer sees the dashboard once its workbook is shared with their embed tenant and its
   * `allowEmbed` is on (`embedAccess.shareWorkbook` does both); the page shows the refusal
   * otherwise. The id is single-use and lasts 5 minutes: make one per page view.
   */
  startSession(publicId: string, input: GenerateEmbedSessionInput, page?: EmbedPageOptions, options?: { signal?: AbortSignal }): Promise<EmbedDashboardSession>;
}

export function createEmbed(api: RawClient, baseUrl: string): Embed {
  const generateSession: Embed['generateSession'] = async (input, { signal } = {}) =>
    unwrap(await api.POST('/api/v1/embed/generate-session', { body: input, ...withSignal(signal) })).sessionId;
  return {
    startSession: async (publicId, input, page = {}, { signal } = {}) => {
      if (typeof publicId !== 'string' || publicId.trim() === '') throw new TypeError("publicId is required: the published dashboard's public id.");
      const sessionId = await generateSession(input, { ...withSignal(signal) });
      return { sessionId, url: embedDashboardUrl(baseUrl, publicId, sessionId, page), publicId, deploymentId: input.deploymentId };
    },
    generateSession,
    exchange: async (sessionId, { signal } = {}) => unwrap(await api.POST('/api/v1/embed/session/token', { body: { sessionId }, ...withSignal(signal) })).token,
    revoke: async (sessionId, { signal } = {}) => {
      unwrap(await api.POST('/api/v1/embed/session/revoke', { body: { sessionId }, ...withSignal(signal) }));
    },
  };
}

/**
 * The exchange as an embedding page makes it: no key, only the session id its backend handed it.
 * Answers the token; throws an Error carrying the status when the id is refused (401: unknown,
 * used, revoked or older than 5 minutes; 429: too many exchanges from this address).
 */
export async function exchangeEmbedSession(
  baseUrl: string,
  sessionId: string,
  options: { fetch?: typeof globalThis.fetch; signal?: AbortSignal } = {},
): Promise<string> {
  const send = options.fetch ?? ((...args: Parameters<typeof globalThis.fetch>) => globalThis.fetch(...args));
  const response = await send(`${baseUrl.replace(/\/+$/, '')}/api/v1/embed/session/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sessionId }),
    ...withSignal(options.signal),
  });
  const body = (await response.json().catch(() => ({}))) as { token?: unknown; detail?: unknown };
  if (!response.ok || typeof body.token !== 'string') {
    throw Object.assign(new Error(typeof body.detail === 'string' ? body.detail : `The exchange answered ${response.status}.`), { status: response.status });
  }
  return body.token;
}
