/** The `typ` of an embed token's header: never taken for a data-API token, nor the reverse. */
export const EMBED_TOKEN_TYPE = 'embed+jwt';

/** An embed token lives a day (reference 4.16). */
export const EMBED_TOKEN_SECONDS = 86_400;

/** The audience of embed tokens: the tenant's embed API. */
export const embedAudience = (origin: string) => `${origin}/api/v1/embed`;

/**
 * What an embed token carries besides `iss`, `aud`, `sub`, `iat`, `exp` and `jti`, fixed when
 * the session is generated (reference 4.15: "baked into the token when it is exchanged").
 * Names are snake_case like the data-API tokens'.
 */
export interface EmbedClaims {
  tenant_id: number;
  deployment_id: number;
  /** The branch the session queries; null: production. */
  branch: string | null;
  /** The embed tenant of an external user (`default` when the session named none); null for an `internalId` session. */
  embed_tenant: string | null;
  /** The external user (`external_id`, and `id`, the embed user's), or the console user an `internalId` named (`user_id`). */
  embed_user: { external_id: string | null; id: number | null; email: string | null; user_id: number | null };
  /** Global groups by name, verbatim, as access policies match them. */
  groups: string[];
  /** The embed tenant's implicit group `system:tenant:{name}`, then its groups the user is in, `system:tenant:{name}:group:{group}`. */
  tenant_groups: string[];
  user_attributes: Record<string, unknown>;
  security_context: Record<string, unknown>;
  /** Only the switches the session pinned; the rest inherit the account's. */
  settings: Record<string, boolean | string>;
  theme: Record<string, unknown> | null;
  /** A creator-mode session (reference 4.15); absent on every other. */
  creator_mode?: true;
}
