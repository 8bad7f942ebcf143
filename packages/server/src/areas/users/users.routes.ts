import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { UsersService } from './users.service.js';
import { BulkCreateUsersBody, CreateUserBody, ListUsersQuery, UpdateUserBody, UserParams } from './users.schemas.js';

const tags = ['Users'];

export function usersRoutes(service: UsersService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/v1/users',
      {
        schema: {
          operationId: 'createUser',
          tags,
          summary: 'Create a user (admin only); emails are unique per tenant, ignoring case',
          body: CreateUserBody,
          response: { 201: Type.Ref('User') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'EMAIL_TAKEN'],
        },
      },
      async (request, reply) => reply.code(201).send(await service.create(request.caller, request.body)),
    );

    app.post(
      '/api/v1/users/bulk',
      {
        schema: {
          operationId: 'bulkCreateUsers',
          tags,
          summary: 'Create up to 100 users one at a time; each failure carries the error the single create would give',
          body: BulkCreateUsersBody,
          response: { 200: Type.Ref('BulkCreateUsersResult') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN'],
        },
      },
      async (request) => service.bulkCreate(request.caller, request.body),
    );

    app.get(
      '/api/v1/users',
      {
        schema: {
          operationId: 'listUsers',
          tags,
          summary: 'List the users of the tenant (admin only)',
          querystring: ListUsersQuery,
          response: { 200: Type.Ref('UserPage') },
          problems: ['FORBIDDEN'],
        },
      },
      async (request) => service.list(request.caller, request.query),
    );

    app.get(
      '/api/v1/users/me',
      {
        schema: { operationId: 'getCurrentUser', tags, summary: 'The user the API key belongs to', response: { 200: Type.Ref('User') } },
      },
      async (request) => service.me(request.caller),
    );

    app.get(
      '/api/v1/users/:userId',
      {
        schema: {
          operationId: 'getUser',
          tags,
          summary: 'Get a user (admins: anyone; others: themselves)',
          params: UserParams,
          response: { 200: Type.Ref('User') },
          problems: ['FORBIDDEN', 'USER_NOT_FOUND'],
        },
      },
      async (request) => service.get(request.caller, request.params.userId),
    );

    app.put(
      '/api/v1/users/:userId',
      {
        schema: {
          operationId: 'updateUser',
          tags,
          summary: 'Change a user (admin only); `active: true` reactivates. The last active admin cannot be demoted or deactivated',
          params: UserParams,
          body: UpdateUserBody,
          response: { 200: Type.Ref('User') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'USER_NOT_FOUND', 'EMAIL_TAKEN', 'LAST_ADMIN'],
        },
      },
      async (request) => service.update(request.caller, request.params.userId, request.body),
    );

    app.delete(
      '/api/v1/users/:userId',
      {
        schema: {
          operationId: 'deactivateUser',
          tags,
          summary: 'Deactivate a user (admin only): the user stays listed as inactive and their API keys stop working at once',
          params: UserParams,
          response: { 204: Type.Null({ description: 'Deactivated (or already inactive)' }) },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'USER_NOT_FOUND', 'LAST_ADMIN'],
        },
      },
      async (request, reply) => {
        await service.deactivate(request.caller, request.params.userId);
        return reply.code(204).send(null);
      },
    );
  };
}
