import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from './harness.js';

export const CLI_CLIENT = 'mapi-cli';
export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export interface TokenSet {
  access_token: string;
  refresh_token?: string;
  expires_in: number;
  token_type: string;
  scope?: string;
}

/** A form-encoded POST to the authorization server, as OAuth clients send them. */
export function oauthPost(
  t: TestApp,
  path: string,
  form: Record<string, string>,
  options: { host?: string; headers?: Record<string, string> } = {},
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(options.host ? { host: options.host } : {}), ...options.headers },
    payload: new URLSearchParams(form).toString(),
  });
}

/** Starts a device sign-in of the command-line client (RFC 8628 section 3.1). */
export async function startDevice(
  t: TestApp,
  scope?: string,
  host?: string,
): Promise<{ device_code: string; user_code: string; verification_uri: string; verification_uri_complete: string; expires_in: number; interval?: number }> {
  const res = await oauthPost(t, '/oauth/device/auth', { client_id: CLI_CLIENT, ...(scope === undefined ? {} : { scope }) }, { ...(host ? { host } : {}) });
  if (res.statusCode !== 200) throw new Error(`device authorization: ${res.statusCode} ${res.body}`);
  return res.json();
}

/** The device's poll of the token endpoint (RFC 8628 section 3.4). */
export function pollDevice(t: TestApp, deviceCode: string, host?: string): Promise<LightMyRequestResponse> {
  return oauthPost(t, '/oauth/token', { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: CLI_CLIENT }, { ...(host ? { host } : {}) });
}

/**
 * Tokens for `userId` by the whole device flow over HTTP: the device starts, an admin approves
 * on the extension route, the device's next poll gets the tokens.
 */
export async function deviceTokens(t: TestApp, options: { userId?: number; scope?: string; approverKey?: string; host?: string } = {}): Promise<TokenSet> {
  const started = await startDevice(t, options.scope, options.host);
  const approved = await t.request({
    method: 'POST',
    url: '/api/v1/oauth/device-approvals',
    body: { userCode: started.user_code, ...(options.userId === undefined ? {} : { userId: options.userId }) },
    ...(options.approverKey ? { key: options.approverKey } : {}),
    ...(options.host ? { host: options.host } : {}),
  });
  if (approved.statusCode !== 200) throw new Error(`approval: ${approved.statusCode} ${approved.body}`);
  const res = await pollDevice(t, started.device_code, options.host);
  if (res.statusCode !== 200) throw new Error(`token: ${res.statusCode} ${res.body}`);
  return res.json();
}
