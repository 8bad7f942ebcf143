/** The account-wide cap on embed users (reference 4.0) unless the operator sets EMBED_USER_LIMIT. */
export const DEFAULT_EMBED_USER_LIMIT = 10_000;
