import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Migrator, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, openStore } from '../src/db/database.js';
import { migrationProvider } from '../src/db/migrations/index.js';
import { lockWithin } from '../src/db/transactions.js';
import { DIALECTS, TestApp } from './harness.js';
import { ENTERPRISE, filterPath, ok, PATCH_OP, provisionGroup, provisionUser, scim, scimError, USER_SCHEMA } from './scim-harness.js';

const EXT = 'urn:mapi:params:scim:schemas:extension:attributes:2.0:User';

/**
 * Edge cases of the SCIM service that must answer the same on both stores: hostile query
 * parameters, case folding beyond ASCII, presence and exclusion of complex attributes, defaults of
 * user attributes, and concurrent writers.
 */
describe.each(DIALECTS)('SCIM edge cases (%s)', (dialect) => {
  let t: TestApp;
  let named: any;
  let bare: any;
  let managed: any;

  const ids = async (filter: string, extra = '') => ok(await scim(t, { path: filterPath('Users', filter, extra) })).Resources.map((r: { id: string }) => r.id);
  const patch = (id: string, Operations: unknown[]) => scim(t, { method: 'PATCH', path: `/Users/${id}`, body: { schemas: [PATCH_OP], Operations } });

  beforeAll(async () => {
    t = await TestApp.create(dialect);
    const create = async (body: unknown) => (await t.request({ method: 'POST', url: '/api/v1/user-attributes', body })).json().id as number;
    await create({ name: 'since', type: 'string' });
    await create({ name: 'level', type: 'number' });
    await create({ name: 'region', type: 'string', defaultValue: 'EU' });
    named = await provisionUser(t, { displayName: 'Named One', name: { givenName: 'Nia', familyName: 'Named' }, [EXT]: { since: '2020-01', level: 5 } });
    bare = await provisionUser(t, { name: undefined, emails: [], [EXT]: { level: 2 } });
    managed = await provisionUser(t, {
      displayName: 'Managed',
      name: { familyName: 'Only' },
      [ENTERPRISE]: { manager: { value: 'boss-1' } },
      [EXT]: { level: 10 },
    });
  });
  afterAll(async () => t?.close());

  describe('filters (RFC 7644 section 3.4.2.2)', () => {
    it("RFC 7644 section 3.4.2.2: a numeric user-attribute comparison casts only that attribute's values", async () => {
      // "2020-01" is the value of another attribute; reading it as a number must not fail the query.
      expect(await ids(`${EXT}:level gt 3`)).toEqual([named.id, managed.id]);
      expect(await ids(`${EXT}:level le 2`)).toEqual([bare.id]);
    });

    it('RFC 7644 section 3.4.2.2: a number out of range in a filter is 400 invalidFilter', async () => {
      scimError(await scim(t, { path: filterPath('Users', `${EXT}:level gt 1e400`) }), 400, 'invalidFilter');
      scimError(await scim(t, { path: filterPath('Users', `${EXT}:level lt -1e400`) }), 400, 'invalidFilter');
    });

    it('RFC 7644 section 3.4.2.2: nesting deeper than the service allows is 400 invalidFilter', async () => {
      const deep = `${'not ('.repeat(600)}userName pr${')'.repeat(600)}`;
      scimError(await scim(t, { path: filterPath('Users', deep) }), 400, 'invalidFilter');
      // Moderate nesting still works.
      expect(await ids(`${'not ('.repeat(10)}userName pr${')'.repeat(10)}`)).toEqual([named.id, bare.id, managed.id]);
    });

    it('RFC 7644 section 3.4.2.2: a filter over the length limit is 400 invalidFilter', async () => {
      const long = `userName eq "${'a'.repeat(5000)}"`;
      scimError(await scim(t, { path: filterPath('Users', long) }), 400, 'invalidFilter');
    });

    it('RFC 7644 section 3.4.2.2: ew "" matches every resource that has a value, like sw ""', async () => {
      expect(await ids('displayName sw ""')).toEqual([named.id, managed.id]);
      expect(await ids('displayName ew ""')).toEqual([named.id, managed.id]);
      expect(await ids('displayName ew "one"')).toEqual([named.id]);
      expect(await ids('displayName ew "a much longer suffix than any name"')).toEqual([]);
    });

    it('RFC 7644 section 3.4.2.2: pr applies to complex single-valued attributes (name, manager)', async () => {
      // `named` has a given name (a column), `managed` only a family name (the SCIM document).
      expect(await ids('name pr')).toEqual([named.id, managed.id]);
      expect(await ids('not (name pr)')).toEqual([bare.id]);
      expect(await ids(`${ENTERPRISE}:manager pr`)).toEqual([managed.id]);
      expect(await ids(`not (${ENTERPRISE}:manager pr)`)).toEqual([named.id, bare.id]);
    });

    it('RFC 7644 section 3.4.2.2: userName compares ignoring case beyond ASCII, the same on both stores', async () => {
      const emile = await provisionUser(t, { userName: 'Émile@Example.com' });
      expect(await ids('userName eq "Émile@Example.com"')).toEqual([emile.id]);
      expect(await ids('userName eq "émile@example.com"')).toEqual([emile.id]);
      expect(await ids('userName eq "ÉMILE@EXAMPLE.COM"')).toEqual([emile.id]);
      // The unique index folds case the same way: the lower-case spelling is the same userName.
      scimError(await scim(t, { method: 'POST', path: '/Users', body: { schemas: [USER_SCHEMA], userName: 'émile@example.com' } }), 409, 'uniqueness');
      await scim(t, { method: 'DELETE', path: `/Users/${emile.id}` });
    });
  });

  describe('paging and sorting (RFC 7644 sections 3.4.2.3 and 3.4.2.4)', () => {
    it('RFC 7644 section 3.4.2.4: a startIndex past any possible total gives an empty page, not an error', async () => {
      // Integers are written with digits only (issue 11): `1e25` is a 400, 26 digits are a page past the end.
      for (const startIndex of ['99999999999999999999', '10000000000000000000000000', String(Number.MAX_SAFE_INTEGER)]) {
        const page = ok(await scim(t, { path: `/Users?startIndex=${startIndex}` }));
        expect(page).toMatchObject({ totalResults: 3, itemsPerPage: 0, Resources: [] });
        expect(Number.isSafeInteger(page.startIndex)).toBe(true);
      }
      const groups = ok(await scim(t, { path: '/Groups?startIndex=10000000000000000000000000' }));
      expect(groups.Resources).toEqual([]);
    });

    it('RFC 7644 section 3.4.2.3: sortOrder is matched ignoring case', async () => {
      const order = async (sortOrder: string) =>
        ok(await scim(t, { path: `/Users?sortBy=userName&sortOrder=${sortOrder}` })).Resources.map((r: { id: string }) => r.id);
      const ascending = await order('ascending');
      expect(await order('Descending')).toEqual([...ascending].reverse());
      expect(await order('ASCENDING')).toEqual(ascending);
    });
  });

  describe('projection (RFC 7644 section 3.4.2.5)', () => {
    it('RFC 7644 section 3.4.2.5: excludedAttributes names sub-attributes of multi-valued attributes', async () => {
      const group = await provisionGroup(t, 'Projected', [named.id, managed.id]);
      const read = ok(await scim(t, { path: `/Groups/${group.id}?excludedAttributes=members.display` }));
      expect(read.members).toHaveLength(2);
      for (const member of read.members) {
        expect(member).toHaveProperty('value');
        expect(member).not.toHaveProperty('display');
      }
      const user = ok(await scim(t, { path: `/Users/${named.id}?excludedAttributes=emails.value,${ENTERPRISE}:manager.value` }));
      expect(user.emails).toEqual([{ type: 'work', primary: true }]);
      const list = ok(await scim(t, { path: '/Groups?excludedAttributes=members.display' }));
      expect(list.Resources[0].members[0]).not.toHaveProperty('display');
    });
  });

  describe('versions (RFC 7644 section 3.14)', () => {
    it('RFC 7644 section 3.14: the version and location of an unchanged resource do not depend on the Host it is read through', async () => {
      const a = ok(await scim(t, { path: `/Users/${named.id}`, host: 'a.example.com' }));
      const b = ok(await scim(t, { path: `/Users/${named.id}`, host: 'b.example.com' }));
      expect(a.meta.location).toBe(b.meta.location);
      expect(a.meta.version).toBe(b.meta.version);
      const g = await provisionGroup(t, 'Hosted');
      const ga = ok(await scim(t, { path: `/Groups/${g.id}`, host: 'a.example.com' }));
      const gb = ok(await scim(t, { path: `/Groups/${g.id}`, host: 'b.example.com' }));
      expect(ga.meta.version).toBe(gb.meta.version);
    });
  });

  describe('PATCH (RFC 7644 section 3.5.2)', () => {
    it('RFC 7644 section 3.12: a PATCH body that is not an object is 400 invalidSyntax', async () => {
      for (const body of ['[]', 'null', '[{"op":"add"}]']) {
        const res = await t.request({ method: 'PATCH', url: `/api/scim/v2/Users/${named.id}`, body, headers: { 'content-type': 'application/scim+json' } });
        scimError(res, 400, 'invalidSyntax');
      }
    });
  });

  describe('user attributes in the extension', () => {
    it('RFC 7643 section 3.3: reads and filters see the effective value, defaults included, as the REST API does', async () => {
      const read = ok(await scim(t, { path: `/Users/${bare.id}` }));
      expect(read[EXT]).toEqual({ level: 2, region: 'EU' });
      expect(await ids(`${EXT}:region eq "eu"`)).toEqual([named.id, bare.id, managed.id]);
      expect(await ids(`${EXT}:region pr`)).toEqual([named.id, bare.id, managed.id]);
      const rest = (await t.request({ url: `/api/v1/user-attribute-values/${bare.id}` })).json();
      expect(rest.values.find((v: { name: string }) => v.name === 'region')).toMatchObject({ value: 'EU', isDefault: true });
      // A PATCH of something else, and a PUT echoing the default back, store no value of the user's own.
      ok(await patch(bare.id, [{ op: 'replace', path: 'displayName', value: 'Bare' }]));
      ok(await scim(t, { method: 'PUT', path: `/Users/${bare.id}`, body: { ...read, displayName: 'Bare again' } }));
      const after = (await t.request({ url: `/api/v1/user-attribute-values/${bare.id}` })).json();
      expect(after.values.find((v: { name: string }) => v.name === 'region')).toMatchObject({ value: 'EU', isDefault: true });
      // Removing a value returns the user to the default.
      const own = ok(await patch(managed.id, [{ op: 'replace', path: `${EXT}:region`, value: 'APAC' }]));
      expect(own[EXT].region).toBe('APAC');
      expect(await ids(`${EXT}:region eq "EU"`)).toEqual([named.id, bare.id]);
      const removed = ok(await patch(managed.id, [{ op: 'remove', path: `${EXT}:region` }]));
      expect(removed[EXT].region).toBe('EU');
    });

    it('RFC 7644 section 3.5.2: a PATCH that does not name the extension leaves the user attribute values alone', async () => {
      const before = await t.store.db
        .selectFrom('user_attribute_values')
        .select(['attribute_id', 'value', 'updated_at'])
        .where('user_id', '=', Number(named.id))
        .orderBy('attribute_id')
        .execute();
      expect(before.length).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 5));
      ok(await patch(named.id, [{ op: 'replace', path: 'title', value: 'Engineer' }]));
      const after = await t.store.db
        .selectFrom('user_attribute_values')
        .select(['attribute_id', 'value', 'updated_at'])
        .where('user_id', '=', Number(named.id))
        .orderBy('attribute_id')
        .execute();
      expect(after).toEqual(before);
    });

    // PostgreSQL only: there the lock is an advisory lock another connection can hold. On SQLite
    // every write transaction is BEGIN IMMEDIATE, so writers serialise without one; and a second
    // connection in this process holding the write lock would block the synchronous driver itself.
    if (dialect === 'postgres')
      it('RFC 7644 section 3.5.2: REST writes of attribute values wait for a SCIM write of the same tenant', async () => {
        // Hold the tenant's admin lock, as a SCIM PATCH does while it reads and rewrites values.
        const other = t.store.reopen();
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let locked!: () => void;
        const isLocked = new Promise<void>((resolve) => (locked = resolve));
        const holder = other.db.transaction().execute(async (trx) => {
          await lockWithin(trx, `users:${t.tenantId}`);
          locked();
          await held;
        });
        await isLocked;
        let done = false;
        const write = t.request({ method: 'POST', url: `/api/v1/user-attribute-values/${named.id}`, body: { values: { since: '2021-02' } } }).then((res) => {
          done = true;
          return res;
        });
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(done).toBe(false);
        release();
        await holder;
        expect((await write).statusCode).toBe(200);
        await other.close();
      });
  });
});

describe('SQLite case folding of existing files', () => {
  it('RFC 7644 section 3.4.2.2: migration 0004 rebuilds the lower() indexes, so emails stay unique ignoring non-ASCII case', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-lower-'));
    const file = path.join(dir, 'test.sqlite');
    try {
      // A file from before migration 0004: migrated up to the one before it.
      const first = openStore({ dialect: 'sqlite', file });
      const upTo = await new Migrator({ db: first.db, provider: migrationProvider('sqlite') }).migrateTo('0003_provisioning');
      expect(upTo.error).toBeUndefined();
      await first.close();
      // A file written before: SQLite's built-in lower() (ASCII only) computed the index keys.
      const raw = new SQLite(file);
      const at = new Date().toISOString();
      const tenant = raw.prepare("insert into tenants (slug, name, created_at) values ('t', 'T', ?)").run(at).lastInsertRowid;
      raw.prepare("insert into users (tenant_id, email, role, created_at, updated_at) values (?, 'Émile@Example.com', 'EXPLORER', ?, ?)").run(tenant, at, at);
      raw.close();

      const store = openStore({ dialect: 'sqlite', file });
      await migrate(store);
      const insert = () =>
        store.db
          .insertInto('users')
          .values({
            tenant_id: Number(tenant),
            email: 'émile@example.com',
            first_name: null,
            role: 'EXPLORER',
            deactivated_at: null,
            created_at: at,
            updated_at: at,
          })
          .execute();
      await expect(insert()).rejects.toThrow(/UNIQUE/);
      const found = await store.db
        .selectFrom('users')
        .select('id')
        .where(sql<string>`lower(email)`, '=', 'émile@example.com')
        .execute();
      expect(found).toHaveLength(1);
      await store.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
