import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ProblemRef } from '../../shared/schemas.js';
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
          response: { 201: Type.Ref('Policy'), 409: ProblemRef },
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
        },
      },
      async (request, reply) => {
        await service.remove(request.caller, request.params.policyId);
        return reply.code(204).send(null);
      },
    );
  };
}
