import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { GroupsService } from './groups.service.js';

export function groupsRoutes(service: GroupsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    void app;
    void service;
  };
}
