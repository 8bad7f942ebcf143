import { unwrap } from './errors.js';
import { DEFAULT_PAGE_SIZE, paginate, type ListOptions, type RawClient } from './pagination.js';
import type { components, operations } from './generated/api.js';

type Signal = { signal?: AbortSignal };
/** A custom role: named policies, held by the users and groups it is assigned to (reference 8.D). */
export type Role = components['schemas']['Role'];
/** What a role grants: `actions` on `resources` of `resourceType` (`Deployment` or `Global`). */
export type RolePolicy = components['schemas']['RolePolicy'];
export type CreateRoleInput = operations['createRole']['requestBody']['content']['application/json'];
/** A field left out keeps its value; `description: null` clears it; `policies` replaces them all. */
export type UpdateRoleInput = operations['updateRole']['requestBody']['content']['application/json'];

/** Custom roles and who holds them (reference 8.D); admin keys only, unscoped for changes. */
export interface Roles {
  /** Every custom role, newest first, following the pages; the built-in roles are not listed. */
  list(options?: ListOptions): AsyncIterable<Role>;
  get(roleId: number, options?: Signal): Promise<Role>;
  create(input: CreateRoleInput, options?: Signal): Promise<Role>;
  update(roleId: number, input: UpdateRoleInput, options?: Signal): Promise<Role>;
  /** Deletes the role with every assignment of it. */
  delete(roleId: number, options?: Signal): Promise<void>;
  /** Idempotent: resolves also when the user already holds it. */
  assignUser(roleId: number, userId: number, options?: Signal): Promise<void>;
  /** Idempotent: resolves also when the user did not hold it. */
  unassignUser(roleId: number, userId: number, options?: Signal): Promise<void>;
  /** Every member of the group holds the role (an extension of this server). Idempotent. */
  assignGroup(roleId: number, groupId: number, options?: Signal): Promise<void>;
  unassignGroup(roleId: number, groupId: number, options?: Signal): Promise<void>;
}

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});
const ROLE = '/api/v1/roles/{roleId}' as const;
const ROLE_USER = '/api/v1/roles/{roleId}/users/{userId}' as const;
const ROLE_GROUP = '/api/v1/roles/{roleId}/groups/{groupId}' as const;

export function createRoles(api: RawClient): Roles {
  return {
    list: ({ signal } = {}) =>
      paginate(async (after) => unwrap(await api.GET('/api/v1/roles', { params: { query: { first: DEFAULT_PAGE_SIZE, after } }, ...withSignal(signal) }))),
    get: async (roleId, { signal } = {}) => unwrap(await api.GET(ROLE, { params: { path: { roleId } }, ...withSignal(signal) })),
    create: async (input, { signal } = {}) => unwrap(await api.POST('/api/v1/roles', { body: input, ...withSignal(signal) })),
    update: async (roleId, input, { signal } = {}) => unwrap(await api.PUT(ROLE, { params: { path: { roleId } }, body: input, ...withSignal(signal) })),
    delete: async (roleId, { signal } = {}) => {
      unwrap(await api.DELETE(ROLE, { params: { path: { roleId } }, ...withSignal(signal) }));
    },
    assignUser: async (roleId, userId, { signal } = {}) => {
      unwrap(await api.PUT(ROLE_USER, { params: { path: { roleId, userId } }, ...withSignal(signal) }));
    },
    unassignUser: async (roleId, userId, { signal } = {}) => {
      unwrap(await api.DELETE(ROLE_USER, { params: { path: { roleId, userId } }, ...withSignal(signal) }));
    },
    assignGroup: async (roleId, groupId, { signal } = {}) => {
      unwrap(await api.PUT(ROLE_GROUP, { params: { path: { roleId, groupId } }, ...withSignal(signal) }));
    },
    unassignGroup: async (roleId, groupId, { signal } = {}) => {
      unwrap(await api.DELETE(ROLE_GROUP, { params: { path: { roleId, groupId } }, ...withSignal(signal) }));
    },
  };
}
