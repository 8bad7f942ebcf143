import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { CreatePolicyBody, ListPoliciesQuery, PolicyParams } from './policies.schemas.js';
import type { PoliciesService } from './policies.service.js';

const tags = ['Policies'];

export function policiesRoutes(service: PoliciesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/v1/policies',
      {
        schema: {
          operationId: 'createPolicy',
          tags,
          summary: 'Grant a user or group access to a resource (admins only)',
          body: CreatePolicyBody,
          response: { 201: Type.Ref('Policy') },
          problems: [
            'FORBIDDEN',
            'KEY_SCOPE_FORBIDDEN',
            'USER_NOT_FOUND',
            'GROUP_NOT_FOUND',
            'DEPLOYMENT_NOT_FOUND',
            'FOLDER_NOT_FOUND',
            'WORKBOOK_NOT_FOUND',
            'REPORT_NOT_FOUND',
            'POLICY_EXISTS',
            'DEPLOYMENT_BUSY',
          ],
        },
      },
      async (request, reply) => reply.code(201).send(await service.create(request.caller, request.body)),
    );

    app.get(
      '/api/v1/policies',
      {
        schema: {
          operationId: 'listPolicies',
          tags,
          summary: 'List policies (admins: all; others: those granted to them or their groups)',
          querystring: ListPoliciesQuery,
          response: { 200: Type.Ref('PolicyPage') },
        },
      },
      async (request) => service.list(request.caller, request.query),
    );

    app.delete(
      '/api/v1/policies/:policyId',
      {
        schema: {
          operationId: 'deletePolicy',
          tags,
          summary: 'Revoke a policy; the access it gave ends with the next request (admins only)',
          params: PolicyParams,
          response: { 204: Type.Null({ description: 'Deleted' }) },
          problems: ['FORBIDDEN', 'KEY_SCOPE_FORBIDDEN', 'POLICY_NOT_FOUND'],
        },
      },
      async (request, reply) => {
        await service.remove(request.caller, request.params.policyId);
        return reply.code(204).send(null);
      },
    );
  };
}
