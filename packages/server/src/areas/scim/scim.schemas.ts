import { Type } from 'typebox';

/**
 * OpenAPI shapes of the SCIM service. SCIM resources are open-ended (extensions, attributes a
 * client may add), so bodies are described loosely here and checked by the SCIM service itself
 * against the schemas /Schemas serves.
 */
export const ScimErrorSchema = Type.Object(
  {
    schemas: Type.Array(Type.String(), { description: 'urn:ietf:params:scim:api:messages:2.0:Error' }),
    status: Type.String({ description: 'The HTTP status, as a string (RFC 7644 section 3.12).' }),
    scimType: Type.Optional(
      Type.String({ description: 'invalidFilter, invalidSyntax, invalidValue, invalidPath, noTarget, uniqueness, mutability, tooMany.' }),
    ),
    detail: Type.String(),
  },
  { $id: 'ScimError', description: 'A SCIM error (RFC 7644 section 3.12).' },
);

const ScimResource = (id: string, description: string) =>
  Type.Object(
    {
      schemas: Type.Array(Type.String()),
      id: Type.Optional(Type.String()),
      meta: Type.Optional(Type.Object({}, { additionalProperties: true })),
    },
    { $id: id, description, additionalProperties: true },
  );

export const ScimUserSchema = ScimResource('ScimUser', 'A SCIM User: urn:ietf:params:scim:schemas:core:2.0:User with the enterprise extension.');
export const ScimGroupSchema = ScimResource('ScimGroup', 'A SCIM Group: urn:ietf:params:scim:schemas:core:2.0:Group.');
export const ScimListSchema = Type.Object(
  {
    schemas: Type.Array(Type.String()),
    totalResults: Type.Integer(),
    itemsPerPage: Type.Optional(Type.Integer()),
    startIndex: Type.Optional(Type.Integer()),
    Resources: Type.Array(Type.Object({}, { additionalProperties: true })),
  },
  { $id: 'ScimListResponse', description: 'urn:ietf:params:scim:api:messages:2.0:ListResponse' },
);
export const ScimDocumentSchema = Type.Object({}, { $id: 'ScimDocument', additionalProperties: true, description: 'A SCIM discovery document.' });

export const ScimBody = Type.Object(
  {},
  { additionalProperties: true, description: 'A SCIM resource or PatchOp message; attribute names are case-insensitive.' },
);
/** Any JSON: the service checks a PatchOp message itself, so a body that is not an object is invalidSyntax (RFC 7644 section 3.12). */
export const ScimPatchBody = Type.Unknown({ description: 'A PatchOp message (RFC 7644 section 3.5.2); attribute names are case-insensitive.' });
/** Any JSON, checked by the SCIM service like a PATCH body, so a body that is not an object is invalidSyntax. */
export const ScimSearchBody = Type.Unknown({
  description:
    'A SearchRequest (RFC 7644 section 3.4.3): schemas, filter, attributes, excludedAttributes, sortBy, sortOrder, startIndex, count, as in the GET query.',
});

const List = (description: string) => Type.Optional(Type.String({ description }));
export const ScimListQuery = Type.Object(
  {
    // The filter's length is checked by the service, which answers invalidFilter (RFC 7644 section 3.4.2.2).
    filter: Type.Optional(Type.String({ description: 'RFC 7644 section 3.4.2.2 filter, e.g. userName eq "ada@example.com"; at most 4096 characters.' })),
    startIndex: Type.Optional(
      Type.Integer({ description: `1-based index of the first result; below 1 reads as 1, above ${Number.MAX_SAFE_INTEGER} as ${Number.MAX_SAFE_INTEGER}.` }),
    ),
    count: Type.Optional(Type.Integer({ description: 'Results per page (0 gives only totalResults); at most 200.' })),
    sortBy: Type.Optional(Type.String({ maxLength: 256 })),
    sortOrder: Type.Optional(Type.String({ description: 'ascending (default) or descending, in any case.' })),
    attributes: List('Comma-separated attributes to return.'),
    excludedAttributes: List('Comma-separated attributes to leave out, e.g. members.'),
  },
  { additionalProperties: true },
);
export const ScimGetQuery = Type.Object(
  { attributes: List('Comma-separated attributes to return.'), excludedAttributes: List('Comma-separated attributes to leave out.') },
  { additionalProperties: true },
);

export const ScimUserParams = Type.Object({ userId: Type.String({ maxLength: 64 }) });
export const ScimGroupParams = Type.Object({ groupId: Type.String({ maxLength: 64 }) });
export const ScimIdParams = Type.Object({ id: Type.String({ maxLength: 256 }) });

export const scimSchemas = [ScimErrorSchema, ScimUserSchema, ScimGroupSchema, ScimListSchema, ScimDocumentSchema];
