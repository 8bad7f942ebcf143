import type { Store } from '../../db/database.js';

export function groupsService(store: Store) {
  void store;
  return {};
}
export type GroupsService = ReturnType<typeof groupsService>;
