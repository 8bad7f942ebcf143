import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { EmbedTenantRow, Executor } from '../../db/tables.js';
import { lockKey, serialized } from '../../db/transactions.js';
import { decodeCursor, pageRequest, toPage } from '../../shared/pagination.js';
import { ApiError } from '../../shared/problems.js';
import type { Clock } from '../../time.js';
import type { EmbedSearchInput, EmbedTenant, EmbedUser, ProvisionEmbedUserInput } from './embed-tenants.schemas.js';
import { isEmbedTenantName, normalizeExternalId } from './names.js';
import { canonicalEmbedTenantName, provisionEmbedUser, toEmbedUser, type ProvisionedEmbedUser, type ProvisionEmbedUserRequest } from './provision.js';
import { deleteEmbedTenant, findEmbedTenant, listEmbedTenants, type EmbedTenantWithCount } from './embed-tenants.store.js';
import { listEmbedUsers } from './embed-users.store.js';

export interface EmbedPeopleOptions {
  /** The account-wide cap on embed users (EMBED_USER_LIMIT). */
  userLimit: number;
}

function toEmbedTenant(row: EmbedTenantWithCount): EmbedTenant {
  return { id: row.id, name: row.name, userCount: row.user_count, displayName: row.display_name, createdAt: row.created_at };
}

/** A page request from a query whose `first` and `after` may be null (reference 0.3). */
export function nullablePage(query: { first?: number | null; after?: string | null }) {
  return pageRequest({ first: query.first ?? undefined, after: query.after ?? undefined });
}

function invalidCursor(): ApiError {
  return new ApiError('INVALID_CURSOR', 'The `after` cursor was not issued by this list; pass `pageInfo.endCursor` of the previous page.', {
    errors: [{ pointer: '/query/after', message: 'is not a cursor of this list' }],
  });
}

/** The embed tenant a path names (lowercased first); 404 when the account has none of that name. */
export async function requireEmbedTenant(db: Executor, tenantId: number, pathName: string): Promise<EmbedTenantRow> {
  const name = canonicalEmbedTenantName(pathName);
  const row = await findEmbedTenant(db, tenantId, name);
  if (!row) throw new ApiError('EMBED_TENANT_NOT_FOUND', `Embed tenant "${name}" does not exist; provisioning a user or starting a session creates it.`);
  return row;
}

/** Embed tenants and their users (reference 4.1-4.5): admins only; writes need an unscoped key. */
export function embedTenantsService(store: Store, options: EmbedPeopleOptions, now: Clock) {
  const { db } = store;

  /** One provisioning in its own transaction, under the account's embed-people lock (the cap is exact). */
  function provisionOne(tenantId: number, request: ProvisionEmbedUserRequest, pointer: string): Promise<ProvisionedEmbedUser> {
    return serialized(store, lockKey.embedPeople(tenantId), (trx) =>
      provisionEmbedUser(trx, tenantId, request, { userLimit: options.userLimit, pointer, now }),
    );
  }

  function requestOf(embedTenantName: string, input: ProvisionEmbedUserInput): ProvisionEmbedUserRequest {
    return {
      embedTenantName,
      externalId: input.externalId,
      email: input.email,
      userProfile: input.userProfile,
      groups: input.groups,
      tenantGroups: input.tenantGroups,
    };
  }

  return {
    options,

    /**
     * Provisions inside a caller's transaction (generate-session, 4.15) with this server's cap.
     * Open the transaction with `serialized(store, lockKey.embedPeople(tenantId), …)` to bound lock waits.
     */
    provisionInTransaction: (trx: Executor, tenantId: number, request: ProvisionEmbedUserRequest) =>
      provisionEmbedUser(trx, tenantId, request, { userLimit: options.userLimit, now }),

    async listTenants({ actor, access }: Caller, input: EmbedSearchInput) {
      access.requireAdmin('list embed tenants');
      const page = nullablePage(input);
      let after: string | undefined;
      if (page.after !== undefined) {
        const [name] = decodeCursor(page.after, 1);
        if (typeof name !== 'string') throw invalidCursor();
        after = name;
      }
      const search = input.search == null || input.search === '' ? undefined : input.search.toLowerCase();
      const rows = await listEmbedTenants(db, actor.tenantId, search, after, page.first + 1);
      const { items, pageInfo } = toPage(rows, page, (r) => [r.name]);
      return { items: items.map(toEmbedTenant), pageInfo };
    },

    /**
     * Idempotent: a tenant that does not exist is already deleted. The name is taken as given, never
     * lowercased: a name with an uppercase letter is refused (4.2), so a mistyped name cannot
     * delete a whole tenant.
     */
    async deleteTenant({ actor, access }: Caller, name: string): Promise<void> {
      access.requireAccountAdmin('delete embed tenants');
      if (!isEmbedTenantName(name)) {
        const detail =
          name.toLowerCase() === name
            ? `"${name}" is not an embed tenant name: 2-36 characters a-z, 0-9 and -, starting with a letter and ending with a letter or digit.`
            : `"${name}" is not in canonical lowercase form; this route never lowercases names, so a mistyped name cannot delete a tenant. Send "${name.toLowerCase()}" to delete that tenant.`;
        throw new ApiError('VALIDATION_FAILED', detail, { errors: [{ pointer: '/params/embedTenantName', message: 'is not a canonical embed tenant name' }] });
      }
      await serialized(store, lockKey.embedPeople(actor.tenantId), async (trx) => {
        const row = await findEmbedTenant(trx, actor.tenantId, name);
        if (row) await deleteEmbedTenant(trx, actor.tenantId, row.id);
      });
    },

    async listUsers({ actor, access }: Caller, embedTenantName: string, input: EmbedSearchInput) {
      access.requireAdmin('list embed users');
      const embedTenant = await requireEmbedTenant(db, actor.tenantId, embedTenantName);
      const page = nullablePage(input);
      let after: { email: string; id: number } | undefined;
      if (page.after !== undefined) {
        const [email, id] = decodeCursor(page.after, 2);
        if (typeof email !== 'string' || typeof id !== 'number' || !Number.isSafeInteger(id)) throw invalidCursor();
        after = { email, id };
      }
      const search = input.search == null || input.search.trim() === '' ? undefined : normalizeExternalId(input.search);
      const rows = await listEmbedUsers(db, actor.tenantId, embedTenant.id, search, after, page.first + 1);
      const { items, pageInfo } = toPage(rows, page, (r) => [r.email, r.id]);
      return { items: items.map(toEmbedUser), pageInfo };
    },

    async provision({ actor, access }: Caller, embedTenantName: string, input: ProvisionEmbedUserInput): Promise<EmbedUser> {
      access.requireAccountAdmin('provision embed users');
      const name = canonicalEmbedTenantName(embedTenantName);
      return (await provisionOne(actor.tenantId, requestOf(name, input), '/body')).embedUser;
    },

    /**
     * One entry at a time, in order, each in its own transaction: a failure is reported with the
     * status and message the single form would give, and earlier entries stay. A repeated external
     * id is applied again, so the last one wins.
     */
    async provisionBulk({ actor, access }: Caller, embedTenantName: string, users: ProvisionEmbedUserInput[]) {
      access.requireAccountAdmin('provision embed users');
      const name = canonicalEmbedTenantName(embedTenantName);
      const succeeded: EmbedUser[] = [];
      const failed: Array<{ externalId: string; error: { status: number; message: string } }> = [];
      for (const [i, input] of users.entries()) {
        try {
          succeeded.push((await provisionOne(actor.tenantId, requestOf(name, input), `/body/users/${i}`)).embedUser);
        } catch (error) {
          if (!(error instanceof ApiError)) throw error;
          failed.push({ externalId: normalizeExternalId(input.externalId), error: { status: error.status, message: error.detail } });
        }
      }
      return { succeeded, failed };
    },
  };
}
export type EmbedTenantsService = ReturnType<typeof embedTenantsService>;
