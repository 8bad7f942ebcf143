import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { DeploymentsService } from './deployments.service.js';

export function deploymentsRoutes(service: DeploymentsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    void app;
    void service;
  };
}
