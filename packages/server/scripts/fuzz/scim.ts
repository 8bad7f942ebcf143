import fc from 'fast-check';
import { poolRefArb } from './schema-arbitrary.js';
import { put } from './values.js';

/**
 * SCIM bodies and query values. The served document types SCIM bodies as open objects (SCIM's own
 * schemas live at /Schemas), so shapes a SCIM client sends are generated here to reach past the
 * first check; the generic mutations then break them.
 */

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const ATTRIBUTES = 'urn:mapi:params:scim:schemas:extension:attributes:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

/** Names of the tenant's user attributes, as the world seeds them (several named like Object.prototype members). */
export const ATTRIBUTE_NAMES = ['department', 'level', 'regions', 'isManager', 'toString', 'valueOf', 'constructor', 'hasOwnProperty'];

const word = fc.stringMatching(/^[a-z][a-z0-9]{0,10}$/);
const text = fc.oneof(word, fc.string({ maxLength: 20, unit: 'grapheme' }));
const email = word.map((w) => `${w}@example.com`);
const userRef = poolRefArb('scimUser', true);
const groupRef = poolRefArb('scimGroup', true);
const attrValue = fc.oneof(text, fc.integer(), fc.boolean(), fc.array(word, { maxLength: 3 }), fc.constant(null));

const userAttributes = [
  'userName',
  'name.givenName',
  'name.familyName',
  'displayName',
  'title',
  'active',
  'externalId',
  'emails',
  'emails.value',
  'emails[type eq "work"].value',
  'emails[primary eq true]',
  'meta.lastModified',
  'meta.created',
  'id',
  'groups',
  `${ENTERPRISE}:manager`,
  `${ENTERPRISE}:manager.value`,
  `${ENTERPRISE}:department`,
  ENTERPRISE,
  `${USER}:userName`,
  ...ATTRIBUTE_NAMES.map((a) => `${ATTRIBUTES}:${a}`),
  ATTRIBUTES,
  ...ATTRIBUTE_NAMES,
  '__proto__',
  'urn:bogus:schema:2.0:User:x',
];
const groupAttributes = [
  'displayName',
  'members',
  'members.value',
  'members[value eq "1"]',
  'externalId',
  'id',
  'meta.lastModified',
  `${GROUP}:displayName`,
  'members.display',
];

const scimUser = fc
  .record(
    {
      userName: fc.oneof(email, text),
      name: fc.record({ givenName: text, familyName: text }, { requiredKeys: [] }),
      displayName: text,
      title: text,
      active: fc.boolean(),
      externalId: word,
      emails: fc.array(fc.record({ value: email, primary: fc.boolean(), type: fc.constantFrom('work', 'home', 'other') }, { requiredKeys: ['value'] }), {
        maxLength: 2,
      }),
      enterprise: fc.record({ department: text, manager: fc.record({ value: userRef }) }, { requiredKeys: [] }),
      attributes: fc.dictionary(fc.constantFrom(...ATTRIBUTE_NAMES), attrValue, { maxKeys: 3 }),
    },
    { requiredKeys: ['userName'] },
  )
  .map(({ enterprise, attributes, ...rest }) => {
    const body: Record<string, unknown> = { schemas: [USER, ...(enterprise ? [ENTERPRISE] : []), ...(attributes ? [ATTRIBUTES] : [])], ...rest };
    if (enterprise) put(body, ENTERPRISE, enterprise);
    if (attributes) {
      const own: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(attributes)) put(own, k, v);
      put(body, ATTRIBUTES, own);
    }
    return body;
  });

const scimGroup = fc.record(
  {
    schemas: fc.constant([GROUP]),
    displayName: text,
    externalId: word,
    members: fc.array(fc.record({ value: userRef, type: fc.constant('User') }, { requiredKeys: ['value'] }), { maxLength: 3 }),
  },
  { requiredKeys: ['schemas', 'displayName'] },
);

/** Operations a SCIM client sends (mostly well-formed), and now and then a malformed one. */
function patchOp(paths: string[], groups: boolean) {
  const wellFormed = groups
    ? fc.oneof(
        fc.record({ op: fc.constant('add'), path: fc.constant('members'), value: fc.array(fc.record({ value: userRef }), { minLength: 1, maxLength: 2 }) }),
        // Removing named members with a value, as Azure AD sends it.
        userRef.map((ref) => ({ op: 'remove', path: 'members', value: [{ value: ref }] })),
        fc.record({ op: fc.constant('remove'), path: fc.constant('members') }),
        fc.record({ op: fc.constantFrom('replace', 'Replace'), path: fc.constant('displayName'), value: text }),
        fc.record({ op: fc.constant('replace'), value: fc.record({ displayName: text, externalId: word }, { requiredKeys: [] }) }),
        fc.record({ op: fc.constant('replace'), path: fc.constant('members'), value: fc.array(fc.record({ value: userRef }), { maxLength: 2 }) }),
      )
    : fc.oneof(
        fc.record({
          op: fc.constantFrom('replace', 'Replace', 'add'),
          path: fc.constantFrom('title', 'displayName', 'name.givenName', 'externalId', `${ENTERPRISE}:department`),
          value: text,
        }),
        fc.record({ op: fc.constant('replace'), path: fc.constant('active'), value: fc.boolean() }),
        fc.record({
          op: fc.constant('remove'),
          path: fc.constantFrom(
            'title',
            'active',
            'name.familyName',
            'emails[type eq "work"]',
            `${ENTERPRISE}:manager`,
            ENTERPRISE,
            ...ATTRIBUTE_NAMES.map((a) => `${ATTRIBUTES}:${a}`),
          ),
        }),
        fc.record({
          op: fc.constant('add'),
          path: fc.constant('emails'),
          value: fc.array(fc.record({ value: email, type: fc.constant('work') }), { minLength: 1, maxLength: 2 }),
        }),
        fc.record({ op: fc.constantFrom('add', 'replace'), path: fc.constant(`${ENTERPRISE}:manager.value`), value: userRef }),
        fc.record({
          op: fc.constant('replace'),
          path: fc.constant(ENTERPRISE),
          value: fc.record({ department: text, manager: fc.record({ value: userRef }) }, { requiredKeys: [] }),
        }),
        fc.record({ op: fc.constant('replace'), value: fc.record({ title: text, active: fc.boolean(), displayName: text }, { requiredKeys: [] }) }),
        fc.tuple(fc.constantFrom(...ATTRIBUTE_NAMES), attrValue).map(([a, v]) => ({ op: 'replace', path: `${ATTRIBUTES}:${a}`, value: v })),
      );
  const anything = fc.record(
    {
      op: fc.constantFrom('add', 'replace', 'remove', 'copy', 'ADD', ''),
      path: fc.constantFrom(...paths, '', 'members[value eq', 'name..givenName', '__proto__.polluted'),
      value: fc.oneof(
        attrValue,
        fc.array(fc.record({ value: userRef })),
        fc.record({ value: userRef }),
        fc.dictionary(fc.constantFrom(...paths.filter((p) => !p.includes('['))), attrValue, { maxKeys: 2 }),
      ),
    },
    { requiredKeys: ['op'] },
  );
  const op = fc.oneof({ weight: 3, arbitrary: wellFormed as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: anything });
  return fc.record({ schemas: fc.constant([PATCH]), Operations: fc.array(op, { minLength: 1, maxLength: 3 }) });
}

export function scimBody(path: string, method: string): fc.Arbitrary<unknown> | undefined {
  const groups = path.includes('/Groups');
  if (path.endsWith('/.search')) return searchRequest(path);
  if (method === 'PATCH') return patchOp(groups ? groupAttributes : userAttributes, groups);
  if (method === 'POST' || method === 'PUT') return groups ? scimGroup : scimUser;
  return undefined;
}

const comparison = fc.constantFrom('eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le', 'EQ', 'xx');
const literal = fc.oneof(
  word.map((w) => JSON.stringify(w)),
  email.map((w) => JSON.stringify(w)),
  fc.constantFrom('true', 'false', 'null', '42', '"2024-01-01T00:00:00Z"', '"\\u0000"', '"unterminated', '"\\"'),
  userRef.map(() => '"1"'),
);

function filterArb(attributes: string[]): fc.Arbitrary<string> {
  const attr = fc.constantFrom(...attributes.filter((a) => !a.includes('[')));
  const simple = fc.oneof(
    { weight: 5, arbitrary: fc.tuple(attr, comparison, literal).map(([a, c, l]) => `${a} ${c} ${l}`) },
    { weight: 1, arbitrary: attr.map((a) => `${a} pr`) },
  );
  const compound = fc.tuple(simple, fc.constantFrom(' and ', ' or ', ' AND '), simple).map(([a, j, b]) => `${a}${j}${b}`);
  const hostile = fc.constantFrom(
    '',
    '(',
    'userName eq',
    `${'('.repeat(2000)}userName pr${')'.repeat(2000)}`,
    `not (${'not ('.repeat(500)}userName pr${')'.repeat(501)}`,
    `userName eq "${'a'.repeat(10_000)}"`,
    'emails[type eq "work" and value co "@"]',
    'emails[value eq "x"].value eq "y"',
    'members[value eq "1"]',
    'userName eq "a\u0000"',
    '__proto__ eq "x"',
    'toString eq "x"',
    `${ATTRIBUTES}:toString eq "x"`,
    'meta.lastModified gt "not a date"',
  );
  return fc.oneof(
    { weight: 5, arbitrary: simple },
    { weight: 2, arbitrary: compound },
    { weight: 2, arbitrary: hostile },
    { weight: 1, arbitrary: simple.map((s) => `not (${s})`) },
  );
}

/** A SearchRequest (RFC 7644 section 3.4.3): the query parameters as members of a body. */
function searchRequest(path: string): fc.Arbitrary<unknown> {
  const member = (name: string) => scimQuery(path, name, 'query')!;
  const list = (name: string) => member(name).map((v) => v.split(','));
  return fc.record(
    {
      schemas: fc.constant(['urn:ietf:params:scim:api:messages:2.0:SearchRequest']),
      filter: member('filter'),
      attributes: list('attributes'),
      excludedAttributes: list('excludedAttributes'),
      sortBy: member('sortBy'),
      sortOrder: member('sortOrder'),
      startIndex: fc.integer({ min: -2, max: 50 }),
      count: fc.integer({ min: -1, max: 250 }),
    },
    { requiredKeys: ['schemas'] },
  );
}

const DISCOVERY_IDS = [
  'User',
  'Group',
  'urn:ietf:params:scim:schemas:core:2.0:User',
  'urn:ietf:params:scim:schemas:core:2.0:Group',
  ENTERPRISE,
  ATTRIBUTES,
  'EnterpriseUser',
  'user',
  'ServiceProviderConfig',
];

/** Values for SCIM query and path parameters, by name; undefined leaves the parameter to its schema. */
export function scimQuery(path: string, name: string, where: 'path' | 'query'): fc.Arbitrary<string> | undefined {
  const attrs = path.includes('/Groups') ? groupAttributes : userAttributes;
  if (where === 'path') return name === 'id' ? fc.constantFrom(...DISCOVERY_IDS) : undefined;
  switch (name) {
    case 'filter':
      return filterArb(attrs);
    case 'attributes':
    case 'excludedAttributes':
      return fc.oneof(
        fc.uniqueArray(fc.constantFrom(...attrs), { minLength: 1, maxLength: 4 }).map((a) => a.join(',')),
        fc.constantFrom('', ',', 'a'.repeat(5000), 'name..givenName', 'urn:'),
      );
    case 'sortBy':
      return fc.oneof(fc.constantFrom(...attrs), fc.constantFrom('', 'nonexistent', '__proto__'));
    case 'sortOrder':
      return fc.constantFrom('ascending', 'descending', 'ASCENDING', 'sideways', '');
    case 'startIndex':
    case 'count':
      return fc.oneof(fc.integer({ min: -5, max: 300 }).map(String), fc.constantFrom('0', '-1', '1.5', '1e3', '99999999999999999999', 'abc', ''));
    default:
      return undefined;
  }
}

export const scimGroupRef = groupRef;
