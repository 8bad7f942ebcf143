/**
 * The unique indexes that API writes can run into, by name, with what SQLite reports for each:
 * SQLite names an expression index but gives the columns of a plain one, while PostgreSQL
 * always names the index (`constraint`). A renamed or changed index must be changed here too;
 * test/unique-violations.test.ts proves every entry on both stores.
 */
const SQLITE_TARGET = {
  users_tenant_email: "index 'users_tenant_email'",
  groups_tenant_name: "index 'groups_tenant_name'",
  user_attributes_tenant_name: "index 'user_attributes_tenant_name'",
  folders_sibling_name: "index 'folders_sibling_name'",
  workbooks_slug: 'workbooks.deployment_id, workbooks.slug',
  reports_public_id: 'reports.deployment_id, reports.public_id',
  policies_principal_resource: 'policies.tenant_id, policies.principal_type, policies.principal_id, policies.resource_type, policies.resource_id',
  oidc_token_configs_name: 'oidc_token_configs.tenant_id, oidc_token_configs.name',
  oidc_token_configs_one_per_cloud: 'oidc_token_configs.tenant_id, oidc_token_configs.audience_type',
} as const;

export type UniqueIndex = keyof typeof SQLITE_TARGET;

const SQLITE_PREFIX = 'UNIQUE constraint failed: ';

/** The unique index a failed write violated, in either dialect; undefined for any other error. */
export function violatedUniqueIndex(error: unknown): UniqueIndex | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, constraint, message } = error as { code?: unknown; constraint?: unknown; message?: unknown };
  if (code === '23505') return typeof constraint === 'string' && constraint in SQLITE_TARGET ? (constraint as UniqueIndex) : undefined;
  if (code !== 'SQLITE_CONSTRAINT_UNIQUE' || typeof message !== 'string' || !message.startsWith(SQLITE_PREFIX)) return undefined;
  const target = message.slice(SQLITE_PREFIX.length);
  return (Object.keys(SQLITE_TARGET) as UniqueIndex[]).find((index) => SQLITE_TARGET[index] === target);
}

/**
 * Runs a write and turns a violation of one of the named unique indexes into the error given for
 * it (a 409 `ApiError`, or SCIM's own). Services check for a conflict before writing, but two
 * concurrent requests can both pass that check; the index then decides, and the loser gets the
 * same answer as if the check had caught it, instead of a 500. Any other failure passes through.
 */
export async function mapUniqueViolation<T>(conflicts: Partial<Record<UniqueIndex, () => Error>>, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const index = violatedUniqueIndex(error);
    const conflict = index === undefined ? undefined : conflicts[index];
    throw conflict ? conflict() : error;
  }
}
