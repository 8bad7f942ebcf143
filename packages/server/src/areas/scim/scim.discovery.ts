import {
  ATTRIBUTES_SCHEMA,
  ENTERPRISE_SCHEMA,
  ENTERPRISE_SCHEMA_DEF,
  GROUP_SCHEMA,
  GROUP_SCHEMA_DEF,
  USER_SCHEMA,
  USER_SCHEMA_DEF,
  type SchemaDef,
} from './scim.attributes.js';
import { MAX_COUNT } from './scim.service.js';
import type { JsonObject } from './scim.resources.js';

/**
 * Discovery (RFC 7644 section 4): what this server supports, and nothing more. Bulk and
 * password changes are not offered; filters, sorting, PATCH and ETags are.
 */
export function serviceProviderConfig(base: string): JsonObject {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_COUNT },
    changePassword: { supported: false },
    sort: { supported: true },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'API key (Bearer)',
        description: 'An admin API key, sent as `Authorization: Bearer <key>` or `Authorization: Api-Key <key>`.',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

export function resourceTypes(base: string): JsonObject[] {
  return [
    {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      description: 'User Account',
      schema: USER_SCHEMA,
      schemaExtensions: [
        { schema: ENTERPRISE_SCHEMA, required: false },
        { schema: ATTRIBUTES_SCHEMA, required: false },
      ],
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` },
    },
    {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
      id: 'Group',
      name: 'Group',
      endpoint: '/Groups',
      description: 'Group',
      schema: GROUP_SCHEMA,
      schemaExtensions: [],
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/Group` },
    },
  ];
}

function schemaResource(def: SchemaDef, base: string): JsonObject {
  // Common attributes (id, externalId, meta) are described by RFC 7643 section 3.1 and not repeated.
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
    id: def.id,
    name: def.name,
    description: def.description,
    attributes: JSON.parse(JSON.stringify(def.attributes)) as JsonObject[],
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${def.id}` },
  };
}

/** The schemas, with the tenant's user-attribute extension (its attributes are the tenant's definitions). */
export function schemas(base: string, attributes: SchemaDef): JsonObject[] {
  return [USER_SCHEMA_DEF, ENTERPRISE_SCHEMA_DEF, attributes, GROUP_SCHEMA_DEF].map((def) => schemaResource(def, base));
}
