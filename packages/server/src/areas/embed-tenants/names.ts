/**
 * The names embedding puts into tokens and security contexts, in one place: what a valid embed
 * tenant name is, how external ids are normalised, the synthetic email of a user provisioned
 * without one, and the namespaced names of tenant groups.
 */

/**
 * Reference 4.0 gives this pattern (2-36 characters) and prose saying 5-36; the pattern is what
 * both the customer's backend and this server validate against, so it decides: a name the
 * published schema accepts is never refused at run time. No `:` can occur, which keeps the
 * `system:tenant:{name}:…` namespaces below unambiguous.
 */
export const EMBED_TENANT_NAME_PATTERN = '^[a-z][a-z0-9-]{0,34}[a-z0-9]$';
const TENANT_NAME = new RegExp(EMBED_TENANT_NAME_PATTERN);

export function isEmbedTenantName(name: string): boolean {
  return TENANT_NAME.test(name);
}

/** External ids are compared and stored trimmed and lowercased, so a difference in case never makes a second user. */
export function normalizeExternalId(externalId: string): string {
  return externalId.trim().toLowerCase();
}

/** The prefix of every name the system reserves; tenant groups may not start with it. */
export const SYSTEM_PREFIX = 'system:';

/** The implicit sharing group of an embed tenant. */
export function tenantSystemGroupName(embedTenantName: string): string {
  return `system:tenant:${embedTenantName}`;
}

/** The built-in group of every embed user of the account. */
export const ALL_EMBED_USERS_GROUP_NAME = 'system:all-embed-users';

/**
 * A tenant group as the security context names it. Of the reference's two forms this is the one
 * with the explicit `:group:` segment: the tenant name holds no `:`, and the segment keeps tenant
 * groups in a namespace of their own, so no group name can produce the implicit group's name
 * (`system:tenant:{name}`) or a name of any other segment the system may add under the tenant.
 */
export function tenantGroupContextName(embedTenantName: string, groupName: string): string {
  return `system:tenant:${embedTenantName}:group:${groupName}`;
}

/** The domain of synthetic addresses: `.invalid` (RFC 2606) can never resolve, so nothing is ever mailed there. */
export const SYNTHETIC_EMAIL_DOMAIN = 'embed.invalid';

/**
 * The placeholder address of a user provisioned without an email (4.4):
 * `{externalId}@{embedTenantName}.embed.invalid`, the external id kept where it is a plain
 * address character and percent-encoded elsewhere (`@`, spaces, `%`), so the address is one
 * well-formed mailbox, tells the embed tenant and user apart, and cannot be anybody's real address.
 */
export function syntheticEmail(externalId: string, embedTenantName: string): string {
  const local = [...externalId]
    .map((c) => (/^[a-z0-9._+-]$/.test(c) ? c : [...Buffer.from(c, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('')))
    .join('');
  return `${local}@${embedTenantName}.${SYNTHETIC_EMAIL_DOMAIN}`;
}
