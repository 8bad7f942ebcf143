import type { Store } from '../src/db/database.js';

/** Where fixtures are written: a test app, or a store shared with server processes. */
export interface FixtureTarget {
  store: Store;
  tenantId: number;
}

/** A tuple of `N` numbers, so `const [a, b] = await chain(2)` types both as numbers. */
type Ids<N extends number, R extends number[] = []> = R['length'] extends N ? R : Ids<N, [...R, number]>;

/** Workspace rows written straight to the store, for tests that need a tree before they call the API. */
export class WorkspaceFixtures {
  constructor(
    private readonly t: FixtureTarget,
    readonly deploymentId: number,
  ) {}

  private stamp() {
    return new Date().toISOString();
  }

  async folder(name: string, parentId: number | null = null, createdBy: number | null = null): Promise<number> {
    const at = this.stamp();
    const row = await this.t.store.db
      .insertInto('folders')
      .values({
        tenant_id: this.t.tenantId,
        deployment_id: this.deploymentId,
        parent_id: parentId,
        name,
        created_by: createdBy,
        created_at: at,
        updated_at: at,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** A chain of `depth` nested folders under `parentId`; returns their ids, top first. */
  async chain<N extends number>(depth: N, prefix = 'level', parentId: number | null = null): Promise<Ids<N>> {
    const ids: number[] = [];
    let parent = parentId;
    for (let level = 1; level <= depth; level++) {
      parent = await this.folder(`${prefix}-${level}`, parent);
      ids.push(parent);
    }
    return ids as Ids<N>;
  }

  async workbook(
    name: string,
    folderId: number | null = null,
    createdBy: number | null = null,
    extra: { dashboard_draft?: string | null; slug?: string } = {},
  ): Promise<number> {
    const at = this.stamp();
    const row = await this.t.store.db
      .insertInto('workbooks')
      .values({
        tenant_id: this.t.tenantId,
        deployment_id: this.deploymentId,
        folder_id: folderId,
        name,
        slug: extra.slug ?? `${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${Math.random().toString(36).slice(2, 8)}`,
        meta: '{}',
        calculated_fields: '{}',
        dashboard_draft: extra.dashboard_draft ?? null,
        dashboard_published: null,
        published_dashboard: null,
        created_by: createdBy,
        created_at: at,
        updated_at: at,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async report(name: string, folderId: number | null = null, createdBy: number | null = null, extra: { publicId?: string } = {}): Promise<number> {
    const at = this.stamp();
    const row = await this.t.store.db
      .insertInto('reports')
      .values({
        tenant_id: this.t.tenantId,
        deployment_id: this.deploymentId,
        folder_id: folderId,
        name,
        public_id: extra.publicId ?? `r-${Math.random().toString(36).slice(2, 12)}`,
        kind: 'table',
        title: null,
        description: null,
        sql_query: null,
        python_code: null,
        spec: null,
        meta: null,
        preferences: null,
        period_comparisons: null,
        fill_missing_rows: null,
        last_viewed_at: null,
        created_by: createdBy,
        created_at: at,
        updated_at: at,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** Where an item is now: its folder (parent for a folder), null at the root, undefined if gone. */
  async containerOf(type: 'FOLDER' | 'WORKBOOK' | 'REPORT', id: number): Promise<number | null | undefined> {
    const db = this.t.store.db;
    if (type === 'FOLDER') return (await db.selectFrom('folders').select('parent_id').where('id', '=', id).executeTakeFirst())?.parent_id;
    const table = type === 'WORKBOOK' ? 'workbooks' : 'reports';
    return (await db.selectFrom(table).select('folder_id').where('id', '=', id).executeTakeFirst())?.folder_id;
  }
}
