import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { PoliciesService } from './policies.service.js';

export function policiesRoutes(service: PoliciesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    void app;
    void service;
  };
}
