/**
 * Signing in to the server's OAuth authorization server (issuer `<baseUrl>/oauth`) by the device
 * flow (RFC 8628), and refreshing the tokens it gives. Standard fetch only: usable in a browser
 * or, with a fetch that trusts a private CA, in Node.
 *
 * ```ts
 * const signIn = await startDeviceSignIn({ baseUrl: 'https://analytics.acme.com' });
 * console.log(`Open ${signIn.verificationUriComplete} and confirm ${signIn.userCode}`);
 * const tokens = await signIn.wait();
 * const client = createClient({ baseUrl, token: tokens.accessToken });
 * ```
 */

/** The built-in public client of the command line and other device-flow tools. */
export const DEVICE_CLIENT_ID = 'mapi-cli';

export interface OAuthTokens {
  accessToken: string;
  /** Present when the client may refresh; each refresh returns a new one (rotation). */
  refreshToken?: string;
  /** ISO 8601: when the access token stops working. */
  expiresAt: string;
  scope?: string;
}

/** An OAuth error answer (`error`, `error_description`), or a failure to reach the server. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    description: string,
    readonly status?: number,
  ) {
    super(description ? `${error}: ${description}` : error);
    this.name = 'OAuthError';
  }
}

export interface DeviceFlowOptions {
  baseUrl: string;
  fetch?: typeof globalThis.fetch;
  /** `deployments:12 deployments:13` limits the tokens to those deployments; absent: every deployment. */
  scope?: string;
  clientId?: string;
}

export interface DeviceSignIn {
  userCode: string;
  verificationUri: string;
  verificationUriComplete: string;
  /** Seconds until the code expires. */
  expiresIn: number;
  /** Polls until the user approves, refuses, or the code expires. */
  wait(options?: { signal?: AbortSignal; intervalMs?: number }): Promise<OAuthTokens>;
}

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

function endpoint(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/oauth${path}`;
}

async function postForm(
  options: { baseUrl: string; fetch?: typeof globalThis.fetch },
  path: string,
  form: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const send = options.fetch ?? ((input: string, init?: RequestInit) => globalThis.fetch(input, init));
  const response = await send(endpoint(options.baseUrl, path), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(form).toString(),
  });
  let body: Record<string, unknown> = {};
  try {
    body = (await response.json()) as Record<string, unknown>;
  } catch {
    // Not JSON (a proxy's page, a 429 from the limiter): the status says enough.
  }
  return { status: response.status, body };
}

function oauthError(status: number, body: Record<string, unknown>): OAuthError {
  const error = typeof body.error === 'string' ? body.error : typeof body.code === 'string' ? body.code : `http_${status}`;
  const description = typeof body.error_description === 'string' ? body.error_description : typeof body.detail === 'string' ? body.detail : '';
  return new OAuthError(error, description, status);
}

function tokensFrom(body: Record<string, unknown>): OAuthTokens {
  if (typeof body.access_token !== 'string') throw new OAuthError('invalid_response', 'the token response has no access_token');
  const expiresIn = typeof body.expires_in === 'number' ? body.expires_in : 3600;
  return {
    accessToken: body.access_token,
    ...(typeof body.refresh_token === 'string' ? { refreshToken: body.refresh_token } : {}),
    expiresAt: new Date(Date.now() + expiresIn * 1000).toISOString(),
    ...(typeof body.scope === 'string' && body.scope !== '' ? { scope: body.scope } : {}),
  };
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });
}

/** Starts a device sign-in: show `verificationUri` and `userCode` to the user, then `wait()`. */
export async function startDeviceSignIn(options: DeviceFlowOptions): Promise<DeviceSignIn> {
  const clientId = options.clientId ?? DEVICE_CLIENT_ID;
  const started = await postForm(options, '/device/auth', { client_id: clientId, ...(options.scope ? { scope: options.scope } : {}) });
  if (started.status !== 200) throw oauthError(started.status, started.body);
  const deviceCode = String(started.body.device_code);
  let intervalMs = (typeof started.body.interval === 'number' ? started.body.interval : 5) * 1000;
  const expiresIn = Number(started.body.expires_in);
  const deadline = Date.now() + expiresIn * 1000;
  return {
    userCode: String(started.body.user_code),
    verificationUri: String(started.body.verification_uri),
    verificationUriComplete: String(started.body.verification_uri_complete ?? started.body.verification_uri),
    expiresIn,
    async wait({ signal, intervalMs: override } = {}) {
      if (override !== undefined) intervalMs = override;
      for (;;) {
        if (Date.now() > deadline) throw new OAuthError('expired_token', 'the code expired before it was approved; start again');
        await delay(intervalMs, signal);
        const res = await postForm(options, '/token', { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId });
        if (res.status === 200) return tokensFrom(res.body);
        const error = oauthError(res.status, res.body);
        if (error.error === 'authorization_pending') continue;
        // RFC 8628 section 3.5: slow down by 5 seconds for this and every later poll.
        if (error.error === 'slow_down') {
          intervalMs += 5000;
          continue;
        }
        throw error;
      }
    },
  };
}

/** New tokens for a refresh token; the old refresh token is spent (rotation): keep the new one. */
export async function refreshTokens(options: {
  baseUrl: string;
  fetch?: typeof globalThis.fetch;
  refreshToken: string;
  clientId?: string;
}): Promise<OAuthTokens> {
  const res = await postForm(options, '/token', {
    grant_type: 'refresh_token',
    refresh_token: options.refreshToken,
    client_id: options.clientId ?? DEVICE_CLIENT_ID,
  });
  if (res.status !== 200) throw oauthError(res.status, res.body);
  return tokensFrom(res.body);
}

/** Ends a sign-in (RFC 7009): every token of it stops working. */
export async function revokeToken(options: { baseUrl: string; fetch?: typeof globalThis.fetch; token: string; clientId?: string }): Promise<void> {
  const res = await postForm(options, '/token/revocation', { token: options.token, client_id: options.clientId ?? DEVICE_CLIENT_ID });
  if (res.status !== 200) throw oauthError(res.status, res.body);
}
