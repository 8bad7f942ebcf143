/**
 * The SCIM schemas this server supports (RFC 7643 sections 4 and 8.7), as data: /Schemas serves
 * them, and input canonicalisation, filters, sorting and projection all read the same definitions,
 * so what discovery advertises is exactly what the server does.
 */
export type AttrType = 'string' | 'boolean' | 'decimal' | 'integer' | 'dateTime' | 'reference' | 'complex';

export interface AttrDef {
  name: string;
  type: AttrType;
  multiValued: boolean;
  description: string;
  required: boolean;
  caseExact: boolean;
  mutability: 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';
  returned: 'always' | 'never' | 'default' | 'request';
  uniqueness: 'none' | 'server' | 'global';
  subAttributes?: AttrDef[];
  referenceTypes?: string[];
  canonicalValues?: string[];
}

export interface SchemaDef {
  id: string;
  name: string;
  description: string;
  attributes: AttrDef[];
}

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

function attr(name: string, type: AttrType, description: string, options: Partial<AttrDef> = {}): AttrDef {
  return {
    name,
    type,
    multiValued: false,
    description,
    required: false,
    caseExact: false,
    mutability: 'readWrite',
    returned: 'default',
    uniqueness: 'none',
    ...options,
  };
}

const str = (name: string, description: string, options: Partial<AttrDef> = {}) => attr(name, 'string', description, options);

/** value / display / type / primary: the sub-attributes of most multi-valued attributes. */
function multi(name: string, description: string, types: string[], value: { type: AttrType; referenceTypes?: string[] } = { type: 'string' }): AttrDef {
  return attr(name, 'complex', description, {
    multiValued: true,
    subAttributes: [
      attr('value', value.type, `The ${name} value.`, value.referenceTypes ? { referenceTypes: value.referenceTypes } : {}),
      str('display', 'A human-readable name, primarily used for display purposes.'),
      str('type', 'A label indicating the function of the value.', types.length ? { canonicalValues: types } : {}),
      attr('primary', 'boolean', 'Indicates the primary value; at most one.'),
    ],
  });
}

const userAttributes: AttrDef[] = [
  str('userName', "Unique identifier for the User, used to sign in; the user's email in the REST API. Unique ignoring case.", {
    required: true,
    uniqueness: 'server',
  }),
  attr('name', 'complex', "The components of the user's real name.", {
    subAttributes: [
      str('formatted', 'The full name, formatted for display.'),
      str('familyName', 'The family name.'),
      str('givenName', "The given name; the user's first name in the REST API."),
      str('middleName', 'The middle name(s).'),
      str('honorificPrefix', 'The honorific prefix(es).'),
      str('honorificSuffix', 'The honorific suffix(es).'),
    ],
  }),
  str('displayName', 'The name of the User, suitable for display to end-users.'),
  str('nickName', 'The casual way to address the user.'),
  attr('profileUrl', 'reference', "A URI to the user's online profile.", { referenceTypes: ['external'] }),
  str('title', 'The user\'s title, such as "Vice President".'),
  str('userType', 'The relationship between the organization and the user.'),
  str('preferredLanguage', 'Preferred written or spoken language.'),
  str('locale', 'Default location for localizing items.'),
  str('timezone', 'Time zone in IANA format.'),
  attr('active', 'boolean', 'False deactivates the user: their API keys stop working at once.'),
  multi('emails', 'Email addresses for the user.', ['work', 'home', 'other']),
  multi('phoneNumbers', 'Phone numbers for the user.', ['work', 'home', 'mobile', 'fax', 'pager', 'other']),
  multi('ims', 'Instant messaging addresses for the user.', []),
  // Every reference declares what it may point to (RFC 7643 section 7): clients build models from it.
  multi('photos', 'URLs of photos of the user.', ['photo', 'thumbnail'], { type: 'reference', referenceTypes: ['external'] }),
  attr('addresses', 'complex', 'Physical mailing addresses for this user.', {
    multiValued: true,
    subAttributes: [
      str('formatted', 'The full mailing address.'),
      str('streetAddress', 'The full street address component.'),
      str('locality', 'The city or locality component.'),
      str('region', 'The state or region component.'),
      str('postalCode', 'The zip code or postal code component.'),
      str('country', 'The country name component.'),
      str('type', 'A label indicating the function of the address.', { canonicalValues: ['work', 'home', 'other'] }),
      attr('primary', 'boolean', 'Indicates the primary address.'),
    ],
  }),
  attr('groups', 'complex', 'Groups the user belongs to; change them through the Group resource.', {
    multiValued: true,
    mutability: 'readOnly',
    subAttributes: [
      str('value', 'The id of the group.', { mutability: 'readOnly' }),
      // RFC 7643 section 8.7.1 declares ["User", "Group"]: a group may be reached through a nested group.
      attr('$ref', 'reference', 'The URI of the group.', { mutability: 'readOnly', referenceTypes: ['User', 'Group'] }),
      str('display', 'The display name of the group.', { mutability: 'readOnly' }),
      str('type', 'direct', { mutability: 'readOnly', canonicalValues: ['direct'] }),
    ],
  }),
  multi('entitlements', 'Entitlements for the user.', []),
  multi('roles', 'Roles for the user (kept as given; the account role is managed through the REST API).', []),
  multi('x509Certificates', 'DER-encoded X.509 certificates.', []),
];

export const USER_SCHEMA_DEF: SchemaDef = { id: USER_SCHEMA, name: 'User', description: 'User Account', attributes: userAttributes };

export const ENTERPRISE_SCHEMA_DEF: SchemaDef = {
  id: ENTERPRISE_SCHEMA,
  name: 'EnterpriseUser',
  description: 'Enterprise User',
  attributes: [
    str('employeeNumber', 'Numeric or alphanumeric identifier assigned to a person.'),
    str('costCenter', 'Identifies the name of a cost center.'),
    str('organization', 'Identifies the name of an organization.'),
    str('division', 'Identifies the name of a division.'),
    str('department', 'Identifies the name of a department.'),
    attr('manager', 'complex', "The user's manager.", {
      subAttributes: [
        str('value', 'The id of the manager.'),
        attr('$ref', 'reference', 'The URI of the manager.', { referenceTypes: ['User'] }),
        str('displayName', 'The display name of the manager.', { mutability: 'readOnly' }),
      ],
    }),
  ],
};

export const GROUP_SCHEMA_DEF: SchemaDef = {
  id: GROUP_SCHEMA,
  name: 'Group',
  description: 'Group',
  attributes: [
    str('displayName', 'The name of the group; unique in the tenant ignoring case, as in the REST API.', { required: true, uniqueness: 'server' }),
    attr('members', 'complex', 'Members of the group (users provisioned through SCIM).', {
      multiValued: true,
      subAttributes: [
        str('value', 'The id of the member User.', { mutability: 'immutable' }),
        // As RFC 7643 section 8.7.1 declares it; this server's members are users (see `type`).
        attr('$ref', 'reference', 'The URI of the member.', { mutability: 'immutable', referenceTypes: ['User', 'Group'] }),
        str('display', 'The display name of the member.', { mutability: 'readOnly' }),
        str('type', 'The type of member; only User.', { mutability: 'immutable', canonicalValues: ['User'] }),
      ],
    }),
  ],
};

/** Common attributes of every resource (RFC 7643 section 3.1), for filters, sorting and projection. */
export const COMMON_ATTRIBUTES: AttrDef[] = [
  str('id', 'Unique identifier of the resource, assigned by the server.', {
    caseExact: true,
    mutability: 'readOnly',
    returned: 'always',
    uniqueness: 'server',
  }),
  str('externalId', 'Identifier of the resource in the provisioning client.', { caseExact: true }),
  attr('meta', 'complex', 'Resource metadata.', {
    mutability: 'readOnly',
    subAttributes: [
      str('resourceType', 'The resource type.', { caseExact: true, mutability: 'readOnly' }),
      attr('created', 'dateTime', 'When the resource was created.', { mutability: 'readOnly' }),
      attr('lastModified', 'dateTime', 'When the resource last changed.', { mutability: 'readOnly' }),
      attr('location', 'reference', 'The URI of the resource.', { mutability: 'readOnly', referenceTypes: ['uri'] }),
      str('version', 'The entity tag of the resource.', { caseExact: true, mutability: 'readOnly' }),
    ],
  }),
];

/** Case-insensitive lookup of an attribute definition in a list (RFC 7643 section 2.1: names are case-insensitive). */
export function findAttr(list: AttrDef[] | undefined, name: string): AttrDef | undefined {
  const lower = name.toLowerCase();
  return list?.find((a) => a.name.toLowerCase() === lower);
}

/** The schema extension through which SCIM sets users' attributes (see /api/v1/user-attributes). */
export const ATTRIBUTES_SCHEMA = 'urn:mapi:params:scim:schemas:extension:attributes:2.0:User';

/** The tenant's user attributes as a SCIM schema: one attribute per definition, of the matching type. */
export function attributesSchemaDef(definitions: Array<{ name: string; type: 'string' | 'number' | 'boolean' | 'string-list' }>): SchemaDef {
  return {
    id: ATTRIBUTES_SCHEMA,
    name: 'UserAttributes',
    description: 'User attributes of this tenant, used to filter rows per user.',
    attributes: definitions.map((d) =>
      attr(d.name, d.type === 'number' ? 'decimal' : d.type === 'boolean' ? 'boolean' : 'string', `User attribute ${d.name} (${d.type}).`, {
        multiValued: d.type === 'string-list',
      }),
    ),
  };
}
