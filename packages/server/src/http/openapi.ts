import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { TSchema } from 'typebox';
import { declareProblems, shareProblemResponses } from './declared-problems.js';

declare module 'fastify' {
  interface FastifySchema {
    /**
     * The operation is this product's, beyond the reference (its summary says so too). The document
     * marks it `x-extension: true`, so a client can tell extensions from the reference's operations
     * mechanically (docs/api/reference.md).
     */
    extension?: true;
    /**
     * The fields of a `multipart/form-data` body the handler reads itself (Fastify validates no
     * multipart body), as a JSON schema object: documented as the operation's `requestBody`, so
     * generated clients can call it. The handler checks the fields.
     */
    multipartBody?: TSchema;
  }
}

/** Marks an operation whose request body is optional; turned into `requestBody.required: false`. */
const OPTIONAL_BODY = 'x-body-optional';
/** Carries a route's `multipartBody` into the document; turned into its `requestBody`. */
const MULTIPART_BODY = 'x-multipart-body';
/** The document's mark of an operation beyond the reference. */
export const EXTENSION_KEY = 'x-extension';

type Operation = {
  requestBody?: { required?: boolean; content?: Record<string, unknown> };
  [OPTIONAL_BODY]?: boolean;
  [MULTIPART_BODY]?: Record<string, unknown>;
};

/**
 * @fastify/swagger marks every body required (the spec declares some optional), and knows no body
 * a route does not validate (a multipart upload's fields).
 */
function completeBodies(document: { paths?: Record<string, Record<string, Operation>> }) {
  for (const methods of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(methods)) {
      const multipart = operation[MULTIPART_BODY];
      if (multipart) {
        delete operation[MULTIPART_BODY];
        operation.requestBody = { required: true, content: { 'multipart/form-data': { schema: multipart } } };
      }
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
    const marks = route.schema as Record<string, unknown> | undefined;
    if (marks?.extension) marks[EXTENSION_KEY] = true;
    if (marks?.multipartBody) marks[MULTIPART_BODY] = marks.multipartBody;
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
    transformObject: (documentObject) => shareProblemResponses(completeBodies((documentObject as unknown as { openapiObject: never }).openapiObject)),
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
}
