import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { UserAttributesService } from './user-attributes.service.js';
import {
  CreateUserAttributeBody,
  SetUserAttributeValuesBody,
  UpdateUserAttributeBody,
  UserAttributeParams,
  UserValuesParams,
} from './user-attributes.schemas.js';

const tags = ['User attributes'];

/** User attribute definitions and users' values: what embedding filters rows by, per user. */
export function userAttributesRoutes(service: UserAttributesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/user-attributes',
      {
        schema: {
          operationId: 'listUserAttributes',
          tags,
          summary: 'List the user attribute definitions (admin only)',
          response: { 200: Type.Ref('UserAttributeList') },
          problems: ['FORBIDDEN'],
        },
      },
      async (request) => service.list(request.caller),
    );
    app.post(
      '/api/v1/user-attributes',
      {
        schema: {
          operationId: 'createUserAttribute',
          tags,
          summary: 'Define a user attribute: name, type (string, number, boolean, string-list) and default (admin only)',
          body: CreateUserAttributeBody,
          response: { 201: Type.Ref('UserAttribute') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'USER_ATTRIBUTE_NAME_TAKEN'],
        },
      },
      async (request, reply) => reply.code(201).send(await service.create(request.caller, request.body)),
    );
    app.get(
      '/api/v1/user-attributes/:attributeId',
      {
        schema: {
          operationId: 'getUserAttribute',
          tags,
          summary: 'Get a user attribute definition (admin only)',
          params: UserAttributeParams,
          response: { 200: Type.Ref('UserAttribute') },
          problems: ['FORBIDDEN', 'USER_ATTRIBUTE_NOT_FOUND'],
        },
      },
      async (request) => service.get(request.caller, request.params.attributeId),
    );
    app.put(
      '/api/v1/user-attributes/:attributeId',
      {
        schema: {
          operationId: 'updateUserAttribute',
          tags,
          summary: 'Rename a user attribute or change its default; its type never changes (admin only)',
          params: UserAttributeParams,
          body: UpdateUserAttributeBody,
          response: { 200: Type.Ref('UserAttribute') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'USER_ATTRIBUTE_NOT_FOUND', 'USER_ATTRIBUTE_NAME_TAKEN'],
        },
      },
      async (request) => service.update(request.caller, request.params.attributeId, request.body),
    );
    app.get(
      '/api/v1/user-attribute-values/:userId',
      {
        schema: {
          operationId: 'getUserAttributeValues',
          tags,
          summary: "A user's value of every attribute, defaults filled in (the user themselves, or an admin)",
          params: UserValuesParams,
          response: { 200: Type.Ref('UserAttributeValues') },
          problems: ['FORBIDDEN', 'USER_NOT_FOUND'],
        },
      },
      async (request) => service.getValues(request.caller, request.params.userId),
    );
    app.post(
      '/api/v1/user-attribute-values/:userId',
      {
        schema: {
          operationId: 'setUserAttributeValues',
          tags,
          summary: "Set some of a user's attribute values, as userAttributes: [{name, value}]; null returns one to its default (admin only)",
          params: UserValuesParams,
          body: SetUserAttributeValuesBody,
          response: { 200: Type.Ref('UserAttributeValues') },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'USER_NOT_FOUND', 'USER_ATTRIBUTES_NOT_FOUND'],
        },
      },
      async (request) => service.setValues(request.caller, request.params.userId, request.body),
    );
  };
}
