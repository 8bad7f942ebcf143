import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TestApp } from './harness.js';
import { ENTERPRISE, filterPath, ok, provisionGroup, provisionUser, scim, scimError, USER_SCHEMA } from './scim-harness.js';

/** Listing with filter, sorting, paging and projection (RFC 7644 section 3.4.2), compiled to SQL on each store. */
describe.each(DIALECTS)('SCIM queries (%s)', (dialect) => {
  let t: TestApp;
  let alpha: any;
  let beta: any;
  let gamma: any;
  let engineers: any;
  let sales: any;

  const ids = async (path: string) => ok(await scim(t, { path })).Resources.map((r: { id: string }) => r.id);
  const userIds = (filter: string, extra = '') => ids(filterPath('Users', filter, extra));

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    alpha = await provisionUser(t, {
      userName: 'Alpha.One@Example.com',
      externalId: 'EXT-alpha',
      name: { givenName: 'Alice', familyName: 'Anders', formatted: 'Alice Anders', middleName: 'M' },
      displayName: 'Alice A',
      nickName: 'Al',
      title: 'Engineer',
      userType: 'Employee',
      preferredLanguage: 'en-GB',
      locale: 'en-GB',
      timezone: 'Europe/London',
      profileUrl: 'https://profiles.example.com/alpha',
      emails: [
        { value: 'alpha@work.example.com', type: 'work', primary: true },
        { value: 'alpha@home.example.org', type: 'home' },
      ],
      phoneNumbers: [{ value: '+44 20 0000 0001', type: 'work' }],
      addresses: [{ locality: 'London', country: 'GB', type: 'work' }],
      roles: [{ value: 'analyst' }],
      schemas: [USER_SCHEMA, ENTERPRISE],
      [ENTERPRISE]: { employeeNumber: 'E1', costCenter: 'CC1', organization: 'Org1', division: 'Div1', department: 'Research', manager: { value: 'boss-1' } },
    });
    beta = await provisionUser(t, {
      userName: 'beta.two@example.com',
      externalId: 'ext-beta',
      name: { givenName: 'Bob', familyName: 'Brown' },
      displayName: 'Bob B',
      title: 'Sales',
      emails: [{ value: 'beta@work.example.com', type: 'work', primary: true }],
      active: false,
      [ENTERPRISE]: { department: 'Sales' },
    });
    gamma = await provisionUser(t, { userName: 'gamma.three@example.net', name: { givenName: 'Cy' }, emails: [] });
    engineers = await provisionGroup(t, 'Engineers', [alpha.id], { externalId: 'g-eng' });
    sales = await provisionGroup(t, 'Sales team', [beta.id, gamma.id], { externalId: 'g-sales' });
  });
  afterAll(async () => t?.close());

  describe('filter operators (RFC 7644 section 3.4.2.2)', () => {
    it('eq compares userName ignoring case', async () => {
      expect(await userIds('userName eq "alpha.one@example.com"')).toEqual([alpha.id]);
      expect(await userIds('USERNAME eq "ALPHA.ONE@EXAMPLE.COM"')).toEqual([alpha.id]);
    });

    it('ne, co, sw, ew, pr and the orderings gt, ge, lt, le', async () => {
      expect(await userIds('userName ne "alpha.one@example.com"')).toEqual([beta.id, gamma.id]);
      expect(await userIds('userName co "TWO"')).toEqual([beta.id]);
      expect(await userIds('userName sw "gamma"')).toEqual([gamma.id]);
      expect(await userIds('userName ew ".NET"')).toEqual([gamma.id]);
      expect(await userIds('title pr')).toEqual([alpha.id, beta.id]);
      expect(await userIds('userName gt "beta"')).toEqual([beta.id, gamma.id]);
      expect(await userIds('userName ge "beta.two@example.com"')).toEqual([beta.id, gamma.id]);
      expect(await userIds('userName lt "beta"')).toEqual([alpha.id]);
      expect(await userIds('userName le "beta.two@example.com"')).toEqual([alpha.id, beta.id]);
    });

    it('and, or, not and grouping with parentheses', async () => {
      expect(await userIds('title eq "Engineer" or title eq "Sales"')).toEqual([alpha.id, beta.id]);
      expect(await userIds('title pr and active eq true')).toEqual([alpha.id]);
      expect(await userIds('not (title pr)')).toEqual([gamma.id]);
      expect(await userIds('(userName sw "alpha" or userName sw "beta") and not (active eq false)')).toEqual([alpha.id]);
    });

    it('a value path followed by a sub-attribute: emails[type eq "work"].value', async () => {
      expect(await userIds('emails[type eq "work"].value co "alpha"')).toEqual([alpha.id]);
      expect(await userIds('emails[type eq "home"].value ew ".org" or userName sw "gamma"')).toEqual([alpha.id, gamma.id]);
      expect(await userIds('emails[type eq "work"].value eq "alpha@home.example.org"')).toEqual([]);
      expect(await userIds('emails[type eq "work"].primary eq true')).toEqual([alpha.id, beta.id]);
    });

    it('value paths and sub-attributes of multi-valued attributes', async () => {
      expect(await userIds('emails[type eq "work" and value co "alpha"]')).toEqual([alpha.id]);
      // Both conditions must hold for the same email: alpha's work email is not on example.org.
      expect(await userIds('emails[type eq "work" and value ew "example.org"]')).toEqual([]);
      expect(await userIds('emails.value ew "example.org"')).toEqual([alpha.id]);
      expect(await userIds('emails co "beta@"')).toEqual([beta.id]);
      expect(await userIds('emails pr')).toEqual([alpha.id, beta.id]);
      expect(await userIds('emails[primary eq true]')).toEqual([alpha.id, beta.id]);
      expect(await userIds('emails[not (type eq "work")]')).toEqual([alpha.id]);
    });

    it('every supported User attribute can be filtered', async () => {
      const cases: Array<[string, string[]]> = [
        [`id eq "${alpha.id}"`, [alpha.id]],
        ['externalId eq "EXT-alpha"', [alpha.id]],
        ['externalId eq "ext-alpha"', []], // externalId is case-exact (RFC 7643 section 3.1)
        ['name.givenName eq "alice"', [alpha.id]],
        ['name.familyName eq "Brown"', [beta.id]],
        ['name.formatted co "anders"', [alpha.id]],
        ['name.middleName eq "M"', [alpha.id]],
        ['displayName eq "bob b"', [beta.id]],
        ['nickName eq "Al"', [alpha.id]],
        ['title eq "sales"', [beta.id]],
        ['userType eq "Employee"', [alpha.id]],
        ['preferredLanguage eq "en-GB"', [alpha.id]],
        ['locale eq "en-GB"', [alpha.id]],
        ['timezone eq "Europe/London"', [alpha.id]],
        ['profileUrl sw "https://profiles"', [alpha.id]],
        ['active eq false', [beta.id]],
        ['active eq true', [alpha.id, gamma.id]],
        ['phoneNumbers[type eq "work"]', [alpha.id]],
        ['phoneNumbers.value co "0001"', [alpha.id]],
        ['addresses[country eq "GB"]', [alpha.id]],
        ['addresses.locality eq "london"', [alpha.id]],
        ['roles.value eq "analyst"', [alpha.id]],
        [`groups.value eq "${sales.id}"`, [beta.id, gamma.id]],
        ['groups[display eq "engineers"]', [alpha.id]],
        [`${ENTERPRISE}:employeeNumber eq "E1"`, [alpha.id]],
        [`${ENTERPRISE}:costCenter eq "CC1"`, [alpha.id]],
        [`${ENTERPRISE}:organization eq "Org1"`, [alpha.id]],
        [`${ENTERPRISE}:division eq "Div1"`, [alpha.id]],
        [`${ENTERPRISE}:department eq "sales"`, [beta.id]],
        [`${ENTERPRISE}:manager.value eq "boss-1"`, [alpha.id]],
        [`urn:ietf:params:scim:schemas:core:2.0:User:userName eq "gamma.three@example.net"`, [gamma.id]],
        [`meta.created ge "${alpha.meta.created}"`, [alpha.id, beta.id, gamma.id]],
        [`meta.created gt "${gamma.meta.created}"`, []],
        ['meta.lastModified gt "2015-10-10T14:38:21.8617979-07:00"', [alpha.id, beta.id, gamma.id]],
        ['meta.resourceType eq "User"', [alpha.id, beta.id, gamma.id]],
      ];
      for (const [filter, expected] of cases) expect(await userIds(filter), filter).toEqual(expected);
    });

    it('every supported Group attribute can be filtered, including members', async () => {
      const groupIds = (filter: string) => ids(filterPath('Groups', filter));
      expect(await groupIds('displayName eq "engineers"')).toEqual([engineers.id]);
      expect(await groupIds('displayName sw "Sales"')).toEqual([sales.id]);
      expect(await groupIds(`id eq "${sales.id}"`)).toEqual([sales.id]);
      expect(await groupIds('externalId eq "g-eng"')).toEqual([engineers.id]);
      expect(await groupIds(`members[value eq "${gamma.id}"]`)).toEqual([sales.id]);
      expect(await groupIds(`members.value eq "${alpha.id}"`)).toEqual([engineers.id]);
      expect(await groupIds(`members eq "${beta.id}"`)).toEqual([sales.id]);
      expect(await groupIds('members pr')).toEqual([engineers.id, sales.id]);
      expect(await groupIds(`meta.lastModified ge "${engineers.meta.created}"`)).toEqual([engineers.id, sales.id]);
    });

    it('values travel as parameters: quotes and SQL in a value only match literally', async () => {
      expect(await userIds(`userName eq "x' or '1'='1"`)).toEqual([]);
      expect(await userIds('displayName eq "\\" or 1=1 --"')).toEqual([]);
      expect(await userIds('title co "%"')).toEqual([]);
      expect(await userIds('title co "_"')).toEqual([]);
    });

    it('answers 400 invalidFilter for bad syntax, unknown attributes and impossible comparisons', async () => {
      for (const filter of [
        'userName eq',
        'userName eq bare',
        'userName zz "x"',
        '(userName eq "x"',
        'nothing eq "x"',
        'name eq "x"',
        'active gt true',
        'meta.created gt "yesterday"',
        'emails[value eq "x"',
        'name.nothing eq "x"',
        'userName eq {"a":1}',
        'meta.version eq "x"',
        'meta.location pr',
      ]) {
        scimError(await scim(t, { path: filterPath('Users', filter) }), 400, 'invalidFilter');
      }
      scimError(await scim(t, { path: filterPath('Groups', 'members.display eq "x"') }), 400, 'invalidFilter');
    });
  });

  describe('paging (RFC 7644 section 3.4.2.4)', () => {
    it('startIndex is 1-based and count limits the page; totalResults counts them all', async () => {
      const page = ok(await scim(t, { path: '/Users?startIndex=2&count=1' }));
      expect(page).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'], totalResults: 3, itemsPerPage: 1, startIndex: 2 });
      expect(page.Resources.map((r: { id: string }) => r.id)).toEqual([beta.id]);
    });

    it('count=0 returns only totalResults; a startIndex past the end returns no resources', async () => {
      expect(ok(await scim(t, { path: '/Users?count=0' }))).toEqual({
        schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
        totalResults: 3,
        itemsPerPage: 0,
        startIndex: 1,
        Resources: [],
      });
      expect(ok(await scim(t, { path: '/Users?startIndex=10' }))).toMatchObject({ totalResults: 3, itemsPerPage: 0, startIndex: 10, Resources: [] });
    });

    it('count above 200 returns at most 200, as ServiceProviderConfig says', async () => {
      const page = ok(await scim(t, { path: '/Users?count=5000' }));
      expect(page.itemsPerPage).toBe(3);
      expect(ok(await scim(t, { path: '/ServiceProviderConfig' })).filter.maxResults).toBe(200);
    });

    it('startIndex below 1 reads as 1 and a negative count as 0; the default order is stable, by id', async () => {
      expect(ok(await scim(t, { path: '/Users?startIndex=0&count=2' })).startIndex).toBe(1);
      expect(ok(await scim(t, { path: '/Users?count=-5' })).Resources).toEqual([]);
      const pages = [...(await ids('/Users?startIndex=1&count=2')), ...(await ids('/Users?startIndex=3&count=2'))];
      expect(pages).toEqual([alpha.id, beta.id, gamma.id]);
    });

    it('paging applies after the filter', async () => {
      expect(ok(await scim(t, { path: filterPath('Users', 'userName co "example"', '&startIndex=2&count=5') }))).toMatchObject({
        totalResults: 3,
        itemsPerPage: 2,
      });
    });

    it('a non-numeric startIndex or count is 400 invalidValue', async () => {
      scimError(await scim(t, { path: '/Users?count=many' }), 400, 'invalidValue');
    });
  });

  describe('sorting (RFC 7644 section 3.4.2.3)', () => {
    it('sortBy and sortOrder, with unassigned values last', async () => {
      expect(await ids('/Users?sortBy=name.givenName')).toEqual([alpha.id, beta.id, gamma.id]);
      expect(await ids('/Users?sortBy=userName&sortOrder=descending')).toEqual([gamma.id, beta.id, alpha.id]);
      expect(await ids('/Users?sortBy=title')).toEqual([alpha.id, beta.id, gamma.id]);
      expect(await ids('/Users?sortBy=title&sortOrder=descending')).toEqual([beta.id, alpha.id, gamma.id]);
      expect(await ids('/Groups?sortBy=displayName&sortOrder=descending')).toEqual([sales.id, engineers.id]);
    });

    it('a multi-valued or unknown sortBy, or a bad sortOrder, is 400 invalidValue', async () => {
      scimError(await scim(t, { path: '/Users?sortBy=emails' }), 400, 'invalidValue');
      scimError(await scim(t, { path: '/Users?sortBy=shoeSize' }), 400, 'invalidValue');
      scimError(await scim(t, { path: '/Users?sortBy=userName&sortOrder=sideways' }), 400, 'invalidValue');
    });
  });

  describe('attributes and excludedAttributes (RFC 7644 section 3.4.2.5)', () => {
    it('attributes returns those attributes plus id, schemas and meta', async () => {
      const page = ok(await scim(t, { path: filterPath('Users', `id eq "${alpha.id}"`, '&attributes=emails,name.familyName') }));
      expect(Object.keys(page.Resources[0]).sort()).toEqual(['emails', 'id', 'meta', 'name', 'schemas']);
      expect(page.Resources[0].name).toEqual({ familyName: 'Anders' });
      const one = ok(await scim(t, { path: `/Users/${alpha.id}?attributes=${ENTERPRISE}:department,emails.value` }));
      expect(one[ENTERPRISE]).toEqual({ department: 'Research' });
      const whole = ok(await scim(t, { path: `/Users/${alpha.id}?attributes=${ENTERPRISE}` }));
      expect(Object.keys(whole).sort()).toEqual(['id', 'meta', 'schemas', ENTERPRISE]);
      expect(one.emails).toEqual([{ value: 'alpha@work.example.com' }, { value: 'alpha@home.example.org' }]);
    });

    it('excludedAttributes leaves attributes out, but never id; members can be left out of groups', async () => {
      const user = ok(await scim(t, { path: `/Users/${alpha.id}?excludedAttributes=emails,id,name.givenName` }));
      expect(user).not.toHaveProperty('emails');
      expect(user.id).toBe(alpha.id);
      expect(user.name).toEqual({ familyName: 'Anders', formatted: 'Alice Anders', middleName: 'M' });
      const groups = ok(await scim(t, { path: '/Groups?excludedAttributes=members' }));
      expect(groups.Resources.every((g: object) => !('members' in g))).toBe(true);
      expect(ok(await scim(t, { path: `/Groups/${sales.id}?excludedAttributes=members` }))).not.toHaveProperty('members');
    });
  });
});
