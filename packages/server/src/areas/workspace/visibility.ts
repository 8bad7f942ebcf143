import { sql, type Expression, type SqlBool } from 'kysely';
import type { ItemType } from '../../db/tables.js';
import type { WorkspaceContext } from './workspace-context.js';

/**
 * What a caller may see in one deployment's workspace, as SQL conditions, so that listings filter
 * in the query and every page is full. Anyone holding any access sees the item: grants on the
 * deployment (or admin) show everything; otherwise what they created, what is granted to them,
 * and everything below a granted folder.
 */
export interface Visibility {
  everything: boolean;
  userId: number;
  deploymentId: number;
  granted: Record<ItemType, number[]>;
  /**
   * Visibility decided elsewhere instead (the shared workspace of embed sessions: embed shares,
   * which the embed-tenants area keeps): the condition a row of each table must meet.
   */
  rows?: (table: ItemTable) => Expression<SqlBool>;
}

export async function visibilityFor(context: WorkspaceContext): Promise<Visibility> {
  const { caller, scope } = context;
  const granted: Record<ItemType, number[]> = { FOLDER: [], WORKBOOK: [], REPORT: [] };
  const grants = await caller.access.grants();
  let everything = caller.access.isAdmin || context.deployment.created_by === caller.actor.userId;
  for (const key of grants.keys()) {
    const [type, id] = key.split(':') as [string, string];
    if (type === 'DEPLOYMENT') everything ||= Number(id) === scope.deploymentId;
    else granted[type as ItemType].push(Number(id));
  }
  return { everything, userId: caller.actor.userId, deploymentId: scope.deploymentId, granted };
}

/** Ids of the granted folders and every folder below them, as a subquery. */
function foldersUnderGrants(v: Visibility): Expression<number> {
  return sql<number>`(with recursive visible(id) as (
      select id from folders where deployment_id = ${v.deploymentId} and id in (${sql.join(v.granted.FOLDER)})
      union
      select f.id from folders f join visible on f.parent_id = visible.id
    ) select id from visible)`;
}

export type ItemTable = 'folders' | 'workbooks' | 'reports';
const TYPE_OF: Record<ItemTable, ItemType> = { folders: 'FOLDER', workbooks: 'WORKBOOK', reports: 'REPORT' };

/** The condition a row of `table` must meet to be visible. */
export function visibleRows(v: Visibility, table: ItemTable): Expression<SqlBool> {
  if (v.rows) return v.rows(table);
  if (v.everything) return sql<SqlBool>`1 = 1`;
  const ids = v.granted[TYPE_OF[table]];
  const container = sql.ref(table === 'folders' ? `${table}.id` : `${table}.folder_id`);
  const ors = [sql`${sql.ref(`${table}.created_by`)} = ${v.userId}`];
  if (ids.length > 0) ors.push(sql`${sql.ref(`${table}.id`)} in (${sql.join(ids)})`);
  if (v.granted.FOLDER.length > 0) ors.push(sql`${container} in ${foldersUnderGrants(v)}`);
  return sql<SqlBool>`(${sql.join(ors, sql` or `)})`;
}
