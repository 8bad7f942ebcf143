import { sql } from 'kysely';
import { prepared } from '../db/prepared.js';
import type { Executor } from '../db/tables.js';

/**
 * What every authenticated request needs and what rarely changes (the key and its owner, the
 * owner's grants, the deployment it names), kept in memory per tenant, with exact invalidation
 * across server processes.
 *
 * Every write to the tables these come from bumps the tenant's `auth_version` in the writer's own
 * transaction (triggers, migrations 0005 and later). A request reads the version first, in one indexed
 * statement, and is then served only what was loaded under that version: a revoked key, a
 * deactivated user, a changed grant or group takes effect on the very next request, on every
 * process, with no message to miss (a notification would arrive late). Loading after reading the
 * version is what makes it exact: data read later can only be newer than its label, never older.
 *
 * Entries live in one snapshot per tenant: a request of one tenant can only ever be answered from
 * that tenant's snapshot, whatever the keys inside it look like.
 */
export class TenantCache {
  readonly #snapshots = new Map<number, TenantSnapshot>();

  constructor(
    private readonly db: Executor,
    private readonly limits: { tenants: number; entriesPerTenant: number } = { tenants: 10_000, entriesPerTenant: 20_000 },
  ) {}

  /** The tenant's snapshot as of now: one statement, the validation of everything cached for it. */
  async snapshot(tenantId: number): Promise<TenantSnapshot> {
    const { rows } = await AUTH_VERSION(this.db, tenantId);
    const version = rows[0] === undefined ? null : Number(rows[0].auth_version);
    // A tenant that no longer exists caches nothing; its requests fail further on anyway.
    if (version === null) return new TenantSnapshot(tenantId, -1, 0);
    const current = this.#snapshots.get(tenantId);
    if (current && current.version === version) return current;
    // A request that read an older version than another one's (a slower statement on another
    // connection) is served without caching, rather than replacing the newer snapshot.
    if (current && current.version > version) return new TenantSnapshot(tenantId, version, 0);
    if (!current && this.#snapshots.size >= this.limits.tenants) this.#snapshots.delete(this.#snapshots.keys().next().value as number);
    const fresh = new TenantSnapshot(tenantId, version, this.limits.entriesPerTenant);
    this.#snapshots.set(tenantId, fresh);
    return fresh;
  }
}

/**
 * One tenant's cached answers at one `auth_version`. Values are shared by every request that
 * reads them and must be treated as read-only.
 */
export class TenantSnapshot {
  readonly #entries = new Map<string, Promise<unknown>>();

  constructor(
    readonly tenantId: number,
    readonly version: number,
    /** 0: nothing is kept (every `memo` loads). */
    private readonly capacity: number,
  ) {}

  /**
   * The value cached under `key`, or what `load` gives, cached for every later request under this
   * version. Concurrent callers share one load; a load that fails is not kept.
   */
  memo<T>(key: string, load: () => Promise<T>): Promise<T> {
    const hit = this.#entries.get(key) as Promise<T> | undefined;
    if (hit) return hit;
    const loading = load();
    this.#keep(key, loading);
    return loading;
  }

  #keep(key: string, loading: Promise<unknown>): void {
    if (this.capacity === 0) return;
    // Oldest first out; a cache holding more than its capacity of keys is a scan, not a working set.
    if (this.#entries.size >= this.capacity) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(key, loading);
    loading.catch(() => {
      if (this.#entries.get(key) === loading) this.#entries.delete(key);
    });
  }

  /**
   * Many values at once: those cached are served, the rest loaded by one call of `loadMissing`
   * (one query for a page of owners rather than one each). A key `loadMissing` leaves out is
   * cached as undefined: under this version, it does not exist.
   */
  async memoMany<T>(keys: string[], loadMissing: (missing: string[]) => Promise<Map<string, T>>): Promise<Map<string, T | undefined>> {
    const hits = keys.map((key) => this.#entries.get(key) as Promise<T | undefined> | undefined);
    const missing = keys.filter((_, i) => hits[i] === undefined);
    const batch = missing.length > 0 ? loadMissing(missing) : Promise.resolve(new Map<string, T>());
    for (const key of missing)
      this.#keep(
        key,
        batch.then((found) => found.get(key)),
      );
    const values = await Promise.all(keys.map((key, i) => hits[i] ?? batch.then((found) => found.get(key))));
    return new Map(keys.map((key, i) => [key, values[i]]));
  }

  /** Drops `key`: for answers not worth keeping, such as an unknown credential (any string can be sent). */
  forget(key: string): void {
    this.#entries.delete(key);
  }

  /** A snapshot used only by this request, keeping nothing (tests and one-off callers). */
  static uncached(tenantId: number): TenantSnapshot {
    return new TenantSnapshot(tenantId, -1, 0);
  }
}

const AUTH_VERSION = prepared(1, (_db, tenantId: number) => sql<{ auth_version: number | string }>`select auth_version from tenants where id = ${tenantId}`);
