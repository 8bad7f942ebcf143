import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp } from './harness.js';
import { ENTERPRISE, GROUP_SCHEMA, ok, provisionGroup, provisionUser, scim, scimError, USER_SCHEMA } from './scim-harness.js';

const SEARCH = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';
const EXT = 'urn:mapi:params:scim:schemas:extension:attributes:2.0:User';

/** The attribute characteristics of RFC 7643 section 7, as a client that builds models from /Schemas reads them. */
const TYPES = ['string', 'boolean', 'decimal', 'integer', 'dateTime', 'reference', 'binary', 'complex'];
const MUTABILITY = ['readOnly', 'readWrite', 'immutable', 'writeOnly'];
const RETURNED = ['always', 'never', 'default', 'request'];
const UNIQUENESS = ['none', 'server', 'global'];

interface Attribute {
  name: string;
  type: string;
  multiValued: boolean;
  required: boolean;
  caseExact?: boolean;
  mutability: string;
  returned: string;
  uniqueness?: string;
  referenceTypes?: string[];
  canonicalValues?: unknown;
  subAttributes?: Attribute[];
}

/**
 * Builds a model of one schema the way a generic SCIM client does (a path -> attribute map),
 * refusing what such a client cannot load: a reference without referenceTypes, a complex
 * attribute without sub-attributes, an unknown type or characteristic.
 */
function loadModel(schema: { id: string; attributes: Attribute[] }): Map<string, Attribute> {
  const model = new Map<string, Attribute>();
  const visit = (attribute: Attribute, prefix: string, depth: number) => {
    const path = `${prefix}${attribute.name}`;
    const fail = (why: string) => {
      throw new Error(`${schema.id}:${path}: ${why}`);
    };
    if (typeof attribute.name !== 'string' || attribute.name === '') fail('no name');
    if (!TYPES.includes(attribute.type)) fail(`type ${String(attribute.type)}`);
    if (typeof attribute.multiValued !== 'boolean' || typeof attribute.required !== 'boolean') fail('multiValued and required must be booleans');
    if (!MUTABILITY.includes(attribute.mutability) || !RETURNED.includes(attribute.returned)) fail('mutability or returned');
    if (attribute.uniqueness !== undefined && !UNIQUENESS.includes(attribute.uniqueness)) fail('uniqueness');
    if (attribute.canonicalValues !== undefined && !Array.isArray(attribute.canonicalValues)) fail('canonicalValues must be a list');
    if (
      attribute.type === 'reference' &&
      !(
        Array.isArray(attribute.referenceTypes) &&
        attribute.referenceTypes.length > 0 &&
        attribute.referenceTypes.every((r) => typeof r === 'string' && r !== '')
      )
    ) {
      fail('a reference without referenceTypes');
    }
    if (attribute.type === 'complex') {
      if (depth > 0) fail('complex sub-attribute (RFC 7643 section 2.3.8)');
      if (!Array.isArray(attribute.subAttributes) || attribute.subAttributes.length === 0) fail('a complex attribute without subAttributes');
    }
    model.set(path.toLowerCase(), attribute);
    for (const sub of attribute.subAttributes ?? []) visit(sub, `${path}.`, depth + 1);
  };
  for (const attribute of schema.attributes) visit(attribute, '', 0);
  return model;
}

describe.each(DIALECTS)('SCIM discovery and search as SCIM test tools use them (%s)', (dialect) => {
  let t: TestApp;
  const users: any[] = [];
  const groups: any[] = [];

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    // A tenant user attribute, so the tenant's extension schema has attributes to walk too.
    expect((await t.request({ method: 'POST', url: '/api/v1/user-attributes', body: { name: 'costRegion', type: 'string-list' } })).statusCode).toBe(201);
    for (const [given, title] of [
      ['Cleo', 'Analyst'],
      ['Abel', 'Engineer'],
      ['Bea', undefined],
      ['Dora', 'Analyst'],
    ] as const) {
      users.push(await provisionUser(t, { displayName: `search ${given}`, name: { givenName: given, familyName: 'Search' }, ...(title ? { title } : {}) }));
    }
    groups.push(await provisionGroup(t, 'search Beta', [users[0].id, users[1].id]));
    groups.push(await provisionGroup(t, 'search Alpha', [users[2].id]));
    groups.push(await provisionGroup(t, 'other Gamma'));
  });
  afterAll(async () => t?.close());

  describe('/Schemas (RFC 7643 section 7 and 8.7.1)', () => {
    it('RFC 7643 section 7: every attribute and sub-attribute of type reference declares non-empty referenceTypes, so a generic client loads every schema', async () => {
      const list = ok(await scim(t, { path: '/Schemas' }));
      expect(list.Resources).toHaveLength(4);
      const models = new Map<string, Map<string, Attribute>>();
      for (const schema of list.Resources) models.set(schema.id, loadModel(schema));
      expect(models.get(EXT)?.get('costregion')).toMatchObject({ type: 'string', multiValued: true });
      // The values RFC 7643 section 8.7.1 gives each reference.
      const referenceTypes = (schema: string, path: string) => models.get(schema)?.get(path.toLowerCase())?.referenceTypes;
      expect(referenceTypes(USER_SCHEMA, 'photos.value')).toEqual(['external']);
      expect(referenceTypes(USER_SCHEMA, 'profileUrl')).toEqual(['external']);
      expect(referenceTypes(USER_SCHEMA, 'groups.$ref')).toEqual(['User', 'Group']);
      expect(referenceTypes(GROUP_SCHEMA, 'members.$ref')).toEqual(['User', 'Group']);
      expect(referenceTypes(ENTERPRISE, 'manager.$ref')).toEqual(['User']);
      // Each schema read by its id loads the same way.
      for (const id of models.keys()) loadModel(ok(await scim(t, { path: `/Schemas/${id}` })));
    });

    it('RFC 7644 section 5: ServiceProviderConfig says what is supported, and it is: filter (with maxResults), sort, patch, etag; no bulk, no password change', async () => {
      const config = ok(await scim(t, { path: '/ServiceProviderConfig' }));
      expect(config).toMatchObject({
        filter: { supported: true, maxResults: 200 },
        sort: { supported: true },
        patch: { supported: true },
        etag: { supported: true },
        bulk: { supported: false },
        changePassword: { supported: false },
      });
      // Sorting works as advertised, and a page never exceeds maxResults.
      const sorted = ok(await scim(t, { path: '/Users?sortBy=name.givenName&sortOrder=descending&count=1000' }));
      expect(sorted.itemsPerPage).toBeLessThanOrEqual(config.filter.maxResults);
      const names = sorted.Resources.map((u: any) => u.name?.givenName).filter((n: unknown) => n !== undefined);
      expect(names).toEqual([...names].sort().reverse());
      // Bulk is not offered: its endpoint does not exist.
      scimError(
        await scim(t, { method: 'POST', path: '/Bulk', body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'], Operations: [] } }),
        404,
      );
    });
  });

  describe('POST /.search (RFC 7644 section 3.4.3)', () => {
    const search = (path: string, body: unknown, key?: string) => scim(t, { method: 'POST', path, body, ...(key ? { key } : {}) });
    const query = (params: Record<string, string | number | string[]>) =>
      Object.entries(params)
        .map(([k, v]) => `${k}=${encodeURIComponent(Array.isArray(v) ? v.join(',') : String(v))}`)
        .join('&');

    const cases: Array<[string, Record<string, string | number | string[]>]> = [
      [
        'filter, sortBy, sortOrder and paging',
        { filter: 'displayName sw "search"', sortBy: 'name.givenName', sortOrder: 'descending', startIndex: 2, count: 2 },
      ],
      ['attributes', { filter: 'title eq "Analyst" or title pr', attributes: ['userName', 'name.givenName', 'title'] }],
      ['excludedAttributes', { excludedAttributes: ['emails', 'groups', 'name.familyName'], sortBy: 'userName' }],
      ['no parameters at all', {}],
    ];
    for (const [label, params] of cases) {
      it(`RFC 7644 section 3.4.3: POST /Users/.search with ${label} answers exactly what the GET answers`, async () => {
        const viaGet = ok(await scim(t, { path: `/Users?${query(params)}` }));
        const viaPost = ok(await search('/Users/.search', { schemas: [SEARCH], ...params }));
        expect(viaPost).toEqual(viaGet);
        expect(viaGet.totalResults).toBeGreaterThan(0);
      });
    }

    it('RFC 7644 section 3.4.3: POST /Groups/.search answers what the GET answers (filter on members, sort, excludedAttributes)', async () => {
      const params = {
        filter: `displayName sw "search" or members[value eq "${users[2].id}"]`,
        sortBy: 'displayName',
        excludedAttributes: ['members.display'],
      };
      const viaGet = ok(await scim(t, { path: `/Groups?${query(params)}` }));
      expect(viaGet.Resources.map((g: any) => g.displayName)).toEqual(['search Alpha', 'search Beta']);
      expect(ok(await search('/Groups/.search', { schemas: [SEARCH], ...params }))).toEqual(viaGet);
    });

    it('RFC 7644 section 3.4.3: member names of a SearchRequest are read ignoring case, as attribute names are (RFC 7643 section 2.1)', async () => {
      const viaGet = ok(await scim(t, { path: `/Users?${query({ filter: 'title eq "analyst"', count: 1 })}` }));
      expect(ok(await search('/Users/.search', { Schemas: [SEARCH], Filter: 'title eq "analyst"', COUNT: 1 }))).toEqual(viaGet);
    });

    it('RFC 7644 section 3.4.3: the root search lists Users, then Groups, paged as one list, with totalResults counting both', async () => {
      const allUsers = ok(await scim(t, { path: '/Users?count=0' })).totalResults as number;
      const allGroups = ok(await scim(t, { path: '/Groups?count=0' })).totalResults as number;
      const all = ok(await search('/.search', { schemas: [SEARCH] }));
      expect(all.totalResults).toBe(allUsers + allGroups);
      expect(all.Resources.map((r: any) => r.meta.resourceType)).toEqual([...Array(allUsers).fill('User'), ...Array(allGroups).fill('Group')]);
      // A page that starts on the last user runs on into the groups.
      const straddle = ok(await search('/.search', { schemas: [SEARCH], startIndex: allUsers, count: 2 }));
      expect(straddle).toMatchObject({ totalResults: allUsers + allGroups, startIndex: allUsers, itemsPerPage: 2 });
      expect(straddle.Resources.map((r: any) => [r.meta.resourceType, r.id])).toEqual([
        ['User', all.Resources[allUsers - 1].id],
        ['Group', all.Resources[allUsers].id],
      ]);
      // Past the users, only groups.
      const groupsOnly = ok(await search('/.search', { schemas: [SEARCH], startIndex: allUsers + 2, count: 10 }));
      expect(groupsOnly.Resources.map((r: any) => r.id)).toEqual(all.Resources.slice(allUsers + 1).map((r: any) => r.id));
    });

    it('RFC 7644 section 3.4.2.2: in a root search an attribute one resource type lacks is unassigned there, and one that neither has is 400 invalidFilter', async () => {
      const both = ok(await search('/.search', { schemas: [SEARCH], filter: 'displayName sw "search"', attributes: ['displayName'] }));
      expect(both.Resources.map((r: any) => `${r.meta.resourceType} ${r.displayName}`)).toEqual([
        ...users.map((u) => `User ${u.displayName}`),
        'Group search Beta',
        'Group search Alpha',
      ]);
      const usersOnly = ok(await search('/.search', { schemas: [SEARCH], filter: 'title eq "Analyst"' }));
      expect(usersOnly.Resources.map((r: any) => r.id)).toEqual([users[0].id, users[3].id]);
      const groupsOnly = ok(await search('/.search', { schemas: [SEARCH], filter: `members[value eq "${users[0].id}"]` }));
      expect(groupsOnly.Resources.map((r: any) => r.id)).toEqual([groups[0].id]);
      // "not" of an unassigned attribute matches: every group has no title.
      const notAnalyst = ok(await search('/.search', { schemas: [SEARCH], filter: 'not (title eq "Analyst")', count: 0 }));
      expect(notAnalyst.totalResults).toBe(ok(await search('/.search', { schemas: [SEARCH], count: 0 })).totalResults - 2);
      scimError(await search('/.search', { schemas: [SEARCH], filter: 'nothing eq "x"' }), 400, 'invalidFilter');
      scimError(await search('/.search', { schemas: [SEARCH], sortBy: 'nothing' }), 400, 'invalidValue');
    });

    it("RFC 7644 section 3.12: a body that is not a SearchRequest is 400 in SCIM's error schema, and the same checks as the GET apply", async () => {
      for (const path of ['/Users/.search', '/Groups/.search', '/.search']) {
        scimError(await search(path, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'] }), 400, 'invalidSyntax');
        scimError(await search(path, ['not', 'an', 'object']), 400, 'invalidSyntax');
        scimError(await search(path, { schemas: [SEARCH], count: '10' }), 400, 'invalidValue');
        scimError(await search(path, { schemas: [SEARCH], attributes: [1] }), 400, 'invalidValue');
        scimError(await search(path, { schemas: [SEARCH], sortOrder: 'sideways' }), 400, 'invalidValue');
        scimError(await search(path, { schemas: [SEARCH], filter: 'userName eq' }), 400, 'invalidFilter');
      }
    });

    it('RFC 7644 section 2: searching needs the same admin key as listing: 401 without one, 403 for a non-admin', async () => {
      const viewer = await t.user('VIEWER');
      for (const path of ['/Users/.search', '/Groups/.search', '/.search']) {
        scimError(await scim(t, { method: 'POST', path, key: null, body: { schemas: [SEARCH] } }), 401);
        scimError(await search(path, { schemas: [SEARCH] }, viewer.key), 403);
      }
    });
  });
});
