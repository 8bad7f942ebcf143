import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { EmbedGroupsService } from './embed-groups.service.js';
import { CreateEmbedGroupBody, EmbedGroupMembersBody, EmbedGroupParams, UpdateEmbedGroupBody } from './embed-groups.schemas.js';
import { EmbedPageQuery, EmbedTenantParams } from './embed-tenants.schemas.js';

const tags = ['Embedding'];
const base = '/api/v1/embed-tenants/:embedTenantName/groups';

/** Reference 4.6-4.13: an embed tenant's groups and their members. */
export function embedGroupsRoutes(service: EmbedGroupsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      base,
      {
        schema: {
          operationId: 'listEmbedGroups',
          tags,
          summary: "List an embed tenant's groups, newest first, with member counts (admin only); system groups are not listed",
          params: EmbedTenantParams,
          querystring: EmbedPageQuery,
          response: { 200: Type.Ref('UserGroupDTOPage') },
          problems: ['FORBIDDEN', 'EMBED_TENANT_NOT_FOUND'],
        },
      },
      async (request) => service.list(request.caller, request.params.embedTenantName, request.query),
    );

    app.post(
      base,
      {
        schema: {
          operationId: 'createEmbedGroup',
          tags,
          summary: 'Create a group in an embed tenant (admin only); names are unique in it and may not start with system:',
          params: EmbedTenantParams,
          body: CreateEmbedGroupBody,
          response: { 200: Type.Ref('UserGroupDTO') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'EMBED_TENANT_NOT_FOUND', 'EMBED_GROUP_NAME_TAKEN', 'EMBED_GROUP_NAME_RESERVED'],
        },
      },
      async (request) => service.create(request.caller, request.params.embedTenantName, request.body),
    );

    app.get(
      `${base}/:id`,
      {
        schema: {
          operationId: 'getEmbedGroup',
          tags,
          summary: 'Get an embed group with its member count (admin only)',
          params: EmbedGroupParams,
          response: { 200: Type.Ref('UserGroupDTO') },
          problems: ['FORBIDDEN', 'EMBED_TENANT_NOT_FOUND', 'EMBED_GROUP_NOT_FOUND'],
        },
      },
      async (request) => service.get(request.caller, request.params.embedTenantName, request.params.id),
    );

    app.patch(
      `${base}/:id`,
      {
        schema: {
          operationId: 'updateEmbedGroup',
          tags,
          summary: "Change an embed group's description (admin only); the name is fixed",
          params: EmbedGroupParams,
          body: UpdateEmbedGroupBody,
          response: { 200: Type.Ref('UserGroupDTO') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'EMBED_TENANT_NOT_FOUND', 'EMBED_GROUP_NOT_FOUND'],
        },
      },
      async (request) => service.update(request.caller, request.params.embedTenantName, request.params.id, request.body),
    );

    app.delete(
      `${base}/:id`,
      {
        schema: {
          operationId: 'deleteEmbedGroup',
          tags,
          summary: 'Delete an embed group without members (admin only)',
          params: EmbedGroupParams,
          response: { 204: Type.Null({ description: 'Deleted' }) },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'EMBED_TENANT_NOT_FOUND', 'EMBED_GROUP_NOT_FOUND', 'EMBED_GROUP_HAS_MEMBERS'],
        },
      },
      async (request, reply) => {
        await service.remove(request.caller, request.params.embedTenantName, request.params.id);
        return reply.code(204).send(null);
      },
    );

    app.get(
      `${base}/:id/users`,
      {
        schema: {
          operationId: 'listEmbedGroupMembers',
          tags,
          summary: "List an embed group's members, most recently added first (admin only)",
          params: EmbedGroupParams,
          querystring: EmbedPageQuery,
          response: { 200: Type.Ref('EmbedUserPage') },
          problems: ['FORBIDDEN', 'EMBED_TENANT_NOT_FOUND', 'EMBED_GROUP_NOT_FOUND'],
        },
      },
      async (request) => service.listMembers(request.caller, request.params.embedTenantName, request.params.id, request.query),
    );

    app.post(
      `${base}/:id/users`,
      {
        schema: {
          operationId: 'addEmbedGroupMembers',
          tags,
          summary: 'Add 1-1000 members to an embed group (admin only); unknown external ids are provisioned; idempotent',
          params: EmbedGroupParams,
          body: EmbedGroupMembersBody,
          response: { 200: Type.Ref('AddEmbedGroupMembersResponse') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'EMBED_TENANT_NOT_FOUND', 'EMBED_GROUP_NOT_FOUND', 'EMBED_USER_NOT_FOUND', 'EMBED_USER_LIMIT'],
        },
      },
      async (request) => service.addMembers(request.caller, request.params.embedTenantName, request.params.id, request.body.members),
    );

    app.delete(
      `${base}/:id/users`,
      {
        schema: {
          operationId: 'removeEmbedGroupMembers',
          tags,
          summary: 'Remove 1-1000 members from an embed group (admin only); non-members are skipped, unknown users never provisioned',
          params: EmbedGroupParams,
          body: EmbedGroupMembersBody,
          response: { 204: Type.Null({ description: 'Removed (or were not members)' }) },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'EMBED_TENANT_NOT_FOUND', 'EMBED_GROUP_NOT_FOUND'],
        },
      },
      async (request, reply) => {
        await service.removeMembers(request.caller, request.params.embedTenantName, request.params.id, request.body.members);
        return reply.code(204).send(null);
      },
    );
  };
}
