import type { Generated, Selectable } from 'kysely';

// Tables of the shared services and OAuth: jobs, secret and signing keys, OAuth integrations, states and models.

export type JobState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** A background job of the jobs service (src/jobs/); see migrations/0009_jobs.ts. */
export interface JobTable {
  id: Generated<number>;
  tenant_id: number;
  kind: string;
  /** JSON value given at enqueue. */
  payload: string;
  state: JobState;
  /** Attempts started so far, the current one included. */
  attempts: Generated<number>;
  max_attempts: number;
  /** JSON value the job returned, once succeeded. */
  result: string | null;
  error: string | null;
  created_at: string;
  /** When the latest attempt started. */
  started_at: string | null;
  finished_at: string | null;
  /** Written by the running process every few seconds; null unless running. */
  heartbeat_at: string | null;
  /** 0 or 1 (SQLite binds no booleans). */
  cancel_requested: Generated<number>;
  /** The worker that runs (or last ran) the job. */
  owner: string | null;
}

export interface JobLogTable {
  job_id: number;
  /** 1, 2, ... per job, across its attempts. */
  seq: number;
  at: string;
  line: string;
}

/** secrets/: a key that may have sealed values, and a check value sealed under it. */
export interface SecretKeyTable {
  id: string;
  check_value: string;
  created_at: string;
}

/** signing/: a tenant's key pair; `private_key` is sealed by secrets/ (context `signing-key:<tenantId>:<kid>`). */
export interface SigningKeyTable {
  id: Generated<number>;
  kid: string;
  tenant_id: number;
  algorithm: string;
  /** JSON: the public JWK. */
  public_jwk: string;
  private_key: string;
  created_at: string;
  activated_at: string;
  /** When another key took over signing; null for the key that signs. */
  retired_at: string | null;
  /** After this a retired key verifies nothing and leaves the key set; null while it signs. */
  expires_at: string | null;
  /** The keyring it belongs to (`default`, `embed`): one signing key per tenant and purpose (migration 0018). */
  purpose: Generated<string>;
}

/** A third-party OAuth app (reference 5.5-5.9); `client_secret` is sealed by secrets/ (context `oauth-integration:<id>:client-secret`). */
export interface OAuthIntegrationTable {
  id: Generated<number>;
  tenant_id: number;
  name: string;
  type: string;
  auth_url: string;
  token_url: string;
  client_id: string;
  client_secret: string;
  redirect_uri: string;
  /** JSON string[] or null. */
  scopes: string | null;
  /** JSON object or null. */
  config: string | null;
  created_at: string;
  updated_at: string;
}

/** A user's token for an integration (reference 5.10-5.13); both tokens sealed (context `user-oauth-token:<integrationId>:<userId>:access|refresh`). */
export interface UserOAuthTokenTable {
  id: Generated<number>;
  tenant_id: number;
  user_id: number;
  integration_id: number;
  status: string;
  access_token: string;
  refresh_token: string | null;
  token_type: string | null;
  scope: string | null;
  access_token_expires_at: string | null;
  refresh_token_expires_at: string | null;
  /** JSON: the last failure, or null. */
  last_error: string | null;
  /** The background refresh that holds this token (a random id), and until when; null: none. */
  refresh_claim: string | null;
  refresh_claimed_until: string | null;
  /** When a refresh that failed for a passing reason is tried again in the background; null: not retried. */
  refresh_retry_at: string | null;
  created_at: string;
  updated_at: string;
}

/** An authorization request in flight: single use, short-lived; `code_verifier` sealed (context `oauth-state:<stateHash>`). */
export interface OAuthStateTable {
  id: Generated<number>;
  tenant_id: number;
  user_id: number;
  integration_id: number;
  state_hash: string;
  code_verifier: string;
  created_at: string;
  expires_at: string;
}

/** One stored model of the authorization server (areas/oauth, migration 0022). */
export interface OAuthModelTable {
  id: Generated<number>;
  tenant_id: number;
  /** The `oidc-provider` model name: AccessToken, RefreshToken, Grant, DeviceCode, Client, ... */
  model: string;
  /** SHA-256 (base64url) of the model's id; for tokens the id is the token. */
  key_hash: string;
  grant_hash: string | null;
  user_code_hash: string | null;
  uid: string | null;
  /** JSON: the model's payload without the token. */
  payload: string;
  /** secrets/: a client's secret. */
  secret: string | null;
  created_at: string;
  expires_at: string | null;
}

export type JobRow = Selectable<JobTable>;
export type SigningKeyRow = Selectable<SigningKeyTable>;
export type OAuthIntegrationRow = Selectable<OAuthIntegrationTable>;
export type UserOAuthTokenRow = Selectable<UserOAuthTokenTable>;
export type OAuthStateRow = Selectable<OAuthStateTable>;
export type OAuthModelRow = Selectable<OAuthModelTable>;
