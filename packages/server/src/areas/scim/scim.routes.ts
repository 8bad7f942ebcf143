import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { resourceTypes, schemas, serviceProviderConfig } from './scim.discovery.js';
import { ScimError, SCIM_MEDIA_TYPE, SCIM_PREFIX } from './scim.errors.js';
import type { JsonObject } from './scim.resources.js';
import { attributeList, queryParams, searchParams } from './scim.query.js';
import { ScimBody, ScimGetQuery, ScimPatchBody, ScimSearchBody, ScimGroupParams, ScimIdParams, ScimListQuery, ScimUserParams } from './scim.schemas.js';
import type { ScimService } from './scim.service.js';

const tags = ['SCIM'];
const scimContent = (ref: string) => ({ content: { [SCIM_MEDIA_TYPE]: { schema: Type.Ref(ref) } } });
const ScimErrorRef = scimContent('ScimError');

/** What each SCIM error status means here; `scimType` narrows the 400s and 409s (RFC 7644 section 3.12). */
const SCIM_ERROR_STATUSES: Record<number, string> = {
  400: 'The request is not valid: scimType `invalidFilter`, `invalidSyntax`, `invalidValue`, `invalidPath`, `noTarget`, `mutability` or `tooMany` says why',
  401: 'No valid credential: a missing, malformed, unknown, revoked or expired token',
  403: 'The token is not an unscoped admin key, so it may not provision',
  404: 'No such User, Group, schema or resource type in this tenant, or no tenant on this host',
  409: 'scimType `uniqueness`: another resource already has this userName, email or displayName',
  412: 'If-Match names a version the resource no longer has',
  413: 'The request body is too large',
  415: 'The request body is not JSON (application/scim+json or application/json)',
  429: 'Too many requests with this token; `Retry-After` says when to try again',
  500: 'The service failed; the request id in the logs has the cause',
};

/** Every SCIM operation's error responses, in SCIM's error schema (RFC 7644 section 3.12). */
function errors(extra: number[] = []): Record<number, unknown> {
  return Object.fromEntries([400, 401, 403, 404, 413, 415, 429, 500, ...extra].map((s) => [s, { description: SCIM_ERROR_STATUSES[s], ...ScimErrorRef }]));
}

const consumes = [SCIM_MEDIA_TYPE, 'application/json'];

/** The absolute base URL of the caller's tenant's SCIM service (see scim.base-url.ts). */
export type BaseUrlOf = (tenant: { id: number; slug: string }) => Promise<string>;

function send(reply: FastifyReply, status: number, body: JsonObject): FastifyReply {
  const meta = body.meta as JsonObject | undefined;
  if (meta && typeof meta.version === 'string') reply.header('etag', meta.version);
  if (status === 201 && meta && typeof meta.location === 'string') reply.header('location', meta.location);
  return reply.code(status).type(SCIM_MEDIA_TYPE).send(JSON.stringify(body));
}

const ifMatch = (request: FastifyRequest) => request.headers['if-match'];

/**
 * The SCIM 2.0 service under /api/scim/v2 (RFC 7644), for identity providers. Routes shape HTTP
 * only; the SCIM service holds the rules and shares the users and groups services' writes.
 */
export function scimRoutes(service: ScimService, baseUrlOf: BaseUrlOf): FastifyPluginAsyncTypebox {
  return async (app) => {
    const baseUrl = (request: FastifyRequest) => baseUrlOf(request.tenant);
    // SCIM's media type carries JSON (RFC 7644 section 3.1); this parser applies to these routes only.
    // An empty body is no body: identity providers send a Content-Type on DELETE and GET too.
    const json = app.getDefaultJsonParser('error', 'error');
    const parser = (request: FastifyRequest, body: string | Buffer, done: (error: Error | null, body?: unknown) => void) =>
      body.length === 0 ? done(null, undefined) : json(request, body.toString(), done);
    app.addContentTypeParser(SCIM_MEDIA_TYPE, { parseAs: 'string' }, parser);
    // Only JSON is SCIM: any other media type is 415 rather than a confusing validation error.
    app.removeContentTypeParser(['application/json', 'text/plain']);
    app.addContentTypeParser('application/json', { parseAs: 'string' }, parser);

    const discovery = (
      path: string,
      operationId: string,
      summary: string,
      build: (base: string, request: FastifyRequest) => Promise<JsonObject | JsonObject[]>,
    ) => {
      app.get(
        `${SCIM_PREFIX}/${path}`,
        {
          schema: {
            operationId,
            tags,
            summary,
            response: { 200: scimContent(path === 'ServiceProviderConfig' ? 'ScimDocument' : 'ScimListResponse'), ...errors() },
          },
        },
        async (request, reply) => {
          request.caller.access.requireAccountAdmin('read the SCIM configuration');
          const built = await build(await baseUrl(request), request);
          if (!Array.isArray(built)) return send(reply, 200, built);
          return send(reply, 200, {
            schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
            totalResults: built.length,
            itemsPerPage: built.length,
            startIndex: 1,
            Resources: built,
          });
        },
      );
      if (path === 'ServiceProviderConfig') return;
      app.get(
        `${SCIM_PREFIX}/${path}/:id`,
        {
          schema: {
            operationId: `${operationId}ById`,
            tags,
            summary: `${summary}, one by id`,
            params: ScimIdParams,
            response: { 200: scimContent('ScimDocument'), ...errors() },
          },
        },
        async (request, reply) => {
          request.caller.access.requireAccountAdmin('read the SCIM configuration');
          const found = ((await build(await baseUrl(request), request)) as JsonObject[]).find((d) => d.id === request.params.id);
          if (!found) throw new ScimError(404, `There is no ${path === 'Schemas' ? 'schema' : 'resource type'} ${request.params.id}.`);
          return send(reply, 200, found);
        },
      );
    };
    discovery('ServiceProviderConfig', 'getScimServiceProviderConfig', 'What this SCIM service supports (RFC 7644 section 5)', async (base) =>
      serviceProviderConfig(base),
    );
    discovery('ResourceTypes', 'listScimResourceTypes', 'The SCIM resource types: User and Group', async (base) => resourceTypes(base));
    discovery('Schemas', 'listScimSchemas', "The SCIM schemas: User, EnterpriseUser, the tenant's UserAttributes extension, Group", async (base, request) =>
      schemas(base, await service.attributesSchema(request.caller)),
    );

    // The root search covers both resource types (RFC 7644 section 3.4.3): see ScimService.searchAll.
    app.post(
      `${SCIM_PREFIX}/.search`,
      {
        schema: {
          operationId: 'searchScim',
          tags,
          summary: 'Search Users and Groups together with a SearchRequest (RFC 7644 section 3.4.3)',
          consumes,
          body: ScimSearchBody,
          response: { 200: scimContent('ScimListResponse'), ...errors() },
        },
      },
      async (request, reply) => {
        // Who may search is settled before the body is read, as on every other SCIM operation.
        request.caller.access.requireAccountAdmin('read SCIM users and groups');
        return send(reply, 200, await service.searchAll(request.caller, searchParams(request.body), await baseUrl(request)));
      },
    );

    resourceRoutes(app, 'Users', 'User', ScimUserParams, 'userId', baseUrl, {
      list: service.listUsers,
      get: service.getUser,
      create: service.createUser,
      replace: service.replaceUser,
      patch: service.patchUser,
      remove: service.deleteUser,
    });
    resourceRoutes(app, 'Groups', 'Group', ScimGroupParams, 'groupId', baseUrl, {
      list: service.listGroups,
      get: service.getGroup,
      create: service.createGroup,
      replace: service.replaceGroup,
      patch: service.patchGroup,
      remove: service.deleteGroup,
    });
  };
}

interface ResourceHandlers {
  list: ScimService['listUsers'];
  get: ScimService['getUser'];
  create: ScimService['createUser'];
  replace: ScimService['replaceUser'];
  patch: ScimService['patchUser'];
  remove: ScimService['deleteUser'];
}

function resourceRoutes(
  app: Parameters<FastifyPluginAsyncTypebox>[0],
  plural: 'Users' | 'Groups',
  kind: 'User' | 'Group',
  params: typeof ScimUserParams | typeof ScimGroupParams,
  param: 'userId' | 'groupId',
  baseUrl: (request: FastifyRequest) => Promise<string>,
  h: ResourceHandlers,
): void {
  const ref = kind === 'User' ? 'ScimUser' : 'ScimGroup';
  const path = `${SCIM_PREFIX}/${plural}`;
  const idOf = (request: FastifyRequest) => (request.params as Record<string, string>)[param] as string;

  app.get(
    path,
    {
      schema: {
        operationId: `listScim${plural}`,
        tags,
        summary: `List ${plural} with filter, sorting and paging (RFC 7644 section 3.4.2)`,
        querystring: ScimListQuery,
        response: { 200: scimContent('ScimListResponse'), ...errors() },
      },
    },
    async (request, reply) => send(reply, 200, await h.list(request.caller, queryParams(request.query), await baseUrl(request))),
  );
  app.post(
    `${path}/.search`,
    {
      schema: {
        operationId: `searchScim${plural}`,
        tags,
        summary: `Search ${plural} with a SearchRequest body: the same results as the GET (RFC 7644 section 3.4.3)`,
        consumes,
        body: ScimSearchBody,
        response: { 200: scimContent('ScimListResponse'), ...errors() },
      },
    },
    async (request, reply) => {
      request.caller.access.requireAccountAdmin(`read SCIM ${plural.toLowerCase()}`);
      return send(reply, 200, await h.list(request.caller, searchParams(request.body), await baseUrl(request)));
    },
  );
  app.post(
    path,
    {
      schema: {
        operationId: `createScim${kind}`,
        tags,
        summary: `Provision a ${kind} (201 with Location)`,
        consumes,
        body: ScimBody,
        response: { 201: scimContent(ref), ...errors([409]) },
      },
    },
    async (request, reply) => send(reply, 201, await h.create(request.caller, request.body, await baseUrl(request))),
  );
  app.get(
    `${path}/:${param}`,
    {
      schema: {
        operationId: `getScim${kind}`,
        tags,
        summary: `Get a ${kind} (If-None-Match with the current version gives 304)`,
        params,
        querystring: ScimGetQuery,
        response: { 200: scimContent(ref), 304: Type.Null({ description: 'Not modified' }), ...errors() },
      },
    },
    async (request, reply) => {
      const q = request.query as Record<string, string | undefined>;
      const resource = await h.get(
        request.caller,
        idOf(request),
        { attributes: attributeList(q.attributes), excludedAttributes: attributeList(q.excludedAttributes) },
        await baseUrl(request),
      );
      // A client holding the current version gets 304 without the body (RFC 7644 section 3.14).
      const version = (resource.meta as JsonObject | undefined)?.version;
      if (
        typeof version === 'string' &&
        request.headers['if-none-match']?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === version.replace(/^W\//, ''))
      ) {
        return reply.code(304).header('etag', version).send();
      }
      return send(reply, 200, resource);
    },
  );
  app.put(
    `${path}/:${param}`,
    {
      schema: {
        operationId: `replaceScim${kind}`,
        tags,
        summary: `Replace a ${kind} (If-Match honoured)`,
        consumes,
        params,
        body: ScimBody,
        response: { 200: scimContent(ref), ...errors([409, 412]) },
      },
    },
    async (request, reply) => send(reply, 200, await h.replace(request.caller, idOf(request), request.body, ifMatch(request), await baseUrl(request))),
  );
  app.patch(
    `${path}/:${param}`,
    {
      schema: {
        operationId: `patchScim${kind}`,
        tags,
        summary: `Modify a ${kind} with PatchOp operations (If-Match honoured)`,
        consumes,
        params,
        body: ScimPatchBody,
        response: { 200: scimContent(ref), ...errors([409, 412]) },
      },
    },
    async (request, reply) => send(reply, 200, await h.patch(request.caller, idOf(request), request.body, ifMatch(request), await baseUrl(request))),
  );
  app.delete(
    `${path}/:${param}`,
    {
      schema: {
        operationId: `deleteScim${kind}`,
        tags,
        summary:
          kind === 'User' ? 'Deprovision a User: deactivated, out of its groups, no longer in SCIM' : 'Delete a Group with its memberships and access policies',
        params,
        // 409: deprovisioning the last active admin is refused.
        response: { 204: Type.Null({ description: 'Deleted' }), ...errors(kind === 'User' ? [409, 412] : [412]) },
      },
    },
    async (request, reply) => {
      await h.remove(request.caller, idOf(request), ifMatch(request), await baseUrl(request));
      return reply.code(204).send(null);
    },
  );
}
