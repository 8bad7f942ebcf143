import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { declareProblems, shareProblemResponses } from './declared-problems.js';

/** Marks an operation whose request body is optional; turned into `requestBody.required: false`. */
const OPTIONAL_BODY = 'x-body-optional';

type Operation = { requestBody?: { required?: boolean }; [OPTIONAL_BODY]?: boolean };

/** @fastify/swagger marks every body required; the spec declares some optional. */
function markOptionalBodies(document: { paths?: Record<string, Record<string, Operation>> }) {
  for (const methods of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(methods)) {
      if (!operation[OPTIONAL_BODY]) continue;
      delete operation[OPTIONAL_BODY];
      if (operation.requestBody) operation.requestBody.required = false;
    }
  }
  return document;
}

export async function installOpenApi(app: FastifyInstance): Promise<void> {
  app.addHook('preValidation', async (request) => {
    if (request.routeOptions.config?.optionalBody && request.body === undefined) request.body = {};
  });
  app.addHook('onRoute', (route) => {
    // Public routes describe their own few errors, unless they list `problems` (the OAuth callback).
    if (route.config?.public && (route.schema as { problems?: unknown } | undefined)?.problems === undefined) return;
    // Each error status with the codes the route can answer there (generic ones plus its `problems`).
    declareProblems(route);
    const schema = route.schema as Record<string, unknown>;
    if (route.config?.optionalBody) schema[OPTIONAL_BODY] = true;
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'mapi management API',
        version: '1.0.0',
        description:
          'Management API of the analytics platform: deployments, workspace items, users, groups, access policies and API keys. ' +
          'Every request carries `Authorization: Bearer <key>`. Errors are RFC 9457 problem details with a stable `code`.',
      },
      servers: [{ url: '/', description: 'The tenant host (a custom domain may replace it)' }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key: `mapi_` followed by 40 letters or digits.' },
        },
      },
      security: [{ bearerAuth: [] }],
    },
    // Shared schemas keep their `$id` as their component name, so clients get readable type names.
    transformObject: (documentObject) => shareProblemResponses(markOptionalBodies((documentObject as unknown as { openapiObject: never }).openapiObject)),
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
}
