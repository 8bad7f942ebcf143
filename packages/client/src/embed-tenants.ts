import { unwrap } from './errors.js';
import { DEFAULT_PAGE_SIZE, paginate, type ListOptions, type RawClient } from './pagination.js';
import type { components, operations } from './generated/api.js';
import type { BulkProgress } from './bulk.js';

type Schemas = components['schemas'];
export type EmbedTenant = Schemas['EmbedTenant'];
export type EmbedUser = Schemas['EmbedUser'];
/** An embed tenant's group (the reference's UserGroupDTO). */
export type EmbedGroup = Schemas['UserGroupDTO'];
export type EmbedAccess = Schemas['EmbedAccessResponse'];
export type FolderEmbedAccess = Schemas['FolderEmbedAccess'];
/** The body of provisioning one embed user (reference 4.4). */
export type ProvisionEmbedUserInput = operations['provisionEmbedUser']['requestBody']['content']['application/json'];
export type UpdateEmbedAccessInput = operations['updateWorkbookEmbedAccess']['requestBody']['content']['application/json'];
export type UpdateFolderEmbedAccessInput = operations['updateFolderEmbedAccess']['requestBody']['content']['application/json'];
/** A member named one way: `{ externalId }` or `{ embedUserId }`. */
export type EmbedMember = { externalId: string } | { embedUserId: number };
export type EmbedAccessSource = 'tenant' | 'allEmbedUsers' | 'folder';

export interface ProvisionFailure {
  externalId: string;
  error: { status: number; message: string };
}
export interface ProvisionEmbedUsersResult {
  /** In input order, across requests. */
  succeeded: EmbedUser[];
  failed: ProvisionFailure[];
  requests: number;
}
export interface EmbedMembersResult {
  addedMembers: EmbedUser[];
  unchangedMembers: EmbedUser[];
  requests: number;
}
export interface EmbedBulkOptions {
  /** Called once before the first request (done 0) and after every request; `moved` counts users applied. */
  onProgress?: (progress: BulkProgress) => void;
  /** Checked between requests: a request in flight completes, so the result stays exact. */
  signal?: AbortSignal;
}

/** Embed tenants, their users and groups (reference 4.1-4.13); admin keys only. */
export interface EmbedTenants {
  /** Every embed tenant, by name; `search` matches part of the name. */
  list(query?: { search?: string }, options?: ListOptions): AsyncIterable<EmbedTenant>;
  /** Deletes a tenant with everything in it; resolves also when it did not exist. The name must be lowercase. */
  delete(name: string, options?: { signal?: AbortSignal }): Promise<void>;
  /** The tenant's users by email; `search` matches part of the email or external id. */
  users(name: string, query?: { search?: string }, options?: ListOptions): AsyncIterable<EmbedUser>;
  /** Creates or updates one user to the state `input` describes; creates the tenant on demand. */
  provisionUser(name: string, input: ProvisionEmbedUserInput, options?: { signal?: AbortSignal }): Promise<EmbedUser>;
  /** Any number of users, 100 per request, in order; failures are reported per user, never thrown. */
  provisionUsers(name: string, users: Iterable<ProvisionEmbedUserInput>, options?: EmbedBulkOptions): Promise<ProvisionEmbedUsersResult>;
  /** The tenant's groups, newest first. */
  groups(name: string, options?: ListOptions): AsyncIterable<EmbedGroup>;
  createGroup(name: string, group: { name: string; description?: string | null }, options?: { signal?: AbortSignal }): Promise<EmbedGroup>;
  getGroup(name: string, groupId: number, options?: { signal?: AbortSignal }): Promise<EmbedGroup>;
  /** Changes the description only (`''` or null clears it). */
  updateGroup(name: string, groupId: number, description: string | null, options?: { signal?: AbortSignal }): Promise<EmbedGroup>;
  /** Refused (400) while the group has members. */
  deleteGroup(name: string, groupId: number, options?: { signal?: AbortSignal }): Promise<void>;
  /** The group's members, most recently added first. */
  members(name: string, groupId: number, options?: ListOptions): AsyncIterable<EmbedUser>;
  /** Adds members, 1000 per request; unknown external ids are provisioned. */
  addMembers(name: string, groupId: number, members: Iterable<EmbedMember>, options?: EmbedBulkOptions): Promise<EmbedMembersResult>;
  /** Removes members, 1000 per request; unknown users are skipped. */
  removeMembers(name: string, groupId: number, members: Iterable<EmbedMember>, options?: EmbedBulkOptions): Promise<{ requests: number }>;
}

/** Whom `embedAccess.shareWorkbook` shares with: one embed tenant, or every embed user of the account. */
export type EmbedShareTarget = { embedTenantName: string } | { allEmbedUsers: true };

/** Options of `embedAccess.shareWorkbook`. */
export interface ShareWorkbookOptions {
  /** `read` shares (the default), `none` removes the share. */
  action?: 'read' | 'none';
  /**
   * The published dashboard's signed-embedding switch (3.6). Default: turned on when sharing and
   * off now, so the tenant's sessions can open the dashboard; left as it is when removing, or when
   * null. Setting it on a workbook that was never published is a 400 ApiError and shares nothing.
   */
  allowEmbed?: boolean | null;
  signal?: AbortSignal;
}

/** What `embedAccess.shareWorkbook` found and did. */
export interface ShareWorkbookResult {
  /** The workbook's embed access after the change: every share, the ones made before included. */
  access: EmbedAccess;
  /** False when the target already had the access asked for (nothing about it changed). */
  changed: boolean;
  /** True when the call switched `allowEmbed`. */
  allowEmbedChanged: boolean;
}

/** Embed access of workbooks and folders, and what an embed tenant can reach (reference 3.4, 3.5, 4.14). */
export interface EmbedAccessApi {
  /**
   * Shares a workbook read-only with an embed tenant (or all embed users), or removes that share,
   * and turns on signed embedding of its published dashboard (see `ShareWorkbookOptions.allowEmbed`).
   * Other targets' shares are kept: the write names one target, never the whole list. Reads the
   * access first to tell what changed, then writes once (share and switch in one transaction).
   * The embed tenant must exist (404 `EMBED_TENANT_NOT_FOUND`): it does once a user is provisioned
   * in it or a session names it.
   */
  shareWorkbook(deploymentId: number, workbookId: number, target: EmbedShareTarget, options?: ShareWorkbookOptions): Promise<ShareWorkbookResult>;
  getWorkbook(deploymentId: number, workbookId: number, options?: { signal?: AbortSignal }): Promise<EmbedAccess>;
  updateWorkbook(deploymentId: number, workbookId: number, input: UpdateEmbedAccessInput, options?: { signal?: AbortSignal }): Promise<EmbedAccess>;
  getFolder(deploymentId: number, folderId: number, options?: { signal?: AbortSignal }): Promise<FolderEmbedAccess>;
  updateFolder(deploymentId: number, folderId: number, input: UpdateFolderEmbedAccessInput, options?: { signal?: AbortSignal }): Promise<FolderEmbedAccess>;
  /** The workbooks the tenant can reach in the deployment, by id; `accessSource` filters by how. */
  workbooks(deploymentId: number, name: string, query?: { accessSource?: EmbedAccessSource }, options?: ListOptions): AsyncIterable<Schemas['Workbook']>;
}

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});

function chunks<T>(items: Iterable<T>, size: number): T[][] {
  const all = [...items];
  const out: T[][] = [];
  for (let i = 0; i < all.length; i += size) out.push(all.slice(i, i + size));
  return out;
}

function progressOf(total: number, done: number, applied: number, failed: number, requests: number): BulkProgress {
  return { total, done, moved: applied, failed, skipped: 0, requests };
}

/** The access `target` has in `access`: a tenant absent from the list has none. */
function accessOf(access: EmbedAccess, target: EmbedShareTarget): 'read' | 'none' {
  if ('allEmbedUsers' in target) return access.allEmbedUsers.enabled ? access.allEmbedUsers.action : 'none';
  const name = target.embedTenantName.toLowerCase();
  return access.tenants.find((t) => t.embedTenantName === name)?.action ?? 'none';
}

export function createEmbedTenants(api: RawClient): { embedTenants: EmbedTenants; embedAccess: EmbedAccessApi } {
  const tenant = (embedTenantName: string) => ({ embedTenantName });
  const group = (embedTenantName: string, id: number) => ({ embedTenantName, id });
  const getWorkbook: EmbedAccessApi['getWorkbook'] = async (deploymentId, workbookId, { signal } = {}) =>
    unwrap(
      await api.GET('/api/v1/deployments/{deploymentId}/workbooks/{workbookId}/embed-access', {
        params: { path: { deploymentId, workbookId } },
        ...withSignal(signal),
      }),
    );
  const updateWorkbook: EmbedAccessApi['updateWorkbook'] = async (deploymentId, workbookId, input, { signal } = {}) =>
    unwrap(
      await api.PUT('/api/v1/deployments/{deploymentId}/workbooks/{workbookId}/embed-access', {
        params: { path: { deploymentId, workbookId } },
        body: input,
        ...withSignal(signal),
      }),
    );
  return {
    embedTenants: {
      list: (query = {}, { signal } = {}) =>
        paginate(async (after) =>
          unwrap(await api.GET('/api/v1/embed-tenants', { params: { query: { ...query, first: DEFAULT_PAGE_SIZE, after } }, ...withSignal(signal) })),
        ),
      delete: async (name, { signal } = {}) => {
        unwrap(await api.DELETE('/api/v1/embed-tenants/{embedTenantName}', { params: { path: tenant(name) }, ...withSignal(signal) }));
      },
      users: (name, query = {}, { signal } = {}) =>
        paginate(async (after) =>
          unwrap(
            await api.GET('/api/v1/embed-tenants/{embedTenantName}/users', {
              params: { path: tenant(name), query: { ...query, first: DEFAULT_PAGE_SIZE, after } },
              ...withSignal(signal),
            }),
          ),
        ),
      provisionUser: async (name, input, { signal } = {}) =>
        unwrap(await api.POST('/api/v1/embed-tenants/{embedTenantName}/user', { params: { path: tenant(name) }, body: input, ...withSignal(signal) })),
      async provisionUsers(name, users, { onProgress, signal } = {}) {
        const batches = chunks(users, 100);
        const total = batches.reduce((n, b) => n + b.length, 0);
        const result: ProvisionEmbedUsersResult = { succeeded: [], failed: [], requests: 0 };
        onProgress?.(progressOf(total, 0, 0, 0, 0));
        for (const batch of batches) {
          signal?.throwIfAborted();
          const answer = unwrap(
            await api.POST('/api/v1/embed-tenants/{embedTenantName}/users', { params: { path: tenant(name) }, body: { users: batch }, ...withSignal(signal) }),
          );
          result.succeeded.push(...answer.succeeded);
          result.failed.push(...answer.failed);
          result.requests += 1;
          onProgress?.(progressOf(total, result.succeeded.length + result.failed.length, result.succeeded.length, result.failed.length, result.requests));
        }
        return result;
      },
      groups: (name, { signal } = {}) =>
        paginate(async (after) =>
          unwrap(
            await api.GET('/api/v1/embed-tenants/{embedTenantName}/groups', {
              params: { path: tenant(name), query: { first: DEFAULT_PAGE_SIZE, after } },
              ...withSignal(signal),
            }),
          ),
        ),
      createGroup: async (name, body, { signal } = {}) =>
        unwrap(await api.POST('/api/v1/embed-tenants/{embedTenantName}/groups', { params: { path: tenant(name) }, body, ...withSignal(signal) })),
      getGroup: async (name, id, { signal } = {}) =>
        unwrap(await api.GET('/api/v1/embed-tenants/{embedTenantName}/groups/{id}', { params: { path: group(name, id) }, ...withSignal(signal) })),
      updateGroup: async (name, id, description, { signal } = {}) =>
        unwrap(
          await api.PATCH('/api/v1/embed-tenants/{embedTenantName}/groups/{id}', {
            params: { path: group(name, id) },
            body: { description },
            ...withSignal(signal),
          }),
        ),
      deleteGroup: async (name, id, { signal } = {}) => {
        unwrap(await api.DELETE('/api/v1/embed-tenants/{embedTenantName}/groups/{id}', { params: { path: group(name, id) }, ...withSignal(signal) }));
      },
      members: (name, id, { signal } = {}) =>
        paginate(async (after) =>
          unwrap(
            await api.GET('/api/v1/embed-tenants/{embedTenantName}/groups/{id}/users', {
              params: { path: group(name, id), query: { first: DEFAULT_PAGE_SIZE, after } },
              ...withSignal(signal),
            }),
          ),
        ),
      async addMembers(name, id, members, { onProgress, signal } = {}) {
        const batches = chunks(members, 1000);
        const total = batches.reduce((n, b) => n + b.length, 0);
        const result: EmbedMembersResult = { addedMembers: [], unchangedMembers: [], requests: 0 };
        let done = 0;
        onProgress?.(progressOf(total, 0, 0, 0, 0));
        for (const batch of batches) {
          signal?.throwIfAborted();
          const answer = unwrap(
            await api.POST('/api/v1/embed-tenants/{embedTenantName}/groups/{id}/users', {
              params: { path: group(name, id) },
              body: { members: batch },
              ...withSignal(signal),
            }),
          );
          result.addedMembers.push(...answer.addedMembers);
          result.unchangedMembers.push(...answer.unchangedMembers);
          result.requests += 1;
          done += batch.length;
          onProgress?.(progressOf(total, done, done, 0, result.requests));
        }
        return result;
      },
      async removeMembers(name, id, members, { onProgress, signal } = {}) {
        const batches = chunks(members, 1000);
        const total = batches.reduce((n, b) => n + b.length, 0);
        let done = 0;
        let requests = 0;
        onProgress?.(progressOf(total, 0, 0, 0, 0));
        for (const batch of batches) {
          signal?.throwIfAborted();
          unwrap(
            await api.DELETE('/api/v1/embed-tenants/{embedTenantName}/groups/{id}/users', {
              params: { path: group(name, id) },
              body: { members: batch },
              ...withSignal(signal),
            }),
          );
          requests += 1;
          done += batch.length;
          onProgress?.(progressOf(total, done, done, 0, requests));
        }
        return { requests };
      },
    },
    embedAccess: {
      getWorkbook,
      updateWorkbook,
      async shareWorkbook(deploymentId, workbookId, target, { action = 'read', allowEmbed, signal } = {}) {
        const before = await getWorkbook(deploymentId, workbookId, { ...withSignal(signal) });
        // Left out: on when sharing, untouched when removing (never switched off unasked); null: untouched.
        const wantEmbed = allowEmbed === undefined ? (action === 'read' ? true : null) : allowEmbed;
        const switchEmbed = wantEmbed !== null && wantEmbed !== before.allowEmbed;
        const input: UpdateEmbedAccessInput = {
          ...('allEmbedUsers' in target ? { allEmbedUsers: true } : { embedTenantName: target.embedTenantName.toLowerCase() }),
          action,
          ...(switchEmbed ? { allowEmbed: wantEmbed } : {}),
        };
        // Written even when the share is already there: the server checks the tenant exists, and a
        // repeated share changes nothing (idempotent), so the answer is the same either way.
        const access = await updateWorkbook(deploymentId, workbookId, input, { ...withSignal(signal) });
        return { access, changed: accessOf(before, target) !== action, allowEmbedChanged: access.allowEmbed !== before.allowEmbed };
      },
      getFolder: async (deploymentId, folderId, { signal } = {}) =>
        unwrap(
          await api.GET('/api/v1/deployments/{deploymentId}/folders/{folderId}/embed-access', {
            params: { path: { deploymentId, folderId } },
            ...withSignal(signal),
          }),
        ),
      updateFolder: async (deploymentId, folderId, input, { signal } = {}) =>
        unwrap(
          await api.PUT('/api/v1/deployments/{deploymentId}/folders/{folderId}/embed-access', {
            params: { path: { deploymentId, folderId } },
            body: input,
            ...withSignal(signal),
          }),
        ),
      workbooks: (deploymentId, name, query = {}, { signal } = {}) =>
        paginate(async (after) =>
          unwrap(
            await api.GET('/api/v1/deployments/{deploymentId}/embed-tenants/{embedTenantName}/workbooks', {
              params: { path: { deploymentId, embedTenantName: name }, query: { ...query, first: DEFAULT_PAGE_SIZE, after } },
              ...withSignal(signal),
            }),
          ),
        ),
    },
  };
}
