import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { GroupsService } from './groups.service.js';
import { CreateGroupBody, GroupMemberParams, GroupMembersBody, GroupParams, ListGroupsQuery, UpdateGroupBody } from './groups.schemas.js';

const tags = ['Groups'];

export function groupsRoutes(service: GroupsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/groups',
      {
        schema: {
          operationId: 'listGroups',
          tags,
          summary: 'List the groups of the tenant',
          querystring: ListGroupsQuery,
          response: { 200: Type.Ref('GroupPage') },
        },
      },
      async (request) => service.list(request.caller, request.query),
    );

    app.post(
      '/api/v1/groups',
      {
        schema: {
          operationId: 'createGroup',
          tags,
          summary: 'Create a group (admin only); names are unique per tenant, ignoring case',
          body: CreateGroupBody,
          response: { 201: Type.Ref('GroupDetail') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'GROUP_NAME_TAKEN'],
        },
      },
      async (request, reply) => reply.code(201).send(await service.create(request.caller, request.body)),
    );

    app.get(
      '/api/v1/groups/:groupId',
      {
        schema: {
          operationId: 'getGroup',
          tags,
          summary: 'Get a group with its members',
          params: GroupParams,
          response: { 200: Type.Ref('GroupDetail') },
          problems: ['GROUP_NOT_FOUND'],
        },
      },
      async (request) => service.get(request.caller, request.params.groupId),
    );

    app.put(
      '/api/v1/groups/:groupId',
      {
        schema: {
          operationId: 'updateGroup',
          tags,
          summary: 'Rename a group or change its description (admin only)',
          params: GroupParams,
          body: UpdateGroupBody,
          response: { 200: Type.Ref('GroupDetail') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'GROUP_NOT_FOUND', 'GROUP_NAME_TAKEN'],
        },
      },
      async (request) => service.update(request.caller, request.params.groupId, request.body),
    );

    app.delete(
      '/api/v1/groups/:groupId',
      {
        schema: {
          operationId: 'deleteGroup',
          tags,
          summary: 'Delete a group (admin only), with its memberships and the access policies granted to it',
          params: GroupParams,
          response: { 204: Type.Null({ description: 'Deleted' }) },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'GROUP_NOT_FOUND'],
        },
      },
      async (request, reply) => {
        await service.remove(request.caller, request.params.groupId);
        return reply.code(204).send(null);
      },
    );

    memberRoutes(app, service);
  };
}

function memberRoutes(app: Parameters<FastifyPluginAsyncTypebox>[0], service: GroupsService): void {
  app.post(
    '/api/v1/groups/:groupId/members',
    {
      schema: {
        operationId: 'addGroupMembers',
        tags,
        summary: 'Add users to a group (admin only); existing members are skipped, an unknown user refuses the whole request',
        params: GroupParams,
        body: GroupMembersBody,
        response: { 200: Type.Ref('GroupDetail') },
        problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'GROUP_NOT_FOUND', 'USER_NOT_FOUND'],
      },
    },
    async (request) => service.addMembers(request.caller, request.params.groupId, request.body.userIds),
  );

  app.delete(
    '/api/v1/groups/:groupId/members',
    {
      schema: {
        operationId: 'removeGroupMembers',
        tags,
        summary: 'Remove users from a group (admin only); users not in the group are skipped',
        params: GroupParams,
        body: GroupMembersBody,
        response: { 200: Type.Ref('GroupDetail') },
        problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'GROUP_NOT_FOUND', 'USER_NOT_FOUND'],
      },
    },
    async (request) => service.removeMembers(request.caller, request.params.groupId, request.body.userIds),
  );

  app.delete(
    '/api/v1/groups/:groupId/members/:userId',
    {
      schema: {
        operationId: 'removeGroupMember',
        tags,
        summary: 'Remove one user from a group (admin only)',
        params: GroupMemberParams,
        response: { 204: Type.Null({ description: 'Removed (or was not a member)' }) },
        problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'GROUP_NOT_FOUND', 'USER_NOT_FOUND'],
      },
    },
    async (request, reply) => {
      await service.removeMembers(request.caller, request.params.groupId, [request.params.userId]);
      return reply.code(204).send(null);
    },
  );
}
