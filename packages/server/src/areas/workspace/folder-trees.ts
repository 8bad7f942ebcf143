import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { prepared } from '../../db/prepared.js';
import type { Executor } from '../../db/tables.js';
import { chainsOf, chainsUnlessAt, MAX_FOLDER_DEPTH, treeVersion, type FolderChain, type WorkspaceScope } from './tree.store.js';

// The workspace's per-request service rides on the caller: declared here, beside what it is, so
// the shared Caller knows nothing of folders (the composition root sets it).
declare module '../../access/caller.js' {
  interface Caller {
    /** The deployments' folder trees, for the paths views show. */
    folderTrees: FolderTrees;
  }
}

/** One folder as a path shows it: where it hangs, its name, who created it (for access). */
interface FolderNode {
  parentId: number | null;
  name: string;
  createdBy: number | null;
}

/** A deployment's folders at one `folder_tree_versions.version`. */
export interface HeldTree {
  readonly version: number;
}
interface Tree extends HeldTree {
  folders: Map<number, FolderNode>;
}

/**
 * The folders and the version they are at, from one statement, so from one snapshot: the last
 * row carries the version (the folders' rows carry null there).
 */
const LOAD = prepared(
  2,
  (_db, tenantId: number, deploymentId: number) => sql<{
    id: number | null;
    parent_id: number | null;
    name: string | null;
    created_by: number | null;
    version: number | string | null;
  }>`
    select id, parent_id, name, created_by, null as version from folders where tenant_id = ${tenantId} and deployment_id = ${deploymentId}
    union all
    select null, null, null, null, ${treeVersion(deploymentId)}`,
);

/**
 * Every deployment's folder tree in memory, for the folder paths that views and lists show: a
 * page of 100 reports spread over a deep tree walked a thousand folders up in SQL, where memory
 * walks them in microseconds.
 *
 * Exact, across server processes: every change to a deployment's folders bumps its version in the
 * writer's transaction (triggers, migration 0008). A request's one statement for its paths reads
 * that version with them (tree.store.ts `chainsUnlessAt`): at the version of the tree held here,
 * the walk in SQL is skipped and memory answers; at any other, SQL answers as before. Either way
 * the request runs as many statements as without the trees.
 *
 * A tree is loaded by one statement, folders and version together, on the store itself, never in
 * a transaction (what an open transaction sees may never commit), and in the background, once
 * the version has held still for `settleMs`: a deployment whose folders are being written to is
 * answered from SQL until the writes pause, instead of being reloaded after each one, and no
 * request waits for a load. Trees are kept per tenant and deployment, at most `folders` folders in
 * all (the least recently used go first); a tree larger than that is never kept.
 */
export class FolderTrees {
  readonly #trees = new Map<string, Tree>();
  /** Since when each deployment without a tree at its version has been seen at that version. */
  readonly #seen = new Map<string, { version: number; since: number }>();
  readonly #loading = new Map<string, Promise<void>>();
  readonly #limits: { folders: number; deployments: number; settleMs: number };
  #folders = 0;

  constructor(
    private readonly db: Executor,
    limits: Partial<{ folders: number; deployments: number; settleMs: number }> = {},
  ) {
    this.#limits = { folders: 500_000, deployments: 10_000, settleMs: 1000, ...limits };
  }

  /**
   * The chains of `folderIds`, each from its top-level folder down to itself, as `chainsOf` gives
   * them. `db` is the request's executor; in a transaction, SQL answers.
   */
  async chains(db: Executor, scope: WorkspaceScope, folderIds: Iterable<number>): Promise<Map<number, FolderChain>> {
    const ids = [...new Set(folderIds)];
    if (ids.length === 0) return new Map();
    if (db !== this.db) return chainsOf(db, scope, ids);
    const tree = this.held(db, scope);
    const { version, chains } = await chainsUnlessAt(db, scope, ids, tree?.version ?? -1);
    if (chains === undefined && tree) return walk(tree, ids);
    this.sawVersion(db, scope, version);
    return chains ?? new Map();
  }

  /**
   * The tree held for the deployment, for a statement that reads the version with what it reads
   * and skips its walk at this tree's version; undefined for `db` in a transaction or when none is
   * held. A tree is never changed once held, so it answers for its version even if a newer one
   * replaces it meanwhile.
   */
  held(db: Executor, scope: WorkspaceScope): HeldTree | undefined {
    if (db !== this.db) return undefined;
    const key = `${scope.tenantId}:${scope.deploymentId}`;
    const tree = this.#trees.get(key);
    if (tree) {
      // Most recently used last, so eviction takes the oldest.
      this.#trees.delete(key);
      this.#trees.set(key, tree);
    }
    return tree;
  }

  /** Reports the version a statement read on `db` while SQL answered: outside a transaction, a load once it holds still. */
  sawVersion(db: Executor, scope: WorkspaceScope, version: number): void {
    if (db === this.db) this.#consider(`${scope.tenantId}:${scope.deploymentId}`, scope, version);
  }

  /** The version of the tree held for the deployment, if one is (for tests and diagnostics). */
  heldVersion(scope: WorkspaceScope): number | undefined {
    return this.#trees.get(`${scope.tenantId}:${scope.deploymentId}`)?.version;
  }

  /** Resolves when no load is under way (for tests). */
  async settled(): Promise<void> {
    while (this.#loading.size > 0) await Promise.all(this.#loading.values());
  }

  /** Loads the deployment's tree once `version` has held still for the settle time. */
  #consider(key: string, scope: WorkspaceScope, version: number): void {
    const now = performance.now();
    let seen = this.#seen.get(key);
    if (seen?.version !== version) {
      seen = { version, since: now };
      this.#seen.delete(key);
      this.#seen.set(key, seen);
      if (this.#seen.size > this.#limits.deployments) this.#seen.delete(this.#seen.keys().next().value as string);
    }
    if (now - seen.since < this.#limits.settleMs || this.#loading.has(key)) return;
    const loading = this.#load(key, scope)
      // A failed load leaves SQL answering; the next request past the settle time tries again.
      .catch(() => undefined)
      .finally(() => this.#loading.delete(key));
    this.#loading.set(key, loading);
  }

  async #load(key: string, scope: WorkspaceScope): Promise<void> {
    const { rows } = await LOAD(this.db, scope.tenantId, scope.deploymentId);
    const folders = new Map<number, FolderNode>();
    let version = 0;
    for (const row of rows) {
      if (row.id === null) version = Number(row.version);
      else
        folders.set(Number(row.id), {
          parentId: row.parent_id === null ? null : Number(row.parent_id),
          name: row.name!,
          createdBy: row.created_by === null ? null : Number(row.created_by),
        });
    }
    this.#keep(key, { version, folders });
  }

  #keep(key: string, tree: Tree): void {
    const previous = this.#trees.get(key);
    // A slower load of an older version does not replace a newer tree.
    if (previous && previous.version > tree.version) return;
    if (previous) this.#drop(key, previous);
    if (tree.folders.size > this.#limits.folders) return;
    while (this.#trees.size > 0 && (this.#folders + tree.folders.size > this.#limits.folders || this.#trees.size >= this.#limits.deployments)) {
      const [oldestKey, oldest] = this.#trees.entries().next().value as [string, Tree];
      this.#drop(oldestKey, oldest);
    }
    this.#trees.set(key, tree);
    this.#folders += tree.folders.size;
  }

  #drop(key: string, tree: Tree): void {
    this.#trees.delete(key);
    this.#folders -= tree.folders.size;
  }
}

/**
 * Each folder's chain, as the SQL walk gives it (tree.store.ts `up`): a folder that is not in the
 * tree has none, a walk stops at a parent that is not there, and the depth bound ends it even
 * round a cycle in bad data.
 */
export function walk(held: HeldTree, folderIds: Iterable<number>): Map<number, FolderChain> {
  const tree = held as Tree;
  const chains = new Map<number, FolderChain>();
  for (const id of folderIds) {
    if (chains.has(id)) continue;
    let node = tree.folders.get(id);
    if (!node) continue;
    const entries: FolderChain['entries'] = [];
    let at: number | null = id;
    for (let depth = 0; node && depth <= MAX_FOLDER_DEPTH; depth++) {
      entries.push({ id: at!, name: node.name, createdBy: node.createdBy });
      at = node.parentId;
      node = at === null ? undefined : tree.folders.get(at);
    }
    chains.set(id, { entries: entries.reverse() });
  }
  return chains;
}
