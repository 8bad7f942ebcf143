import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';

/** `GET /api/v1/spec`: the OpenAPI 3.1 document of this very build (spec, Versioning). */
export const specRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/v1/spec',
    {
      schema: {
        operationId: 'getSpec',
        tags: ['Meta'],
        summary: 'The OpenAPI 3.1 document served by this build',
        response: { 200: Type.Object({}, { additionalProperties: true, description: 'OpenAPI 3.1.0 document' }) },
      },
    },
    async () => app.swagger(),
  );
};
