import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { RolesService } from './roles.service.js';
import { CreateRoleBody, ListRolesQuery, RoleGroupParams, RoleParams, RoleUserParams, UpdateRoleBody } from './roles.schemas.js';

const tags = ['Roles'];
const NoContent = Type.Null({ description: 'Done' });
const ADMIN_WRITE = ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN'] as const;

export function rolesRoutes(service: RolesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/roles',
      {
        schema: {
          operationId: 'listRoles',
          tags,
          summary: 'List the custom roles, newest first (admin only); the built-in roles are not listed',
          querystring: ListRolesQuery,
          response: { 200: Type.Ref('RolePage') },
          problems: ['FORBIDDEN'],
        },
      },
      async (request) => service.list(request.caller, request.query),
    );

    app.post(
      '/api/v1/roles',
      {
        schema: {
          operationId: 'createRole',
          tags,
          summary: 'Create a custom role (admin with an unscoped key)',
          description:
            'Names are unique in the tenant, ignoring case (409), and may not be a built-in role’s: Admin, Developer, AIBIDeveloper, D3User, AIBIUser, AIBIViewer, Guest, EmbedUser (400). Each policy needs at least one action and one resource; a `Deployment` resource is a deployment id as a string of digits or `All` (else 400).',
          body: CreateRoleBody,
          response: { 200: Type.Ref('Role') },
          problems: [...ADMIN_WRITE, 'ROLE_NAME_TAKEN', 'ROLE_NAME_RESERVED'],
        },
      },
      async (request) => service.create(request.caller, request.body),
    );

    app.get(
      '/api/v1/roles/:roleId',
      {
        schema: {
          operationId: 'getRole',
          tags,
          summary: 'Get a custom role with its policies (admin only)',
          params: RoleParams,
          response: { 200: Type.Ref('Role') },
          problems: ['FORBIDDEN', 'ROLE_NOT_FOUND'],
        },
      },
      async (request) => service.get(request.caller, request.params.roleId),
    );

    app.put(
      '/api/v1/roles/:roleId',
      {
        schema: {
          operationId: 'updateRole',
          tags,
          summary: 'Change a custom role (admin with an unscoped key); `policies` replaces them all',
          description: 'A field left out keeps its value. `description: null` clears it; a null `name` or `policies` is refused (400).',
          params: RoleParams,
          body: UpdateRoleBody,
          response: { 200: Type.Ref('Role') },
          problems: [...ADMIN_WRITE, 'ROLE_NOT_FOUND', 'ROLE_NAME_TAKEN', 'ROLE_NAME_RESERVED'],
        },
      },
      async (request) => service.update(request.caller, request.params.roleId, request.body),
    );

    app.delete(
      '/api/v1/roles/:roleId',
      {
        schema: {
          operationId: 'deleteRole',
          tags,
          summary: 'Delete a custom role and every assignment of it, to users and to groups (admin with an unscoped key)',
          params: RoleParams,
          response: { 204: NoContent },
          problems: [...ADMIN_WRITE, 'ROLE_NOT_FOUND'],
        },
      },
      async (request, reply) => {
        await service.remove(request.caller, request.params.roleId);
        return reply.code(204).send(null);
      },
    );

    app.put(
      '/api/v1/roles/:roleId/users/:userId',
      {
        schema: {
          operationId: 'assignRoleToUser',
          tags,
          summary: 'Assign a custom role to a user; idempotent (admin with an unscoped key)',
          description: 'Built-in roles have no id here (a user’s built-in role is set on the user), so no call here can make an account admin.',
          params: RoleUserParams,
          response: { 204: NoContent },
          problems: [...ADMIN_WRITE, 'ROLE_NOT_FOUND', 'USER_NOT_FOUND'],
        },
      },
      async (request, reply) => {
        await service.assignUser(request.caller, request.params.roleId, request.params.userId);
        return reply.code(204).send(null);
      },
    );

    app.delete(
      '/api/v1/roles/:roleId/users/:userId',
      {
        schema: {
          operationId: 'unassignRoleFromUser',
          tags,
          summary: 'Take a custom role from a user; idempotent (admin with an unscoped key)',
          params: RoleUserParams,
          response: { 204: NoContent },
          problems: [...ADMIN_WRITE, 'ROLE_NOT_FOUND', 'USER_NOT_FOUND'],
        },
      },
      async (request, reply) => {
        await service.unassignUser(request.caller, request.params.roleId, request.params.userId);
        return reply.code(204).send(null);
      },
    );

    app.put(
      '/api/v1/roles/:roleId/groups/:groupId',
      {
        schema: {
          operationId: 'assignRoleToGroup',
          extension: true,
          tags,
          summary: 'Extension: assign a custom role to a group, so each member holds it; idempotent (admin with an unscoped key)',
          params: RoleGroupParams,
          response: { 204: NoContent },
          problems: [...ADMIN_WRITE, 'ROLE_NOT_FOUND', 'GROUP_NOT_FOUND'],
        },
      },
      async (request, reply) => {
        await service.assignGroup(request.caller, request.params.roleId, request.params.groupId);
        return reply.code(204).send(null);
      },
    );

    app.delete(
      '/api/v1/roles/:roleId/groups/:groupId',
      {
        schema: {
          operationId: 'unassignRoleFromGroup',
          extension: true,
          tags,
          summary: 'Extension: take a custom role from a group; idempotent (admin with an unscoped key)',
          params: RoleGroupParams,
          response: { 204: NoContent },
          problems: [...ADMIN_WRITE, 'ROLE_NOT_FOUND', 'GROUP_NOT_FOUND'],
        },
      },
      async (request, reply) => {
        await service.unassignGroup(request.caller, request.params.roleId, request.params.groupId);
        return reply.code(204).send(null);
      },
    );
  };
}
