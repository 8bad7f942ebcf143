import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { UsersService } from './users.service.js';

export function usersRoutes(service: UsersService): FastifyPluginAsyncTypebox {
  return async (app) => {
    void app;
    void service;
  };
}
