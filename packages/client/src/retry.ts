export interface RetryOptions {
  /** Retries after the first attempt; default 4 (so up to 5 attempts). */
  retries?: number;
  /** Default 250: the wait before retry n is random(0, min(maxDelayMs, baseDelayMs * 2^n)). */
  baseDelayMs?: number;
  /** Default 8000. */
  maxDelayMs?: number;
  /** Default 60000: a Retry-After longer than this is not waited for; the response is returned. */
  maxRetryAfterMs?: number;
  /**
   * Called before each wait for another attempt, with the failed attempt's error or response: lets
   * a caller say that the server is slow to reach while the retries still go on.
   */
  onRetry?: (event: RetryEvent) => void;
}

export interface RetryEvent {
  request: Request;
  /** 0 for the first attempt. */
  attempt: number;
  delayMs: number;
  error?: unknown;
  response?: Response;
}

/** Sends one request; the seam between the retry loop and whatever fetch does the work. */
export type Send = (request: Request) => Promise<Response>;

const DEFAULTS: Required<Omit<RetryOptions, 'onRetry'>> = { retries: 4, baseDelayMs: 250, maxDelayMs: 8000, maxRetryAfterMs: 60_000 };
const RETRIED_STATUSES = new Set([429, 502, 503, 504]);
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
/**
 * POSTs that leave the same state when repeated: moving to where an item already is changes
 * nothing, and a data-model file sent again into the same upload replaces itself.
 */
const REPEATABLE_POST = /\/workspace\/(bulk-)?move\/?$|\/data-model\/upload\/file\/?$/;

/**
 * Only requests whose repetition cannot do harm are retried: a POST that created a folder before
 * the connection dropped would create a second one.
 */
export function isRepeatable(request: Request): boolean {
  if (SAFE_METHODS.has(request.method)) return true;
  if (request.headers.has('idempotency-key')) return true;
  return request.method === 'POST' && REPEATABLE_POST.test(new URL(request.url).pathname);
}

/** Final responses that follow an attempt the server may have acted on (a lost connection or a 5xx). */
const afterUncertainAttempt = new WeakSet<Response>();

/**
 * True when an earlier attempt of this request may have been applied: a 4xx on the retry then
 * says nothing about what the first attempt did.
 */
export function followsUncertainAttempt(response: Response): boolean {
  return afterUncertainAttempt.has(response);
}

export function withRetries(send: Send, options: RetryOptions | false | undefined): Send {
  if (options === false) return send;
  const settings = { ...DEFAULTS, ...definedOnly(options ?? {}) };
  return async (request) => {
    if (!isRepeatable(request)) return send(request);
    let uncertain = false;
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= settings.retries;
      // The body of a Request can be read once; each attempt but the last sends a copy.
      const outcome = await send(last ? request : request.clone()).then(
        (response) => ({ response }),
        (error: unknown) => ({ error }),
      );
      if ('error' in outcome) {
        if (last || request.signal.aborted || !isTransient(outcome.error)) throw outcome.error;
        uncertain = true;
        const delayMs = backoff(settings, attempt);
        settings.onRetry?.({ request, attempt, delayMs, error: outcome.error });
        await sleep(delayMs, request.signal);
        continue;
      }
      const { response } = outcome;
      if (uncertain) afterUncertainAttempt.add(response);
      if (last || !RETRIED_STATUSES.has(response.status)) return response;
      const wait = retryAfterMs(response.headers.get('retry-after'));
      if (wait !== null && wait > settings.maxRetryAfterMs) return response;
      // A 429 is refused before any work; a 502/503/504 may come from a proxy after the server acted.
      if (response.status !== 429) uncertain = true;
      // Nobody will read it; an unread body would keep the connection busy.
      await response.body?.cancel().catch(() => undefined);
      const delayMs = wait ?? backoff(settings, attempt);
      settings.onRetry?.({ request, attempt, delayMs, response });
      await sleep(delayMs, request.signal);
    }
  };
}

function definedOnly(options: RetryOptions): RetryOptions {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
}

/** Full jitter: spreads clients that failed together so they do not come back together. */
export function backoff(settings: { baseDelayMs: number; maxDelayMs: number }, attempt: number): number {
  return Math.random() * Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** attempt);
}

/**
 * Retry-After as milliseconds from now: delay-seconds or an HTTP-date (RFC 9110, 10.2.3); null when
 * absent or unreadable, which means the usual backoff. Not Date.parse: V8 reads almost anything as
 * a date ("1.5", "-1" become dates long past), which would turn a bad header into no wait at all.
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (header === null) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = parseHttpDate(text, now);
  return at === null ? null : Math.max(0, at - now);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
/** IMF-fixdate, the form senders must use: "Sun, 06 Nov 1994 08:49:37 GMT". */
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
/** The obsolete forms recipients must still accept (RFC 9110, 5.6.7): RFC 850 and asctime. */
const RFC_850 = new RegExp(`^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
const ASCTIME = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`);

/** An HTTP-date as epoch milliseconds, or null when the text is not one (or names no real moment, e.g. 31 Feb). */
function parseHttpDate(text: string, now = Date.now()): number | null {
  let fields: { year: number; month: string; day: string; time: string[] };
  let m: RegExpExecArray | null;
  if ((m = IMF_FIXDATE.exec(text))) {
    fields = { day: m[1] as string, month: m[2] as string, year: Number(m[3]), time: m.slice(4) };
  } else if ((m = RFC_850.exec(text))) {
    // A two-digit year that would be more than 50 years ahead is the most recent past year with those digits.
    const thisYear = new Date(now).getUTCFullYear();
    const year = thisYear - (thisYear % 100) + Number(m[3]);
    fields = { day: m[1] as string, month: m[2] as string, year: year > thisYear + 50 ? year - 100 : year, time: m.slice(4) };
  } else if ((m = ASCTIME.exec(text))) {
    fields = { month: m[1] as string, day: m[2] as string, year: Number(m[6]), time: m.slice(3, 6) };
  } else {
    return null;
  }
  const written = [fields.year, MONTHS.indexOf(fields.month), Number(fields.day), ...fields.time.map(Number)] as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const at = new Date(Date.UTC(...written));
  // Date.UTC rolls 31 Feb over into March and 24:00 into the next day: accept only dates that stay as written.
  const readBack = [at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate(), at.getUTCHours(), at.getUTCMinutes(), at.getUTCSeconds()];
  return readBack.every((value, i) => value === written[i]) ? at.getTime() : null;
}

/**
 * A rejected fetch is worth another try unless it was aborted or the certificate was refused:
 * an untrusted certificate stays untrusted however often we ask.
 */
function isTransient(error: unknown): boolean {
  if (isAbort(error)) return false;
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /CERT|SELF_SIGNED|ERR_TLS|UNABLE_TO_VERIFY|HOSTNAME_MISMATCH/.test(code)) return false;
  }
  return true;
}

function isAbort(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'AbortError' || name === 'TimeoutError';
}

/** Waits, but gives up at once when the caller aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}
