import type { Caller } from '../../access/caller.js';
import type { ItemType } from '../../db/tables.js';
import { bareViewContext, type ItemViewContext, type Tolerate } from './item-view.js';
import type { StoredItem } from './items.store.js';

export interface ItemRef {
  type: ItemType;
  id: number;
}

export function refOf(item: StoredItem): ItemRef {
  return { type: item.type, id: item.row.id };
}

/**
 * Logs, at error level and under the request id, a failure that came after a write committed,
 * naming every item the write committed: the response may not say everything, the log must.
 */
export function logAfterCommit(caller: Caller, what: string, committed: ItemRef[], error: unknown): void {
  caller.log.error(
    { err: error, committed: committed.map((ref) => `${ref.type}:${ref.id}`) },
    `${what}: committed ${committed.length} item(s), then failed while building the response`,
  );
}

/**
 * Builds the response of a write that has committed. Rendering reads more than the write did
 * (owners, favorites, folder paths, stored JSON), and a failure there must not turn an applied
 * write into a bare 500: the bulk move's answer is the record of what applied (spec rule 4), and
 * a client told 500 would retry a create or a move that already happened. So nothing after the
 * commit throws:
 * - `load` reads the view context with `tolerate`: an enrichment that cannot be read (owners,
 *   favorites, paths the write did not read itself) is left empty, so `user` is null and
 *   `isFavorite` false;
 * - an item whose stored content cannot be rendered is rendered without it (`content: false`:
 *   meta and calculated fields `{}`, dashboards and a report's JSON fields null), keeping its
 *   id, name, place, timestamps and whatever enrichments did load;
 * and the first failure is logged with the request id and every committed item.
 */
export async function renderCommitted<T>(
  caller: Caller,
  what: string,
  items: StoredItem[],
  load: (tolerate: Tolerate) => Promise<ItemViewContext>,
  render: (item: StoredItem, context: ItemViewContext, options: { content: boolean }, index: number) => T,
): Promise<T[]> {
  const failures: unknown[] = [];
  const tolerate: Tolerate = (error) => failures.push(error);
  let context: ItemViewContext;
  try {
    context = await load(tolerate);
  } catch (error) {
    failures.push(error);
    context = bareViewContext();
  }
  const shapes = items.map((item, index) => {
    try {
      return render(item, context, { content: true }, index);
    } catch (error) {
      failures.push(error);
      return render(item, context, { content: false }, index);
    }
  });
  if (failures.length > 0) logAfterCommit(caller, what, items.map(refOf), failures[0]);
  return shapes;
}
