import { unwrap } from './errors.js';
import type { RawClient } from './pagination.js';
import type { GenerateEmbedSessionInput } from './types.js';

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});

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
}

export function createEmbed(api: RawClient): Embed {
  return {
    generateSession: async (input, { signal } = {}) =>
      unwrap(await api.POST('/api/v1/embed/generate-session', { body: input, ...withSignal(signal) })).sessionId,
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
