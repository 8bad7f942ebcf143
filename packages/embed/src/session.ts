/**
 * The page's embed session: the one-time session id from the URL, exchanged once for a token
 * (reference 4.16) kept in memory only, and renewed in place before it expires by asking the
 * embedding page for a new session id (the postMessage protocol of docs/api/embedding.md):
 *
 *   page → parent  { type: 'mapi:session-request' }            to the parent's origin only
 *   parent → page  { type: 'mapi:session', sessionId: string }  from that origin and window only
 *
 * The page stops trusting a token some time before its `exp` (an hour, or a tenth of its life
 * when that is shorter), so a request never goes out with a token about to lapse: from then on,
 * calls wait for the renewed token.
 */

export const SESSION_REQUEST = 'mapi:session-request';
export const SESSION_MESSAGE = 'mapi:session';

/** The session has ended: revoked (401 on a call), or not renewable. The page shows it and stops. */
export class SessionEnded extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'SessionEnded';
  }
}

export interface TokenClaims {
  exp: number;
  iat: number;
  deployment_id: number;
  branch: string | null;
  settings: Record<string, boolean | string>;
  theme: Record<string, unknown> | null;
  embed_user?: { external_id: string | null; email: string | null };
}

/** The JWT's payload; the page reads its own claims, the server verifies the signature. */
export function decodeClaims(token: string): TokenClaims {
  const part = token.split('.')[1] ?? '';
  const json = atob(
    part
      .replace(/-/g, '+')
      .replace(/_/g, '/')
      .padEnd(Math.ceil(part.length / 4) * 4, '='),
  );
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0)))) as TokenClaims;
}

/** Seconds before `exp` at which the page stops trusting a token: an hour (reference 4.16), a tenth of the lifetime when that is less. */
export function renewalMargin(claims: Pick<TokenClaims, 'exp' | 'iat'>): number {
  return Math.min(3600, Math.max(1, (claims.exp - claims.iat) * 0.1));
}

async function exchange(sessionId: string): Promise<string> {
  const res = await fetch('/api/v1/embed/session/token', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sessionId }),
    credentials: 'omit',
  });
  if (res.status === 401) throw new SessionEnded('The session link was already used, revoked or has expired.');
  if (!res.ok) throw new Error(`The session could not be opened (${res.status}).`);
  return ((await res.json()) as { token: string }).token;
}

export interface SessionEvents {
  /** A renewal started or finished (tests and the benchmark watch the page's data attributes). */
  onRenewed?(count: number): void;
  onEnded?(reason: string): void;
}

export class EmbedSession {
  private token: string;
  claims: TokenClaims;
  private renewing: Promise<string> | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private ended: SessionEnded | null = null;
  private renewals = 0;

  private constructor(
    token: string,
    private readonly parentOrigin: string | null,
    private readonly events: SessionEvents,
  ) {
    this.token = token;
    this.claims = decodeClaims(token);
    this.schedule();
  }

  /** Exchanges the URL's session id once and starts the renewal clock. */
  static async open(sessionId: string, parentOrigin: string | null, events: SessionEvents = {}): Promise<EmbedSession> {
    return new EmbedSession(await exchange(sessionId), parentOrigin, events);
  }

  /** When the page stops trusting the current token (ms since the epoch). */
  private trustedUntil(): number {
    return (this.claims.exp - renewalMargin(this.claims)) * 1000;
  }

  private schedule(): void {
    clearTimeout(this.timer);
    const wait = Math.max(0, this.trustedUntil() - Date.now());
    // Renew ahead, in the background: the data on screen stays, and calls wait for the new token.
    this.timer = setTimeout(() => void this.renew().catch(() => undefined), wait);
  }

  /** A token to call with: the current one while trusted, else the renewed one. */
  async bearer(): Promise<string> {
    if (this.ended) throw this.ended;
    if (Date.now() < this.trustedUntil() && this.renewing === null) return this.token;
    return this.renew();
  }

  /** A call answered 401: the session was revoked (reference 4.17) or the token is gone. */
  end(reason = 'This session has ended'): SessionEnded {
    clearTimeout(this.timer);
    this.ended ??= new SessionEnded(reason);
    this.events.onEnded?.(this.ended.message);
    return this.ended;
  }

  get isEnded(): boolean {
    return this.ended !== null;
  }

  private renew(): Promise<string> {
    this.renewing ??= this.askParent()
      .then(exchange)
      .then((token) => {
        this.token = token;
        this.claims = decodeClaims(token);
        this.renewals += 1;
        this.events.onRenewed?.(this.renewals);
        this.schedule();
        return token;
      })
      .catch((error: unknown) => {
        throw this.end(error instanceof SessionEnded ? 'This session has ended' : 'This session could not be renewed');
      })
      .finally(() => {
        this.renewing = null;
      });
    return this.renewing;
  }

  /** Asks the embedding page for a new session id; resolves with the first valid answer. */
  private askParent(): Promise<string> {
    const parentOrigin = this.parentOrigin;
    if (parentOrigin === null || window.parent === window) return Promise.reject(new Error('No embedding page to renew the session with.'));
    return new Promise((resolve, reject) => {
      // The token stays valid until `exp`: past it, no answer can help.
      const giveUp = setTimeout(
        () => {
          window.removeEventListener('message', listen);
          reject(new Error('The embedding page did not answer the session request.'));
        },
        Math.max(0, this.claims.exp * 1000 - Date.now()),
      );
      const listen = (event: MessageEvent) => {
        if (event.origin !== parentOrigin || event.source !== window.parent) return;
        const data = event.data as { type?: unknown; sessionId?: unknown } | null;
        if (typeof data !== 'object' || data === null || data.type !== SESSION_MESSAGE || typeof data.sessionId !== 'string') return;
        clearTimeout(giveUp);
        window.removeEventListener('message', listen);
        resolve(data.sessionId);
      };
      window.addEventListener('message', listen);
      window.parent.postMessage({ type: SESSION_REQUEST }, parentOrigin);
    });
  }
}

/**
 * The embedding page's origin, which renewal messages go to and must come from: the `parentOrigin`
 * URL parameter, else the referrer's origin, and only when the account's embed settings allow it
 * (`allowedOrigins`, which the server writes into the page). Null: no renewal.
 */
export function parentOriginOf(params: URLSearchParams, referrer: string, allowed: readonly string[]): string | null {
  let origin = params.get('parentOrigin') ?? params.get('origin');
  if (origin === null && referrer !== '') {
    try {
      origin = new URL(referrer).origin;
    } catch {
      origin = null;
    }
  }
  return origin !== null && allowed.includes(origin) ? origin : null;
}
